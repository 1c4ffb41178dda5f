//! vtsim: a deterministic discrete-event simulator of the timing contracts inside Vitess and
//! MySQL proxy/operator control loops. See README.md for the tour.

pub mod advise;
pub mod bench;
pub mod chart;
pub mod experiment;
pub mod fit;
pub mod io;
pub mod model;
pub mod replay;
pub mod report;
pub mod sim;
pub mod sketch;
pub mod stats;
pub mod tracediff;
