//! What a chart shows: its curves (points with their 95 % bands), its reference marks and
//! their line styles, and the curve colours.

use plotters::style::RGBColor;

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

pub(super) const PALETTE: [RGBColor; 10] = [
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
