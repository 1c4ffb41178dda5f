//! Experiments: RON model and experiment files, sweep expansion, replicates, the parallel
//! runner with shards and resume, and the outputs under `notebooks-out/<experiment>/`.

pub mod accumulate;
pub mod error;
pub mod files;
pub mod hooks;
pub mod layout;
pub mod plan;
pub mod runner;
pub mod shard_spec;

pub use error::InputError;
pub use files::{load_model_arg, load_model_file, parse_model, ExperimentFile, ModelFile};
pub use plan::{load_plan, Plan, Point, PointWorld};
