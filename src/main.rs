//! The `vtsim` command line. Parsing and printing only; the work is in the library. Each
//! subcommand is a module of [`cli`]; this file parses, dispatches and maps errors to exit
//! codes (2 for bad input, 1 for any other failure).

mod cli;

use clap::{CommandFactory, FromArgMatches};
use cli::Cli;
use std::process::ExitCode;
use vtsim::experiment::error::BadInput;
use vtsim::experiment::InputError;

fn main() -> ExitCode {
    // Die quietly when a reader closes the pipe (`vtsim replay ... | head`), as Unix tools do,
    // instead of panicking on a failed print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Parsed through the matches (as `Cli::parse` does) so that `advise` can tell a flag given
    // on the command line from its default (`ValueSource`).
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli::dispatch(cli, &matches) {
        Ok(code) => code,
        Err(e) => {
            if let Some(b) = e.downcast_ref::<InputError>() {
                eprintln!("error: {b}");
                return ExitCode::from(2);
            }
            if let Some(BadInput(m)) = e.downcast_ref::<BadInput>() {
                eprintln!("error: {m}");
                return ExitCode::from(2);
            }
            // Errors from deeper down (the runner, the charts) may carry Rust's
            // "(os error N)" codes: say them in plain words.
            eprintln!("error: {}", without_os_codes(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}

/// `s` without every " (os error N)" Rust appends to an OS error's message.
fn without_os_codes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(" (os error ") {
        let tail = &rest[i + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            out.push_str(&rest[..i]);
            rest = &tail[digits + 1..];
        } else {
            out.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_codes_are_dropped() {
        assert_eq!(
            without_os_codes(
                "creating a: Permission denied (os error 13): b (os error x) (os error 2)"
            ),
            "creating a: Permission denied: b (os error x)"
        );
        assert_eq!(without_os_codes("plain"), "plain");
    }
}
