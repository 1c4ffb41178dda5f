//! The checks on names and labels, which go into CSV rows, file names and an HTML page.

use super::MAX_NAME_CHARS;

/// Refuse text that cannot round-trip through a CSV row, a file name or an HTML page:
/// empty, longer than `max` characters, or with a control character (newline, tab, NUL, DEL,
/// U+0080–U+009F) or a Unicode line/paragraph separator.
pub fn check_text(what: &str, s: &str, max: usize) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("an empty {what}"));
    }
    let n = s.chars().count();
    if n > max {
        return Err(format!("{what} {s:?} has {n} characters; at most {max}"));
    }
    if let Some((i, c)) = s
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(format!(
            "{what} {s:?} has the control character U+{:04X} at character {}; names and \
             labels go into CSV rows and an HTML page, so they must be printable",
            c as u32,
            i + 1
        ));
    }
    Ok(())
}

/// An experiment or chart name: letters, digits, `-` and `_`, at most [`MAX_NAME_CHARS`].
pub(super) fn check_file_name(what: &str, s: &str) -> Result<(), String> {
    if s.is_empty()
        || s.chars().count() > MAX_NAME_CHARS
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "{what} {s:?}: 1 to {MAX_NAME_CHARS} letters, digits, '-' and '_' (it names {})",
            if what == "chart name" {
                "the chart's files"
            } else {
                "the output folder"
            }
        ));
    }
    Ok(())
}
