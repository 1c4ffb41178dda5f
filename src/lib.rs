//! vtsim: a deterministic discrete-event simulator of the timing contracts inside Vitess and
//! MySQL proxy/operator control loops. See README.md for the tour.

pub mod model;
pub mod sim;
