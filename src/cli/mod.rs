//! The `vtsim` subcommands, one module each: its flags (a `clap::Args` struct) and its `run`,
//! which parses and prints; the work is in the library. [`dispatch`] calls the one asked for.

mod advise;
mod args;
mod bench;
mod diff;
mod fit;
mod merge;
mod progress;
mod replay;
mod run;
mod validate;

pub use args::{Cli, Cmd};

use anyhow::Result;
use std::io::IsTerminal;
use std::process::ExitCode;
use vtsim::experiment::error::BadInput;

/// Runs the subcommand `cli` asks for; `matches` are the parsed matches it came from (advise
/// tells a flag given on the command line from its default by them).
pub fn dispatch(cli: Cli, matches: &clap::ArgMatches) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Run(a) => run::run(a),
        Cmd::Merge(a) => merge::run(a),
        Cmd::Replay(a) => replay::run(a),
        Cmd::Fit(a) => fit::run(a),
        Cmd::Diff(a) => diff::run(a),
        Cmd::Validate(a) => validate::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Advise(a) => advise::run(a, matches),
    }
}

/// A bad-input error (exit 2) with message `m`.
fn bad(m: impl Into<String>) -> anyhow::Error {
    BadInput(m.into()).into()
}

/// Whether to draw progress bars: on a terminal, and not under CI.
fn show_progress() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}
