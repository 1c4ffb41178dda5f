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

/// What [`rounds_with_peer`] measured: per round, the CPU and wall seconds of each vtsim
/// variant and the peer's CPU seconds (`None` when the peer could not run).
pub struct Rounds {
    /// `vtsim[round][variant]`: (CPU s, wall s).
    pub vtsim: Vec<Vec<(f64, f64)>>,
    /// The peer's CPU seconds of each round, and what it printed and wrote in the last one.
    pub peer: Option<(Vec<f64>, String, serde_json::Value)>,
}

impl Rounds {
    /// Best (least) CPU and wall seconds of each variant over the rounds.
    pub fn best(&self) -> Vec<(f64, f64)> {
        let mut best = vec![(f64::INFINITY, f64::INFINITY); self.vtsim[0].len()];
        for round in &self.vtsim {
            for (b, m) in best.iter_mut().zip(round) {
                *b = (b.0.min(m.0), b.1.min(m.1));
            }
        }
        best
    }
    /// The peer's CPU time over variant `v`'s in each round, sorted (each ratio is of two
    /// measurements taken seconds apart, so a slow spell of a shared machine falls on both).
    pub fn round_ratios(&self, v: usize) -> Vec<f64> {
        let Some((peer, _, _)) = &self.peer else {
            return vec![];
        };
        let mut r: Vec<f64> = peer
            .iter()
            .zip(&self.vtsim)
            .map(|(p, round)| p / round[v].0)
            .collect();
        r.sort_by(f64::total_cmp);
        r
    }
    /// "min–median–max" of [`Self::round_ratios`] of variant `v`.
    pub fn round_ratio_range(&self, v: usize) -> String {
        let r = self.round_ratios(v);
        match r.len() {
            0 => String::from("-"),
            n => format!("{:.1}–{:.1}–{:.1}x", r[0], r[n / 2], r[n - 1]),
        }
    }
}

/// `rounds` rounds, each timing every vtsim variant `fs` once, in turn (so a noisy spell of
/// the machine, or the process's cold start, falls on all of them alike), and then the peer script `name` once (`args` plus `--repeat 1`; its CPU
/// seconds read from the JSON key `cpu_key`). The two sides take turns, so a slow spell of
/// the machine falls on both alike instead of on the side measured during it. A peer that
/// cannot run is said once (see [`run_peer`]) and not tried again.
pub fn rounds_with_peer(
    rounds: usize,
    fs: &mut [&mut dyn FnMut()],
    name: &str,
    args: &[&str],
    cpu_key: &str,
    indent: &str,
) -> Rounds {
    let mut out = Rounds {
        vtsim: Vec::with_capacity(rounds),
        peer: None,
    };
    let mut peer_ok = true;
    let mut peer_cpu = Vec::with_capacity(rounds);
    let mut args: Vec<&str> = args.to_vec();
    args.extend(["--repeat", "1"]);
    for _ in 0..rounds {
        let mut round = Vec::with_capacity(fs.len());
        for f in fs.iter_mut() {
            let (c0, t0) = (cpu_s(), std::time::Instant::now());
            f();
            round.push((cpu_s() - c0, t0.elapsed().as_secs_f64()));
        }
        out.vtsim.push(round);
        if !peer_ok {
            continue;
        }
        match run_peer(name, &args, indent) {
            Some((stdout, v)) => {
                let cpu = v[cpu_key]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{cpu_key} in the peer's JSON"));
                peer_cpu.push(cpu);
                out.peer = Some((peer_cpu.clone(), stdout, v));
            }
            None => {
                peer_ok = false;
                out.peer = None;
            }
        }
    }
    out
}
