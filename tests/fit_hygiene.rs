//! `vtsim fit` on incident folders as real collections leave them (issue 36): rotated logs,
//! files that are no input, a vtgate restarted inside its log, and events from an earlier
//! rollout. Each case starts from the shipped multicell incident
//! (`examples/incident-multicell/logs`) and changes what a real folder would; the fitted
//! model must be the one the clean folder gives, and the report must say what was done.

mod common;

use common::{root, vtsim_within};
use std::path::{Path, PathBuf};

/// A copy of the shipped incident's logs in a fresh folder.
fn incident() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let logs = d.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let src = root().join("examples/incident-multicell/logs");
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, logs.join(p.file_name().unwrap())).unwrap();
    }
    (d, logs)
}

/// Run `vtsim fit logs --out out`.
fn run_fit(dir: &Path, logs: &Path, out: &Path) -> std::process::Output {
    vtsim_within(
        dir,
        &[
            "fit",
            logs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        60,
    )
}

/// Fit `logs`: the model without its comment lines, and the report printed.
fn fit(dir: &Path, logs: &Path) -> (String, String) {
    let out = dir.join("fitted.ron");
    let o = run_fit(dir, logs, &out);
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{report}");
    let model: String = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    (model, report)
}

fn clean() -> String {
    let (d, logs) = incident();
    fit(d.path(), &logs).0
}

#[test]
fn a_rotated_log_is_one_vtgate() {
    let want = clean();
    let (d, logs) = incident();
    let f = logs.join("vtgate-03-zone1.log");
    let text = std::fs::read_to_string(&f).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    // logrotate's copytruncate: the older half in `.log.1`, the newer in `.log`.
    std::fs::write(
        logs.join("vtgate-03-zone1.log.1"),
        lines[..half].join("\n") + "\n",
    )
    .unwrap();
    std::fs::write(&f, lines[half..].join("\n") + "\n").unwrap();
    let (got, report) = fit(d.path(), &logs);
    assert_eq!(got, want, "{report}");
    assert!(
        report.contains("2 files of one vtgate `vtgate-03-zone1` joined"),
        "{report}"
    );
}

#[test]
fn files_that_are_no_input_are_skipped_and_named() {
    let want = clean();
    let (d, logs) = incident();
    std::fs::write(logs.join("README.txt"), "collected by the on-call, 14:20\n").unwrap();
    std::fs::write(logs.join("core.bin"), [0u8, 159, 146, 150, 255, 0, 1]).unwrap();
    std::fs::write(
        logs.join("svc.json"),
        r#"{"apiVersion":"v1","kind":"List","items":[{"kind":"Service"}]}"#,
    )
    .unwrap();
    let (got, report) = fit(d.path(), &logs);
    assert_eq!(got, want, "{report}");
    for f in [
        "README.txt:1: not a recognised input",
        "core.bin:1: not UTF-8",
        "svc.json",
    ] {
        assert!(
            report.contains(&format!("skipped {}", logs.join(f).display())),
            "{f}: {report}"
        );
    }
    // Only files that are no input are skipped: a malformed log still fails, by line.
    std::fs::write(
        logs.join("vtgate-11-zone1.log"),
        "I0718 14:03:40.001340       1 healthcheck.go:406] Adding tablet to healthcheck: hostname:\"x\"\n",
    )
    .unwrap();
    let out = d.path().join("bad.ron");
    let o = run_fit(d.path(), &logs, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("vtgate-11-zone1.log:1:"), "{err}");
}

#[test]
fn a_vtgate_restarted_inside_its_log_is_fitted_on_one_process() {
    let want = clean();
    let (d, logs) = incident();
    let f = logs.join("vtgate-01-zone1.log");
    let text = std::fs::read_to_string(&f).unwrap();
    // The same vtgate's previous process, 20 minutes earlier with another PID: its start-up
    // banner and initial tablet load (the log's first lines, before its first change).
    let earlier: String = text
        .lines()
        .take_while(|l| !l.contains("Removing") && !l.contains("serving true => false"))
        .map(|l| {
            // 59 min 53 s earlier (not a multiple of the 45 s refresh interval: another
            // phase), PID 7 for PID 1.
            let h: u32 = l[6..8].parse().unwrap();
            let s: u32 = l[12..14].parse().unwrap();
            assert!(s + 7 < 60, "{l}");
            format!(
                "{}{:02}{}{:02}{}\n",
                &l[..6],
                h - 1,
                &l[8..12],
                s + 7,
                &l[14..]
            )
            .replacen("       1 ", "       7 ", 1)
        })
        .collect();
    std::fs::write(&f, format!("{earlier}{text}")).unwrap();
    let (got, report) = fit(d.path(), &logs);
    assert_eq!(got, want, "{report}");
    assert!(
        report.contains("the vtgate restarted inside the log"),
        "{report}"
    );
    assert!(report.contains("only process 2 of 2"), "{report}");
}

#[test]
fn events_of_an_earlier_rollout_are_not_this_incidents() {
    let want = clean();
    let (d, logs) = incident();
    let f = logs.join("events.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let items = v["items"].as_array_mut().unwrap();
    // The previous rollout, 40 minutes earlier, deleted the same pods: the API server still
    // holds its events (1 h TTL), under names of their own.
    let older: Vec<serde_json::Value> = items
        .iter()
        .filter(|e| e["reason"] == "Deleted" || e["reason"] == "Created")
        .map(|e| {
            let mut e = e.clone();
            for k in ["firstTimestamp", "lastTimestamp"] {
                // 14:0M -> 13:2M: 40 minutes earlier.
                let t = e[k].as_str().unwrap().replacen("T14:0", "T13:2", 1);
                e[k] = t.into();
            }
            let name = e["metadata"]["name"].as_str().unwrap().to_string();
            e["metadata"]["name"] = format!("{name}0").into();
            e
        })
        .collect();
    assert!(older.len() >= 4);
    items.extend(older);
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (got, report) = fit(d.path(), &logs);
    assert_eq!(got, want, "{report}");
    assert!(report.contains("outside the logs' span"), "{report}");
}

#[test]
fn a_repeated_event_is_placed_at_its_occurrence_inside_the_logs() {
    let (d, logs) = incident();
    let f = logs.join("events.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    // client-go folded an earlier rollout's deletion of the first pod into this one's:
    // count 2, firstTimestamp 40 minutes earlier (the name's time too), lastTimestamp now.
    let e = v["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|e| e["reason"] == "Deleted")
        .unwrap();
    let last = e["firstTimestamp"].as_str().unwrap().to_string();
    e["count"] = 2.into();
    e["lastTimestamp"] = last.clone().into();
    e["firstTimestamp"] = last.replacen("T14:0", "T13:2", 1).into();
    let name = e["metadata"]["name"].as_str().unwrap().to_string();
    let (obj, hex) = name.rsplit_once('.').unwrap();
    let ns = i64::from_str_radix(hex, 16).unwrap() - 40 * 60 * 1_000_000_000;
    e["metadata"]["name"] = format!("{obj}.{ns:x}").into();
    std::fs::write(&f, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (_, report) = fit(d.path(), &logs);
    assert!(report.contains("happened 2 times"), "{report}");
    assert!(report.contains("the last,"), "{report}");
}

/// The fit ends with the logged errors set against the fitted model's replay, per vtgate
/// (issue 36, class 11): the multicell example's two shards replayed half its 9,789 errors
/// when the fitted read rate forgot that a vtgate spreads its reads over the shards.
#[test]
fn the_fitted_replay_gives_the_logged_errors_per_vtgate() {
    let (d, logs) = incident();
    let (model, report) = fit(d.path(), &logs);
    assert!(
        report.contains("verdict: the replay gives the logged errors: 9789 logged"),
        "{report}"
    );
    let total = report
        .lines()
        .find(|l| l.trim_start().starts_with("total "))
        .unwrap();
    let expected: f64 = total.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((expected - 9789.0).abs() < 1.0, "{total}");
    // zone3's two vtgates hold nearly every error: each within its interval.
    for g in ["vtgate-09-zone3", "vtgate-10-zone3"] {
        let row = report
            .lines()
            .find(|l| l.contains(g) && l.contains('['))
            .unwrap();
        assert!(!row.contains("MISMATCH"), "{row}");
    }
    // Replaying the model file gives the same count, within its Poisson noise.
    let f = d.path().join("fitted.ron");
    std::fs::write(&f, &model).unwrap();
    let o = vtsim_within(
        d.path(),
        &["replay", f.to_str().unwrap(), "--json"],
        &[],
        60,
    );
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors = v["metrics"]["replica_read_errors"]
        .as_f64()
        .unwrap_or_else(|| panic!("{v}"));
    // 9,789 expected: a 99.9 % Poisson interval is about +/- 3.3 sd = +/- 326.
    assert!((errors - 9789.0).abs() < 326.0, "{errors}");
}

/// Errors the fitted model cannot give (a vtgate that, in the model, never lost a route)
/// fail the fit loudly: the report's verdict names the vtgate, and the exit code is 3.
#[test]
fn errors_the_replay_cannot_give_fail_the_fit_with_exit_3() {
    let (d, logs) = incident();
    let f = logs.join("vtgate-03-zone1.log");
    let mut text = std::fs::read_to_string(&f).unwrap();
    // Sixty error lines at 14:10, a minute when vtgate-03 had every route served.
    for s in 0..60 {
        text.push_str(&format!(
            "I0718 14:10:{s:02}.000001       1 vtgate.go:812] Execute: target: commerce.-80.replica: no healthy tablet available for 'keyspace:\"commerce\" shard:\"-80\" tablet_type:REPLICA', request: map[]\n"
        ));
    }
    std::fs::write(&f, text).unwrap();
    let out = d.path().join("fitted.ron");
    let o = run_fit(d.path(), &logs, &out);
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(3), "{report}");
    assert!(
        report.contains("verdict: MISMATCH") && report.contains("vtgate-03-zone1 logged 60"),
        "{report}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("exit 3"));
    // The model and the report are written, to look at.
    assert!(out.exists());
}
