//! The charts an experiment declares, drawn from the points' statistics: curves per series,
//! identical curves merged, the verdict's answers and target, the declared marks, the footer.

use super::index::fmt_num;
use crate::chart::{self, Curve, CurvePoint};
use crate::experiment::accumulate::PointStats;
use crate::experiment::files::{Mark, Stat};
use crate::experiment::plan::Plan;
use anyhow::Result;
use std::path::Path;

/// The one-line footer of every chart of a sweep.
pub fn chart_footer(plan: &Plan, runs_digest: &str) -> String {
    format!(
        "vtsim {} · {} · model {} ({}) · {} points × {} runs · runs digest {}",
        env!("CARGO_PKG_VERSION"),
        plan.experiment.name,
        plan.model.name,
        plan.points.first().map(|p| p.world.kind()).unwrap_or(""),
        plan.points.len(),
        plan.replicates(),
        &runs_digest[..runs_digest.len().min(12)]
    )
}
/// A safe value marked on a chart: (x, y, label).
type ChartAnswer = (f64, f64, String);

pub(super) fn draw_charts(
    plan: &Plan,
    points: &[PointStats],
    runs_digest: &str,
    dir: &Path,
) -> Result<Vec<String>> {
    let footer = chart_footer(plan, runs_digest);
    let mut names = vec![];
    for c in &plan.experiment.charts {
        let xi = plan.column(&c.x).expect("checked");
        let si = c.series.as_ref().map(|s| plan.column(s).expect("checked"));
        let filters: Vec<(usize, &String)> = c
            .filter
            .iter()
            .map(|(k, v)| (plan.column(k).expect("checked"), v))
            .collect();
        let selected: Vec<&PointStats> = points
            .iter()
            .filter(|p| filters.iter().all(|(i, v)| &p.labels[*i] == *v))
            .collect();
        let mut series_labels: Vec<String> = vec![];
        if let Some(si) = si {
            for p in &selected {
                if !series_labels.contains(&p.labels[si]) {
                    series_labels.push(p.labels[si].clone());
                }
            }
        } else {
            series_labels.push(String::new());
        }
        let defs = plan.kept_defs();
        // The verdict's target marks the safe value on every chart of its metric's mean over
        // its axis (the verdict box decides the points of its own filter; a chart of other
        // points, e.g. clustered phases, gets the same rule applied to its curves).
        let verdict = plan
            .experiment
            .verdict
            .as_ref()
            .filter(|v| v.axis == c.x && c.y.contains(&v.metric) && c.stat == Stat::Mean);
        let verdict_metric = verdict.map(|v| v.metric.clone()).unwrap_or_default();
        let mut curves = vec![];
        for y in &c.y {
            let mi = defs.iter().position(|d| d.name == y).expect("checked");
            for sl in &series_labels {
                let mut pts: Vec<CurvePoint> = selected
                    .iter()
                    .filter(|p| si.is_none_or(|si| &p.labels[si] == sl))
                    .filter_map(|p| {
                        let x = Plan::numeric(&p.labels[xi])?;
                        let s = &p.summaries[mi];
                        let (y, band) = match c.stat {
                            Stat::Mean => (s.mean, Some(p.interval(mi, defs[mi]))),
                            Stat::P50 => (s.p50, None),
                            Stat::P90 => (s.p90, None),
                            Stat::P99 => (s.p99, None),
                            Stat::Max => (s.max, None),
                        };
                        Some(CurvePoint { x, y, band })
                    })
                    .collect();
                pts.sort_by(|a, b| a.x.total_cmp(&b.x));
                // The verdict's answer on this curve: its safe value (the same rule as the
                // verdict box: the first point from the unsafe end whose upper 95 % bound is
                // below the target).
                let answer = verdict.filter(|_| *y == verdict_metric).and_then(|v| {
                    let mut ps: Vec<(f64, &PointStats)> = selected
                        .iter()
                        .filter(|p| si.is_none_or(|si| &p.labels[si] == sl))
                        .filter_map(|p| Some((Plan::numeric(&p.labels[xi])?, *p)))
                        .collect();
                    ps.sort_by(|a, b| a.0.total_cmp(&b.0));
                    if v.largest {
                        ps.reverse();
                    }
                    let (x, p) = ps
                        .into_iter()
                        .find(|(_, p)| p.interval(mi, defs[mi]).1 < v.target)?;
                    let y = pts.iter().find(|q| q.x == x).map(|q| q.y)?;
                    Some((
                        x,
                        y,
                        match si {
                            Some(_) => format!("{sl}: safe at {}", p.labels[xi]),
                            None => format!("safe at {}", p.labels[xi]),
                        },
                    ))
                });
                let label = match (c.y.len() > 1, si) {
                    (_, None) => y.clone(),
                    (false, Some(si)) => format!("{} = {sl}", plan.columns[si]),
                    (true, Some(si)) => format!("{y}, {} = {sl}", plan.columns[si]),
                };
                let series_x = Plan::numeric(sl);
                curves.push((
                    Curve {
                        label,
                        points: pts,
                        series_x,
                    },
                    answer,
                ));
            }
        }
        // Curves that are identical point for point are drawn once, with their labels joined
        // (five refresh intervals giving one rollout duration are one line, not five).
        let mut merged: Vec<(Curve, Option<ChartAnswer>)> = vec![];
        for (cv, answer) in curves {
            let same = |(a, _): &(Curve, Option<ChartAnswer>)| {
                a.points.len() == cv.points.len()
                    && a.points
                        .iter()
                        .zip(&cv.points)
                        .all(|(p, q)| p.x == q.x && p.y == q.y && p.band == q.band)
            };
            match merged.iter_mut().find(|m| same(m)) {
                Some((m, _)) => {
                    let tail = cv
                        .label
                        .rsplit(" = ")
                        .next()
                        .unwrap_or(&cv.label)
                        .to_string();
                    m.label = format!("{}, {tail}", m.label);
                    m.series_x = None;
                }
                None => merged.push((cv, answer)),
            }
        }
        let mut marks = vec![];
        for (i, (_, a)) in merged.iter().enumerate() {
            if let Some((x, y, label)) = a {
                marks.push(chart::MarkLine::Answer {
                    x: *x,
                    y: *y,
                    label: label.clone(),
                    series: Some(i),
                });
            }
        }
        if let Some(v) = verdict {
            if marks
                .iter()
                .any(|m| matches!(m, chart::MarkLine::Answer { .. }))
                && !c
                    .marks
                    .iter()
                    .any(|m| matches!(m, Mark::HLine { y, .. } if *y == v.target))
                && c.stat == Stat::Mean
            {
                marks.push(chart::MarkLine::H {
                    y: v.target,
                    label: format!("the verdict's target: {}", fmt_num(v.target)),
                });
            }
        }
        let curves: Vec<Curve> = merged.into_iter().map(|(c, _)| c).collect();
        for m in &c.marks {
            match m {
                Mark::VLine {
                    x,
                    label,
                    color,
                    dashed,
                } => marks.push(match (color, dashed) {
                    (None, false) => chart::MarkLine::V {
                        x: *x,
                        label: label.clone(),
                    },
                    _ => chart::MarkLine::VStyled {
                        x: *x,
                        label: label.clone(),
                        style: chart::LineStyle {
                            rgb: color.unwrap_or((0, 0, 0)),
                            dashed: *dashed,
                        },
                    },
                }),
                Mark::HLine { y, label } => marks.push(chart::MarkLine::H {
                    y: *y,
                    label: label.clone(),
                }),
                Mark::SeriesMultiple { factor, label } => marks.push(chart::MarkLine::PerSeries {
                    factor: *factor,
                    label: label.clone(),
                }),
            }
        }
        let spec = chart::ChartData {
            title: c.title.clone(),
            x_label: c.x_label.clone(),
            y_label: c.y_label.clone(),
            log_x: c.log_x,
            log_y: c.log_y,
            curves,
            marks,
        };
        chart::draw_files_footed(&spec, dir, &c.name, &footer)?;
        names.push(c.name.clone());
    }
    Ok(names)
}
