//! The library API in a few lines: load a model file, run one seed, read the metrics by name
//! and the trace digest. What `vtsim replay` prints, without the report.
//!
//! ```text
//! cargo run --release --example replay_model -- models/rollout-default.ron 7
//! cargo run --release --example replay_model -- builtin:hold-fixture
//! ```

use std::path::Path;
use vtsim::experiment::load_model_arg;
use vtsim::model::RunOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let model = args
        .next()
        .unwrap_or_else(|| "builtin:rollout-default".into());
    // A model file (or `builtin:NAME`), parsed and validated.
    let file = load_model_arg(Path::new(&model))?;
    // The seed: the command line's, else the model file's, else 1 (as `vtsim replay`).
    let seed = match args.next() {
        Some(s) => s.parse()?,
        None => file.seed.unwrap_or(1),
    };
    let out = file.world.run(seed, RunOptions::default());
    println!("model   {} ({}), seed {seed}", file.name, file.world.kind());
    for d in out.metric_defs() {
        let v = out.metric(d.name).expect("a metric the run reports");
        println!("  {:<32} {v}", d.name);
    }
    println!("events  {}", out.events);
    println!("digest  {}", out.digest);
    Ok(())
}
