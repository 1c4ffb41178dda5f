//! CSV records as vtsim writes and reads them: one record per line (a quoted field may hold
//! line breaks), `\n` endings, RFC 4180 quoting. [`csv_line`] writes a record, [`Records`]
//! reads a file back record by record keeping each record's bytes, [`split_fields`] splits
//! one, and [`CsvLine`] checks that a record's bytes are exactly what the writer gives.

use super::{at, open, IoError};
use anyhow::{bail, Result};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Longest CSV record read back (a longer one is damage, e.g. an unclosed quote).
pub const MAX_RECORD: usize = 16 << 20;

pub fn csv_line(fields: &[String]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(vec![]);
    w.write_record(fields).expect("write to memory");
    w.into_inner().expect("flush to memory")
}

/// One CSV record as read from a file.
pub enum Record {
    /// A complete record: its bytes (ending in `\n`) and the line it starts on.
    Row(Vec<u8>, u64),
    /// The file ends inside a record (a kill tore the last write): its bytes.
    Torn(Vec<u8>),
    /// The file ends.
    End,
}

/// What [`Records::next_into`] read into its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// A complete record, starting on this line.
    Row(u64),
    /// The file ends inside a record.
    Torn,
    /// The file ends.
    End,
}

/// Reads a CSV file record by record, keeping each record's bytes: a record ends at a line
/// break outside quotes, so a quoted field may hold line breaks.
pub struct Records {
    r: BufReader<fs::File>,
    path: PathBuf,
    line: u64,
    offset: u64,
}

impl Records {
    /// Open `path`.
    pub fn open(path: &Path) -> Result<Self, IoError> {
        Ok(Records {
            r: BufReader::with_capacity(1 << 20, open(path)?),
            path: path.to_path_buf(),
            line: 1,
            offset: 0,
        })
    }

    /// Byte offset of the next record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next record.
    pub fn next_record(&mut self) -> Result<Record> {
        let mut buf = Vec::new();
        Ok(match self.next_into(&mut buf)? {
            Next::Row(line) => Record::Row(buf, line),
            Next::Torn => Record::Torn(buf),
            Next::End => Record::End,
        })
    }

    /// [`Self::next_record`] into `buf` (cleared first), so that a reader of many rows
    /// reuses one buffer instead of allocating one per row: `buf` holds the record's bytes
    /// (a row's ending in `\n`, or a torn record's).
    pub fn next_into(&mut self, buf: &mut Vec<u8>) -> Result<Next> {
        buf.clear();
        let mut quotes = 0usize;
        let start_line = self.line;
        loop {
            let from = buf.len();
            // Bounded: a damaged file with no line break does not fill memory.
            let room = (MAX_RECORD + 1).saturating_sub(buf.len()) as u64;
            let n = (&mut self.r)
                .take(room)
                .read_until(b'\n', buf)
                .map_err(at("reading", &self.path))?;
            if buf.len() > MAX_RECORD {
                bail!(
                    "{}: the record starting on line {start_line} is longer than {} MiB \
                     (an unclosed quote, or not a runs.csv); the file is damaged",
                    self.path.display(),
                    MAX_RECORD >> 20
                );
            }
            if n == 0 {
                return Ok(if buf.is_empty() {
                    Next::End
                } else {
                    Next::Torn
                });
            }
            quotes += buf[from..].iter().filter(|b| **b == b'"').count();
            if buf.last() != Some(&b'\n') {
                return Ok(Next::Torn);
            }
            self.line += 1;
            if quotes.is_multiple_of(2) {
                self.offset += buf.len() as u64;
                return Ok(Next::Row(start_line));
            }
        }
    }
}

/// Split one CSV record (RFC 4180 quoting) into its fields.
pub fn split_fields(raw: &[u8]) -> Result<Vec<String>, String> {
    let body = raw.strip_suffix(b"\n").unwrap_or(raw);
    // Room for every field at once (a bound: a quoted field may hold commas), so a row of
    // many fields is not regrown field by field.
    let mut fields = Vec::with_capacity(body.iter().filter(|&&b| b == b',').count() + 1);
    let mut i = 0;
    loop {
        let mut f = Vec::new();
        let last;
        if body.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match body.get(i) {
                    None => return Err(format!("field {} has no closing quote", fields.len() + 1)),
                    Some(b'"') if body.get(i + 1) == Some(&b'"') => {
                        f.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        f.push(c);
                        i += 1;
                    }
                }
            }
            match body.get(i) {
                None => last = true,
                Some(b',') => {
                    i += 1;
                    last = false;
                }
                Some(_) => {
                    return Err(format!(
                        "field {} has text after its closing quote",
                        fields.len() + 1
                    ))
                }
            }
        } else {
            let end = body[i..]
                .iter()
                .position(|&c| c == b',')
                .map_or(body.len(), |p| i + p);
            f.extend_from_slice(&body[i..end]);
            last = end == body.len();
            i = end + 1;
        }
        let s =
            String::from_utf8(f).map_err(|_| format!("field {} is not UTF-8", fields.len() + 1))?;
        fields.push(s);
        if last {
            return Ok(fields);
        }
    }
}

/// A CSV writer into a buffer that is reused from record to record.
pub struct CsvLine {
    buf: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
    w: csv::Writer<SharedBuf>,
}

struct SharedBuf(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Default for CsvLine {
    fn default() -> Self {
        Self::new()
    }
}

impl CsvLine {
    /// A writer with an empty buffer.
    pub fn new() -> Self {
        let buf = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(SharedBuf(buf.clone()));
        CsvLine { buf, w }
    }
    /// Whether `raw` is exactly what vtsim's writer gives for `fields`.
    pub fn is(&mut self, fields: &[String], raw: &[u8]) -> bool {
        // Fast path, no writing: when no field needs quotes (none holds a delimiter, a quote,
        // `\r` or `\n`, and the record is not one empty field, which the writer quotes), the
        // writer gives the fields joined by `,` and ended by `\n` (csv_core, `needs_quotes`).
        let plain = |f: &String| !f.bytes().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'));
        if fields.iter().all(plain) && !(fields.len() == 1 && fields[0].is_empty()) {
            let mut rest = raw;
            for (i, f) in fields.iter().enumerate() {
                if i > 0 {
                    match rest.split_first() {
                        Some((b',', r)) => rest = r,
                        _ => return false,
                    }
                }
                match rest.strip_prefix(f.as_bytes()) {
                    Some(r) => rest = r,
                    None => return false,
                }
            }
            return rest == b"\n";
        }
        self.buf.borrow_mut().clear();
        self.w.write_record(fields).expect("write to memory");
        self.w.flush().expect("flush to memory");
        *self.buf.borrow() == raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn fields_split_as_the_csv_writer_joins_them() {
        let cases: Vec<Vec<String>> = vec![
            vec!["a".into(), "b,c".into(), "say \"hi\"".into()],
            vec!["line\nbreak".into(), "".into(), "x".into()],
            vec!["".into()],
            vec!["a".into(), "".into()],
            vec!["\r".into(), " lead".into()],
        ];
        for f in cases {
            let line = csv_line(&f);
            assert_eq!(split_fields(&line).unwrap(), f, "{line:?}");
            let mut c = CsvLine::new();
            assert!(c.is(&f, &line));
        }
        assert!(split_fields(b"\"open\n").is_err());
        assert!(split_fields(b"\"a\"b\n").is_err());
    }

    /// The fast path of `CsvLine::is` agrees with the writer on every record, plain or not,
    /// against the writer's own bytes and against near misses.
    #[test]
    fn the_plain_fast_path_agrees_with_the_writer() {
        let parts = [
            "", "a", "1.5", "a,b", "q\"", "x\ny", "\r", " s ", "0xff", "#c", "é",
        ];
        let mut records: Vec<Vec<String>> = vec![];
        for a in parts {
            records.push(vec![a.into()]);
            for b in parts {
                records.push(vec![a.into(), b.into()]);
                records.push(vec![a.into(), b.into(), "z".into()]);
            }
        }
        for f in &records {
            let line = csv_line(f);
            let mut c = CsvLine::new();
            assert!(c.is(f, &line), "{f:?} {line:?}");
            let mut c = CsvLine::new();
            let mut longer = line.clone();
            longer.insert(longer.len() - 1, b'0');
            assert!(!c.is(f, &longer), "{f:?} {longer:?}");
            let mut c = CsvLine::new();
            assert!(
                !c.is(f, &line[..line.len() - 1]),
                "{f:?} without its line break"
            );
            let mut c = CsvLine::new();
            let mut crlf = line[..line.len() - 1].to_vec();
            crlf.extend_from_slice(b"\r\n");
            assert!(!c.is(f, &crlf), "{f:?} with CRLF");
        }
    }

    #[test]
    fn records_keep_quoted_line_breaks_and_report_a_torn_end() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.csv");
        fs::write(&p, "h1,h2\n\"a\nb\",c\nd,\"e").unwrap();
        let mut r = Records::open(&p).unwrap();
        assert!(matches!(r.next_record().unwrap(), Record::Row(b, 1) if b == b"h1,h2\n"));
        assert!(matches!(r.next_record().unwrap(), Record::Row(b, 2) if b == b"\"a\nb\",c\n"));
        assert_eq!(r.offset(), 14);
        assert!(matches!(r.next_record().unwrap(), Record::Torn(b) if b == b"d,\"e"));
    }
}
