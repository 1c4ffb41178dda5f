//! Extreme values in the shipped models (huge sizes, tiny periods, values that would wrap)
//! are refused with exit code 2, the file, the field and what was expected: never a panic,
//! an out-of-memory abort, a run that does not end, or a saturated number.

mod common;
use common::*;

/// (model file, text replaced, replacement, expected fragments of stderr besides the file).
const CASES: &[(&str, &str, &str, &[&str])] = &[
    // hold: a pending count that allocates 4e9 events (out of memory before).
    (
        "hold-fixture.ron",
        "pending: 100,",
        "pending: 4294967295,",
        &["field `pending`", "at most 1000000 pending events"],
    ),
    // hold: 4e9 events never end in a sweep (timeout before).
    (
        "hold-fixture.ron",
        "events: 10000,",
        "events: 18446744073709551615,",
        &["field `events`", "at most 100000000 events"],
    ),
    // hold: the end time saturated at u64::MAX ns (end_time_s 18446744073.7 before).
    (
        "hold-fixture.ron",
        "mean_increment: \"1ms\"",
        "mean_increment: \"580y\"",
        &["field `mean_increment`", "100 years"],
    ),
    // connpool: 65536 connections under 2x load is 1.3e8 queued requests (out of memory).
    (
        "connpool-default.ron",
        "capacity: 20,",
        "capacity: 65536,",
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    (
        "connpool-default.ron",
        "capacity: 20,",
        "capacity: 4294967295,",
        &["field `pool.capacity`", "at most 100000 connections"],
    ),
    // connpool: a 1ns starvation ticker (out of memory before).
    (
        "connpool-default.ron",
        "starvation_interval: \"100ms\"",
        "starvation_interval: \"1ns\"",
        &["field `pool.starvation_interval`", "0s (off) or a duration >= 1ms"],
    ),
    // connpool: absurd loads and stage lengths (out of memory / timeout before).
    (
        "connpool-default.ron",
        "load: 2.0,",
        "load: 1e300,",
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    (
        "connpool-default.ron",
        "load_scale: 1.0,",
        "load_scale: 65536,",
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    (
        "connpool-default.ron",
        "duration: \"10s\")]",
        "duration: \"100000h\")]",
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    // connpool: a 1ns mean service is a 2e10/s arrival rate (out of memory before).
    (
        "connpool-default.ron",
        "min: \"0s\", mean: \"10ms\"",
        "min: \"0s\", mean: \"1ns\"",
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    // connpool: 4e9 closed-loop clients.
    (
        "connpool-default.ron",
        "arrivals: (kind: \"OpenLoop\", stages: [(load: 2.0, duration: \"10s\")]),",
        "arrivals: (kind: \"ClosedLoop\", clients: 4294967295, think: (kind: \"Fixed\", value: \"0s\"), duration: \"10s\"),",
        &["field `workload.arrivals.clients`", "at most 100000 clients"],
    ),
    // site_poller: a 10000h run records 1.8e7 polls (out of memory before).
    (
        "playground.ron",
        "horizon: \"4m\"",
        "horizon: \"100000h\"",
        &["field `horizon`", "at most 1e6 poll intervals"],
    ),
    (
        "playground.ron",
        "poll_interval: \"2s\"",
        "poll_interval: \"1ns\"",
        &["field `horizon`", "at most 1e6 poll intervals"],
    ),
    // proxysql: statements per event summed in a u32 (wrapped, then out of memory).
    (
        "proxysql-lab.ron",
        "writes: 0,",
        "writes: 4294967295,",
        &["field `clients[1].writes`", "at most 10000 statements per event"],
    ),
    // proxysql: every statement is simulated; a 100000h lab never ends (timeout before).
    (
        "proxysql-lab.ron",
        "horizon: \"30s\"",
        "horizon: \"100000h\"",
        &["field `horizon`", "at most 2e8 expected statements"],
    ),
    // proxysql: SET connect_timeout_server_max=0 at runtime busy-looped the run forever.
    (
        "proxysql-lab.ron",
        "actions: [],",
        "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_timeout_server_max\", value: \"0\"))],",
        &["field `actions[0].action.value`", "milliseconds from 10 to 3600000"],
    ),
    // proxysql: a u64 timeout in ms overflowed its nanoseconds; a count wrapped to u32.
    (
        "proxysql-lab.ron",
        "actions: [],",
        "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_timeout_server\", value: \"18446744073709551615\"))],",
        &["field `actions[0].action.value`", "milliseconds from 10 to 3600000"],
    ),
    (
        "proxysql-lab.ron",
        "actions: [],",
        "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_retries_on_failure\", value: \"4294967296\"))],",
        &["field `actions[0].action.value`", "at most 4294967295"],
    ),
    // rollout: 65535 vtgates x 21000 tablets of health checks (out of memory before).
    (
        "rollout-default.ron",
        "vtgates: 10,\n        // Shards; they roll in parallel (operator.parallel_shards).\n        shards: 1,",
        "vtgates: 65535,\n        shards: 1000,",
        &["field `vtgates`", "vtgates × tablets ≤ 1e7"],
    ),
    // rollout: a rollout that never completes polls until a 580-year horizon (out of memory).
    (
        "rollout-default.ron",
        "horizon: \"6h\"",
        "horizon: \"580y\"",
        &["field `horizon`", "at most 1e7 topology polls"],
    ),
];

#[test]
fn extreme_values_in_shipped_models_are_refused() {
    let mut failures = vec![];
    let tmp = tempfile::tempdir().unwrap();
    for (model, from, to, want) in CASES {
        let text = std::fs::read_to_string(root().join("models").join(model)).unwrap();
        assert!(text.contains(from), "{model}: `{from}` not found");
        std::fs::write(tmp.path().join(model), text.replacen(from, to, 1)).unwrap();
        for cmd in ["validate", "replay"] {
            let o = vtsim(tmp.path(), &[cmd, model], &[]);
            let err = String::from_utf8_lossy(&o.stderr);
            let case = format!("{model} `{to}` ({cmd})");
            if o.status.code() != Some(2) {
                failures.push(format!("{case}: exit {:?}: {err}", o.status.code()));
                continue;
            }
            assert!(!err.contains("panicked"), "{case}: panic: {err}");
            for w in std::iter::once(model).chain(want.iter()) {
                if !err.contains(w) {
                    failures.push(format!("{case}: `{w}` not in: {err}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Values just inside the bounds still run, and end (each in well under a second here).
#[test]
fn values_inside_the_bounds_still_run() {
    let cases: &[(&str, &str, &str)] = &[
        ("hold-fixture.ron", "pending: 100,", "pending: 100000,"),
        (
            "connpool-default.ron",
            "starvation_interval: \"100ms\"",
            "starvation_interval: \"1ms\"",
        ),
        ("playground.ron", "horizon: \"4m\"", "horizon: \"24h\""),
        (
            "rollout-default.ron",
            "tablet_available_timeout: \"30s\"",
            "tablet_available_timeout: \"100000h\"",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (model, from, to) in cases {
        let text = std::fs::read_to_string(root().join("models").join(model)).unwrap();
        assert!(text.contains(from), "{model}: `{from}` not found");
        std::fs::write(tmp.path().join(model), text.replacen(from, to, 1)).unwrap();
        let o = vtsim(tmp.path(), &["replay", model], &[]);
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{model} `{to}`: {err}");
        assert!(
            !out.contains("18446744073"),
            "{model} `{to}`: saturated: {out}"
        );
    }
}
