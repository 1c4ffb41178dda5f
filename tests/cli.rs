//! The determinism tools (`replay --check`, `diff`), built-in models named `builtin:NAME` from
//! any folder, and `validate` deciding a file's kind from its top-level struct name.

mod common;
use common::*;
use std::path::Path;

fn ok(cwd: &Path, args: &[&str]) -> String {
    let o = vtsim_within(cwd, args, &[], 60);
    assert!(
        o.status.success(),
        "vtsim {args:?}: exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The value after `key` on the line starting with it (`digest  abc…` -> `abc…`).
fn field<'a>(stdout: &'a str, key: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(key).filter(|r| r.starts_with(' ')))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{stdout}"))
        .trim()
}

/// `--check` passes on every cheap shipped model, run as `builtin:NAME` from a folder with no
/// models/ in it, and agrees with a plain replay's digest.
#[test]
fn check_passes_on_the_shipped_models() {
    let tmp = tempfile::tempdir().unwrap();
    // One model of each kind; the two slow ones made shorter (the proxysql run still kills its
    // replica at 10 s), to keep the suite fast.
    for (m, set) in [
        ("hold-fixture", None),
        ("rollout-default", None),
        ("incident-000", None),
        ("playground", None),
        ("connpool-default", Some("workload.load_scale=0.25")),
        ("proxysql-seed-2-read-replica-dies", Some("horizon=\"12s\"")),
    ] {
        let name = format!("builtin:{m}");
        let mut args = vec!["replay", name.as_str()];
        if let Some(s) = set {
            args.extend(["--set", s]);
        }
        let plain = ok(tmp.path(), &args);
        args.push("--check");
        let checked = ok(tmp.path(), &args);
        assert_eq!(field(&checked, "digest"), field(&plain, "digest"), "{m}");
        let events: u64 = field(&plain, "events").parse().unwrap();
        let line = checked
            .lines()
            .find(|l| l.starts_with("deterministic: 3 runs agree ("))
            .unwrap_or_else(|| panic!("{m}: no verdict in:\n{checked}"));
        let records: u64 = line
            .trim_start_matches("deterministic: 3 runs agree (")
            .trim_end_matches(" records)")
            .parse()
            .unwrap();
        // Every event is a record (other record types may add more).
        assert!(
            records >= events && events > 0,
            "{m}: {records} records, {events} events"
        );
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "files left"
    );
}

/// `--check --trace FILE` keeps run 1's trace, which is the trace a plain replay writes.
#[test]
fn check_keeps_the_trace_it_was_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let out = ok(
        tmp.path(),
        &[
            "replay",
            "builtin:hold-fixture",
            "--check",
            "--trace",
            "c.jsonl",
        ],
    );
    assert!(
        out.contains("deterministic: 3 runs agree (10003 records)"),
        "{out}"
    );
    ok(
        tmp.path(),
        &["replay", "builtin:hold-fixture", "--trace", "p.jsonl"],
    );
    assert_eq!(
        std::fs::read(tmp.path().join("c.jsonl")).unwrap(),
        std::fs::read(tmp.path().join("p.jsonl")).unwrap()
    );
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn diff_finds_the_first_differing_record() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    for (seed, f) in [("1", "a.jsonl"), ("1", "b.jsonl"), ("2", "c.jsonl")] {
        ok(
            d,
            &[
                "replay",
                "builtin:rollout-default",
                "--seed",
                seed,
                "--trace",
                f,
            ],
        );
    }
    // Equal traces.
    let o = vtsim_within(d, &["diff", "a.jsonl", "b.jsonl"], &[], 60);
    assert_eq!(o.status.code(), Some(0));
    let n = lines(&d.join("a.jsonl")).len();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("same: {n} records")
    );

    // Two seeds: the first record whose JSON differs, found here independently.
    let (a, c) = (lines(&d.join("a.jsonl")), lines(&d.join("c.jsonl")));
    let parse = |l: &str| serde_json::from_str::<serde_json::Value>(l).unwrap();
    let i = a
        .iter()
        .zip(&c)
        .position(|(x, y)| parse(x) != parse(y))
        .expect("two seeds give different traces");
    let o = vtsim_within(d, &["diff", "a.jsonl", "c.jsonl"], &[], 60);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!("first difference: record {i} (line {})", i + 1)),
        "{out}"
    );
    assert!(out.contains(&format!("a.jsonl  {}", a[i])), "{out}");
    assert!(out.contains(&format!("c.jsonl  {}", c[i])), "{out}");
    let ctx = i.min(3);
    if ctx > 0 {
        assert!(out.contains(&format!("the {ctx} record")), "{out}");
        assert!(out.contains(&a[i - 1]), "{out}");
    }

    // One changed field in the middle: located, with the fields that differ and the context.
    let k = n / 2;
    let mut v = parse(&a[k]);
    let old = v["a"].as_u64().unwrap();
    v["a"] = serde_json::json!(old + 1);
    let mut edited = a.clone();
    edited[k] = v.to_string();
    std::fs::write(d.join("e.jsonl"), edited.join("\n") + "\n").unwrap();
    let o = vtsim_within(
        d,
        &["diff", "a.jsonl", "e.jsonl", "--context", "2"],
        &[],
        60,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(&format!("first difference: record {k} (line {})", k + 1)),
        "{out}"
    );
    assert!(out.contains("fields that differ: a\n"), "{out}");
    assert!(out.contains("the 2 records before it"), "{out}");
    assert!(out.contains(&a[k - 2]) && out.contains(&a[k - 1]), "{out}");
    assert!(!out.contains(&a[k - 3]), "{out}");
}

#[test]
fn diff_says_which_trace_ended_first_and_refuses_non_jsonl() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    ok(d, &["replay", "builtin:hold-fixture", "--trace", "a.jsonl"]);
    let a = lines(&d.join("a.jsonl"));
    assert_eq!(a.len(), 10_003); // 10,000 events and the 3 metric records
    std::fs::write(d.join("short.jsonl"), a[..100].join("\n") + "\n").unwrap();
    for (x, y) in [("a.jsonl", "short.jsonl"), ("short.jsonl", "a.jsonl")] {
        let o = vtsim_within(d, &["diff", x, y], &[], 60);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(
            out.starts_with(
                "short.jsonl ended first, after 100 records; a.jsonl goes on to 10003\n"
            ),
            "{out}"
        );
        assert!(out.contains(&a[100]), "{out}");
    }
    // Cut inside a line: not JSONL, at that line.
    let mut torn = a[..100].join("\n") + "\n";
    torn.push_str(&a[100][..a[100].len() / 2]);
    std::fs::write(d.join("torn.jsonl"), torn).unwrap();
    std::fs::write(d.join("empty-line.jsonl"), a[..2].join("\n\n") + "\n").unwrap();
    std::fs::write(
        d.join("m.ron"),
        vtsim::experiment::files::builtin("hold-fixture").unwrap(),
    )
    .unwrap();
    for (file, want) in [
        ("torn.jsonl", "torn.jsonl:101: not a JSON record (column"),
        ("empty-line.jsonl", "empty-line.jsonl:2: an empty line"),
        ("m.ron", "m.ron:1: not a JSON record"),
        (
            "nope.jsonl",
            "nope.jsonl: cannot read: No such file or directory",
        ),
    ] {
        let o = vtsim_within(d, &["diff", "a.jsonl", file], &[], 60);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(want), "{file}: `{want}` not in {err}");
    }
}

/// Built-in models by name from a folder with no models/: replay, validate, advise and an
/// experiment's `model`; the plan records `builtin:NAME`.
#[test]
fn builtin_models_work_from_any_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(d, &["validate", "builtin:rollout-default"]);
    assert!(
        out.starts_with("ok: model `rollout-default` (Rollout)"),
        "{out}"
    );
    let out = ok(d, &["replay", "builtin:incident-000.ron"]);
    assert!(out.contains("(0xbaaf1458e77f4857)"), "{out}");
    std::fs::write(
        d.join("x.ron"),
        "Experiment(name: \"x\", model: \"builtin:hold-fixture\", seed: 1, replicates: 2,\n\
         set: { \"events\": 50 }, axes: [Axis(param: \"pending\", values: [2, 3])])\n",
    )
    .unwrap();
    let out = ok(d, &["validate", "x.ron"]);
    assert!(
        out.contains("model `hold-fixture` (builtin:hold-fixture), 2 points x 2 replicates"),
        "{out}"
    );
    ok(d, &["run", "x.ron", "--out", "out"]);
    let runs = std::fs::read_to_string(d.join("out/runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 5, "{runs}");
    let out = ok(
        d,
        &[
            "advise",
            "--refresh-interval",
            "60s",
            "--vtgates",
            "2",
            "--model",
            "builtin:rollout-default",
            "--rollouts",
            "3",
            "--step",
            "60s",
            // Three rollouts can show no smaller risk than this at the engine's level.
            "--target-risk",
            "0.9",
        ],
    );
    assert!(
        out.starts_with("tablet_refresh_interval = 60s, 2 vtgates"),
        "{out}"
    );
}

/// `validate` goes by the top-level struct name, not by what the comments or fields say.
#[test]
fn validate_decides_by_the_struct_name() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let model = vtsim::experiment::files::builtin("hold-fixture").unwrap();
    std::fs::write(
        d.join("m.ron"),
        format!("// Experiment(name: \"not this\")\n/* Experiment( /* nested */ */\n{model}"),
    )
    .unwrap();
    assert!(ok(d, &["validate", "m.ron"]).starts_with("ok: model `hold-fixture`"));
    std::fs::write(
        d.join("x.ron"),
        "#![enable(implicit_some)]\n// Model( world: Hold(..) )\nExperiment(name: \"x\", \
         description: \"world: a word that used to make this a model\", model: \
         \"builtin:hold-fixture\", seed: 1, replicates: 1)\n",
    )
    .unwrap();
    assert!(ok(d, &["validate", "x.ron"]).starts_with("ok: experiment `x`"));
}

/// `advise --help` groups its flags under a heading per form and ends with an example of each
/// form; every example names only flags the help lists, and parses: with `--threads 0` added it
/// gets past clap and the form's own checks (the form, a flag it does not read) to the threads
/// check, which refuses it before any run.
#[test]
fn advise_help_groups_the_flags_by_form_and_its_examples_parse() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let help = ok(d, &["advise", "--help"]);
    for heading in [
        "Options:",
        "Rollout (--gate D or --refresh-interval D):",
        "Any model and knob (--knob PATH --metric NAME --target X):",
        "Presets (--preset NAME):",
        "Preset rollout-frontier",
        "Preset site-poller",
        "Preset connpool",
        "Preset proxysql",
        "Preset fleet",
        "Output:",
        "Examples:",
    ] {
        assert!(
            help.lines().any(|l| l.starts_with(heading)),
            "no heading `{heading}` in:\n{help}"
        );
    }
    let examples: Vec<&str> = help
        .split("\nExamples:\n")
        .nth(1)
        .expect("an Examples section")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for form in ["--gate", "--refresh-interval", "--knob"] {
        assert!(
            examples
                .iter()
                .any(|e| e.starts_with(&format!("vtsim advise {form} "))),
            "no {form} example in {examples:?}"
        );
    }
    for preset in [
        "rollout-frontier",
        "site-poller",
        "connpool",
        "proxysql",
        "fleet",
    ] {
        assert!(
            examples.iter().any(|e| e
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|w| w == ["--preset", preset])),
            "no --preset {preset} example in {examples:?}"
        );
    }
    for ex in &examples {
        let args: Vec<&str> = ex
            .strip_prefix("vtsim ")
            .unwrap_or_else(|| panic!("`{ex}` is not a vtsim command"))
            .split_whitespace()
            .collect();
        for flag in args.iter().filter(|a| a.starts_with("--")) {
            assert!(
                help.lines().any(|l| {
                    let t = l.trim_start();
                    t == *flag || t.starts_with(&format!("{flag} "))
                }),
                "{ex}: {flag} is not in the help"
            );
        }
        let mut with = args.clone();
        with.extend(["--threads", "0"]);
        let o = vtsim_within(d, &with, &[], 60);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{ex}: {err}");
        assert!(
            err.starts_with("error: --threads 0: must be at least 1"),
            "{ex}: {err}"
        );
    }
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "files left");
}

/// `vtsim --help` gives every subcommand a description of one short line.
#[test]
fn top_help_describes_every_subcommand_in_a_line() {
    let tmp = tempfile::tempdir().unwrap();
    let help = ok(tmp.path(), &["--help"]);
    for cmd in [
        "run", "fit", "replay", "diff", "merge", "validate", "advise", "bench",
    ] {
        let line = help
            .lines()
            .find(|l| l.split_whitespace().next() == Some(cmd))
            .unwrap_or_else(|| panic!("no `{cmd}` in:\n{help}"));
        let about = line.trim_start()[cmd.len()..].trim();
        assert!(!about.is_empty(), "`{cmd}` has no description");
        assert!(
            line.chars().count() <= 110,
            "`{cmd}`'s line is long: {line}"
        );
    }
}
