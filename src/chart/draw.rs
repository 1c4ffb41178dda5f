//! The drawing of one chart with plotters: the axes (linear, or log10 with ticks labelled
//! 10^v), the bands and curves, the reference marks and answers, the legend and the footer.

use super::data::{ChartData, CurvePoint, LineStyle, MarkLine, MAX_CIRCLED_POINTS, PALETTE};
use super::glyph::{diamond, diamond_ring, down_triangle};
use super::legend::{
    dashed_legend, legend_column, legend_corner, legend_labels, Glyph, LEGEND_COLUMN,
};
use plotters::coord::Shift;
use plotters::prelude::*;

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.0e}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) struct Axes {
    pub(super) log_x: bool,
    pub(super) log_y: bool,
    pub(super) y_floor: f64,
    pub(super) x_floor: f64,
}

impl Axes {
    pub(super) fn tx(&self, x: f64) -> f64 {
        if self.log_x {
            x.max(self.x_floor).log10()
        } else {
            x
        }
    }
    pub(super) fn ty(&self, y: f64) -> f64 {
        if self.log_y {
            y.max(self.y_floor).log10()
        } else {
            y
        }
    }
}

fn padded(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        return (lo - 0.5, hi + 0.5);
    }
    let pad = if log { 0.02 } else { 0.04 } * (hi - lo);
    (lo - pad, hi + pad)
}

pub(super) type DrawResult<DB> =
    std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

pub(super) fn draw<DB: DrawingBackend>(
    full: DrawingArea<DB, Shift>,
    d: &ChartData,
    footer: &str,
) -> DrawResult<DB>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x;
    full.fill(&WHITE).map_err(e)?;
    // A one-line footer (which run made the chart) below the plot, in grey.
    let root = if footer.is_empty() {
        full.clone()
    } else {
        let h = full.dim_in_pixel().1 as i32;
        let (main, foot) = full.split_vertically(h - 22);
        let style = ("sans-serif", 12)
            .into_font()
            .color(&RGBColor(110, 110, 110));
        foot.draw(&Text::new(footer.to_string(), (12, 4), style))
            .map_err(e)?;
        main
    };

    let positive = |v: f64| v > 0.0 && v.is_finite();
    let all_y = d.curves.iter().flat_map(|c| {
        c.points.iter().flat_map(|p| {
            let (lo, hi) = p.band.unwrap_or((p.y, p.y));
            [p.y, lo, hi]
        })
    });
    let mark_ys = d.marks.iter().filter_map(|m| match m {
        MarkLine::H { y, .. } => Some(*y),
        _ => None,
    });
    let min_pos_y = all_y
        .clone()
        .chain(mark_ys)
        .filter(|v| positive(*v))
        .fold(f64::INFINITY, f64::min);
    let min_pos_x = d
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.x))
        .filter(|v| positive(*v))
        .fold(f64::INFINITY, f64::min);
    let axes = Axes {
        log_x: d.log_x,
        log_y: d.log_y,
        // Zero on a log axis is drawn at the floor, well below every positive value and mark.
        y_floor: if min_pos_y.is_finite() {
            min_pos_y / 4.0
        } else {
            1e-6
        },
        x_floor: if min_pos_x.is_finite() {
            min_pos_x / 2.0
        } else {
            1e-6
        },
    };
    let mut xs: Vec<f64> = d
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| axes.tx(p.x)))
        .collect();
    let mut ys: Vec<f64> = all_y
        .filter(|v| v.is_finite())
        .map(|v| axes.ty(v))
        .collect();
    for m in &d.marks {
        match m {
            MarkLine::V { x, .. } | MarkLine::VStyled { x, .. } => xs.push(axes.tx(*x)),
            MarkLine::H { y, .. } => ys.push(axes.ty(*y)),
            MarkLine::Shade { points, .. } => {
                xs.extend(points.iter().map(|p| axes.tx(p.0)));
                ys.extend(points.iter().map(|p| axes.ty(p.1)));
            }
            MarkLine::Answer { x, y, .. } => {
                xs.push(axes.tx(*x));
                ys.push(axes.ty(*y));
            }
            MarkLine::PerSeries { .. } | MarkLine::Note { .. } => {}
        }
    }
    let (x0, x1) = padded(
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        d.log_x,
    );
    let (mut y0, y1) = padded(
        ys.iter().cloned().fold(f64::INFINITY, f64::min),
        ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        d.log_y,
    );
    if !d.log_y && ys.iter().all(|v| *v >= 0.0) {
        y0 = y0.max(0.0);
    }

    // The legend goes in the emptiest corner of the plot; when every corner and side holds a
    // curve, point or shaded region, it goes in a column of its own right of the plot.
    let font: TextStyle = ("sans-serif", 13).into_font().into();
    let labels = legend_labels(d);
    let text_w = labels
        .iter()
        .map(|l| {
            root.estimate_text_size(l, &font)
                .map_or(l.len() as u32 * 7, |s| s.0)
        })
        .max()
        .unwrap_or(0);
    // The legend box as plotters draws it (30 px sample, 10 px margins, ~16.5 px a line), in
    // fractions of the plot area (the figure less the axis label areas, caption and margins).
    let (pw, ph) = root.dim_in_pixel();
    let size = (
        (text_w as f64 + 50.0) / (pw as f64 - 110.0),
        (labels.len() as f64 * 16.5 + 20.0) / (ph as f64 - 120.0),
    );
    let (corner, crowded) = legend_corner(d, &axes, (x0, x1), (y0, y1), size);
    let (area, column) = if crowded {
        let w = root.dim_in_pixel().0 as i32;
        let (a, b) = root.split_horizontally(w - LEGEND_COLUMN);
        (a, Some(b))
    } else {
        (root.clone(), None)
    };
    let mut entries: Vec<(String, Glyph)> = vec![];
    let mut chart = ChartBuilder::on(&area)
        .caption(&d.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(78)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    // Curves over whole numbers only (replica counts, pool sizes) get no fractional x labels.
    let whole_x = d
        .curves
        .iter()
        .flat_map(|c| &c.points)
        .all(|p| p.x.fract() == 0.0);
    let fx = |v: &f64| {
        if whole_x && (v - v.round()).abs() > 1e-9 * v.abs().max(1.0) {
            String::new()
        } else {
            fmt_tick(*v)
        }
    };
    let fy = |v: &f64| fmt_tick(*v);
    {
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(d.x_label.as_str())
            .y_desc(d.y_label.as_str())
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 13))
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .light_line_style(RGBColor(235, 235, 235))
            .bold_line_style(RGBColor(215, 215, 215));
        // A log axis gets its own ticks at 1, 2, 5 x 10^k (drawn below), not linear ones in log space.
        if d.log_x {
            mesh.x_labels(0).disable_x_mesh();
        }
        if d.log_y {
            mesh.y_labels(0).disable_y_mesh();
        }
        mesh.draw().map_err(e)?;
    }
    let grid = RGBColor(225, 225, 225);
    let label_style = ("sans-serif", 13).into_font().color(&BLACK);
    if d.log_x {
        for v in log_ticks(x0, x1) {
            let x = v.log10();
            chart
                .draw_series(LineSeries::new(vec![(x, y0), (x, y1)], grid))
                .map_err(e)?;
            let (px, py) = chart.backend_coord(&(x, y0));
            let t = fmt_tick(v);
            let w = t.len() as i32 * 7;
            area.draw(&Text::new(t, (px - w / 2, py + 8), label_style.clone()))
                .map_err(e)?;
        }
    }
    if d.log_y {
        for v in log_ticks(y0, y1) {
            let y = v.log10();
            chart
                .draw_series(LineSeries::new(vec![(x0, y), (x1, y)], grid))
                .map_err(e)?;
            let (px, py) = chart.backend_coord(&(x0, y));
            let t = fmt_tick(v);
            let w = t.len() as i32 * 7;
            area.draw(&Text::new(t, (px - w - 8, py - 7), label_style.clone()))
                .map_err(e)?;
        }
    }

    // Shaded regions first, under everything else.
    for m in &d.marks {
        if let MarkLine::Shade { points, label } = m {
            let poly: Vec<(f64, f64)> = points
                .iter()
                .map(|&(x, y)| (axes.tx(x).clamp(x0, x1), axes.ty(y).clamp(y0, y1)))
                .collect();
            let fill = RGBColor(120, 190, 120);
            chart
                .draw_series(std::iter::once(Polygon::new(poly, fill.mix(0.22).filled())))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 22, y + 6)], fill.mix(0.4).filled())
                });
            entries.push((label.clone(), Glyph::Swatch(fill.mix(0.4).filled())));
        }
    }
    // Cost contours: thin dotted lines labelled at the top.
    for m in &d.marks {
        if let MarkLine::Note { x, label } = m {
            let x = axes.tx(*x);
            if !(x > x0 && x < x1) {
                continue;
            }
            let grey = RGBColor(150, 150, 150);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x, y0), (x, y1)],
                    2,
                    4,
                    grey.stroke_width(1),
                ))
                .map_err(e)?;
            let (px, py) = chart.backend_coord(&(x, y1));
            area.draw(&Text::new(
                label.clone(),
                (px + 3, py + 3),
                ("sans-serif", 12)
                    .into_font()
                    .color(&RGBColor(100, 100, 100)),
            ))
            .map_err(e)?;
        }
    }

    let mut upper_bounds_drawn = false;
    for (i, c) in d.curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // On a log axis a point with y = 0 (no event in any run) is drawn as its upper bound
        // (a triangle pointing down), not as a band down to the floor that would hide a target.
        let banded: Vec<&CurvePoint> = c
            .points
            .iter()
            .filter(|p| p.band.is_some() && (!d.log_y || p.y > 0.0))
            .collect();
        if d.log_y {
            let tri: Vec<(f64, f64)> = c
                .points
                .iter()
                .filter(|p| p.y == 0.0)
                .filter_map(|p| p.band.map(|b| (axes.tx(p.x), axes.ty(b.1))))
                .filter(|(_, y)| y.is_finite())
                .collect();
            for (x, y) in tri {
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at((x, y)) + down_triangle(color),
                    ))
                    .map_err(e)?;
                upper_bounds_drawn = true;
            }
        }
        if banded.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = banded
                .iter()
                .map(|p| (axes.tx(p.x), axes.ty(p.band.expect("band").1)))
                .collect();
            poly.extend(
                banded
                    .iter()
                    .rev()
                    .map(|p| (axes.tx(p.x), axes.ty(p.band.expect("band").0))),
            );
            chart
                .draw_series(std::iter::once(Polygon::new(
                    poly,
                    color.mix(if d.log_y { 0.10 } else { 0.18 }).filled(),
                )))
                .map_err(e)?;
        }
        let line: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(|p| p.y.is_finite())
            .map(|p| (axes.tx(p.x), axes.ty(p.y)))
            .collect();
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(c.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3))
            });
        entries.push((c.label.clone(), Glyph::Line(color, 3)));
        if line.len() <= MAX_CIRCLED_POINTS {
            chart
                .draw_series(
                    line.iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(e)?;
        }
    }

    let mut answers_at: Vec<(i32, i32, i32, i32)> = vec![];
    for m in &d.marks {
        match m {
            MarkLine::V { x, label } | MarkLine::VStyled { x, label, .. } => {
                // Solid black by default, so that it cannot be mistaken for a dashed
                // per-series mark; a styled line takes its own colour and dash.
                let (color, dashed) = match m {
                    MarkLine::VStyled {
                        style:
                            LineStyle {
                                rgb: (r, g, b),
                                dashed,
                            },
                        ..
                    } => (RGBColor(*r, *g, *b), *dashed),
                    _ => (BLACK, false),
                };
                let x = axes.tx(*x);
                if dashed {
                    chart
                        .draw_series(DashedLineSeries::new(
                            vec![(x, y0), (x, y1)],
                            8,
                            5,
                            color.stroke_width(2),
                        ))
                        .map_err(e)?
                        .label(label.as_str())
                        .legend(move |(x, y)| dashed_legend(x, y, 8, 5, color));
                    entries.push((label.clone(), Glyph::Dashed(8, 5, color)));
                } else {
                    chart
                        .draw_series(LineSeries::new(
                            vec![(x, y0), (x, y1)],
                            color.stroke_width(2),
                        ))
                        .map_err(e)?
                        .label(label.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(2))
                        });
                    entries.push((label.clone(), Glyph::Line(color, 2)));
                }
            }
            MarkLine::H { y, label } => {
                let y = axes.ty(*y);
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x0, y), (x1, y)],
                        8,
                        5,
                        RGBColor(90, 90, 90).stroke_width(1),
                    ))
                    .map_err(e)?
                    .label(label.as_str())
                    .legend(|(x, y)| dashed_legend(x, y, 8, 5, RGBColor(90, 90, 90)));
                entries.push((label.clone(), Glyph::Dashed(8, 5, RGBColor(90, 90, 90))));
            }
            MarkLine::PerSeries { factor, label } => {
                let mut first = true;
                for (i, c) in d.curves.iter().enumerate() {
                    let Some(v) = c.series_x else { continue };
                    let x = axes.tx(factor * v);
                    if x < x0 || x > x1 {
                        continue;
                    }
                    let color = PALETTE[i % PALETTE.len()];
                    let (dash, gap) = if *factor >= 2.0 { (3, 4) } else { (10, 5) };
                    let s = chart
                        .draw_series(DashedLineSeries::new(
                            vec![(x, y0), (x, y1)],
                            dash,
                            gap,
                            color.stroke_width(1),
                        ))
                        .map_err(e)?;
                    if first {
                        first = false;
                        s.label(label.as_str()).legend(move |(x, y)| {
                            dashed_legend(x, y, dash, gap, RGBColor(120, 120, 120))
                        });
                        let g = Glyph::Dashed(dash, gap, RGBColor(120, 120, 120));
                        entries.push((label.clone(), g));
                    }
                }
            }
            MarkLine::Answer {
                x,
                y,
                label,
                series,
            } => {
                let (x, y) = (axes.tx(*x), axes.ty(*y));
                if !(x.is_finite() && y.is_finite()) {
                    continue;
                }
                let color = series.map_or(BLACK, |i| PALETTE[i % PALETTE.len()]);
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at((x, y)) + diamond(color) + diamond_ring(),
                    ))
                    .map_err(e)?;
                let (px, py) = chart.backend_coord(&(x, y));
                // The label goes to the left of a point in the right third of the plot, and
                // moves up, a line at a time, until it overlaps no label placed before it
                // (two series safe at the same or neighbouring values).
                let w = label.chars().count() as i32 * 7;
                let right_third = (x - x0) / (x1 - x0) > 0.67;
                let tx = if right_third { px - w - 12 } else { px + 10 };
                let mut ty = py - 18;
                let hits = |ty: i32, placed: &[(i32, i32, i32, i32)]| {
                    placed
                        .iter()
                        .any(|&(a, b, c, d)| tx < c && tx + w > a && ty < d && ty + 14 > b)
                };
                for _ in 0..12 {
                    if !hits(ty, &answers_at) {
                        break;
                    }
                    ty -= 15;
                }
                answers_at.push((tx, ty, tx + w, ty + 14));
                let style = ("sans-serif", 13).into_font().color(&color);
                area.draw(&Text::new(label.clone(), (tx, ty), style))
                    .map_err(e)?;
            }
            MarkLine::Shade { .. } | MarkLine::Note { .. } => {}
        }
    }
    if d.marks.iter().any(|m| matches!(m, MarkLine::Answer { .. })) {
        let label = "the answer (safe value at 95 %)";
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(e)?
            .label(label)
            .legend(|(x, y)| EmptyElement::at((x + 11, y)) + diamond(RGBColor(90, 90, 90)));
        entries.push((label.to_string(), Glyph::Diamond));
    }

    if upper_bounds_drawn {
        let label = "no run had the event: upper 95 % bound";
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(e)?
            .label(label)
            .legend(|(x, y)| EmptyElement::at((x + 11, y)) + down_triangle(RGBColor(90, 90, 90)));
        entries.push((label.to_string(), Glyph::Triangle));
    }
    match column {
        None => chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .label_font(("sans-serif", 13))
            .position(corner)
            .draw()
            .map_err(e)?,
        Some(col) => legend_column(&col, &entries).map_err(e)?,
    }
    root.present().map_err(e)?;
    Ok(())
}
/// Tick values 1, 2, 5 x 10^k whose log10 lies in [lo, hi] (fewer when the range is wide).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (k0, k1) = (lo.floor() as i32, hi.ceil() as i32);
    let mults: &[f64] = if k1 - k0 > 4 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut out = vec![];
    for k in k0..=k1 {
        for m in mults {
            let v = m * 10f64.powi(k);
            if v.log10() >= lo && v.log10() <= hi {
                out.push(v);
            }
        }
    }
    out
}
