//! The fit report: what was inferred (with resolutions, censored values marked), and the
//! fitted model's replay against the observations (discovery lags and bursts per vtgate,
//! with residuals), as text and CSV.

use super::infer::{fmt_t, Fit};
use crate::model::rollout::run_detailed;
use crate::model::RunOptions;
use crate::sim::SimTime;

fn secs(ns: i64) -> f64 {
    ns as f64 / 1e9
}

/// (text, CSV) of the report for `f`.
pub fn render(f: &Fit) -> (String, String) {
    let mut t = String::new();
    let mut csv = String::from(
        "vtgate,tablet,observed_discovery_s,replayed_discovery_s,observed_lag_s,replayed_lag_s,residual_s\n",
    );
    t.push_str("vtsim fit report\n\ninputs\n");
    for i in &f.inputs {
        t.push_str(&format!("  {i}\n"));
    }
    let (tp, tres, given) = f.refresh;
    t.push_str(&format!(
        "\nrefresh interval  {} ({})\n",
        fmt_t(tp),
        if given {
            "given".to_string()
        } else {
            format!("estimated from poll spacing, +/- {}", fmt_t(tres))
        }
    ));
    let [(fhd, fc), (hsd, hc)] = f.delays;
    t.push_str(&format!(
        "first health delay {}{}; health stream delay {}{}\n",
        fmt_t(fhd),
        if fc { " (censored: default)" } else { "" },
        fmt_t(hsd),
        if hc { " (censored: default)" } else { "" }
    ));
    t.push_str("\nvtgate phases (first poll offset from time zero, mod the interval)\n");
    for (g, (o, ok)) in f.phases.iter().enumerate() {
        t.push_str(&format!(
            "  {:<16} {}{}\n",
            f.vtgates[g],
            fmt_t(*o),
            if *ok { "" } else { "  censored" }
        ));
    }
    t.push_str("\nrestarts (s since time zero; +/- resolution; c = censored)\n");
    let show = |x: &super::infer::Inferred| {
        format!(
            "{:.6} +/- {:.6}{}",
            secs(x.ns),
            secs(x.resolution),
            if x.censored { " c" } else { "" }
        )
    };
    for r in &f.restarts {
        t.push_str(&format!(
            "  {} {}: SIGTERM {}, pod gone {}, address {}, serving {}{}\n",
            r.alias,
            r.shard,
            show(&r.drain),
            show(&r.down),
            show(&r.publish),
            show(&r.serve),
            r.ready
                .map(|x| format!(", Ready {:.0} (whole s, pods JSON)", secs(x)))
                .unwrap_or_default()
        ));
    }
    // Replay the fitted model and compare.
    let run = run_detailed(&f.params, 1, RunOptions::default());
    t.push_str("\ndiscovery lags (observed | replayed | residual), s\n");
    let mut worst = 0i64;
    for r in &f.restarts {
        let k = f.tablets.iter().position(|a| a.as_ref() == Some(&r.alias));
        let rep = k.and_then(|k| run.restarts.iter().find(|x| x.tablet as usize == k));
        t.push_str(&format!("  {}\n", r.alias));
        for (g, d) in r.discovered.iter().enumerate() {
            let obs = d.map(|d| d - r.serve.ns);
            let (rd, rl) = match rep {
                Some(x) if x.discovered[g] != SimTime::MAX => (
                    Some(x.discovered[g].0 as i64),
                    Some(x.discovered[g].0 as i64 - x.serving_at.0 as i64),
                ),
                _ => (None, None),
            };
            let resid = match (obs, rl) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            };
            if let Some(x) = resid {
                worst = worst.max(x.abs());
            }
            let f6 = |x: Option<i64>| x.map_or("-".to_string(), |v| format!("{:.6}", secs(v)));
            t.push_str(&format!(
                "    {:<16} {:>12} | {:>12} | {:>10}\n",
                f.vtgates[g],
                f6(obs),
                f6(rl),
                f6(resid)
            ));
            csv.push_str(&format!(
                "{},{},{},{},{},{},{}\n",
                f.vtgates[g],
                r.alias,
                f6(*d),
                f6(rd),
                f6(obs),
                f6(rl),
                f6(resid)
            ));
        }
    }
    t.push_str(&format!("  largest |residual|: {:.6} s\n", secs(worst)));
    t.push_str("\nerror bursts per vtgate (observed from the error lines | replayed exposure)\n");
    if f.bursts.is_empty() {
        t.push_str("  none observed\n");
    }
    for b in &f.bursts {
        let g = b.g;
        // The replayed exposures of this vtgate around the observed burst.
        let rep: Vec<String> = run
            .exposures
            .iter()
            .filter(|x| x.g as usize == g)
            .filter(|x| (x.end.0 as i64) >= b.start - 1_000_000_000)
            .filter(|x| (x.start.0 as i64) <= b.end + 6_000_000_000)
            .map(|x| format!("{:.3}..{:.3}", x.start.as_secs_f64(), x.end.as_secs_f64()))
            .collect();
        t.push_str(&format!(
            "  {:<16} {:.3}..{:.3} s, {} errors{} | {}\n",
            f.vtgates[g],
            secs(b.start),
            secs(b.end),
            b.errors,
            if b.throttled {
                " (lower bound: throttled)"
            } else {
                ""
            },
            if rep.is_empty() {
                "-".to_string()
            } else {
                rep.join(", ")
            }
        ));
    }
    if !f.warnings.is_empty() {
        t.push_str("\ngaps and warnings\n");
        for w in &f.warnings {
            t.push_str(&format!("  - {w}\n"));
        }
    }
    (t, csv)
}

/// The report's chart: per vtgate (x), each restart's observed and replayed discovery lag,
/// and their residual (s), plus each vtgate's observed error count per burst.
pub fn chart(f: &Fit) -> crate::chart::ChartData {
    use crate::chart::{ChartData, Curve, CurvePoint, MarkLine};
    let run = run_detailed(&f.params, 1, RunOptions::default());
    let pt = |x: usize, y: f64| CurvePoint {
        x: (x + 1) as f64,
        y,
        band: None,
    };
    let mut curves = vec![];
    for r in &f.restarts {
        let k = f.tablets.iter().position(|a| a.as_ref() == Some(&r.alias));
        let rep = k.and_then(|k| run.restarts.iter().find(|x| x.tablet as usize == k));
        let (mut obs, mut repl, mut resid) = (vec![], vec![], vec![]);
        for (g, d) in r.discovered.iter().enumerate() {
            let o = d.map(|d| secs(d - r.serve.ns));
            let p = rep.and_then(|x| {
                (x.discovered[g] != SimTime::MAX)
                    .then(|| x.discovered[g].since(x.serving_at).as_secs_f64())
            });
            if let Some(o) = o {
                obs.push(pt(g, o));
            }
            if let Some(p) = p {
                repl.push(pt(g, p));
            }
            if let (Some(o), Some(p)) = (o, p) {
                resid.push(pt(g, p - o));
            }
        }
        let name = r.alias.to_string();
        curves.push(Curve {
            label: format!("{name} observed lag"),
            points: obs,
            series_x: None,
        });
        curves.push(Curve {
            label: format!("{name} replayed lag"),
            points: repl,
            series_x: None,
        });
        curves.push(Curve {
            label: format!("{name} residual"),
            points: resid,
            series_x: None,
        });
    }
    let mut errs: Vec<f64> = vec![0.0; f.vtgates.len()];
    for b in &f.bursts {
        errs[b.g] += b.errors as f64;
    }
    curves.push(Curve {
        label: "observed errors (count / 10)".into(),
        points: errs
            .iter()
            .enumerate()
            .map(|(g, e)| pt(g, e / 10.0))
            .collect(),
        series_x: None,
    });
    ChartData {
        title: "vtsim fit: discovery lag per vtgate, observed vs replayed".into(),
        x_label: "vtgate (model order)".into(),
        y_label: "seconds (errors: count / 10)".into(),
        log_x: false,
        log_y: false,
        curves,
        marks: vec![MarkLine::H {
            y: f.params.operator.tablet_available_timeout.as_secs_f64(),
            label: "Available gate".into(),
        }],
    }
}
