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

/// The (line, col) of the first `name:` (as a RON field or a quoted map key) in `text`.
/// For a dotted path the last segment is searched, after the segments before it.
pub fn locate_field(text: &str, path: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    let mut found = None;
    for seg in path.split('.') {
        let seg = seg.trim_end_matches(']');
        let seg = seg.split('[').next().unwrap_or(seg);
        let mut hit = None;
        let mut search = from;
        while let Some(rel) = text[search..].find(seg) {
            let pos = search + rel;
            let before_ok = pos == 0
                || !text.as_bytes()[pos - 1].is_ascii_alphanumeric()
                    && text.as_bytes()[pos - 1] != b'_';
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
    fn locates_nested_fields() {
        let t = "Model(\n  world: Rollout(\n    vtgate: (\n      vtgates: 0,\n    ),\n  ),\n)";
        assert_eq!(locate_field(t, "vtgate.vtgates"), Some((4, 7)));
        assert_eq!(field_before(t, 4, 16).as_deref(), Some("vtgates"));
    }
}
