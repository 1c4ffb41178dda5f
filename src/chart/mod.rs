//! Charts for people deciding a setting: line charts with 95 % bands, axis titles with units,
//! a legend, optional log axes, and reference marks (a rule of thumb, a target risk).
//!
//! Drawn with plotters into PNG and SVG. Text uses DejaVu Sans embedded in the binary (the
//! `dejavu` crate, registered as "sans-serif"), so a fresh machine needs no font packages and a
//! chart is byte-identical from run to run. Log axes are drawn by plotting log10 of the values
//! on a linear axis and labelling the ticks with 10^v.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// One point of a curve: the statistic and, where it has one, its 95 % band.
#[derive(Clone, Copy, Debug)]
pub struct CurvePoint {
    /// x value (durations in seconds).
    pub x: f64,
    /// The statistic.
    pub y: f64,
    /// (low, high) of the band.
    pub band: Option<(f64, f64)>,
}

/// One curve.
#[derive(Clone, Debug)]
pub struct Curve {
    /// Legend text.
    pub label: String,
    /// Points, sorted by x.
    pub points: Vec<CurvePoint>,
    /// Numeric value of the series label (for per-series marks).
    pub series_x: Option<f64>,
}

/// A reference line.
#[derive(Clone, Debug)]
pub enum MarkLine {
    /// Vertical line at x, solid black.
    V {
        /// Position.
        x: f64,
        /// Legend text.
        label: String,
    },
    /// Vertical line at x in a colour and dash of its own, with its legend entry (drain
    /// markers, the survivor-at-capacity loads), so that several are told apart.
    VStyled {
        /// Position.
        x: f64,
        /// Legend text.
        label: String,
        /// Colour and dash.
        style: LineStyle,
    },
    /// Horizontal line at y.
    H {
        /// Position.
        y: f64,
        /// Legend text.
        label: String,
    },
    /// A dashed vertical line at factor × series value, in each curve's colour.
    PerSeries {
        /// Multiplier.
        factor: f64,
        /// Legend text.
        label: String,
    },
    /// A shaded region under the curves (a safe region), one legend entry.
    Shade {
        /// The polygon, in data coordinates.
        points: Vec<(f64, f64)>,
        /// Legend text.
        label: String,
    },
    /// The answer on a curve: a diamond at (x, y) in the colour of curve `series` (black when
    /// `None`) with `label` written beside it (no legend entry).
    Answer {
        /// Position.
        x: f64,
        /// Position.
        y: f64,
        /// Text beside the marker (e.g. `34 s`).
        label: String,
        /// Index of the curve whose colour it takes.
        series: Option<usize>,
    },
    /// A thin dotted grey vertical line labelled at its top (a cost contour); no legend
    /// entry, and outside the plotted x range it is not drawn.
    Note {
        /// Position.
        x: f64,
        /// Text at its top.
        label: String,
    },
}

/// How a reference line is drawn: its colour and whether it is dashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineStyle {
    /// Red, green, blue.
    pub rgb: (u8, u8, u8),
    /// Dashed (8 px dash, 5 px gap) rather than solid.
    pub dashed: bool,
}

/// The colour the renderer gives curve `i` (callers colour reference lines apart from the
/// curves with an index past the last curve).
pub fn palette(i: usize) -> (u8, u8, u8) {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    (r, g, b)
}

/// A series with more points than this is drawn as a line only: a circle on every point of a
/// dense series (a per-second timeline) hides the line.
pub const MAX_CIRCLED_POINTS: usize = 60;

/// Everything one chart shows.
#[derive(Clone, Debug)]
pub struct ChartData {
    /// Title.
    pub title: String,
    /// x-axis title (with units).
    pub x_label: String,
    /// y-axis title (with units).
    pub y_label: String,
    /// Log x axis.
    pub log_x: bool,
    /// Log y axis.
    pub log_y: bool,
    /// Curves.
    pub curves: Vec<Curve>,
    /// Reference lines.
    pub marks: Vec<MarkLine>,
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

static FONTS: Once = Once::new();

/// Register the embedded font (idempotent).
pub fn register_fonts() {
    FONTS.call_once(|| {
        for style in [
            FontStyle::Normal,
            FontStyle::Bold,
            FontStyle::Italic,
            FontStyle::Oblique,
        ] {
            let bytes = match style {
                FontStyle::Bold => dejavu::sans::bold(),
                _ => dejavu::sans::regular(),
            };
            let _ = plotters::style::register_font("sans-serif", style, bytes);
        }
    });
}

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

struct Axes {
    log_x: bool,
    log_y: bool,
    y_floor: f64,
    x_floor: f64,
}

impl Axes {
    fn tx(&self, x: f64) -> f64 {
        if self.log_x {
            x.max(self.x_floor).log10()
        } else {
            x
        }
    }
    fn ty(&self, y: f64) -> f64 {
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

type DrawResult<DB> =
    std::result::Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn draw<DB: DrawingBackend>(
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

/// The corner of the plot holding the least: curve points and answers count 3 each, a
/// shaded region counts by the grid points it covers (the legend goes there, so that it
/// covers neither a curve nor the safe region); and whether even that one holds something
/// (then the legend goes outside the plot, [`legend_column`]).
fn legend_corner(
    d: &ChartData,
    axes: &Axes,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    (bw, bh): (f64, f64),
) -> (SeriesLabelPosition, bool) {
    // Corner boxes: the legend covers roughly the outer 40 % of the width, 45 % of the height.
    // (position, x zone, y zone) in fractions of the plot: the four corners first (they win
    // a tie), then the middle of each side, for a plot whose lines run through every corner.
    let corners = [
        (SeriesLabelPosition::UpperRight, (0.6, 1.0), (0.55, 1.0)),
        (SeriesLabelPosition::UpperLeft, (0.0, 0.4), (0.55, 1.0)),
        (SeriesLabelPosition::LowerRight, (0.6, 1.0), (0.0, 0.45)),
        (SeriesLabelPosition::LowerLeft, (0.0, 0.4), (0.0, 0.45)),
        (SeriesLabelPosition::MiddleRight, (0.6, 1.0), (0.3, 0.7)),
        (SeriesLabelPosition::MiddleLeft, (0.0, 0.4), (0.3, 0.7)),
    ];
    let frac = |x: f64, y: f64| ((axes.tx(x) - x0) / (x1 - x0), (axes.ty(y) - y0) / (y1 - y0));
    // A curve's points count 3 each, and the line between two points 1 per sixteenth of it,
    // so that a legend lands on no line, not merely on no point.
    let mut occupied: Vec<((f64, f64), usize)> = vec![];
    for c in &d.curves {
        let pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .filter(|p| p.y.is_finite())
            .map(|p| frac(p.x, p.y))
            .collect();
        occupied.extend(pts.iter().map(|&p| (p, 3)));
        for w in pts.windows(2) {
            for k in 1..16 {
                let t = k as f64 / 16.0;
                let p = (
                    w[0].0 + t * (w[1].0 - w[0].0),
                    w[0].1 + t * (w[1].1 - w[0].1),
                );
                occupied.push((p, 1));
            }
        }
    }
    for m in &d.marks {
        match m {
            MarkLine::Answer { x, y, .. } => occupied.push((frac(*x, *y), 3)),
            MarkLine::Shade { points, .. } => {
                let poly: Vec<(f64, f64)> = points.iter().map(|&(x, y)| frac(x, y)).collect();
                for i in 0..12 {
                    for j in 0..12 {
                        let p = ((i as f64 + 0.5) / 12.0, (j as f64 + 0.5) / 12.0);
                        if inside(&poly, p) {
                            occupied.push((p, 1));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let mut best = (usize::MAX, SeriesLabelPosition::UpperRight);
    for (pos, (ax, bx), (ay, by)) in corners {
        let n: usize = occupied
            .iter()
            .filter(|((fx, fy), _)| *fx >= ax && *fx <= bx && *fy >= ay && *fy <= by)
            .map(|(_, w)| w)
            .sum();
        if n < best.0 {
            best = (n, pos);
        }
    }
    // Does the legend itself, at that place and of its estimated size (`bw` × `bh` of the
    // plot), cover a curve, an answer or the shaded region?
    let (ax, bx) = match best.1 {
        SeriesLabelPosition::UpperLeft
        | SeriesLabelPosition::MiddleLeft
        | SeriesLabelPosition::LowerLeft => (0.0, bw),
        _ => (1.0 - bw, 1.0),
    };
    let (ay, by) = match best.1 {
        SeriesLabelPosition::UpperLeft | SeriesLabelPosition::UpperRight => (1.0 - bh, 1.0),
        SeriesLabelPosition::LowerLeft | SeriesLabelPosition::LowerRight => (0.0, bh),
        _ => (0.5 - bh / 2.0, 0.5 + bh / 2.0),
    };
    let covered = occupied
        .iter()
        .any(|((fx, fy), _)| *fx >= ax && *fx <= bx && *fy >= ay && *fy <= by);
    (best.1, best.0 > 0 && covered)
}

/// The legend's entries as [`draw`] gives them (for its size, before drawing).
fn legend_labels(d: &ChartData) -> Vec<&str> {
    let mut v: Vec<&str> = d.curves.iter().map(|c| c.label.as_str()).collect();
    for m in &d.marks {
        match m {
            MarkLine::V { label, .. }
            | MarkLine::VStyled { label, .. }
            | MarkLine::H { label, .. }
            | MarkLine::PerSeries { label, .. }
            | MarkLine::Shade { label, .. } => v.push(label),
            MarkLine::Answer { .. } | MarkLine::Note { .. } => {}
        }
    }
    if d.marks.iter().any(|m| matches!(m, MarkLine::Answer { .. })) {
        v.push("the answer (safe value at 95 %)");
    }
    let zero = |c: &Curve| c.points.iter().any(|p| p.y == 0.0 && p.band.is_some());
    if d.log_y && d.curves.iter().any(zero) {
        v.push("no run had the event: upper 95 % bound");
    }
    v
}

/// Width in pixels of the legend column a crowded plot gets (see [`legend_corner`]).
const LEGEND_COLUMN: i32 = 270;

/// How a legend entry is drawn (its sample, 22 pixels wide).
#[derive(Clone, Copy)]
enum Glyph {
    /// A solid line of this colour and width.
    Line(RGBColor, u32),
    /// A dashed line: dash, gap, colour.
    Dashed(i32, i32, RGBColor),
    /// A filled swatch (a shaded region).
    Swatch(ShapeStyle),
    /// The answer's diamond.
    Diamond,
    /// The upper bound's triangle.
    Triangle,
}

/// The legend in a column of its own (right of a plot with no free corner): each entry's
/// sample, and its text wrapped to the column.
fn legend_column<DB: DrawingBackend>(
    col: &DrawingArea<DB, Shift>,
    entries: &[(String, Glyph)],
) -> DrawResult<DB> {
    let font = ("sans-serif", 13).into_font();
    let style = font.color(&BLACK);
    let width = LEGEND_COLUMN - 50;
    let mut y = 56;
    for (label, g) in entries {
        let mut lines: Vec<String> = vec![];
        for word in label.split(' ') {
            match lines.last_mut() {
                Some(l)
                    if col.estimate_text_size(&format!("{l} {word}"), &style)?.0 as i32
                        <= width =>
                {
                    l.push(' ');
                    l.push_str(word);
                }
                _ => lines.push(word.to_string()),
            }
        }
        let (x, gy) = (8, y + 8);
        let grey = RGBColor(90, 90, 90);
        match *g {
            Glyph::Line(c, w) => col.draw(&PathElement::new(
                vec![(x, gy), (x + 22, gy)],
                c.stroke_width(w),
            ))?,
            Glyph::Dashed(dash, gap, c) => col.draw(&dashed_legend(x, gy, dash, gap, c))?,
            Glyph::Swatch(st) => col.draw(&Rectangle::new([(x, gy - 6), (x + 22, gy + 6)], st))?,
            Glyph::Diamond => col.draw(&(EmptyElement::at((x + 11, gy)) + diamond(grey)))?,
            Glyph::Triangle => col.draw(&(EmptyElement::at((x + 11, gy)) + down_triangle(grey)))?,
        }
        for l in &lines {
            col.draw(&Text::new(l.clone(), (38, y), style.clone()))?;
            y += 16;
        }
        y += 6;
    }
    Ok(())
}

/// Whether `p` lies inside the polygon `poly` (even-odd rule).
fn inside(poly: &[(f64, f64)], p: (f64, f64)) -> bool {
    let mut c = false;
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + n - 1) % n]);
        if (a.1 > p.1) != (b.1 > p.1) && p.0 < (b.0 - a.0) * (p.1 - a.1) / (b.1 - a.1) + a.0 {
            c = !c;
        }
    }
    c
}

/// A diamond (an answer), 14 pixels across, centred on its anchor.
fn diamond(color: RGBColor) -> Polygon<(i32, i32)> {
    Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], color.filled())
}

/// The black outline of [`diamond`], so that it reads on a curve of its own colour.
fn diamond_ring() -> PathElement<(i32, i32)> {
    PathElement::new(
        vec![(0, -8), (8, 0), (0, 8), (-8, 0), (0, -8)],
        BLACK.stroke_width(1),
    )
}

/// A triangle pointing down (an upper bound), 10 pixels wide, centred on its anchor.
fn down_triangle(color: RGBColor) -> Polygon<(i32, i32)> {
    Polygon::new(vec![(-5, -4), (5, -4), (0, 5)], color.filled())
}

/// A 22-pixel dashed legend sample.
fn dashed_legend(
    x: i32,
    y: i32,
    dash: i32,
    gap: i32,
    color: RGBColor,
) -> DashedPathElement<std::vec::IntoIter<(i32, i32)>, i32> {
    DashedPathElement::new(vec![(x, y), (x + 22, y)], dash, gap, color.stroke_width(2))
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

/// Width and height of every chart, in pixels.
pub const SIZE: (u32, u32) = (1000, 620);

/// A drawing failure in plain words, naming the chart file.
///
/// plotters exports neither its backend error kind nor the bitmap backend's error type, and
/// their `Display` is a debug dump, so the OS error is recovered from that text: the bitmap
/// backend only touches the file system when it saves, and a failed save carries the
/// `io::Error`'s raw code (turned back into the OS's own words) or, where the PNG encoder
/// wrapped it, the OS's message itself.
fn drawing_failure<E: std::error::Error + Send + Sync>(
    file: &Path,
    e: DrawingAreaErrorKind<E>,
) -> anyhow::Error {
    let text = format!("{e:?}");
    if let Some(code) = text
        .split("code: ")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|c| c.parse::<i32>().ok())
    {
        return crate::io::IoError::new(
            "writing chart",
            file,
            std::io::Error::from_raw_os_error(code),
        )
        .into();
    }
    // An I/O error the encoder wrapped with its message (`Custom { kind: .., error: "File too
    // large (os error 27)" }`): the message is the OS's words.
    if let Some(msg) = text
        .split("error: \"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .filter(|m| !m.is_empty())
    {
        return anyhow!("writing chart {}: {msg}", file.display());
    }
    let why = match e {
        DrawingAreaErrorKind::SharingError => "the drawing area is in use twice".to_string(),
        DrawingAreaErrorKind::LayoutError => "the layout does not fit".to_string(),
        DrawingAreaErrorKind::BackendError(_) if text.contains("FontError") => {
            "a font could not be loaded".to_string()
        }
        DrawingAreaErrorKind::BackendError(_) if text.contains("InvalidBuffer") => {
            "the pixel buffer has the wrong size".to_string()
        }
        DrawingAreaErrorKind::BackendError(_) => match text.split("kind: ").nth(1) {
            Some(k) => format!(
                "the file could not be written ({})",
                k.split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("")
            ),
            None => "the image could not be drawn or encoded".to_string(),
        },
    };
    anyhow!("drawing chart {}: {why}", file.display())
}

/// Draw `d` to `dir/<stem>.png` and `dir/<stem>.svg`, each through a hidden temporary file
/// and a rename. On failure neither temporary file is left behind; the error names the chart
/// file and says why in plain words (`writing chart /out/x.png: File name too long (os error
/// 36)`).
pub fn draw_files(d: &ChartData, dir: &Path, stem: &str) -> Result<()> {
    draw_files_footed(d, dir, stem, "")
}

/// [`draw_files`] with a one-line `footer` under the plot (vtsim version, model, runs,
/// digest prefix: so a chart pasted elsewhere can be traced to its run).
pub fn draw_files_footed(d: &ChartData, dir: &Path, stem: &str, footer: &str) -> Result<()> {
    register_fonts();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    // The SVG is drawn in memory first: a failure there is a drawing failure, not I/O.
    let mut svg_text = String::new();
    {
        let root = SVGBackend::with_string(&mut svg_text, SIZE).into_drawing_area();
        draw(root, d, footer).map_err(|e| drawing_failure(&svg, e))?;
    }
    // The bitmap backend picks its encoder from the extension, so the temporary name ends in .png.
    let pid = std::process::id();
    let png_tmp = dir.join(format!(".{stem}.tmp{pid}.png"));
    let svg_tmp = dir.join(format!(".{stem}.tmp{pid}.svg"));
    let r = (|| -> Result<()> {
        {
            let root = BitMapBackend::new(&png_tmp, SIZE).into_drawing_area();
            draw(root, d, footer).map_err(|e| drawing_failure(&png, e))?;
            // The backend is dropped here; after a failed save its drop tries once more, so
            // the temporary file is removed below, after this block.
        }
        std::fs::write(&svg_tmp, svg_text.as_bytes())
            .map_err(|e| crate::io::IoError::new("writing chart", &svg, e))?;
        crate::io::rename(&png_tmp, &png)?;
        crate::io::rename(&svg_tmp, &svg)?;
        Ok(())
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&png_tmp);
        let _ = std::fs::remove_file(&svg_tmp);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(label: &str, pts: &[(f64, f64)]) -> Curve {
        Curve {
            label: label.into(),
            points: pts
                .iter()
                .map(|&(x, y)| CurvePoint { x, y, band: None })
                .collect(),
            series_x: None,
        }
    }

    fn data(curves: Vec<Curve>) -> ChartData {
        ChartData {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: false,
            curves,
            marks: vec![],
        }
    }

    const AXES: Axes = Axes {
        log_x: false,
        log_y: false,
        y_floor: 1e-6,
        x_floor: 1e-6,
    };

    /// The x of the SVG text element whose text is `label`.
    fn text_x(svg: &str, label: &str) -> i32 {
        let end = [format!(">{label}<"), format!(">\n{label}\n<")]
            .iter()
            .find_map(|p| svg.find(p.as_str()))
            .unwrap_or_else(|| panic!("`{label}` is not drawn"));
        let tag = &svg[svg[..end].rfind("<text").expect("a text element")..end];
        let at = tag.find(" x=\"").expect("an x") + 4;
        tag[at..].split('"').next().unwrap().parse().unwrap()
    }

    #[test]
    fn a_legend_goes_outside_the_plot_only_when_no_place_in_it_is_free() {
        // Both diagonals and a horizontal line through the middle: every corner and side
        // holds a line.
        let crowded = data(vec![
            curve("rising", &[(0.0, 0.0), (1.0, 1.0)]),
            curve("falling", &[(0.0, 1.0), (1.0, 0.0)]),
            curve("level", &[(0.0, 0.5), (1.0, 0.5)]),
        ]);
        let r = (0.0, 1.0);
        assert!(legend_corner(&crowded, &AXES, r, r, (0.3, 0.3)).1);
        // One falling line: the upper right is free, and the legend stays in the plot.
        let free = data(vec![curve("falling", &[(0.0, 1.0), (1.0, 0.0)])]);
        let (pos, out) = legend_corner(&free, &AXES, r, r, (0.3, 0.3));
        assert!(!out);
        assert!(matches!(pos, SeriesLabelPosition::UpperRight));
        // Drawn: the crowded chart's legend text is right of the plot's right edge (where the
        // falling curve ends, at x = 1), the free one's left of it.
        register_fonts();
        for (d, outside, rgb) in [(&crowded, true, "#D62728"), (&free, false, "#1F77B4")] {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
                draw(root, d, "").unwrap();
            }
            let x = text_x(&svg, "falling");
            let line = format!("stroke=\"{rgb}\" stroke-width=\"2\" points=\"");
            let pts = &svg[svg.find(&line).expect("the falling curve") + line.len()..];
            let last = pts
                .split('"')
                .next()
                .unwrap()
                .split_whitespace()
                .last()
                .unwrap();
            let edge: i32 = last.split(',').next().unwrap().parse().unwrap();
            assert_eq!(
                x > edge,
                outside,
                "legend text at x = {x}, plot edge {edge}"
            );
            if outside {
                assert!(x >= SIZE.0 as i32 - LEGEND_COLUMN, "x = {x}");
            }
        }
    }
}
