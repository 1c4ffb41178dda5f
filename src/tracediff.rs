//! Comparing JSONL traces record by record, for `vtsim diff` and `vtsim replay --check`.
//!
//! A trace is one JSON object per line (`replay --trace` writes them). Records are compared
//! as JSON values, whatever their fields (events, and any other record type a model writes),
//! so two traces are equal when every line holds the same object. Both files are streamed:
//! memory holds the context records and one line of each (a line may be at most
//! [`MAX_LINE_BYTES`]), whatever the trace's length.

use serde_json::Value;
use std::collections::VecDeque;
use std::fmt;
use std::io::{BufRead, BufReader, Read};

/// The longest line read: 1 MiB (a trace record is under 200 bytes).
pub const MAX_LINE_BYTES: u64 = 1 << 20;
/// The most context records `diff --context` shows.
pub const MAX_CONTEXT: usize = 100;

/// One line of a trace.
#[derive(Clone, Debug)]
pub struct Record {
    /// 1-based line number.
    pub line: u64,
    /// The line as written (without its newline).
    pub text: String,
    /// The line parsed.
    pub value: Value,
}

/// A trace that is not JSONL, or cannot be read: the file, the line and what is wrong.
#[derive(Debug)]
pub struct BadTrace {
    /// The file as named.
    pub name: String,
    /// 1-based line (0: the file as a whole).
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for BadTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.name, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.name, self.message)
        }
    }
}

impl std::error::Error for BadTrace {}

/// Reads a JSONL trace one record at a time.
pub struct Reader<R> {
    name: String,
    r: BufReader<R>,
    line: u64,
    buf: Vec<u8>,
}

impl<R: Read> Reader<R> {
    /// Read `r`, calling it `name` in messages.
    pub fn new(name: impl Into<String>, r: R) -> Self {
        Reader {
            name: name.into(),
            r: BufReader::with_capacity(1 << 16, r),
            line: 0,
            buf: Vec::new(),
        }
    }

    fn bad(&self, message: String) -> BadTrace {
        BadTrace {
            name: self.name.clone(),
            line: self.line,
            message,
        }
    }

    /// The next record, `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>, BadTrace> {
        self.buf.clear();
        let n = (&mut self.r)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| self.bad(format!("cannot read: {}", crate_io_words(&e.to_string()))))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        } else if n as u64 > MAX_LINE_BYTES {
            return Err(self.bad(format!(
                "a line longer than {MAX_LINE_BYTES} bytes; not a JSONL trace"
            )));
        }
        let text = match std::str::from_utf8(&self.buf) {
            Ok(t) => t.to_string(),
            Err(e) => {
                return Err(self.bad(format!(
                    "not UTF-8 (byte 0x{:02x} at column {}); not a JSONL trace",
                    self.buf[e.valid_up_to()],
                    e.valid_up_to() + 1
                )))
            }
        };
        if text.trim().is_empty() {
            return Err(
                self.bad("an empty line; a JSONL trace has one JSON object on every line".into())
            );
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            self.bad(format!(
                "not a JSON record (column {}: {}); a JSONL trace has one JSON object on every line",
                e.column(),
                strip_position(&e.to_string())
            ))
        })?;
        if !value.is_object() {
            return Err(self.bad(format!(
                "a JSON {}, not an object; a JSONL trace has one JSON object on every line",
                kind_of(&value)
            )));
        }
        Ok(Some(Record {
            line: self.line,
            text,
            value,
        }))
    }

    /// Read (and check) the rest; returns how many records there were.
    fn count_rest(&mut self) -> Result<u64, BadTrace> {
        let mut n = 0;
        while self.next_record()?.is_some() {
            n += 1;
        }
        Ok(n)
    }
}

fn crate_io_words(s: &str) -> String {
    crate::experiment::error::plain_words(s)
}

/// serde_json's message without its " at line 1 column 7" suffix (the column is reported
/// separately; the line is always 1 within one record).
fn strip_position(s: &str) -> String {
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s.to_string(),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// How two traces compare.
#[derive(Debug)]
pub enum Outcome {
    /// Every record is the same.
    Same {
        /// Records in each.
        records: u64,
    },
    /// Record `index` (0-based) differs.
    Differ {
        /// 0-based index of the first differing record.
        index: u64,
        /// The records before it (at most the context asked for).
        context: Vec<Record>,
        /// The first trace's record.
        a: Record,
        /// The second trace's record.
        b: Record,
        /// Records in the first trace.
        a_records: u64,
        /// Records in the second trace.
        b_records: u64,
    },
    /// One trace is a prefix of the other.
    Ended {
        /// 0 when the first trace ended first, 1 when the second did.
        shorter: usize,
        /// Records both have (all of the shorter one).
        common: u64,
        /// The records before the end (at most the context asked for).
        context: Vec<Record>,
        /// The longer trace's first record past the end of the shorter.
        next: Record,
        /// Records in the longer trace.
        longer_records: u64,
    },
}

impl Outcome {
    /// Are the traces equal?
    pub fn same(&self) -> bool {
        matches!(self, Outcome::Same { .. })
    }
}

/// Compare two traces record by record, keeping `context` records before the first
/// difference. Both are read to the end (so a bad line anywhere is reported).
pub fn compare<A: Read, B: Read>(
    a: &mut Reader<A>,
    b: &mut Reader<B>,
    context: usize,
) -> Result<Outcome, BadTrace> {
    let mut ctx: VecDeque<Record> = VecDeque::with_capacity(context + 1);
    let mut index = 0u64;
    loop {
        let (ra, rb) = (a.next_record()?, b.next_record()?);
        match (ra, rb) {
            (None, None) => return Ok(Outcome::Same { records: index }),
            (Some(ra), Some(rb)) => {
                if ra.value != rb.value {
                    let a_records = index + 1 + a.count_rest()?;
                    let b_records = index + 1 + b.count_rest()?;
                    return Ok(Outcome::Differ {
                        index,
                        context: ctx.into(),
                        a: ra,
                        b: rb,
                        a_records,
                        b_records,
                    });
                }
                if context > 0 {
                    if ctx.len() == context {
                        ctx.pop_front();
                    }
                    ctx.push_back(ra);
                }
                index += 1;
            }
            (None, Some(next)) => {
                let longer_records = index + 1 + b.count_rest()?;
                return Ok(Outcome::Ended {
                    shorter: 0,
                    common: index,
                    context: ctx.into(),
                    next,
                    longer_records,
                });
            }
            (Some(next), None) => {
                let longer_records = index + 1 + a.count_rest()?;
                return Ok(Outcome::Ended {
                    shorter: 1,
                    common: index,
                    context: ctx.into(),
                    next,
                    longer_records,
                });
            }
        }
    }
}

/// "t = 12.5 s, component `vtgate`, index 3, kind `poll`" from whichever of those fields
/// (and `type`) the record has.
pub fn describe(v: &Value) -> String {
    let mut parts = vec![];
    if let Some(t) = v.get("t_s").and_then(Value::as_f64) {
        parts.push(format!("t = {t} s"));
    } else if let Some(t) = v.get("t_ns").and_then(Value::as_u64) {
        parts.push(format!("t = {} s", t as f64 / 1e9));
    }
    for key in ["type", "component", "index", "kind"] {
        match v.get(key) {
            Some(Value::String(s)) => parts.push(format!("{key} `{s}`")),
            Some(other) if !other.is_null() => parts.push(format!("{key} {other}")),
            _ => {}
        }
    }
    parts.join(", ")
}

/// The top-level fields whose values differ (present in one only included).
pub fn differing_fields(a: &Value, b: &Value) -> Vec<String> {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return vec![];
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| k.to_string())
        .collect()
}

/// A report of an outcome; `names` are what to call the two traces.
pub fn render(o: &Outcome, names: [&str; 2]) -> String {
    let mut s = String::new();
    let ctx = |s: &mut String, context: &[Record]| {
        if !context.is_empty() {
            s.push_str(&format!(
                "  the {} record{} before it (equal in both):\n",
                context.len(),
                if context.len() == 1 { "" } else { "s" }
            ));
            for r in context {
                s.push_str(&format!("    line {:>8}  {}\n", r.line, r.text));
            }
        }
    };
    match o {
        Outcome::Same { records } => {
            s.push_str(&format!("same: {records} records\n"));
        }
        Outcome::Differ {
            index,
            context,
            a,
            b,
            a_records,
            b_records,
        } => {
            s.push_str(&format!(
                "first difference: record {index} (line {}): {}\n",
                a.line,
                describe(&a.value)
            ));
            let fields = differing_fields(&a.value, &b.value);
            if !fields.is_empty() {
                s.push_str(&format!("  fields that differ: {}\n", fields.join(", ")));
            }
            ctx(&mut s, context);
            let w = names[0].len().max(names[1].len());
            s.push_str(&format!("  {:<w$}  {}\n", names[0], a.text));
            s.push_str(&format!("  {:<w$}  {}\n", names[1], b.text));
            s.push_str(&format!(
                "{}: {a_records} records, {}: {b_records}\n",
                names[0], names[1]
            ));
        }
        Outcome::Ended {
            shorter,
            common,
            context,
            next,
            longer_records,
        } => {
            let (short, long) = (names[*shorter], names[1 - shorter]);
            s.push_str(&format!(
                "{short} ended first, after {common} records; {long} goes on to {longer_records}\n"
            ));
            ctx(&mut s, context);
            s.push_str(&format!(
                "  {long} record {common} (line {}): {}\n    {}\n",
                next.line,
                describe(&next.value),
                next.text
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(name: &str, text: &str) -> Reader<std::io::Cursor<Vec<u8>>> {
        Reader::new(name, std::io::Cursor::new(text.as_bytes().to_vec()))
    }

    const T: &str = "{\"t_s\":1.0,\"component\":\"a\",\"kind\":\"x\",\"a\":1}\n\
                     {\"t_s\":2.0,\"component\":\"b\",\"kind\":\"y\",\"a\":2}\n\
                     {\"t_s\":3.0,\"component\":\"c\",\"kind\":\"z\",\"a\":3}\n";

    #[test]
    fn equal_traces_are_the_same() {
        let o = compare(&mut reader("A", T), &mut reader("B", T), 3).unwrap();
        assert!(matches!(o, Outcome::Same { records: 3 }));
    }

    #[test]
    fn the_first_difference_is_found_with_its_context() {
        let u = T.replace("\"a\":3", "\"a\":4");
        let o = compare(&mut reader("A", T), &mut reader("B", &u), 1).unwrap();
        let Outcome::Differ {
            index, context, a, ..
        } = &o
        else {
            panic!("{o:?}")
        };
        assert_eq!((*index, a.line), (2, 3));
        assert_eq!(context.len(), 1);
        assert_eq!(context[0].line, 2);
        let r = render(&o, ["A", "B"]);
        assert!(
            r.contains("record 2 (line 3): t = 3 s, component `c`, kind `z`"),
            "{r}"
        );
        assert!(r.contains("fields that differ: a"), "{r}");
    }

    #[test]
    fn a_prefix_says_which_ended_first() {
        let short: String = T.lines().take(2).map(|l| format!("{l}\n")).collect();
        let o = compare(&mut reader("A", T), &mut reader("B", &short), 3).unwrap();
        assert!(matches!(
            o,
            Outcome::Ended {
                shorter: 1,
                common: 2,
                longer_records: 3,
                ..
            }
        ));
        assert!(render(&o, ["A", "B"]).starts_with("B ended first, after 2 records"));
    }

    #[test]
    fn bad_lines_name_the_line() {
        for (text, want) in [
            ("{\"a\":1}\nnot json\n", "B:2: not a JSON record"),
            ("{\"a\":1}\n\n", "B:2: an empty line"),
            ("[1]\n", "B:1: a JSON array"),
            ("{\"a\":1}\n{\"a\":", "B:2: not a JSON record"),
        ] {
            let e = compare(&mut reader("A", T), &mut reader("B", text), 3).unwrap_err();
            assert!(e.to_string().starts_with(want), "{e}");
        }
    }
}
