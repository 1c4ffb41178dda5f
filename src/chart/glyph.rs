//! The marker shapes: the answer's diamond (and its outline) and the upper bound's triangle.

use plotters::prelude::*;

/// A diamond (an answer), 14 pixels across, centred on its anchor.
pub(super) fn diamond(color: RGBColor) -> Polygon<(i32, i32)> {
    Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], color.filled())
}

/// The black outline of [`diamond`], so that it reads on a curve of its own colour.
pub(super) fn diamond_ring() -> PathElement<(i32, i32)> {
    PathElement::new(
        vec![(0, -8), (8, 0), (0, 8), (-8, 0), (0, -8)],
        BLACK.stroke_width(1),
    )
}

/// A triangle pointing down (an upper bound), 10 pixels wide, centred on its anchor.
pub(super) fn down_triangle(color: RGBColor) -> Polygon<(i32, i32)> {
    Polygon::new(vec![(-5, -4), (5, -4), (0, 5)], color.filled())
}
