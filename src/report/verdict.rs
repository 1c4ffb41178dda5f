//! The verdict an experiment declares: per series, the passing point, and the box at the top
//! of `index.html` that states it.

use super::index::{fmt_num, html_escape};
use crate::experiment::accumulate::PointStats;
use crate::experiment::plan::Plan;
use crate::model::MetricKind;

/// One series' verdict: the series' labels, and the passing point (or none).
pub struct SeriesVerdict {
    /// `refresh = 60s, phase = uniform` (empty for a single series).
    pub series: String,
    /// The passing point's index and its axis label.
    pub answer: Option<(usize, String)>,
}

/// The verdict of an experiment that declares one: per combination of the other axes (within
/// the filter), the smallest (largest) axis value whose metric's upper bound is below target.
pub fn verdicts(plan: &Plan, points: &[PointStats]) -> Vec<SeriesVerdict> {
    let Some(v) = &plan.experiment.verdict else {
        return vec![];
    };
    let ai = plan.column(&v.axis).expect("checked");
    let defs = plan.kept_defs();
    let mi = defs
        .iter()
        .position(|d| d.name == v.metric)
        .expect("checked");
    let filters: Vec<(usize, &String)> = v
        .filter
        .iter()
        .map(|(k, val)| (plan.column(k).expect("checked"), val))
        .collect();
    let others: Vec<usize> = (0..plan.columns.len())
        .filter(|&i| i != ai && !filters.iter().any(|(f, _)| *f == i))
        .collect();
    let mut groups: Vec<(Vec<String>, Vec<&PointStats>)> = vec![];
    for p in points
        .iter()
        .filter(|p| filters.iter().all(|(i, val)| &p.labels[*i] == *val))
    {
        let key: Vec<String> = others.iter().map(|&i| p.labels[i].clone()).collect();
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(p),
            None => groups.push((key, vec![p])),
        }
    }
    groups
        .into_iter()
        .map(|(key, mut g)| {
            g.sort_by(|a, b| {
                let x = |p: &PointStats| Plan::numeric(&p.labels[ai]).unwrap_or(f64::NAN);
                x(a).total_cmp(&x(b))
            });
            if v.largest {
                g.reverse();
            }
            let answer = g
                .iter()
                .find(|p| p.interval(mi, defs[mi]).1 < v.target)
                .map(|p| (p.index, p.labels[ai].clone()));
            SeriesVerdict {
                series: others
                    .iter()
                    .zip(&key)
                    .map(|(&i, l)| format!("{} = {l}", plan.columns[i]))
                    .collect::<Vec<_>>()
                    .join(", "),
                answer,
            }
        })
        .collect()
}

pub(super) fn verdict_box(plan: &Plan, points: &[PointStats], runs_digest: &str) -> String {
    let x = &plan.experiment;
    let mut h = String::from("<div id=\"verdict\" style=\"border:2px solid #333;background:#f6f8fa;padding:0.6em 1em;margin:1em 0\">\n");
    let provenance = format!(
        "<p class=\"provenance\">Model <code>{}</code> ({}), {} points × {} replicates = {} runs \
         (common random numbers: replicate r has the same seed at every point); vtsim {}; runs \
         digest <code>{}</code>.</p>\n",
        html_escape(&plan.model.name),
        plan.points.first().map(|p| p.world.kind()).unwrap_or(""),
        plan.points.len(),
        x.replicates,
        plan.jobs(),
        env!("CARGO_PKG_VERSION"),
        runs_digest
    );
    let Some(v) = &x.verdict else {
        h.push_str(
            "<h2>Verdict</h2>\n<p>This experiment declares no verdict (no target): it \
            describes how the metrics move, and decides nothing. Give the experiment a \
            <code>verdict: Verdict(axis: .., metric: .., target: ..)</code> to have \
            this box answer a question, or use <code>vtsim advise</code>.</p>\n",
        );
        h.push_str(&provenance);
        h.push_str("</div>\n");
        return h;
    };
    let defs = plan.kept_defs();
    let mi = defs
        .iter()
        .position(|d| d.name == v.metric)
        .expect("checked");
    let ci = v
        .cost
        .as_ref()
        .and_then(|c| defs.iter().position(|d| d.name == c));
    let what = if defs[mi].kind == MetricKind::Indicator {
        format!("P({})", v.metric)
    } else {
        format!("mean {}", v.metric)
    };
    h.push_str("<h2>Verdict</h2>\n");
    if !v.question.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", html_escape(&v.question)));
    }
    h.push_str(&format!(
        "<p>The {} <code>{}</code> whose {what} has its upper 95 % bound below <b>{}</b>{}:</p>\n",
        if v.largest { "largest" } else { "smallest" },
        html_escape(&v.axis),
        fmt_num(v.target),
        if v.filter.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                html_escape(
                    &v.filter
                        .iter()
                        .map(|(k, l)| format!("{k} = {l}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            )
        }
    ));
    h.push_str("<table class=\"verdict\"><tr><th>series</th><th>answer</th>");
    h.push_str(&format!("<th>{what} [95 % interval]</th><th>runs</th>"));
    if let Some(c) = &v.cost {
        h.push_str(&format!("<th>cost: {} (mean)</th>", html_escape(c)));
    }
    h.push_str("</tr>\n");
    for sv in verdicts(plan, points) {
        let series = if sv.series.is_empty() {
            "all".to_string()
        } else {
            sv.series.clone()
        };
        match sv.answer {
            Some((pi, label)) => {
                let p = &points[pi];
                let (lo, hi) = p.interval(mi, defs[mi]);
                h.push_str(&format!(
                    "<tr><td>{}</td><td><b>{}</b></td><td>{} [{}, {}]</td><td>{}</td>",
                    html_escape(&series),
                    html_escape(&label),
                    fmt_num(p.summaries[mi].mean),
                    fmt_num(lo),
                    fmt_num(hi),
                    p.summaries[mi].n
                ));
                if let Some(ci) = ci {
                    h.push_str(&format!("<td>{}</td>", fmt_num(p.summaries[ci].mean)));
                }
            }
            None => {
                h.push_str(&format!(
                    "<tr><td>{}</td><td>none in the sweep</td><td></td><td></td>",
                    html_escape(&series)
                ));
                if ci.is_some() {
                    h.push_str("<td></td>");
                }
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
    h.push_str(&provenance);
    h.push_str("</div>\n");
    h
}
