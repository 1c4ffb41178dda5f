//! The layout of `runs.csv`, shared by the runner (which writes and re-reads rows) and the
//! report (which reads them back): the header, a row's fields, and the check that a row read
//! back is exactly the one job `j` of a plan writes.

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
    let reps = plan.replicates();
    let p = &plan.points[(j / reps) as usize];
    let mut f: Vec<String> = vec![
        j.to_string(),
        p.index.to_string(),
        (j % reps).to_string(),
        seed_text(seed),
    ];
    f.extend(p.labels.iter().cloned());
    f.extend(plan.keep.iter().map(|&i| r.metrics[i].to_string()));
    f.push(r.events.to_string());
    f.push(r.digest);
    csv_line(&f)
}

/// A seed as `runs.csv` writes it: `0x` and 16 lowercase hex digits, the form `vtsim replay
/// --seed` takes and prints. (A decimal u64 above 2^63 is read as Int128 by polars and as a
/// float or object by pandas; a hex string loads as text everywhere.)
pub fn seed_text(seed: u64) -> String {
    format!("{seed:#018x}")
}

/// The values of a verified row.
pub struct RowValues {
    /// The kept metrics, in header order.
    pub metrics: Vec<f64>,
    /// Events handled.
    pub events: u64,
    /// The run's trace digest.
    pub digest: String,
}

/// Checks rows against the plan: what job `j`'s row must say.
pub struct RowChecker<'a> {
    plan: &'a Plan,
    header: Vec<String>,
    line: CsvLine,
}

impl<'a> RowChecker<'a> {
    /// A checker for `plan`'s `runs.csv` rows.
    pub fn new(plan: &'a Plan) -> Self {
        RowChecker {
            plan,
            header: runs_header(plan),
            line: CsvLine::new(),
        }
    }

    /// The header bytes a `runs.csv` of this plan starts with.
    pub fn header_bytes(&self) -> Vec<u8> {
        csv_line(&self.header)
    }

    /// Check that `raw` (one record, with its `\n`) is job `j`'s row; return its values or
    /// what is wrong.
    pub fn check(&mut self, raw: &[u8], j: u64) -> Result<RowValues, String> {
        let plan = self.plan;
        if j >= plan.jobs() {
            return Err(format!(
                "there are only {} jobs, so no row should be here",
                plan.jobs()
            ));
        }
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
        let digest = f[ev + 1].clone();
        Ok(RowValues {
            metrics,
            events,
            digest,
        })
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
