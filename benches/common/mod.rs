//! Helpers shared by the benches: the SimPy peer scripts of `benches/peer/`.
#![allow(dead_code)]

use std::path::PathBuf;

/// CPU seconds this process has used (`CLOCK_PROCESS_CPUTIME_ID`): the benches compare CPU
/// time with the peers' (`time.process_time()`), which load from other processes does not
/// inflate the way it does wall time.
pub fn cpu_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for clock_gettime to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Best (least) CPU and wall seconds of each of `fs` over `times` rounds, the variants
/// interleaved within each round (so a noisy spell of the machine, or the process's cold
/// start, falls on all of them alike instead of on whichever was measured first).
pub fn best_of_each(times: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<(f64, f64)> {
    let mut best = vec![(f64::INFINITY, f64::INFINITY); fs.len()];
    for _ in 0..times {
        for (f, b) in fs.iter_mut().zip(best.iter_mut()) {
            let (c0, t0) = (cpu_s(), std::time::Instant::now());
            f();
            b.0 = b.0.min(cpu_s() - c0);
            b.1 = b.1.min(t0.elapsed().as_secs_f64());
        }
    }
    best
}

use std::process::Command;

/// The peer script `name` (in `benches/peer/`, found from the repository, never from the
/// current directory), or `VTSIM_PEER` when it is set.
pub fn peer_script(name: &str) -> PathBuf {
    match std::env::var_os("VTSIM_PEER") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("benches/peer")
            .join(name),
    }
}

/// Run peer script `name` with `args` and `--json FILE`, and return what it printed and the
/// JSON it wrote. When it cannot run (no `python3`, no SimPy, a failing script) print one line
/// that says why and what to install, prefixed by `indent`, and return `None`.
pub fn run_peer(name: &str, args: &[&str], indent: &str) -> Option<(String, serde_json::Value)> {
    let script = peer_script(name);
    match Command::new("python3")
        .args(["-c", "import simpy"])
        .output()
    {
        Err(e) => {
            println!(
                "{indent}SimPy peer not run: python3 not found ({e}); install Python 3, then \
                 `pip install simpy` (benches/peer/README.md)"
            );
            return None;
        }
        Ok(o) if !o.status.success() => {
            println!(
                "{indent}SimPy peer not run: python3 has no SimPy; `pip install simpy` \
                 (benches/peer/README.md)"
            );
            return None;
        }
        Ok(_) => {}
    }
    if !script.is_file() {
        println!(
            "{indent}SimPy peer not run: no script at {}",
            script.display()
        );
        return None;
    }
    let json = std::env::temp_dir().join(format!("vtsim-peer-{}.json", std::process::id()));
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .arg("--json")
        .arg(&json)
        .output();
    let res = match out {
        Ok(o) if o.status.success() => {
            let text = std::fs::read_to_string(&json).ok();
            match text.and_then(|t| serde_json::from_str(&t).ok()) {
                Some(v) => Some((String::from_utf8_lossy(&o.stdout).to_string(), v)),
                None => {
                    println!(
                        "{indent}SimPy peer ran but wrote no readable JSON to {}",
                        json.display()
                    );
                    None
                }
            }
        }
        Ok(o) => {
            println!(
                "{indent}SimPy peer failed ({}): {}",
                script.display(),
                String::from_utf8_lossy(&o.stderr).trim()
            );
            None
        }
        Err(e) => {
            println!("{indent}SimPy peer not run: {e}");
            None
        }
    };
    let _ = std::fs::remove_file(&json);
    res
}
