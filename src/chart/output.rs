//! The chart files: the embedded font, the size, and each chart drawn to `<stem>.png` and
//! `<stem>.svg` through temporary files, with drawing failures in plain words.

use super::data::ChartData;
use super::draw::draw;
use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONTS: Once = Once::new();

/// Register the embedded font (idempotent).
pub fn register_fonts() {
    FONTS.call_once(|| {
        for style in [
            FontStyle::Normal,
            FontStyle::Bold,
            FontStyle::Italic,
            FontStyle::Oblique,
        ] {
            let bytes = match style {
                FontStyle::Bold => dejavu::sans::bold(),
                _ => dejavu::sans::regular(),
            };
            let _ = plotters::style::register_font("sans-serif", style, bytes);
        }
    });
}
/// Width and height of every chart, in pixels.
pub const SIZE: (u32, u32) = (1000, 620);

/// A drawing failure in plain words, naming the chart file.
///
/// plotters exports neither its backend error kind nor the bitmap backend's error type, and
/// their `Display` is a debug dump, so the OS error is recovered from that text: the bitmap
/// backend only touches the file system when it saves, and a failed save carries the
/// `io::Error`'s raw code (turned back into the OS's own words) or, where the PNG encoder
/// wrapped it, the OS's message itself.
fn drawing_failure<E: std::error::Error + Send + Sync>(
    file: &Path,
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    let text = format!("{e:?}");
    if let Some(code) = text
        .split("code: ")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|c| c.parse::<i32>().ok())
    {
        return crate::io::IoError::new(
            "writing chart",
            file,
            std::io::Error::from_raw_os_error(code),
        )
        .into();
    }
    // An I/O error the encoder wrapped with its message (`Custom { kind: .., error: "File too
    // large (os error 27)" }`): the message is the OS's words.
    if let Some(msg) = text
        .split("error: \"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .filter(|m| !m.is_empty())
    {
        return anyhow!("writing chart {}: {msg}", file.display());
    }
    let why = match e {
        DrawingAreaErrorKind::SharingError => "the drawing area is in use twice".to_string(),
        DrawingAreaErrorKind::LayoutError => "the layout does not fit".to_string(),
        DrawingAreaErrorKind::BackendError(_) if text.contains("FontError") => {
            "a font could not be loaded".to_string()
        }
        DrawingAreaErrorKind::BackendError(_) if text.contains("InvalidBuffer") => {
            "the pixel buffer has the wrong size".to_string()
        }
        DrawingAreaErrorKind::BackendError(_) => match text.split("kind: ").nth(1) {
            Some(k) => format!(
                "the file could not be written ({})",
                k.split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("")
            ),
            None => "the image could not be drawn or encoded".to_string(),
        },
    };
    anyhow!("drawing chart {}: {why}", file.display())
}

/// Draw `d` to `dir/<stem>.png` and `dir/<stem>.svg`, each through a hidden temporary file
/// and a rename. On failure neither temporary file is left behind; the error names the chart
/// file and says why in plain words (`writing chart /out/x.png: File name too long (os error
/// 36)`).
pub fn draw_files(d: &ChartData, dir: &Path, stem: &str) -> Result<()> {
    draw_files_footed(d, dir, stem, "")
}

/// [`draw_files`] with a one-line `footer` under the plot (vtsim version, model, runs,
/// digest prefix: so a chart pasted elsewhere can be traced to its run).
pub fn draw_files_footed(d: &ChartData, dir: &Path, stem: &str, footer: &str) -> Result<()> {
    register_fonts();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    // The SVG is drawn in memory first: a failure there is a drawing failure, not I/O.
    let mut svg_text = String::new();
    {
        let root = SVGBackend::with_string(&mut svg_text, SIZE).into_drawing_area();
        draw(root, d, footer).map_err(|e| drawing_failure(&svg, e))?;
    }
    // The bitmap backend picks its encoder from the extension, so the temporary name ends in .png.
    let pid = std::process::id();
    let png_tmp = dir.join(format!(".{stem}.tmp{pid}.png"));
    let svg_tmp = dir.join(format!(".{stem}.tmp{pid}.svg"));
    let r = (|| -> Result<()> {
        {
            let root = BitMapBackend::new(&png_tmp, SIZE).into_drawing_area();
            draw(root, d, footer).map_err(|e| drawing_failure(&png, e))?;
            // The backend is dropped here; after a failed save its drop tries once more, so
            // the temporary file is removed below, after this block.
        }
        std::fs::write(&svg_tmp, svg_text.as_bytes())
            .map_err(|e| crate::io::IoError::new("writing chart", &svg, e))?;
        crate::io::rename(&png_tmp, &png)?;
        crate::io::rename(&svg_tmp, &svg)?;
        Ok(())
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&png_tmp);
        let _ = std::fs::remove_file(&svg_tmp);
    }
    r
}
