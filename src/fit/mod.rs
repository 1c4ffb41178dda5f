//! `vtsim fit`: an incident's logs and a cluster's config into a rollout model
//! (`docs/fit.md`), and its inverse, `vtsim replay --emit-logs` ([`emit`]).

pub mod emit;
pub mod names;
