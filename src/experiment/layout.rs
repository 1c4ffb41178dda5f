//! The layout of `runs.csv`, shared by the runner (which writes rows, and verifies the rows it
//! reads: a resumed partial file, a shard's rows in `merge`): the header, a row's bytes
//! ([`RowWriter`]), and the check that a row read back is exactly the one job `j` of a plan
//! writes ([`RowChecker`]). Neither allocates per row.

use super::plan::Plan;
use crate::io::csv::{csv_line, split_fields, CsvLine};
use crate::model::RunOutput;
use crate::sim::rng::replicate_seed;

/// The `runs.csv` header for a plan.
pub fn runs_header(plan: &Plan) -> Vec<String> {
    let mut h: Vec<String> = ["job", "point", "replicate", "seed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    h.extend(plan.columns.iter().cloned());
    h.extend(plan.kept_defs().iter().map(|d| d.name.to_string()));
    h.push("events".into());
    h.push("digest".into());
    h
}

/// The `runs.csv` row of job `j` (seed `seed`) whose run gave `r`.
pub fn format_row(plan: &Plan, j: u64, seed: u64, r: RunOutput) -> Vec<u8> {
    debug_assert_eq!(
        seed,
        replicate_seed(plan.experiment.seed, j % plan.replicates())
    );
    let mut out = Vec::with_capacity(256);
    RowWriter::new().write_row(plan, j, &r, &mut out);
    out
}

/// Writes `runs.csv` rows into a caller's buffer without allocating per row: the labels of
/// the point it is on are encoded once (and again only when the point changes), integers and
/// seeds are formatted on the stack, metrics with the standard library's `Display` for `f64`
/// (the shortest text that reads back as the same number, never an exponent), exactly as
/// [`csv_line`] would write the same fields (RFC 4180 quoting where a field holds `,`, `"`,
/// `\r` or `\n`; `tests` below check the two agree).
#[derive(Default)]
pub struct RowWriter {
    point: Option<usize>,
    /// The point's labels as written, each followed by `,`.
    labels: Vec<u8>,
}

impl RowWriter {
    /// A writer on no point yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append job `j`'s fields up to its first metric: `job,point,replicate,seed,labels…,`.
    pub fn write_prefix(&mut self, plan: &Plan, j: u64, out: &mut Vec<u8>) {
        let reps = plan.replicates();
        let (p, r) = (j / reps, j % reps);
        push_u64(out, j);
        out.push(b',');
        push_u64(out, p);
        out.push(b',');
        push_u64(out, r);
        out.push(b',');
        push_seed(out, replicate_seed(plan.experiment.seed, r));
        out.push(b',');
        if self.point != Some(p as usize) {
            self.labels.clear();
            for l in &plan.points[p as usize].labels {
                push_field(&mut self.labels, l.as_bytes());
                self.labels.push(b',');
            }
            self.point = Some(p as usize);
        }
        out.extend_from_slice(&self.labels);
    }

    /// Append job `j`'s row (its run gave `r`), ending in `\n`.
    pub fn write_row(&mut self, plan: &Plan, j: u64, r: &RunOutput, out: &mut Vec<u8>) {
        use std::io::Write;
        self.write_prefix(plan, j, out);
        for &i in &plan.keep {
            write!(out, "{},", r.metrics[i]).expect("write to memory");
        }
        push_u64(out, r.events);
        out.push(b',');
        push_field(out, r.digest.as_bytes());
        out.push(b'\n');
    }
}

/// A count as vtsim writes one: decimal, no sign, no leading zero.
fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut b = [0u8; 20];
    let mut i = b.len();
    loop {
        i -= 1;
        b[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&b[i..]);
}

/// [`seed_text`] without the `String`.
fn push_seed(out: &mut Vec<u8>, seed: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"0x");
    for k in (0..16).rev() {
        out.push(HEX[((seed >> (4 * k)) & 0xf) as usize]);
    }
}

/// One field of a record of several as the `csv` writer writes it (`QuoteStyle::Necessary`,
/// `\n` terminator: quoted, with `"` doubled, when it holds `,`, `"`, `\r` or `\n`).
fn push_field(out: &mut Vec<u8>, f: &[u8]) {
    if !f.iter().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n')) {
        out.extend_from_slice(f);
        return;
    }
    out.push(b'"');
    for &b in f {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// A short count's value, from its digits: `Some` when `text` is 1 to 15 decimal digits with
/// no leading zero (below 10^15, so exact as an `f64` too).
fn short_count(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 15 || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    let mut v = 0u64;
    for &b in text {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    Some(v)
}

/// The number `text` is, when it is exactly how vtsim writes that `f64` (its `Display` text:
/// `v.to_string() == text`), without allocating: a short integer is read digit by digit
/// (`Display` writes one as its plain digits), anything else parsed, formatted into `scratch`
/// (reused; it only grows to the longest text, 327 bytes at most) and compared.
pub fn exact_f64(text: &[u8], scratch: &mut Vec<u8>) -> Option<f64> {
    use std::io::Write;
    let (neg, digits) = match text.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, text),
    };
    if let Some(v) = short_count(digits) {
        let v = v as f64;
        return Some(if neg { -v } else { v });
    }
    let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    scratch.clear();
    write!(scratch, "{v}").ok()?;
    (scratch[..] == *text).then_some(v)
}

/// A seed as `runs.csv` writes it: `0x` and 16 lowercase hex digits, the form `vtsim replay
/// --seed` takes and prints. (A decimal u64 above 2^63 is read as Int128 by polars and as a
/// float or object by pandas; a hex string loads as text everywhere.)
pub fn seed_text(seed: u64) -> String {
    format!("{seed:#018x}")
}

/// The values of a verified row, borrowed from the checker and from the row's bytes.
pub struct RowView<'c, 'r> {
    /// The kept metrics, in header order.
    pub metrics: &'c [f64],
    /// Events handled.
    pub events: u64,
    /// The run's trace digest (64 lowercase hex digits).
    pub digest: &'r [u8],
}

/// Checks rows against the plan: what job `j`'s row must say.
pub struct RowChecker<'a> {
    plan: &'a Plan,
    header: Vec<String>,
    line: CsvLine,
    /// Job `j`'s expected bytes up to its first metric (reused from row to row).
    prefix: Vec<u8>,
    writer: RowWriter,
    metrics: Vec<f64>,
    scratch: Vec<u8>,
}

impl<'a> RowChecker<'a> {
    /// A checker for `plan`'s `runs.csv` rows.
    pub fn new(plan: &'a Plan) -> Self {
        RowChecker {
            plan,
            header: runs_header(plan),
            line: CsvLine::new(),
            prefix: Vec::with_capacity(256),
            writer: RowWriter::new(),
            metrics: Vec::with_capacity(plan.keep.len()),
            scratch: Vec::with_capacity(400),
        }
    }

    /// The header bytes a `runs.csv` of this plan starts with.
    pub fn header_bytes(&self) -> Vec<u8> {
        csv_line(&self.header)
    }

    /// Check that `raw` (one record, with its `\n`) is job `j`'s row; return its values or
    /// what is wrong.
    ///
    /// Without allocating: the fields the plan fixes (job, point, replicate, seed, labels) are
    /// compared as bytes with what the writer gives for job `j`, and each metric, the event
    /// count and the digest are checked in place (a metric must be its own `Display` text,
    /// [`exact_f64`]). A row that fails is checked again field by field, which names the
    /// field and what it should be.
    pub fn check<'c, 'r>(&'c mut self, raw: &'r [u8], j: u64) -> Result<RowView<'c, 'r>, String> {
        let plan = self.plan;
        if j >= plan.jobs() {
            return Err(format!(
                "there are only {} jobs, so no row should be here",
                plan.jobs()
            ));
        }
        self.prefix.clear();
        self.writer.write_prefix(plan, j, &mut self.prefix);
        self.metrics.clear();
        let (metrics, scratch) = (&mut self.metrics, &mut self.scratch);
        let fast = raw
            .strip_prefix(&self.prefix[..])
            .and_then(|rest| rest.strip_suffix(b"\n"))
            .and_then(|body| {
                let mut f = body.split(|&b| b == b',');
                for _ in 0..plan.keep.len() {
                    metrics.push(exact_f64(f.next()?, scratch)?);
                }
                let ev = f.next()?;
                let events = match short_count(ev) {
                    Some(v) => v,
                    None => std::str::from_utf8(ev).ok()?.parse::<u64>().ok()?,
                };
                let d = f.next()?;
                let ok = f.next().is_none()
                    && is_u64_bytes(ev)
                    && d.len() == 64
                    && d.iter()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
                ok.then_some((events, d))
            });
        if let Some((events, digest)) = fast {
            return Ok(RowView {
                metrics: &self.metrics,
                events,
                digest,
            });
        }
        let (metrics, events) = self.check_fields(raw, j)?;
        // The field-by-field check passed where the byte check did not: it is the reference.
        self.metrics = metrics;
        Ok(RowView {
            metrics: &self.metrics,
            events,
            digest: &raw[raw.len() - 65..raw.len() - 1],
        })
    }

    /// [`Self::check`] field by field (allocating): names what is wrong.
    fn check_fields(&mut self, raw: &[u8], j: u64) -> Result<(Vec<f64>, u64), String> {
        let plan = self.plan;
        let f = split_fields(raw)?;
        if f.len() != self.header.len() {
            return Err(format!(
                "{} fields, expected {} ({})",
                f.len(),
                self.header.len(),
                self.header.join(",")
            ));
        }
        let reps = plan.replicates();
        let (p, r) = (j / reps, j % reps);
        let seed = replicate_seed(plan.experiment.seed, r);
        let bad = |col: usize, want: &dyn std::fmt::Display, why: String| {
            format!(
                "`{}` is `{}`, expected `{want}`{why}",
                self.header[col], f[col]
            )
        };
        if !is_u64(&f[0], j) {
            return Err(bad(0, &j, String::new()));
        }
        if !is_u64(&f[1], p) {
            return Err(bad(1, &p, format!(" for job {j}")));
        }
        if !is_u64(&f[2], r) {
            return Err(bad(2, &r, format!(" for job {j}")));
        }
        if f[3] != seed_text(seed) {
            return Err(bad(
                3,
                &seed_text(seed),
                format!(
                    " for replicate {r} (experiment seed {})",
                    plan.experiment.seed
                ),
            ));
        }
        let labels = &plan.points[p as usize].labels;
        for (i, l) in labels.iter().enumerate() {
            if f[4 + i] != *l {
                return Err(bad(4 + i, l, format!(" at point {p}")));
            }
        }
        let m0 = 4 + labels.len();
        let nk = plan.keep.len();
        let mut metrics = Vec::with_capacity(nk);
        for (name, text) in self.header[m0..m0 + nk].iter().zip(&f[m0..m0 + nk]) {
            match text.parse::<f64>() {
                Ok(v) if v.to_string() == *text => metrics.push(v),
                _ => {
                    return Err(format!(
                        "`{name}` is `{text}`, not a number as vtsim writes one"
                    ))
                }
            }
        }
        let ev = m0 + nk;
        let events = match f[ev].parse::<u64>() {
            Ok(v) if is_u64(&f[ev], v) => v,
            _ => return Err(format!("`events` is `{}`, not a count", f[ev])),
        };
        let d = &f[ev + 1];
        if d.len() != 64
            || !d
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!("`digest` is `{d}`, not 64 lowercase hex digits"));
        }
        if !self.line.is(&f, raw) {
            return Err(
                "the fields are right but the record is not written the way vtsim writes it \
                 (quoting, spacing or line ending differ)"
                    .into(),
            );
        }
        Ok((metrics, events))
    }

    /// The first field in which `got` differs from `want` (both records), in words.
    pub fn difference(&self, got: &[u8], want: &[u8]) -> String {
        let (g, w) = (split_fields(got), split_fields(want));
        if let (Ok(g), Ok(w)) = (g, w) {
            for (i, (a, b)) in g.iter().zip(&w).enumerate() {
                if a != b {
                    let name = self.header.get(i).map_or("?", |s| s.as_str());
                    return format!("`{name}` is `{a}` in the file, `{b}` when simulated here");
                }
            }
        }
        "the record differs from the one simulated here".into()
    }
}

/// Whether `s` is `v` written as vtsim writes a count (decimal, no sign, no leading zero).
pub(super) fn is_u64(s: &str, v: u64) -> bool {
    s.parse::<u64>() == Ok(v) && !s.starts_with('+') && (s.len() == 1 || !s.starts_with('0'))
}

/// [`is_u64`] on bytes that parse as a `u64`.
fn is_u64_bytes(s: &[u8]) -> bool {
    !s.starts_with(b"+") && (s.len() == 1 || !s.starts_with(b"0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the checker accepted before: `text.parse()` whose `to_string()` is `text`.
    fn reference(t: &str) -> Option<u64> {
        t.parse::<f64>()
            .ok()
            .filter(|v| v.to_string() == t)
            .map(f64::to_bits)
    }

    #[test]
    fn exact_f64_accepts_exactly_what_to_string_writes() {
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "1",
            "-1",
            "01",
            "+1",
            "1.0",
            "1.5",
            "1.50",
            "0.1",
            ".5",
            "1.",
            "1e5",
            "1E5",
            "100000",
            "NaN",
            "nan",
            "inf",
            "-inf",
            "infinity",
            "",
            "-",
            " 1",
            "1 ",
            "999999999999999",
            "9999999999999999",
            "1000000000000000",
            "12345678901234567890",
            "0.30000000000000004",
            "0.3000000000000000444",
            "5e-324",
            "0x10",
            "1_0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            texts.push(v.to_string());
            texts.push(format!("{v:e}"));
            texts.push((v * 1e-3).to_string());
            texts.push(((x % 1_000_000) as f64 / 8.0).to_string());
        }
        for v in [
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -5e-324,
            1e15,
            1e16,
            -1e300,
        ] {
            texts.push(v.to_string());
        }
        let mut accepted = 0;
        let mut scratch = vec![];
        for t in &texts {
            let want = reference(t);
            assert_eq!(
                exact_f64(t.as_bytes(), &mut scratch).map(f64::to_bits),
                want,
                "{t:?}"
            );
            accepted += usize::from(want.is_some());
        }
        assert!(accepted > 60_000, "{accepted}");
    }

    #[test]
    fn fields_are_written_as_the_csv_writer_writes_them() {
        let parts = [
            "", "a", "1.5", "a,b", "q\"", "\"", "x\ny", "\r", " s ", "0xff", "#c", "é", "\"\"",
        ];
        for a in parts {
            for b in parts {
                let want = csv_line(&[a.to_string(), b.to_string(), "z".to_string()]);
                let mut got = vec![];
                push_field(&mut got, a.as_bytes());
                got.push(b',');
                push_field(&mut got, b.as_bytes());
                got.extend_from_slice(b",z\n");
                assert_eq!(got, want, "{a:?} {b:?}");
            }
        }
        for v in [0u64, 1, 9, 10, 99, 100, 12345, u64::MAX / 3, u64::MAX] {
            let mut got = vec![];
            push_u64(&mut got, v);
            assert_eq!(got, v.to_string().as_bytes());
            got.clear();
            push_seed(&mut got, v);
            assert_eq!(got, seed_text(v).as_bytes());
        }
    }
}
