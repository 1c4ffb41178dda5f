//! The flags of `vtsim advise`: [`AdviseArgs`], and the preset questions' own [`PresetArgs`],
//! grouped in the help under a heading per form, with an example of each form after them.

use crate::cli::args::parse_seed;
use std::path::PathBuf;
use vtsim::advise;

/// The heading of the rollout's two forms, `--gate` and `--refresh-interval`.
pub const ROLLOUT: &str = "Rollout (--gate D or --refresh-interval D)";
/// The heading of the generic form, any model and knob.
pub const KNOB: &str = "Any model and knob (--knob PATH --metric NAME --target X)";
/// The heading of `--preset` itself.
pub const PRESETS: &str = "Presets (--preset NAME)";
/// The heading of `--preset rollout-frontier`'s own flags.
pub const FRONTIER: &str = "Preset rollout-frontier (also reads --vtgates, --target-risk, --out)";
/// The heading of `--preset site-poller`'s own flags.
pub const SITE_POLLER: &str = "Preset site-poller (model builtin:playground)";
/// The heading of `--preset connpool`'s own flags.
pub const CONNPOOL: &str = "Preset connpool (model builtin:connpool-default)";
/// The heading of `--preset proxysql`'s own flags.
pub const PROXYSQL: &str = "Preset proxysql (model builtin:proxysql-reader-fallback)";
/// The heading of `--preset fleet`'s own flags.
pub const FLEET: &str =
    "Preset fleet (model builtin:fleet-default; also reads --gate, --vtgates, --target, --out)";
/// The heading of the flags that choose what is printed or written.
pub const OUTPUT: &str = "Output";

/// After the flags: one command per form (each runs in seconds, the fleet's in about half a
/// minute on one core; `tests/cli.rs` checks that each parses).
pub const AFTER_HELP: &str = "\
Give one form: --gate or --refresh-interval (the rollout), --knob (any model and knob) or
--preset NAME. A flag the chosen form does not read is refused (exit 2). See docs/advise.md.

Examples:
  vtsim advise --gate 30s --vtgates 10
  vtsim advise --refresh-interval 60s --vtgates 10
  vtsim advise --knob operator.tablet_available_timeout --metric any_error --target 0.01
  vtsim advise --preset rollout-frontier --vtgates 10
  vtsim advise --preset site-poller
  vtsim advise --preset connpool --load-rps 3000
  vtsim advise --preset proxysql --connect-budget 10s
  vtsim advise --preset fleet --read-rps 1000 --replicas 2..3 --gate 120s";

/// The flags of `vtsim advise`, every form's.
#[derive(clap::Args)]
// Each flag's help on the line below it, in every heading alike (clap decides per heading
// otherwise, and the headings would differ).
#[command(after_help = AFTER_HELP, next_line_help = true)]
pub struct AdviseArgs {
    /// The model: a file or `builtin:NAME` [default: builtin:rollout-default; a preset's
    /// model is named in its heading].
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Override a parameter before the search (RON value), as replay --set.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Seed of the runs (decimal or 0x hex).
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    pub seed: u64,
    /// Worker threads.
    #[arg(long)]
    pub threads: Option<usize>,
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
    #[arg(long, value_name = "DURATION", help_heading = ROLLOUT)]
    pub gate: Option<String>,
    /// Rollout: vtgate --tablet_refresh_interval; advise then solves for the gate.
    #[arg(long, value_name = "DURATION", help_heading = ROLLOUT)]
    pub refresh_interval: Option<String>,
    /// Rollout (and --preset rollout-frontier [default: 10], --preset fleet): number of
    /// vtgates.
    #[arg(long, help_heading = ROLLOUT)]
    pub vtgates: Option<u32>,
    /// Rollout (--gate, --refresh-interval, --preset rollout-frontier): target P(any failed
    /// replica read per rollout); with --refresh-interval at least about 4.3e-7 unless
    /// --rollouts is given.
    #[arg(long, default_value_t = 1e-3, help_heading = ROLLOUT)]
    pub target_risk: f64,
    /// With --refresh-interval: rollouts per gate, at most 1e7 [default: enough that
    /// zero errors in all of them meets the target].
    #[arg(long, help_heading = ROLLOUT)]
    pub rollouts: Option<u64>,
    /// Any model: the knob's parameter path, e.g. vtgate.tablet_refresh_interval.
    #[arg(long, value_name = "PATH", help_heading = KNOB)]
    pub knob: Option<String>,
    /// With --knob: the metric that must clear the target.
    #[arg(long, value_name = "NAME", help_heading = KNOB)]
    pub metric: Option<String>,
    /// With --knob: the target (a probability for a 0/1 metric); with --gate or --preset
    /// rollout-frontier it stands for --target-risk; --preset fleet: P(any pool timeout per
    /// rollout) [default: 0.1].
    #[arg(long, help_heading = KNOB)]
    pub target: Option<f64>,
    /// With --knob: `min` (the smallest value that clears) or `max` (the largest).
    #[arg(long, default_value = "min", value_parser = ["min", "max"], help_heading = KNOB)]
    pub direction: String,
    /// With --knob: the metric must be `below` or `above` the target.
    #[arg(long, default_value = "below", value_parser = ["below", "above"], help_heading = KNOB)]
    pub want: String,
    /// With --knob: judge the 0/1 event `metric > X` (p99 below B is P(metric > B) below
    /// 0.01).
    #[arg(long, value_name = "X", help_heading = KNOB)]
    pub exceeds: Option<f64>,
    /// A metric whose mean is reported beside the answer (repeatable).
    #[arg(long = "cost", value_name = "NAME", help_heading = KNOB)]
    pub costs: Vec<String>,
    /// Candidates A..B (durations or numbers, like the parameter) [--knob default:
    /// step .. 4 × the model's value; --gate default: 1s .. 3 × gate].
    #[arg(long, value_name = "A..B", help_heading = KNOB)]
    pub range: Option<String>,
    /// Candidate step [--knob default: the model's value / 10; --gate: 1s;
    /// --refresh-interval: 5s].
    #[arg(long, help_heading = KNOB)]
    pub step: Option<String>,
    #[command(flatten)]
    pub preset: PresetArgs,
    /// Print the answer as JSON (schema vtsim.advise, docs/outputs.md).
    #[arg(long, help_heading = OUTPUT)]
    pub json: bool,
    /// rollout-frontier: the folder for rollout-frontier.png/.svg [default: advise-out];
    /// fleet: write fleet-capacity.png/.svg there.
    #[arg(long, value_name = "DIR", help_heading = OUTPUT)]
    pub out: Option<PathBuf>,
}

/// The flags only a preset reads (`--vtgates`, `--target`, `--target-risk`, `--gate` and
/// `--out` are shared with the other forms).
#[derive(clap::Args, Debug)]
pub struct PresetArgs {
    /// A preset question: rollout-frontier, connpool, site-poller, proxysql, fleet
    /// (docs/advise.md).
    #[arg(long = "preset", value_name = "NAME", value_parser = ["rollout-frontier", "connpool", "site-poller", "proxysql", "fleet"], help_heading = PRESETS)]
    pub name: Option<String>,
    /// The gates [default: 10s,20s,30s,45s,60s,90s].
    #[arg(long, value_name = "LIST", help_heading = FRONTIER)]
    pub gates: Option<String>,
    /// Poll intervals [default: 1s,2s,5s,10s].
    #[arg(long, value_name = "LIST", help_heading = SITE_POLLER)]
    pub intervals: Option<String>,
    /// Per-probe transient error probability.
    #[arg(long, default_value_t = 0.01, help_heading = SITE_POLLER)]
    pub probe_error: f64,
    /// Most false Unreachable transitions per day, all sites.
    #[arg(long, default_value_t = 1.0, help_heading = SITE_POLLER)]
    pub false_alarms_per_day: f64,
    /// The second fault's detection p99 must be below this.
    #[arg(long, value_name = "DURATION", default_value = "75s", help_heading = SITE_POLLER)]
    pub detect_budget: String,
    /// How long the first site has been down when the second dies.
    #[arg(long, value_name = "DURATION", default_value = "5m", help_heading = SITE_POLLER)]
    pub first_down: String,
    /// The largest failureThreshold tried.
    #[arg(long, default_value_t = 8, help_heading = SITE_POLLER)]
    pub max_threshold: u32,
    /// Variants [default: Unfixed,OnlyA,OnlyB,Fixed].
    #[arg(long, value_name = "LIST", help_heading = CONNPOOL)]
    pub variants: Option<String>,
    /// Offered requests/s for the smallest-capacity search.
    #[arg(long, default_value_t = 3000.0, help_heading = CONNPOOL)]
    pub load_rps: f64,
    /// mysql-connect_timeout_server_max, the user's connect budget.
    #[arg(long, value_name = "DURATION", default_value = "10s", help_heading = PROXYSQL)]
    pub connect_budget: String,
    /// The most read errors per replica-loss event accepted.
    #[arg(long, default_value_t = 2.0, help_heading = PROXYSQL)]
    pub max_reads_lost: f64,
    /// Replica reads/s per shard (all vtgates together).
    #[arg(long, default_value_t = advise::fleet::DEFAULT_READ_RPS, help_heading = FLEET)]
    pub read_rps: f64,
    /// Replica counts per shard, A..B or N (at least 2).
    #[arg(long, value_name = "A..B", default_value = "2..3", help_heading = FLEET)]
    pub replicas: String,
    /// The pools' waitlist variant, Unfixed, OnlyA, OnlyB or Fixed [default: the model's].
    #[arg(long, value_name = "NAME", help_heading = FLEET)]
    pub variant: Option<String>,
}
