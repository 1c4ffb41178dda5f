//! Charts for people deciding a setting: line charts with 95 % bands, axis titles with units,
//! a legend, optional log axes, and reference marks (a rule of thumb, a target risk).
//!
//! Drawn with plotters into PNG and SVG. Text uses DejaVu Sans embedded in the binary (the
//! `dejavu` crate, registered as "sans-serif"), so a fresh machine needs no font packages and a
//! chart is byte-identical from run to run. Log axes are drawn by plotting log10 of the values
//! on a linear axis and labelling the ticks with 10^v.
//!
//! The kit knows no model: callers fill a [`ChartData`] and call [`draw_files`] or
//! [`draw_files_footed`].

mod data;
mod draw;
mod glyph;
mod legend;
mod output;

pub use data::{palette, ChartData, Curve, CurvePoint, LineStyle, MarkLine, MAX_CIRCLED_POINTS};
pub use output::{draw_files, draw_files_footed, register_fonts, SIZE};
