//! Run `N` replicates of a model the way one worker of `vtsim run` does (one world reused
//! across the runs, `WorldSpec::runner`; replicate seeds of experiment seed 0), and print the
//! events handled and the digest of the last run. For instruction counts per replication:
//! the difference of two sizes under callgrind takes the start-up out.
//!
//! ```text
//! cargo build --release --example replicates
//! valgrind --tool=callgrind target/release/examples/replicates models/rollout-default.ron 600
//! valgrind --tool=callgrind target/release/examples/replicates models/rollout-default.ron 100
//! ```

use std::path::Path;
use vtsim::experiment::load_model_arg;
use vtsim::model::RunOptions;
use vtsim::sim::rng::replicate_seed;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let model = args
        .next()
        .unwrap_or_else(|| "builtin:rollout-default".into());
    let n: u64 = match args.next() {
        Some(s) => s.parse()?,
        None => 600,
    };
    let file = load_model_arg(Path::new(&model))?;
    let mut runner = file.world.runner();
    let (mut events, mut digest) = (0u64, String::new());
    for k in 0..n {
        let r = runner.run(replicate_seed(0, k), RunOptions::default());
        events += r.events;
        digest = r.digest;
    }
    println!(
        "{n} replicates of {}: {events} events; last digest {digest}",
        file.name
    );
    Ok(())
}
