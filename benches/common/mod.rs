//! Helpers shared by the benches: the SimPy peer scripts of `benches/peer/`.
#![allow(dead_code)]

use std::path::PathBuf;
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
