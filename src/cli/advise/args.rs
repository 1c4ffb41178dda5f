//! The flags of `vtsim advise`: [`AdviseArgs`], and the preset questions' own [`PresetArgs`].

use crate::cli::args::parse_seed;
use std::path::PathBuf;
use vtsim::advise;

/// The flags of `vtsim advise`, every form's.
#[derive(clap::Args)]
pub struct AdviseArgs {
    /// Any model: the knob's parameter path, e.g. vtgate.tablet_refresh_interval.
    #[arg(long, value_name = "PATH")]
    pub knob: Option<String>,
    /// With --knob: the metric that must clear the target.
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// With --knob: the target (a probability for a 0/1 metric).
    #[arg(long)]
    pub target: Option<f64>,
    /// With --knob: `min` (the smallest value that clears) or `max` (the largest).
    #[arg(long, default_value = "min", value_parser = ["min", "max"])]
    pub direction: String,
    /// With --knob: the metric must be `below` or `above` the target.
    #[arg(long, default_value = "below", value_parser = ["below", "above"])]
    pub want: String,
    /// Candidates A..B (durations or numbers, like the parameter) [--knob default:
    /// step .. 4 × the model's value; --gate default: 1s .. 3 × gate].
    #[arg(long, value_name = "A..B")]
    pub range: Option<String>,
    /// Candidate step [--knob default: the model's value / 10; --gate: 1s;
    /// --refresh-interval: 5s].
    #[arg(long)]
    pub step: Option<String>,
    /// Override a parameter before the search (RON value), as replay --set.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// A metric whose mean is reported beside the answer (repeatable).
    #[arg(long = "cost", value_name = "NAME")]
    pub costs: Vec<String>,
    /// Runs in a candidate's first batch (later batches double) [default: 100 for a 0/1
    /// metric, 20 for a value].
    #[arg(long)]
    pub batch: Option<u64>,
    /// Most runs per candidate, at most 1e7 [default: enough for a 0/1 target; 10000].
    #[arg(long)]
    pub max_runs: Option<u64>,
    /// Most runs in all, at most 1e9 [default: 2e6].
    #[arg(long)]
    pub budget: Option<u64>,
    /// Rollout, today's knob: the operator's Available gate (30s in every release). With
    /// --preset fleet: the fleet rollout's gate [default: 120s].
    #[arg(long, value_name = "DURATION")]
    pub gate: Option<String>,
    /// Rollout: vtgate --tablet_refresh_interval; advise then solves for the gate.
    #[arg(long, value_name = "DURATION")]
    pub refresh_interval: Option<String>,
    /// Rollout (and --preset fleet): number of vtgates.
    #[arg(long)]
    pub vtgates: Option<u32>,
    /// Rollout (--gate, --refresh-interval, --preset rollout-frontier): target P(any failed
    /// replica read per rollout); with --refresh-interval at least about 4.3e-7 unless
    /// --rollouts is given.
    #[arg(long, default_value_t = 1e-3)]
    pub target_risk: f64,
    /// The model: a file or `builtin:NAME` [default: builtin:rollout-default].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// With --refresh-interval: rollouts per gate, at most 1e7 [default: enough that
    /// zero errors in all of them meets the target].
    #[arg(long)]
    pub rollouts: Option<u64>,
    /// Seed of the runs (decimal or 0x hex).
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    pub seed: u64,
    /// Worker threads.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the answer as JSON (schema vtsim.advise, docs/outputs.md).
    #[arg(long)]
    pub json: bool,
    /// With --knob: judge the 0/1 event `metric > X` (p99 below B is P(metric > B) below
    /// 0.01).
    #[arg(long, value_name = "X")]
    pub exceeds: Option<f64>,
    #[command(flatten)]
    pub preset: PresetArgs,
}

/// The flags only a preset reads (`--vtgates`, `--target`, `--target-risk` and `--gate` are
/// shared with the other forms).
#[derive(clap::Args, Debug)]
pub struct PresetArgs {
    /// A preset question: rollout-frontier, connpool, site-poller, proxysql, fleet
    /// (docs/advise.md).
    #[arg(long = "preset", value_name = "NAME", value_parser = ["rollout-frontier", "connpool", "site-poller", "proxysql", "fleet"])]
    pub name: Option<String>,
    /// rollout-frontier: the gates [default: 10s,20s,30s,45s,60s,90s].
    #[arg(long, value_name = "LIST")]
    pub gates: Option<String>,
    /// rollout-frontier: the folder for rollout-frontier.png/.svg [default: advise-out];
    /// fleet: write fleet-capacity.png/.svg there.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// site-poller: poll intervals [default: 1s,2s,5s,10s].
    #[arg(long, value_name = "LIST")]
    pub intervals: Option<String>,
    /// site-poller: per-probe transient error probability.
    #[arg(long, default_value_t = 0.01)]
    pub probe_error: f64,
    /// site-poller: most false Unreachable transitions per day, all sites.
    #[arg(long, default_value_t = 1.0)]
    pub false_alarms_per_day: f64,
    /// site-poller: the second fault's detection p99 must be below this.
    #[arg(long, value_name = "DURATION", default_value = "75s")]
    pub detect_budget: String,
    /// site-poller: how long the first site has been down when the second dies.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub first_down: String,
    /// site-poller: the largest failureThreshold tried.
    #[arg(long, default_value_t = 8)]
    pub max_threshold: u32,
    /// connpool: variants [default: Unfixed,OnlyA,OnlyB,Fixed].
    #[arg(long, value_name = "LIST")]
    pub variants: Option<String>,
    /// connpool: offered requests/s for the smallest-capacity search.
    #[arg(long, default_value_t = 3000.0)]
    pub load_rps: f64,
    /// proxysql: mysql-connect_timeout_server_max, the user's connect budget.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub connect_budget: String,
    /// proxysql: the most read errors per replica-loss event accepted.
    #[arg(long, default_value_t = 2.0)]
    pub max_reads_lost: f64,
    /// fleet: replica reads/s per shard (all vtgates together).
    #[arg(long, default_value_t = advise::fleet::DEFAULT_READ_RPS)]
    pub read_rps: f64,
    /// fleet: replica counts per shard, A..B or N (at least 2).
    #[arg(long, value_name = "A..B", default_value = "2..3")]
    pub replicas: String,
    /// fleet: the pools' waitlist variant, Unfixed, OnlyA, OnlyB or Fixed [default: the
    /// model's].
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
}
