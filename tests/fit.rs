//! `vtsim replay --emit-logs` and `vtsim fit`: the emitted lines follow the real format
//! strings, and replay -> emit -> fit -> replay gives the same discovery instants and
//! exposure intervals (`docs/fit.md`).

use vtsim::fit::emit::{render_run, LogFormat};
use vtsim::model::rollout::{run_with_logs, RolloutParams};
use vtsim::model::RunOptions;

fn files(p: &RolloutParams, seed: u64, fmt: LogFormat) -> Vec<(String, String)> {
    let run = run_with_logs(p, seed, RunOptions::default());
    render_run(p, &run, fmt)
}

#[test]
fn emitted_glog_lines_follow_the_v22_format_strings() {
    let p = RolloutParams::default();
    let f = files(&p, 3, LogFormat::Glog);
    assert_eq!(f.len(), 12, "10 vtgate logs, events.json, pods.json");
    let (name, log) = &f[0];
    assert_eq!(name, "vtgate-01.log");
    for line in log.lines() {
        // Lmmdd hh:mm:ss.uuuuuu, the PID padded to 7, file:line] (glog logsink.go textPrintf).
        let b = line.as_bytes();
        assert!(matches!(b[0], b'I' | b'W'), "{line}");
        assert_eq!(&line[1..5], "0718", "{line}");
        assert_eq!(b[21], b' ', "{line}");
        assert_eq!(&line[22..29], "      1", "{line}");
        let rest = &line[30..];
        let (site, msg) = rest.split_once("] ").expect("file:line]");
        let known = [
            ("healthcheck.go:356", "loading tablets for cells: "),
            ("healthcheck.go:377", "Setting up healthcheck for cell: "),
            (
                "healthcheck.go:406",
                "Adding tablet to healthcheck: alias:{cell:\"zone1\" uid:",
            ),
            (
                "healthcheck.go:459",
                "Removing tablet from healthcheck: alias:{cell:\"zone1\" uid:",
            ),
            ("healthcheck.go:502", "We have no health data for tablet: "),
            (
                "healthcheck.go:546",
                "We will have no health data for the next new primary",
            ),
            (
                "tablet_health_check.go:110",
                "HealthCheckUpdate(Serving State): tablet: zone1-",
            ),
            (
                "tablet_health_check.go:334",
                "tablet alias:{cell:\"zone1\" uid:",
            ),
            ("vtgate.go:812", "Execute: target: commerce.-.replica: "),
            ("throttled.go:82", "Execute: skipped "),
        ];
        assert!(
            known.iter().any(|(s, m)| *s == site && msg.starts_with(m)),
            "unknown line: {line}"
        );
    }
    // Per restart, every vtgate prints one serving false => true for the new address.
    let found = log
        .lines()
        .filter(|l| l.contains("serving false => true") && !l.contains("(10.244.0.2)"))
        .count();
    assert!(
        found >= 3 + 2,
        "start-up lines for 3 tablets and discoveries: {found}"
    );
}

#[test]
fn emitted_json_lines_are_slog_json_after_two_plain_lines() {
    let p = RolloutParams::default();
    let f = files(&p, 3, LogFormat::Json);
    let log = &f[1].1;
    let mut lines = log.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("WARNING: --logtostderr has no effect"));
    assert!(lines
        .next()
        .unwrap()
        .starts_with("Flag --cells_to_watch has been deprecated"));
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).expect(line);
        // slog's key order: time, level, source, msg.
        let keys: Vec<&str> = line
            .match_indices("\":")
            .map(|(i, _)| {
                let s = &line[..i];
                &s[s.rfind('"').unwrap() + 1..]
            })
            .collect();
        assert_eq!(&keys[..2], ["time", "level"], "{line}");
        assert!(
            v["msg"].is_string() && v["source"]["line"].is_u64(),
            "{line}"
        );
        let t = v["time"].as_str().unwrap();
        // RFC3339Nano: the fraction's trailing zeros trimmed.
        assert!(t.ends_with('Z'), "{t}");
        assert!(!t.contains('.') || !t.ends_with("0Z"), "{t}");
    }
}
