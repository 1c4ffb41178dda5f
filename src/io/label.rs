//! How vtsim writes a duration into a label (an axis label in `runs.csv`, a message, a chart
//! title): whole seconds as `90s`, else milliseconds or nanoseconds.

use crate::sim::SimDuration;

/// The label of a duration: whole seconds as `90s`, else milliseconds or nanoseconds.
pub fn duration_label(d: SimDuration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{ns}ns")
    }
}
