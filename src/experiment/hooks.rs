//! Test hooks of the runner and the report, read from the environment (see the runner's
//! module doc): each simulates a kill, holds a lock or takes a path on purpose, for the tests.

use std::path::PathBuf;

/// Test hook: wait, once the locks are held, until `VTSIM_TEST_WAIT_FOR` exists (at most 60 s).
pub fn test_wait_hook() {
    if let Some(p) = std::env::var_os("VTSIM_TEST_WAIT_FOR") {
        let p = PathBuf::from(p);
        let t0 = std::time::Instant::now();
        while !p.exists() && t0.elapsed().as_secs() < 60 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Test hook: exit with code 3 in the output phase when `VTSIM_ABORT_IN_OUTPUTS` is set.
pub fn abort_in_outputs_hook(what: &str) {
    if std::env::var_os("VTSIM_ABORT_IN_OUTPUTS").is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("vtsim: stopping in the output phase, {what} (VTSIM_ABORT_IN_OUTPUTS)");
        std::process::exit(3);
    }
}
