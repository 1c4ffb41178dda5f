//! Rolling restarts vs vtgate discovery (`spec/rollout.md`). Placeholder until the model lands.

use super::{MetricDef, Model, RunOptions, RunOutput};
use serde::{Deserialize, Serialize};

/// Parameters of the rollout model.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolloutParams {}

/// The rollout model.
pub struct Rollout;

impl Model for Rollout {
    type Params = RolloutParams;
    fn validate(_p: &RolloutParams) -> Result<(), (String, String)> {
        Ok(())
    }
    fn metric_defs() -> Vec<MetricDef> {
        vec![]
    }
    fn run(_p: &RolloutParams, _seed: u64, _opts: RunOptions) -> RunOutput {
        unimplemented!("the rollout model has not landed")
    }
}
