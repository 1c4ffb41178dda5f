//! Input errors: every one names the file, the line and column, the field, and what was expected.

use std::fmt;
use std::path::Path;

/// A model or experiment file that cannot be used. Exit code 2 in the CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file, as the user named it.
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// 1-based column (0 when unknown).
    pub col: usize,
    /// The field (dotted path where known; empty when the file is unreadable as a whole).
    pub field: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.col)?;
        }
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for InputError {}

/// Bad input that is not a file's (a command-line value, an override that does not fit): an
/// error that exits with code 2, as opposed to 1 (a failure while running).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

impl InputError {
    /// An error about the whole file (unreadable, missing).
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        InputError {
            file: path.display().to_string(),
            line: 0,
            col: 0,
            field: String::new(),
            message: message.into(),
        }
    }

    /// An error about `field`, located at its first `field:` in `text` when it can be found.
    pub fn field(path: &Path, text: &str, field: &str, message: impl Into<String>) -> Self {
        let (line, col) = locate_field(text, field).unwrap_or((0, 0));
        InputError {
            file: path.display().to_string(),
            line,
            col,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// An error about `field` at a known (line, col) (or `None`: unknown).
    pub fn at(
        path: &Path,
        at: Option<(usize, usize)>,
        field: &str,
        message: impl Into<String>,
    ) -> Self {
        let (line, col) = at.unwrap_or((0, 0));
        InputError {
            file: path.display().to_string(),
            line,
            col,
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// A file that is not UTF-8: the line, column and byte offset of its first bad byte.
    pub fn not_utf8(path: &Path, bytes: &[u8], e: &std::str::Utf8Error) -> Self {
        let off = e.valid_up_to();
        // Everything before `off` is valid UTF-8.
        let good = std::str::from_utf8(&bytes[..off]).unwrap_or_default();
        let (line, col) = line_col(good, good.len());
        let bad = bytes.get(off).copied().unwrap_or(0);
        InputError {
            file: path.display().to_string(),
            line,
            col,
            field: String::new(),
            message: format!(
                "not UTF-8: byte 0x{bad:02x} at byte offset {off} (line {line}, column {col}); \
                 model and experiment files are UTF-8 text"
            ),
        }
    }

    /// Translate a RON parse error, recovering the field name from the source line.
    pub fn from_ron(path: &Path, text: &str, e: &ron::error::SpannedError) -> Self {
        use ron::error::Error as E;
        let (line, col) = (e.span.start.line, e.span.start.col);
        let (field, message) = match &e.code {
            E::NoSuchStructField {
                expected,
                found,
                outer,
            } => (
                found.clone(),
                format!(
                    "unknown field in {}; expected one of: {}",
                    outer.as_deref().unwrap_or("this struct"),
                    expected.join(", ")
                ),
            ),
            E::MissingStructField { field, outer } => (
                field.to_string(),
                format!(
                    "missing field in {}",
                    outer.as_deref().unwrap_or("this struct")
                ),
            ),
            E::DuplicateStructField { field, .. } => {
                (field.to_string(), "written twice".to_string())
            }
            E::NoSuchEnumVariant {
                expected, found, ..
            } => (
                field_before(text, line, col).unwrap_or_default(),
                format!(
                    "unknown variant `{found}`; expected one of: {}",
                    expected.join(", ")
                ),
            ),
            E::Eof => (
                String::new(),
                "the file ends early: a parenthesis, bracket or quote is not closed".to_string(),
            ),
            E::ExpectedString => (
                field_before(text, line, col).unwrap_or_default(),
                "expected a string (durations are strings such as \"90s\" or \"250ms\")"
                    .to_string(),
            ),
            other => (
                field_before(text, line, col).unwrap_or_default(),
                other.to_string(),
            ),
        };
        InputError {
            file: path.display().to_string(),
            line,
            col,
            field,
            message,
        }
    }
}

/// An I/O error in plain words: the OS's message without Rust's `(os error N)` suffix
/// ("No such file or directory", "Permission denied", "No space left on device").
pub fn io_words(e: &std::io::Error) -> String {
    plain_words(&e.to_string())
}

/// [`io_words`] for an error already turned into text.
pub fn plain_words(s: &str) -> String {
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s.to_string(),
    }
}

/// The (line, col) of the first `name:` (as a RON field or a quoted map key) in `text`.
/// For a dotted path the last segment is searched, after the segments before it; `[i]`
/// suffixes are ignored. Empty segments (`""`, `a..b`) are skipped, so the search always ends:
/// each step moves past a non-empty match. A path with no segment left is searched as a quoted
/// key only (`""` for an empty key).
pub fn locate_field(text: &str, path: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    let mut found = None;
    for seg in path.split('.') {
        let seg = seg.split('[').next().unwrap_or(seg).trim_end_matches(']');
        if seg.is_empty() {
            continue;
        }
        let mut hit = None;
        let mut search = from;
        while let Some(rel) = text.get(search..).and_then(|t| t.find(seg)) {
            let pos = search + rel;
            let before = text[..pos].chars().next_back();
            let before_ok = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let after = text[pos + seg.len()..].trim_start();
            if before_ok && after.starts_with(':') {
                hit = Some(pos);
                break;
            }
            search = pos + seg.len();
        }
        match hit {
            Some(p) => {
                from = p + seg.len();
                found = Some(p);
            }
            None => break,
        }
    }
    if let Some(p) = found {
        return Some(line_col(text, p));
    }
    // A quoted key (experiment `set: { "a.b": .. }`, axis `param: "a.b"`).
    text.find(&format!("\"{path}\""))
        .map(|pos| line_col(text, pos))
}

/// The (line, col) of the quoted string `"key"` after the first `section:` of `text` (e.g. a
/// key of the experiment's `set` map, or an axis `param`), else anywhere, else `None`.
pub fn locate_quoted_after(text: &str, section: &str, key: &str) -> Option<(usize, usize)> {
    locate_nth_quoted_after(text, section, key, 0)
}

/// As [`locate_quoted_after`], for the `nth` (0-based) occurrence after `section:` (the
/// second of two axes on one parameter); the last one found when there are fewer.
pub fn locate_nth_quoted_after(
    text: &str,
    section: &str,
    key: &str,
    nth: usize,
) -> Option<(usize, usize)> {
    nth_quoted_offset(text, section, key, nth).map(|p| line_col(text, p))
}

/// The (line, col) of the first `field:` after the `nth` quoted `"key"` after `section:`
/// (a chart's `x:` after its `name: "…"`); else of the key itself.
pub fn locate_field_after_quoted(
    text: &str,
    section: &str,
    key: &str,
    nth: usize,
    field: &str,
) -> Option<(usize, usize)> {
    let start = nth_quoted_offset(text, section, key, nth)?;
    // The field may come before the name inside the same struct: search from the struct's
    // opening parenthesis.
    let open = text[..start].rfind('(').unwrap_or(start);
    locate_field(&text[open..], field)
        .and_then(|(l, c)| offset_of(&text[open..], l, c))
        .map(|p| line_col(text, open + p))
        .or(Some(line_col(text, start)))
}

fn nth_quoted_offset(text: &str, section: &str, key: &str, nth: usize) -> Option<usize> {
    let quoted = format!("\"{key}\"");
    let start = locate_field(text, section)
        .and_then(|(l, c)| offset_of(text, l, c))
        .unwrap_or(0);
    let mut found = None;
    let mut from = start;
    for _ in 0..=nth {
        match text[from..].find(&quoted) {
            Some(p) => {
                found = Some(from + p);
                from += p + quoted.len();
            }
            None => break,
        }
    }
    found.or_else(|| text.find(&quoted))
}

/// The byte offset of 1-based (line, col) in `text`.
fn offset_of(text: &str, line: usize, col: usize) -> Option<usize> {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return l
                .char_indices()
                .nth(col.checked_sub(1)?)
                .map(|(b, _)| off + b);
        }
        off += l.len();
    }
    None
}

/// The 1-based (line, col) of byte offset `pos` in `text` (col counts characters).
pub fn locate_offset(text: &str, pos: usize) -> (usize, usize) {
    let mut pos = pos.min(text.len());
    while !text.is_char_boundary(pos) {
        pos -= 1;
    }
    line_col(text, pos)
}

fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// The last `name:` on `line` before `col` (1-based), e.g. the field whose value failed.
fn field_before(text: &str, line: usize, col: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?;
    let upto: String = l.chars().take(col.saturating_sub(1)).collect();
    let colon = upto.rfind(':')?;
    let name: String = upto[..colon]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locator_ends_on_any_path() {
        let t = "Experiment(\n  set: { \"\": 1, \"é.ü\": 2 },\n  axes: [Axis(param: \"a..b\")],\n)";
        // Empty paths and segments are skipped; a path of nothing but separators is looked
        // up as a quoted key.
        assert_eq!(locate_field(t, ""), Some((2, 10)));
        for p in [
            ".", "..", "a..b", "[", "]", "[0]", ".[.].", "é.ü", "ü", "set.", "\u{0}",
        ] {
            let _ = locate_field(t, p);
            let _ = locate_quoted_after(t, "set", p);
        }
        assert_eq!(locate_field(t, "set"), Some((2, 3)));
        assert_eq!(locate_quoted_after(t, "set", "é.ü"), Some((2, 17)));
        assert_eq!(locate_quoted_after(t, "axes", "a..b"), Some((3, 22)));
        assert_eq!(locate_field("", "a"), None);
        assert_eq!(locate_offset("ab\ncé", 6), (2, 3));
    }

    #[test]
    fn non_utf8_is_located() {
        let bytes: Vec<u8> = b"Model(\n  name: \"\xff\",\n)".to_vec();
        let e = String::from_utf8(bytes.clone()).unwrap_err().utf8_error();
        let bytes = &bytes[..];
        let err = InputError::not_utf8(Path::new("m.ron"), bytes, &e);
        assert_eq!((err.line, err.col), (2, 10));
        assert!(err
            .to_string()
            .starts_with("m.ron:2:10: not UTF-8: byte 0xff at byte offset 16"));
    }

    #[test]
    fn io_errors_in_plain_words() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io_words(&e), "No such file or directory");
        assert_eq!(plain_words("disk full"), "disk full");
    }

    #[test]
    fn locates_nested_fields() {
        let t = "Model(\n  world: Rollout(\n    vtgate: (\n      vtgates: 0,\n    ),\n  ),\n)";
        assert_eq!(locate_field(t, "vtgate.vtgates"), Some((4, 7)));
        assert_eq!(field_before(t, 4, 16).as_deref(), Some("vtgates"));
    }
}
