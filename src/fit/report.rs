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

/// What the fit chart draws: per restart (SIGTERM order) and vtgate, the observed and replayed
/// discovery lags (s) and their residual; per vtgate, the observed errors.
struct ChartPoints {
    vtgates: Vec<String>,
    restarts: Vec<String>,
    /// `[restart][vtgate]`: (observed lag, replayed lag).
    lags: Vec<Vec<(Option<f64>, Option<f64>)>>,
    errors: Vec<u64>,
    gate: f64,
}

fn chart_points(f: &Fit) -> ChartPoints {
    let run = run_detailed(&f.params, 1, RunOptions::default());
    let mut lags = vec![];
    for r in &f.restarts {
        let k = f.tablets.iter().position(|a| a.as_ref() == Some(&r.alias));
        let rep = k.and_then(|k| run.restarts.iter().find(|x| x.tablet as usize == k));
        let row = r
            .discovered
            .iter()
            .enumerate()
            .map(|(g, d)| {
                let o = d.map(|d| secs(d - r.serve.ns));
                let p = rep.and_then(|x| {
                    (x.discovered[g] != SimTime::MAX)
                        .then(|| x.discovered[g].since(x.serving_at).as_secs_f64())
                });
                (o, p)
            })
            .collect();
        lags.push(row);
    }
    let mut errors = vec![0u64; f.vtgates.len()];
    for b in &f.bursts {
        errors[b.g] += b.errors;
    }
    ChartPoints {
        vtgates: f.vtgates.clone(),
        restarts: f.restarts.iter().map(|r| r.alias.to_string()).collect(),
        lags,
        errors,
        gate: f.params.operator.tablet_available_timeout.as_secs_f64(),
    }
}

/// Eight colours that stay apart on white (Okabe-Ito, then darker shades).
const COLOURS: [(u8, u8, u8); 8] = [
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (86, 180, 233),
    (230, 159, 0),
    (0, 0, 0),
    (120, 94, 240),
];

fn colour(j: usize) -> plotters::style::RGBColor {
    let (r, g, b) = COLOURS[j % COLOURS.len()];
    plotters::style::RGBColor(r, g, b)
}

/// Draw the fit chart: three panels on one vtgate axis (discovery lags as markers, observed
/// filled circles and replayed crosses, one colour per restart side by side within a vtgate's
/// slot, never joined across vtgates; the residual of each as a bar; the observed errors per
/// vtgate as a bar), and the legend in its own column right of the panels.
fn paint<DB: plotters::prelude::DrawingBackend>(
    root: plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    c: &ChartPoints,
) -> Result<(), plotters::prelude::DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::prelude::*;
    root.fill(&WHITE)?;
    let (plots, legend) = root.split_horizontally(900);
    let (top, rest) = plots.split_vertically(430);
    let (mid, bottom) = rest.split_vertically(200);
    let m = c.vtgates.len().max(1);
    let n = c.restarts.len().max(1);
    let x_of = |g: usize, j: usize| g as f64 - 0.4 + (j as f64 + 0.5) * 0.8 / n as f64;
    let name = |x: &f64| {
        let g = x.round();
        if (x - g).abs() < 1e-9 && g >= 0.0 && (g as usize) < c.vtgates.len() {
            format!("{}", g as usize + 1)
        } else {
            String::new()
        }
    };
    let xr = -0.5..(m as f64 - 0.5);
    let ymax = c
        .lags
        .iter()
        .flatten()
        .flat_map(|(o, p)| [*o, *p])
        .flatten()
        .fold(c.gate, f64::max)
        * 1.1
        + 1e-9;
    let mut ch = ChartBuilder::on(&top)
        .caption(
            "vtsim fit: discovery lag per vtgate and restart, observed vs replayed",
            ("sans-serif", 20),
        )
        .margin(10)
        .x_label_area_size(20)
        .y_label_area_size(60)
        .build_cartesian_2d(xr.clone(), 0.0..ymax)?;
    ch.configure_mesh()
        .x_labels(m.min(40))
        .x_label_formatter(&|_| String::new())
        .disable_x_mesh()
        .y_desc("discovery lag (s)")
        .draw()?;
    ch.draw_series(std::iter::once(PathElement::new(
        vec![(-0.5, c.gate), (m as f64 - 0.5, c.gate)],
        ShapeStyle::from(&RGBColor(150, 150, 150)).stroke_width(1),
    )))?;
    for (j, row) in c.lags.iter().enumerate() {
        let col = colour(j);
        for (g, (o, p)) in row.iter().enumerate() {
            let x = x_of(g, j);
            if let Some(o) = o {
                ch.draw_series(std::iter::once(Circle::new((x, *o), 4, col.filled())))?;
            }
            if let Some(p) = p {
                ch.draw_series(std::iter::once(Cross::new(
                    (x, *p),
                    6,
                    ShapeStyle::from(&BLACK).stroke_width(1),
                )))?;
            }
        }
    }
    // Residuals (ms).
    let res: Vec<f64> = c
        .lags
        .iter()
        .flatten()
        .filter_map(|(o, p)| Some((p.as_ref()? - o.as_ref()?) * 1e3))
        .collect();
    let rmax = res.iter().fold(0.001f64, |a, r| a.max(r.abs())) * 1.2;
    let mut ch = ChartBuilder::on(&mid)
        .margin(10)
        .x_label_area_size(20)
        .y_label_area_size(60)
        .build_cartesian_2d(xr.clone(), -rmax..rmax)?;
    ch.configure_mesh()
        .x_labels(m.min(40))
        .x_label_formatter(&|_| String::new())
        .disable_x_mesh()
        .y_desc("replayed - observed (ms)")
        .draw()?;
    let w = 0.8 / n as f64 * 0.8;
    for (j, row) in c.lags.iter().enumerate() {
        let col = colour(j);
        for (g, (o, p)) in row.iter().enumerate() {
            if let (Some(o), Some(p)) = (o, p) {
                let x = x_of(g, j);
                let r = (p - o) * 1e3;
                ch.draw_series(std::iter::once(Rectangle::new(
                    [(x - w / 2.0, 0.0), (x + w / 2.0, r)],
                    col.filled(),
                )))?;
            }
        }
    }
    // Observed errors per vtgate.
    let emax = c.errors.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.15;
    let mut ch = ChartBuilder::on(&bottom)
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(xr, 0.0..emax)?;
    ch.configure_mesh()
        .x_labels(m.min(40))
        .x_label_formatter(&name)
        .disable_x_mesh()
        .x_desc("vtgate (model order; names in the legend and the .fit.csv)")
        .y_desc("errors logged")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()?;
    for (g, e) in c.errors.iter().enumerate() {
        ch.draw_series(std::iter::once(Rectangle::new(
            [(g as f64 - 0.3, 0.0), (g as f64 + 0.3, *e as f64)],
            RGBColor(120, 120, 120).filled(),
        )))?;
    }
    // The legend, in its own column.
    let font = ("sans-serif", 14).into_font();
    let mut y = 50;
    let text = |s: &str, x: i32, y: i32| Text::new(s.to_string(), (x, y), font.clone());
    legend.draw(&text("markers (top panel)", 10, y))?;
    y += 22;
    legend.draw(&Circle::new((20, y + 7), 4, BLACK.filled()))?;
    legend.draw(&text("observed lag", 34, y))?;
    y += 20;
    legend.draw(&Cross::new(
        (20, y + 7),
        6,
        ShapeStyle::from(&BLACK).stroke_width(1),
    ))?;
    legend.draw(&text("replayed lag", 34, y))?;
    y += 20;
    legend.draw(&PathElement::new(
        vec![(12, y + 7), (28, y + 7)],
        ShapeStyle::from(&RGBColor(150, 150, 150)).stroke_width(1),
    ))?;
    legend.draw(&text(&format!("Available gate {:.0} s", c.gate), 34, y))?;
    y += 34;
    legend.draw(&text("restart (colour)", 10, y))?;
    y += 22;
    for (j, r) in c.restarts.iter().enumerate() {
        if y > 760 {
            legend.draw(&text(&format!("... {} more", c.restarts.len() - j), 10, y))?;
            break;
        }
        legend.draw(&Rectangle::new(
            [(14, y + 2), (26, y + 12)],
            colour(j).filled(),
        ))?;
        legend.draw(&text(&format!("#{} {r}", j + 1), 34, y))?;
        y += 20;
    }
    y += 14;
    if y < 740 {
        legend.draw(&text("bars: residual per restart", 10, y))?;
        legend.draw(&text("(middle), errors (bottom)", 10, y + 18))?;
        y += 50;
    }
    if y < 760 {
        legend.draw(&text("vtgates", 10, y))?;
        y += 22;
    }
    for (g, v) in c.vtgates.iter().enumerate() {
        if y > 770 {
            legend.draw(&text(&format!("... {} more", c.vtgates.len() - g), 10, y))?;
            break;
        }
        legend.draw(&text(&format!("{:>3}  {v}", g + 1), 10, y))?;
        y += 18;
    }
    root.present()?;
    Ok(())
}

/// Write the fit chart as `<dir>/<stem>.png` and `.svg` (the SVG is drawn in memory and the
/// PNG to a temporary file first: a drawing failure leaves neither).
pub fn draw_chart(f: &Fit, dir: &std::path::Path, stem: &str) -> anyhow::Result<()> {
    use plotters::prelude::*;
    crate::chart::register_fonts();
    let c = chart_points(f);
    let size = (1200, 800);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        paint(root, &c).map_err(|e| anyhow::anyhow!("drawing the SVG chart: {e:?}"))?;
    }
    let png = dir.join(format!("{stem}.png"));
    let tmp = dir.join(format!(".{stem}.tmp{}.png", std::process::id()));
    let r = (|| -> anyhow::Result<()> {
        {
            let root = BitMapBackend::new(&tmp, size).into_drawing_area();
            paint(root, &c).map_err(|e| anyhow::anyhow!("drawing {}: {e:?}", png.display()))?;
        }
        crate::io::write_atomic(&dir.join(format!("{stem}.svg")), svg.as_bytes())?;
        crate::io::rename(&tmp, &png)?;
        Ok(())
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}
