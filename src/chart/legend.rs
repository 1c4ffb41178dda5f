//! The legend: where it goes (the emptiest corner of the plot, else a column of its own), its
//! entries, and how each entry's sample is drawn.

use super::data::{ChartData, Curve, MarkLine};
use super::draw::{Axes, DrawResult};
use super::glyph::{diamond, down_triangle};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

/// The corner of the plot holding the least: curve points and answers count 3 each, a
/// shaded region counts by the grid points it covers (the legend goes there, so that it
/// covers neither a curve nor the safe region); and whether even that one holds something
/// (then the legend goes outside the plot, [`legend_column`]).
pub(super) fn legend_corner(
    d: &ChartData,
    axes: &Axes,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    (bw, bh): (f64, f64),
) -> (SeriesLabelPosition, bool) {
    // Corner boxes: the legend covers roughly the outer 40 % of the width, 45 % of the height.
    // (position, x zone, y zone) in fractions of the plot: the four corners first (they win
    // a tie), then the middle of each side, for a plot whose lines run through every corner.
    let corners = [
        (SeriesLabelPosition::UpperRight, (0.6, 1.0), (0.55, 1.0)),
        (SeriesLabelPosition::UpperLeft, (0.0, 0.4), (0.55, 1.0)),
        (SeriesLabelPosition::LowerRight, (0.6, 1.0), (0.0, 0.45)),
        (SeriesLabelPosition::LowerLeft, (0.0, 0.4), (0.0, 0.45)),
        (SeriesLabelPosition::MiddleRight, (0.6, 1.0), (0.3, 0.7)),
        (SeriesLabelPosition::MiddleLeft, (0.0, 0.4), (0.3, 0.7)),
    ];
    let frac = |x: f64, y: f64| ((axes.tx(x) - x0) / (x1 - x0), (axes.ty(y) - y0) / (y1 - y0));
    // A curve's points count 3 each, and the line between two points 1 per sixteenth of it,
    // so that a legend lands on no line, not merely on no point.
    let mut occupied: Vec<((f64, f64), usize)> = vec![];
    for c in &d.curves {
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(|p| p.y.is_finite())
            .map(|p| frac(p.x, p.y))
            .collect();
        occupied.extend(pts.iter().map(|&p| (p, 3)));
        for w in pts.windows(2) {
            for k in 1..16 {
                let t = k as f64 / 16.0;
                let p = (
                    w[0].0 + t * (w[1].0 - w[0].0),
                    w[0].1 + t * (w[1].1 - w[0].1),
                );
                occupied.push((p, 1));
            }
        }
    }
    for m in &d.marks {
        match m {
            MarkLine::Answer { x, y, .. } => occupied.push((frac(*x, *y), 3)),
            MarkLine::Shade { points, .. } => {
                let poly: Vec<(f64, f64)> = points.iter().map(|&(x, y)| frac(x, y)).collect();
                for i in 0..12 {
                    for j in 0..12 {
                        let p = ((i as f64 + 0.5) / 12.0, (j as f64 + 0.5) / 12.0);
                        if inside(&poly, p) {
                            occupied.push((p, 1));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut best = (usize::MAX, SeriesLabelPosition::UpperRight);
    for (pos, (ax, bx), (ay, by)) in corners {
        let n: usize = occupied
            .iter()
            .filter(|((fx, fy), _)| *fx >= ax && *fx <= bx && *fy >= ay && *fy <= by)
            .map(|(_, w)| w)
            .sum();
        if n < best.0 {
            best = (n, pos);
        }
    }
    // Does the legend itself, at that place and of its estimated size (`bw` × `bh` of the
    // plot), cover a curve, an answer or the shaded region?
    let (ax, bx) = match best.1 {
        SeriesLabelPosition::UpperLeft
        | SeriesLabelPosition::MiddleLeft
        | SeriesLabelPosition::LowerLeft => (0.0, bw),
        _ => (1.0 - bw, 1.0),
    };
    let (ay, by) = match best.1 {
        SeriesLabelPosition::UpperLeft | SeriesLabelPosition::UpperRight => (1.0 - bh, 1.0),
        SeriesLabelPosition::LowerLeft | SeriesLabelPosition::LowerRight => (0.0, bh),
        _ => (0.5 - bh / 2.0, 0.5 + bh / 2.0),
    };
    let covered = occupied
        .iter()
        .any(|((fx, fy), _)| *fx >= ax && *fx <= bx && *fy >= ay && *fy <= by);
    (best.1, best.0 > 0 && covered)
}

/// The legend's entries as [`draw`](super::draw::draw) gives them (for its size, before drawing).
pub(super) fn legend_labels(d: &ChartData) -> Vec<&str> {
    let mut v: Vec<&str> = d.curves.iter().map(|c| c.label.as_str()).collect();
    for m in &d.marks {
        match m {
            MarkLine::V { label, .. }
            | MarkLine::VStyled { label, .. }
            | MarkLine::H { label, .. }
            | MarkLine::PerSeries { label, .. }
            | MarkLine::Shade { label, .. } => v.push(label),
            MarkLine::Answer { .. } | MarkLine::Note { .. } => {}
        }
    }
    if d.marks.iter().any(|m| matches!(m, MarkLine::Answer { .. })) {
        v.push("the answer (safe value at 95 %)");
    }
    let zero = |c: &Curve| c.points.iter().any(|p| p.y == 0.0 && p.band.is_some());
    if d.log_y && d.curves.iter().any(zero) {
        v.push("no run had the event: upper 95 % bound");
    }
    v
}

/// Width in pixels of the legend column a crowded plot gets (see [`legend_corner`]).
pub(super) const LEGEND_COLUMN: i32 = 270;

/// How a legend entry is drawn (its sample, 22 pixels wide).
#[derive(Clone, Copy)]
pub(super) enum Glyph {
    /// A solid line of this colour and width.
    Line(RGBColor, u32),
    /// A dashed line: dash, gap, colour.
    Dashed(i32, i32, RGBColor),
    /// A filled swatch (a shaded region).
    Swatch(ShapeStyle),
    /// The answer's diamond.
    Diamond,
    /// The upper bound's triangle.
    Triangle,
}

/// The legend in a column of its own (right of a plot with no free corner): each entry's
/// sample, and its text wrapped to the column.
pub(super) fn legend_column<DB: DrawingBackend>(
    col: &DrawingArea<DB, Shift>,
    entries: &[(String, Glyph)],
) -> DrawResult<DB> {
    let font = ("sans-serif", 13).into_font();
    let style = font.color(&BLACK);
    let width = LEGEND_COLUMN - 50;
    let mut y = 56;
    for (label, g) in entries {
        let mut lines: Vec<String> = vec![];
        for word in label.split(' ') {
            match lines.last_mut() {
                Some(l)
                    if col.estimate_text_size(&format!("{l} {word}"), &style)?.0 as i32
                        <= width =>
                {
                    l.push(' ');
                    l.push_str(word);
                }
                _ => lines.push(word.to_string()),
            }
        }
        let (x, gy) = (8, y + 8);
        let grey = RGBColor(90, 90, 90);
        match *g {
            Glyph::Line(c, w) => col.draw(&PathElement::new(
                vec![(x, gy), (x + 22, gy)],
                c.stroke_width(w),
            ))?,
            Glyph::Dashed(dash, gap, c) => col.draw(&dashed_legend(x, gy, dash, gap, c))?,
            Glyph::Swatch(st) => col.draw(&Rectangle::new([(x, gy - 6), (x + 22, gy + 6)], st))?,
            Glyph::Diamond => col.draw(&(EmptyElement::at((x + 11, gy)) + diamond(grey)))?,
            Glyph::Triangle => col.draw(&(EmptyElement::at((x + 11, gy)) + down_triangle(grey)))?,
        }
        for l in &lines {
            col.draw(&Text::new(l.clone(), (38, y), style.clone()))?;
            y += 16;
        }
        y += 6;
    }
    Ok(())
}

/// Whether `p` lies inside the polygon `poly` (even-odd rule).
fn inside(poly: &[(f64, f64)], p: (f64, f64)) -> bool {
    let mut c = false;
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + n - 1) % n]);
        if (a.1 > p.1) != (b.1 > p.1) && p.0 < (b.0 - a.0) * (p.1 - a.1) / (b.1 - a.1) + a.0 {
            c = !c;
        }
    }
    c
}
/// A 22-pixel dashed legend sample.
pub(super) fn dashed_legend(
    x: i32,
    y: i32,
    dash: i32,
    gap: i32,
    color: RGBColor,
) -> DashedPathElement<std::vec::IntoIter<(i32, i32)>, i32> {
    DashedPathElement::new(vec![(x, y), (x + 22, y)], dash, gap, color.stroke_width(2))
}
#[cfg(test)]
mod tests {
    use super::super::data::CurvePoint;
    use super::super::draw::draw;
    use super::super::output::{register_fonts, SIZE};
    use super::*;

    fn curve(label: &str, pts: &[(f64, f64)]) -> Curve {
        Curve {
            label: label.into(),
            points: pts
                .iter()
                .map(|&(x, y)| CurvePoint { x, y, band: None })
                .collect(),
            series_x: None,
        }
    }

    fn data(curves: Vec<Curve>) -> ChartData {
        ChartData {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: false,
            curves,
            marks: vec![],
        }
    }

    const AXES: Axes = Axes {
        log_x: false,
        log_y: false,
        y_floor: 1e-6,
        x_floor: 1e-6,
    };

    /// The x of the SVG text element whose text is `label`.
    fn text_x(svg: &str, label: &str) -> i32 {
        let end = [format!(">{label}<"), format!(">\n{label}\n<")]
            .iter()
            .find_map(|p| svg.find(p.as_str()))
            .unwrap_or_else(|| panic!("`{label}` is not drawn"));
        let tag = &svg[svg[..end].rfind("<text").expect("a text element")..end];
        let at = tag.find(" x=\"").expect("an x") + 4;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn a_legend_goes_outside_the_plot_only_when_no_place_in_it_is_free() {
        // Both diagonals and a horizontal line through the middle: every corner and side
        // holds a line.
        let crowded = data(vec![
            curve("rising", &[(0.0, 0.0), (1.0, 1.0)]),
            curve("falling", &[(0.0, 1.0), (1.0, 0.0)]),
            curve("level", &[(0.0, 0.5), (1.0, 0.5)]),
        ]);
        let r = (0.0, 1.0);
        assert!(legend_corner(&crowded, &AXES, r, r, (0.3, 0.3)).1);
        // One falling line: the upper right is free, and the legend stays in the plot.
        let free = data(vec![curve("falling", &[(0.0, 1.0), (1.0, 0.0)])]);
        let (pos, out) = legend_corner(&free, &AXES, r, r, (0.3, 0.3));
        assert!(!out);
        assert!(matches!(pos, SeriesLabelPosition::UpperRight));
        // Drawn: the crowded chart's legend text is right of the plot's right edge (where the
        // falling curve ends, at x = 1), the free one's left of it.
        register_fonts();
        for (d, outside, rgb) in [(&crowded, true, "#D62728"), (&free, false, "#1F77B4")] {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
                draw(root, d, "").unwrap();
            }
            let x = text_x(&svg, "falling");
            let line = format!("stroke=\"{rgb}\" stroke-width=\"2\" points=\"");
            let pts = &svg[svg.find(&line).expect("the falling curve") + line.len()..];
            let last = pts
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .last()
                .unwrap();
            let edge: i32 = last.split(',').next().unwrap().parse().unwrap();
            assert_eq!(
                x > edge,
                outside,
                "legend text at x = {x}, plot edge {edge}"
            );
            if outside {
                assert!(x >= SIZE.0 as i32 - LEGEND_COLUMN, "x = {x}");
            }
        }
    }
}
