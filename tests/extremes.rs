//! Extreme values in the shipped models (huge sizes, tiny periods, values that would wrap)
//! are refused with exit code 2, the file, the field and what was expected: never a panic,
//! an out-of-memory abort, a run that does not end, or a saturated number. Every run is a
//! child process with a time limit, so a value that hangs fails the test instead of hanging
//! it.

mod common;
use common::*;

/// Far more than any of these runs takes (each ends in milliseconds); only a hang reaches it,
/// and fails the test.
const LIMIT_S: u64 = 30;

/// (model file, (text replaced, replacement)s, expected fragments of stderr besides the file).
type Case = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

/// Each case is refused with exit code 2 by `validate` and by `replay`.
const CASES: &[Case] = &[
    // hold: a pending count that allocates 4e9 events (out of memory before).
    (
        "hold-fixture.ron",
        &[("pending: 100,", "pending: 4294967295,")],
        &["field `pending`", "at most 1000000 pending events"],
    ),
    // hold: 4e9 events never end in a sweep (timeout before).
    (
        "hold-fixture.ron",
        &[("events: 10000,", "events: 18446744073709551615,")],
        &["field `events`", "at most 100000000 events"],
    ),
    // hold: the end time saturated at u64::MAX ns (end_time_s 18446744073.7 before).
    (
        "hold-fixture.ron",
        &[("mean_increment: \"1ms\"", "mean_increment: \"580y\"")],
        &["field `mean_increment`", "100 years"],
    ),
    // connpool: 65536 connections under 2x load is 1.3e8 queued requests (out of memory).
    (
        "connpool-default.ron",
        &[("capacity: 20,", "capacity: 65536,")],
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    (
        "connpool-default.ron",
        &[("capacity: 20,", "capacity: 4294967295,")],
        &["field `pool.capacity`", "at most 100000 connections"],
    ),
    // connpool: a 1ns starvation ticker (out of memory before).
    (
        "connpool-default.ron",
        &[("starvation_interval: \"100ms\"", "starvation_interval: \"1ns\"")],
        &["field `pool.starvation_interval`", "0s (off) or a duration >= 1ms"],
    ),
    // connpool: absurd loads and stage lengths (out of memory / timeout before).
    (
        "connpool-default.ron",
        &[("load: 2.0,", "load: 1e300,")],
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    (
        "connpool-default.ron",
        &[("load_scale: 1.0,", "load_scale: 65536,")],
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    (
        "connpool-default.ron",
        &[("duration: \"10s\")]", "duration: \"100000h\")]")],
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    // connpool: a 1ns mean service is a 2e10/s arrival rate (out of memory before).
    (
        "connpool-default.ron",
        &[("min: \"0s\", mean: \"10ms\"", "min: \"0s\", mean: \"1ns\"")],
        &["field `workload.arrivals.stages`", "at most 1e7 expected requests"],
    ),
    // connpool: 4e9 closed-loop clients.
    (
        "connpool-default.ron",
        &[("arrivals: (kind: \"OpenLoop\", stages: [(load: 2.0, duration: \"10s\")]),", "arrivals: (kind: \"ClosedLoop\", clients: 4294967295, think: (kind: \"Fixed\", value: \"0s\"), duration: \"10s\"),")],
        &["field `workload.arrivals.clients`", "at most 100000 clients"],
    ),
    // site_poller: a 10000h run records 1.8e7 polls (out of memory before).
    (
        "playground.ron",
        &[("horizon: \"4m\"", "horizon: \"100000h\"")],
        &["field `horizon`", "at most 1e6 poll intervals"],
    ),
    (
        "playground.ron",
        &[("poll_interval: \"2s\"", "poll_interval: \"1ns\"")],
        &["field `horizon`", "at most 1e6 poll intervals"],
    ),
    // proxysql: statements per event summed in a u32 (wrapped, then out of memory).
    (
        "proxysql-lab.ron",
        &[("writes: 0,", "writes: 4294967295,")],
        &["field `clients[1].writes`", "at most 10000 statements per event"],
    ),
    // proxysql: every statement is simulated; a 100000h lab never ends (timeout before).
    (
        "proxysql-lab.ron",
        &[("horizon: \"30s\"", "horizon: \"100000h\"")],
        &["field `horizon`", "at most 2e8 expected statements"],
    ),
    // proxysql: SET connect_timeout_server_max=0 at runtime busy-looped the run forever.
    (
        "proxysql-lab.ron",
        &[("actions: [],", "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_timeout_server_max\", value: \"0\"))],")],
        &["field `actions[0].action.value`", "an integer from 10 to 3600000 (milliseconds)", "mysql-connect_timeout_server_max", "lib/MySQL_Thread.cpp"],
    ),
    // proxysql: a u64 timeout in ms overflowed its nanoseconds; a count wrapped to u32.
    (
        "proxysql-lab.ron",
        &[("actions: [],", "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_timeout_server\", value: \"18446744073709551615\"))],")],
        &["field `actions[0].action.value`", "an integer from 10 to 120000 (milliseconds)"],
    ),
    (
        "proxysql-lab.ron",
        &[("actions: [],", "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_retries_on_failure\", value: \"4294967296\"))],")],
        &["field `actions[0].action.value`", "an integer from 0 to 1000"],
    ),
    // rollout: 65535 vtgates x 21000 tablets of health checks (out of memory before).
    (
        "rollout-default.ron",
        &[("vtgates: 10,\n        // Shards; they roll in parallel (operator.parallel_shards).\n        shards: 1,", "vtgates: 65535,\n        shards: 1000,")],
        &["field `vtgates`", "vtgates × tablets ≤ 1e7"],
    ),
    // rollout: a rollout that never completes polls until a 580-year horizon (out of memory).
    (
        "rollout-default.ron",
        &[("horizon: \"6h\"", "horizon: \"580y\"")],
        &["field `horizon`", "at most 1e7 topology polls"],
    ),
    // Issue 9: the estimated events of a run are bounded (1e9), each estimate naming the
    // field that drives it. rollout PerQuery at the allowed 1e7 reads/s is 2.2e12 events.
    (
        "rollout-default.ron",
        &[
            ("replica_read_rps: 50.0,", "replica_read_rps: 1e7,"),
            ("mode: (kind: \"Fast\"),", "mode: (kind: \"PerQuery\"),"),
        ],
        &["field `workload.replica_read_rps`", "at most 1e9 events per run", "2.160e12"],
    ),
    // rollout: a 1 ns reconnect backoff dials every nanosecond until the tablet serves.
    (
        "rollout-default.ron",
        &[
            ("health_check_retry_delay: \"2ms\",", "health_check_retry_delay: \"1ns\","),
            ("healthcheck_timeout: \"1m\",", "healthcheck_timeout: \"1ns\","),
        ],
        &["field `vtgate.healthcheck_timeout`", "at most 1e9 events per run", "health-check dials"],
    ),
    // rollout: readiness flaps with no probe period or flap duration never let a pod become
    // Available (and filled the memory with stale Available events).
    (
        "rollout-default.ron",
        &[
            ("readiness_flaps_per_hour: 0.0,", "readiness_flaps_per_hour: 1e12,"),
            ("readiness_probe_period: \"10s\",", "readiness_probe_period: \"0s\","),
            ("readiness_flap_duration: \"30s\",", "readiness_flap_duration: \"0s\","),
        ],
        &["field `tablets.readiness_flaps_per_hour`", "at most 1e9 events per run"],
    ),
    // rollout: 150 vtgates polling 21845 shards every 100 ms diff 3.5e11 tablet records.
    (
        "rollout-default.ron",
        &[
            (
                "vtgates: 10,\n        // Shards; they roll in parallel (operator.parallel_shards).\n        shards: 1,",
                "vtgates: 150,\n        shards: 21845,",
            ),
            ("tablet_refresh_interval: \"1m\",", "tablet_refresh_interval: \"100ms\","),
            ("horizon: \"6h\"", "horizon: \"1h\""),
        ],
        &["field `horizon`", "at most 1e10 tablet-record diffs"],
    ),
    // connpool: no arrivals, so the starvation worker ticks to the end: 3.6e9 ticks.
    (
        "connpool-default.ron",
        &[(
            "stages: [(load: 2.0, duration: \"10s\")]",
            "stages: [(load: 0.0, duration: \"100000h\")]",
        )],
        &["field `pool.starvation_interval`", "at most 1e9 events per run", "starvation ticks"],
    ),
    // proxysql: ProxySQL's own ranges (lib/MySQL_Thread.cpp). 4294967295 retries wrapped the
    // shun threshold (retries + 1) to 0.
    (
        "proxysql-lab.ron",
        &[(
            "horizon: \"30s\"",
            "variables: (connect_retries_on_failure: 4294967295), horizon: \"30s\"",
        )],
        &["field `variables.connect_retries_on_failure`", "an integer from 0 to 1000", "mysql-connect_retries_on_failure"],
    ),
    (
        "proxysql-lab.ron",
        &[(
            "actions: [],",
            "actions: [(at: \"1s\", action: (kind: \"SetVariable\", name: \"mysql-connect_retries_on_failure\", value: \"4294967295\"))],",
        )],
        &["field `actions[0].action.value`", "an integer from 0 to 1000"],
    ),
    // proxysql: a wall-clock offset of a second or more was taken modulo 1 s (1500ms ran as
    // 500ms): a silent substitution.
    (
        "proxysql-lab.ron",
        &[("horizon: \"30s\"", "wall_clock_offset: \"1500ms\", horizon: \"30s\"")],
        &["field `wall_clock_offset`", "a duration below 1s"],
    ),
    // proxysql: a 1 ns retry delay ran for minutes (ProxySQL: whole milliseconds).
    (
        "proxysql-lab.ron",
        &[(
            "horizon: \"30s\"",
            "variables: (connect_retries_delay: \"1ns\"), horizon: \"30s\"",
        )],
        &["field `variables.connect_retries_delay`", "a duration from 1ms to 10s"],
    ),
    (
        "proxysql-lab.ron",
        &[(
            "horizon: \"30s\"",
            "variables: (connect_timeout_server: \"1h\"), horizon: \"30s\"",
        )],
        &["field `variables.connect_timeout_server`", "a duration from 10ms to 2m"],
    ),
    (
        "proxysql-lab.ron",
        &[(
            "writer_is_also_reader: false,",
            "writer_is_also_reader: false, ping_timeout: \"1h\",",
        )],
        &["field `monitor.ping_timeout`", "a duration from 100ms to 10m"],
    ),
    (
        "proxysql-lab.ron",
        &[(
            "writer_is_also_reader: false,",
            "writer_is_also_reader: false, ping_max_failures: 0,",
        )],
        &["field `monitor.ping_max_failures`", "an integer from 1 to 1000000"],
    ),
    // proxysql: slow clients over 5 years run few statements, but a retry loop every
    // millisecond once their servers die: 1.9e12 events.
    (
        "proxysql-lab.ron",
        &[
            (
                "(name: \"read/write\", threads: 4),",
                "(name: \"read/write\", threads: 4, latency: (kind: \"Const\", value: \"10s\")),",
            ),
            (
                "(name: \"read-only\", threads: 2, writes: 0, skip_trx: true),",
                "(name: \"read-only\", threads: 2, writes: 0, skip_trx: true, latency: (kind: \"Const\", value: \"10s\")),",
            ),
            ("horizon: \"30s\"", "horizon: \"5y\""),
        ],
        &["field `variables.connect_retries_delay`", "at most 1e9 events per run", "connect retry steps"],
    ),
];

/// The model file with the replacements of a case applied (each must match).
fn edited(model: &str, edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(root().join("models").join(model)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{model}: `{from}` not found");
        text = text.replacen(from, to, 1);
    }
    text
}

#[test]
fn extreme_values_in_shipped_models_are_refused() {
    let mut failures = vec![];
    let tmp = tempfile::tempdir().unwrap();
    for (model, edits, want) in CASES {
        std::fs::write(tmp.path().join(model), edited(model, edits)).unwrap();
        for cmd in ["validate", "replay"] {
            let case = format!("{model} {edits:?} ({cmd})");
            let o = vtsim_within(tmp.path(), &[cmd, model], &[], LIMIT_S);
            let err = String::from_utf8_lossy(&o.stderr);
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
    let cases: &[(&str, &[(&str, &str)])] = &[
        ("hold-fixture.ron", &[("pending: 100,", "pending: 100000,")]),
        (
            "connpool-default.ron",
            &[("starvation_interval: \"100ms\"", "starvation_interval: \"1ms\"")],
        ),
        // No arrivals for an hour: 36000 starvation ticks.
        (
            "connpool-default.ron",
            &[(
                "stages: [(load: 2.0, duration: \"10s\")]",
                "stages: [(load: 0.0, duration: \"1h\")]",
            )],
        ),
        ("playground.ron", &[("horizon: \"4m\"", "horizon: \"24h\"")]),
        (
            "rollout-default.ron",
            &[(
                "tablet_available_timeout: \"30s\"",
                "tablet_available_timeout: \"100000h\"",
            )],
        ),
        // Per-query reads at 100/s (about 4e5 events, estimated 2.4e8 over the horizon).
        (
            "rollout-default.ron",
            &[
                ("replica_read_rps: 50.0,", "replica_read_rps: 100.0,"),
                ("mode: (kind: \"Fast\"),", "mode: (kind: \"PerQuery\"),"),
            ],
        ),
        // ProxySQL's largest retry count, and a refusal slower than the ping timeout.
        (
            "proxysql-lab.ron",
            &[(
                "horizon: \"30s\"",
                "variables: (connect_retries_on_failure: 1000), network: (refused_latency: \"20s\"), horizon: \"30s\"",
            )],
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (model, edits) in cases {
        std::fs::write(tmp.path().join(model), edited(model, edits)).unwrap();
        let o = vtsim_within(tmp.path(), &["replay", model], &[], LIMIT_S);
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{model} {edits:?}: {err}");
        assert!(
            !out.contains("18446744073"),
            "{model} {edits:?}: saturated: {out}"
        );
    }
}
