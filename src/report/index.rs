//! `index.html`: the verdict box, the charts and a table of every point's means with their
//! intervals; and how the page writes text and numbers.

use super::verdict::verdict_box;
use crate::experiment::accumulate::PointStats;
use crate::experiment::plan::Plan;
use crate::io::write;
use anyhow::Result;
use std::path::Path;

pub(super) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number for the page: four significant digits (trailing zeros dropped), scientific
/// below 1e-3 and from 1e6, so that every cell has one format.
pub(super) fn fmt_num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.2e}")
    }
}

/// A column name that may wrap after its underscores (long metric names fit the page).
fn wrap_name(s: &str) -> String {
    html_escape(s).replace('_', "_<wbr>")
}

pub(super) fn write_index(
    plan: &Plan,
    points: &[PointStats],
    charts: &[String],
    runs_digest: &str,
    dir: &Path,
) -> Result<()> {
    let x = &plan.experiment;
    let mut h = String::new();
    h.push_str("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>vtsim: {}</title>\n", html_escape(&x.name)));
    h.push_str(
        "<style>body{font-family:sans-serif;margin:2em;max-width:1340px}\
         table{border-collapse:collapse;font-size:11px}small{color:#555}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
         th{background:#eee}img{max-width:100%;border:1px solid #ddd;margin:1em 0}code{background:#f4f4f4}</style>\n",
    );
    h.push_str("</head><body>\n");
    h.push_str(&format!("<h1>{}</h1>\n", html_escape(&x.name)));
    h.push_str(&verdict_box(plan, points, runs_digest));
    if !x.description.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", html_escape(&x.description)));
    }
    h.push_str(&format!(
        "<p>Model <code>{}</code> ({}), {} points × {} replicates = {} runs, experiment seed {}. \
         vtsim {}. Runs digest <code>{}</code>.</p>\n",
        html_escape(&x.model),
        html_escape(&plan.model.name),
        plan.points.len(),
        x.replicates,
        plan.jobs(),
        x.seed,
        env!("CARGO_PKG_VERSION"),
        runs_digest
    ));
    h.push_str("<p>Files: <a href=\"points.csv\">points.csv</a> · <a href=\"runs.csv\">runs.csv</a> · <a href=\"summary.json\">summary.json</a>. Intervals are 95 %: Student t for means, Wilson for proportions.</p>\n");
    for c in charts {
        h.push_str(&format!(
            "<div><a href=\"{c}.svg\"><img src=\"{c}.png\" alt=\"{c}\"></a></div>\n"
        ));
    }
    h.push_str("<h2>Points</h2>\n<table><tr><th>point</th>");
    for c in &plan.columns {
        h.push_str(&format!("<th>{}</th>", html_escape(c)));
    }
    for d in plan.kept_defs() {
        h.push_str(&format!(
            "<th title=\"{}\">{}<br><small>mean [95 %]</small></th>",
            html_escape(d.help),
            wrap_name(d.name)
        ));
    }
    h.push_str("</tr>\n");
    for p in points {
        h.push_str(&format!("<tr><td>{}</td>", p.index));
        for l in &p.labels {
            h.push_str(&format!("<td>{}</td>", html_escape(l)));
        }
        for (i, (s, d)) in p.summaries.iter().zip(plan.kept_defs()).enumerate() {
            let (lo, hi) = p.interval(i, d);
            h.push_str(&format!(
                "<td>{}<br><small>[{}, {}]</small></td>",
                fmt_num(s.mean),
                fmt_num(lo),
                fmt_num(hi)
            ));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n</body></html>\n");
    write(&dir.join("index.html"), h.as_bytes())?;
    Ok(())
}
