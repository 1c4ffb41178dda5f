//! An output set is replaced whole or not at all: a failure or a kill in the output phase
//! leaves the previous files byte-identical and no stray file anywhere; `--resume` after such
//! a kill finishes without simulating again; a lock keeps a second run out of a busy folder.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// `hold_experiment` with its seed and chart name replaced.
fn variant(dir: &Path, name: &str, replicates: u64, seed: u64, chart: &str) -> PathBuf {
    let p = hold_experiment(dir, name, replicates);
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("seed: 99,", &format!("seed: {seed},"))
        .replace("Chart(name: \"end\"", &format!("Chart(name: \"{chart}\""));
    std::fs::write(&p, text).unwrap();
    p
}

/// The tree without a run's own state files (which a failed output phase keeps for --resume).
fn without_state(t: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    t.into_iter()
        .filter(|(n, _)| n != "runs.csv.partial" && n != "run-state.json")
        .collect()
}

fn hidden(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.split('/').any(|s| s.starts_with('.')))
        .collect()
}

#[test]
fn a_chart_name_too_long_for_the_file_system_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let good = variant(tmp.path(), "good", 5, 99, "end");
    let out = tmp.path().join("out");
    run_into(tmp.path(), &good, &out, &[]);
    // A 300-character chart name would be refused by the file system (ENAMETOOLONG) in the
    // output phase; validation refuses it first, so nothing at all is written.
    let long = "c".repeat(300);
    let bad = variant(tmp.path(), "bad", 5, 7, &long);
    let before_bad = listing(tmp.path());
    let o = vtsim(
        tmp.path(),
        &["run", bad.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("field `name`"), "{err}");
    assert!(err.contains("1 to 100 letters"), "{err}");
    assert!(listing(tmp.path()) == before_bad, "a file changed");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_in_the_output_phase_leaves_the_old_outputs_whole_and_resume_finishes() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let a = variant(tmp.path(), "a", 5, 99, "end");
    let b = variant(tmp.path(), "b", 5, 7, "end");
    let out = tmp.path().join("out");
    let want_b = tmp.path().join("want_b");
    run_into(tmp.path(), &b, &want_b, &[]);
    run_into(tmp.path(), &a, &out, &[]);
    let old = tree(&out);
    // A full disk without root: a 20 kB file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored so a
    // write past it fails with EFBIG). runs.csv (4 kB), points.csv and summary.json fit; the
    // 65 kB end.png does not.
    let mut c = vtsim_cmd(
        tmp.path(),
        &["run", b.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[],
    );
    // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: 20_000,
                rlim_max: 20_000,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = run_bounded(c);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("end.png: File too large"),
        "the file and the OS error in plain words: {err}"
    );
    assert!(err.contains("writing chart"), "{err}");
    assert!(without_state(tree(&out)) == old, "the old outputs changed");
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
    // With space again, --resume writes the outputs without simulating.
    let o = run_into(tmp.path(), &b, &out, &["--resume"]);
    assert!(stderr(&o).contains("vtsim: 0 runs in"), "{}", stderr(&o));
    assert!(stderr(&o).contains(", 30 resumed"), "{}", stderr(&o));
    assert_same_tree(&want_b, &out);
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_kill_in_the_output_phase_resumes_without_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    let a = variant(tmp.path(), "a", 5, 99, "end");
    let b = variant(tmp.path(), "b", 400, 7, "end");
    let whole = tmp.path().join("whole");
    run_into(tmp.path(), &b, &whole, &["--threads", "2"]);
    let out = tmp.path().join("out");
    run_into(tmp.path(), &a, &out, &[]);
    let old = tree(&out);
    let o = vtsim(
        tmp.path(),
        &[
            "run",
            b.to_str().unwrap(),
            "--threads",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("VTSIM_ABORT_IN_OUTPUTS", "1")],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("stopping in the output phase"));
    // Killed with the new points.csv and summary.json staged: the old set is whole.
    assert!(without_state(tree(&out)) == old, "the old outputs changed");
    assert!(out.join("runs.csv.partial").is_file());
    // --resume verifies the 2400 rows and writes the outputs: nothing is simulated again.
    let o = run_into(tmp.path(), &b, &out, &["--threads", "1", "--resume"]);
    let err = stderr(&o);
    assert!(err.contains("vtsim: 0 runs in"), "{err}");
    assert!(err.contains(", 2400 resumed"), "{err}");
    assert_same_tree(&whole, &out);
    // The killed run's staging folder and lock file are gone.
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
}

#[test]
fn a_shard_killed_before_its_record_resumes_without_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "sk", 5);
    let whole = tmp.path().join("whole");
    run_into(tmp.path(), &exp, &whole, &[]);
    let split = tmp.path().join("split");
    run_into(tmp.path(), &exp, &split, &["--shard", "1/2"]);
    let o = run_out(
        tmp.path(),
        &exp,
        &split,
        &["--shard", "2/2"],
        &[("VTSIM_ABORT_IN_OUTPUTS", "1")],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let d = split.join("shards/2-of-2");
    assert!(d.join("runs.csv").is_file() && !d.join("shard.json").exists());
    // Unfinished: merge refuses it.
    let o = merge(tmp.path(), &exp, &split);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("shard 2/2 is missing or unfinished"),
        "{}",
        stderr(&o)
    );
    let o = run_into(tmp.path(), &exp, &split, &["--shard", "2/2", "--resume"]);
    assert!(stderr(&o).contains("vtsim: 0 runs in"), "{}", stderr(&o));
    assert!(stderr(&o).contains(", 15 resumed"), "{}", stderr(&o));
    merge_ok(tmp.path(), &exp, &split);
    assert_same_tree(&whole, &split);
}

#[test]
fn torn_and_empty_partials_resume_or_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "torn", 400);
    let whole = tmp.path().join("whole");
    run_into(tmp.path(), &exp, &whole, &["--threads", "1"]);
    let header_len = std::fs::read_to_string(whole.join("runs.csv"))
        .unwrap()
        .find('\n')
        .unwrap()
        + 1;
    // (what, bytes of the partial to keep, rows resumed)
    type Cut = fn(&[u8], usize) -> Vec<u8>;
    let cases: Vec<(&str, Cut, Option<u64>)> = vec![
        ("empty", |_, _| vec![], None),
        ("header cut mid-way", |b, h| b[..h / 2].to_vec(), None),
        (
            "header without its newline",
            |b, h| b[..h - 1].to_vec(),
            None,
        ),
        ("header only", |b, h| b[..h].to_vec(), None),
        (
            "last row cut",
            |b, _| {
                let mut v = b.to_vec();
                v.extend_from_slice(b"1024,2,224,12");
                v
            },
            Some(1024),
        ),
        (
            "last row without its newline",
            |b, _| b[..b.len() - 1].to_vec(),
            Some(1023),
        ),
    ];
    for (what, cut, resumed) in cases {
        let out = tmp.path().join("out");
        let _ = std::fs::remove_dir_all(&out);
        let o = run_killed_after(tmp.path(), &exp, &out, "1000");
        assert_eq!(o.status.code(), Some(3), "{what}: {}", stderr(&o));
        let partial = out.join("runs.csv.partial");
        let bytes = std::fs::read(&partial).unwrap();
        std::fs::write(&partial, cut(&bytes, header_len)).unwrap();
        let o = run_into(tmp.path(), &exp, &out, &["--threads", "2", "--resume"]);
        let err = stderr(&o);
        match resumed {
            Some(n) => assert!(err.contains(&format!(", {n} resumed")), "{what}: {err}"),
            None => assert!(!err.contains("resumed"), "{what}: {err}"),
        }
        assert_same_tree(&whole, &out);
    }
    // A damaged row in the middle is refused, saying what to do; nothing is written.
    let out = tmp.path().join("bad");
    let o = run_killed_after(tmp.path(), &exp, &out, "1000");
    assert_eq!(o.status.code(), Some(3));
    let partial = out.join("runs.csv.partial");
    let text = std::fs::read_to_string(&partial).unwrap();
    let damaged = text.replacen("\n5,0,5,", "\n5,0,6,", 1);
    assert_ne!(text, damaged);
    std::fs::write(&partial, &damaged).unwrap();
    let o = vtsim(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot resume from"), "{err}");
    assert!(
        err.contains("runs.csv.partial: row 6 (line 7): `replicate` is `6`, expected `5`"),
        "{err}"
    );
    assert!(
        err.contains("Run again without --resume to start over"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&partial).unwrap(), damaged);
    assert!(!out.join("runs.csv").exists());
    // So is a partial file whose run-state.json is gone.
    std::fs::remove_file(out.join("run-state.json")).unwrap();
    let o = vtsim(
        tmp.path(),
        &[
            "run",
            exp.to_str().unwrap(),
            "--resume",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("run without --resume to start again"),
        "{}",
        stderr(&o)
    );
}

/// Wait until `lock` names a holder, and return its pid (bounded: a hang guard).
fn holder_pid(lock: &Path) -> u32 {
    let t0 = std::time::Instant::now();
    loop {
        if let Ok(t) = std::fs::read_to_string(lock) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&t) {
                return v["pid"].as_u64().unwrap() as u32;
            }
        }
        assert!(t0.elapsed() < CHILD_TIMEOUT, "no holder in {lock:?}");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Start `vtsim ARGS` in `cwd` holding its output folder and lock until [`release_held`]
/// creates `go` (`VTSIM_TEST_WAIT_FOR`).
fn spawn_held(cwd: &std::path::Path, args: &[&str], go: &std::path::Path) -> std::process::Child {
    spawn(vtsim_cmd(
        cwd,
        args,
        &[("VTSIM_TEST_WAIT_FOR", go.to_str().unwrap())],
    ))
}

/// Let a [`spawn_held`] run finish (bounded) and assert that it succeeded.
fn release_held(child: std::process::Child, go: &std::path::Path) {
    std::fs::write(go, "").unwrap();
    let o = wait_bounded(child, CHILD_TIMEOUT);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_second_run_into_a_busy_folder_is_refused_naming_the_holder() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "busy", 20);
    let want = tmp.path().join("want");
    run_into(tmp.path(), &exp, &want, &[]);
    let out = tmp.path().join("out");
    let go = tmp.path().join("go");
    // The first run holds the folder until `go` exists (VTSIM_TEST_WAIT_FOR).
    let first = spawn_held(tmp.path(), &run_args(&exp, &out, &[]), &go);
    let lock = tmp.path().join(".out.lock");
    let pid = holder_pid(&lock);
    assert_eq!(pid, first.id());
    for args in [
        run_args(&exp, &out, &[]),
        merge_args(&exp, &out),
        run_args(&exp, &out, &["--shard", "1/2"]),
    ] {
        let o = vtsim(tmp.path(), &args, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{}: ", lock.canonicalize().unwrap().display())),
            "{err}"
        );
        assert!(err.contains("is in use by another vtsim"), "{err}");
        assert!(err.contains(&format!("pid {pid} on host")), "{err}");
        assert!(
            err.contains(&format!("running `{}", env!("CARGO_BIN_EXE_vtsim"))),
            "{err}"
        );
        assert!(err.contains("started 20"), "{err}");
    }
    release_held(first, &go);
    // The refused runs wrote nothing: the output is the first run's, whole.
    assert_same_tree(&want, &out);
    assert!(!lock.exists());
}

#[test]
fn shards_run_side_by_side_but_a_merge_waits_for_them() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "side", 5);
    let whole = tmp.path().join("whole");
    run_into(tmp.path(), &exp, &whole, &[]);
    let split = tmp.path().join("split");
    let go = tmp.path().join("go");
    let one = spawn_held(
        tmp.path(),
        &run_args(&exp, &split, &["--shard", "1/2"]),
        &go,
    );
    let pid = holder_pid(&split.join("shards/1-of-2/.lock"));
    // Another shard runs beside it; the same shard does not; nor does a merge.
    run_into(tmp.path(), &exp, &split, &["--shard", "2/2"]);
    let o = run_out(tmp.path(), &exp, &split, &["--shard", "1/2"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shards/1-of-2/.lock: shard 1/2 in"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains(&format!("is being run by another vtsim (pid {pid} on host")));
    let o = merge(tmp.path(), &exp, &split);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "is in use by running shards: shard 1-of-2 (pid {pid} on host"
        )),
        "{}",
        stderr(&o)
    );
    release_held(one, &go);
    merge_ok(tmp.path(), &exp, &split);
    assert_same_tree(&whole, &split);
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
}

#[test]
fn what_is_not_an_output_survives_the_swap_and_a_killed_swap_is_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "keep", 5);
    let out = tmp.path().join("out");
    shards_and_merge(tmp.path(), &exp, &out, 2);
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let shards_before = listing(&out.join("shards"));
    // A chart that is no longer drawn goes with the old set; notes and shards stay.
    std::fs::write(out.join("old-chart.png"), "old").unwrap();
    run_into(tmp.path(), &exp, &out, &[]);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert!(!out.join("old-chart.png").exists());
    assert!(listing(&out.join("shards")) == shards_before);
    // A kill after the kept entries moved into the staging folder, before the swap: the
    // shards are in `.out.staging`. A shard run refuses to start; a merge puts them back.
    let staging = tmp.path().join(".out.staging");
    std::fs::create_dir(&staging).unwrap();
    std::fs::rename(out.join("shards"), staging.join("shards")).unwrap();
    std::fs::rename(out.join("notes.txt"), staging.join("notes.txt")).unwrap();
    std::fs::write(staging.join("points.csv"), "half-built").unwrap();
    let o = run_out(tmp.path(), &exp, &out, &["--shard", "1/2"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run `vtsim merge` or an unsharded run into it"),
        "{}",
        stderr(&o)
    );
    merge_ok(tmp.path(), &exp, &out);
    assert!(listing(&out.join("shards")) == shards_before);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
    // A fallback swap killed between its two renames: the folder is missing, the old set is
    // in `.out.old`; the next run puts it back first (and then replaces it as usual).
    let old = tmp.path().join(".out.old");
    std::fs::rename(&out, &old).unwrap();
    run_into(tmp.path(), &exp, &out, &[]);
    assert!(listing(&out.join("shards")) == shards_before);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
}

#[test]
fn the_two_rename_fallback_swap_replaces_the_set_and_keeps_the_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let a = variant(tmp.path(), "a", 5, 99, "end");
    let b = variant(tmp.path(), "b", 5, 7, "end");
    let want = tmp.path().join("want");
    run_into(tmp.path(), &b, &want, &[]);
    let out = tmp.path().join("out");
    shards_and_merge(tmp.path(), &a, &out, 2);
    let shards = listing(&out.join("shards"));
    let o = vtsim(
        tmp.path(),
        &["run", b.to_str().unwrap(), "--out", out.to_str().unwrap()],
        &[("VTSIM_TEST_NO_EXCHANGE", "1")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_tree(&want, &out);
    assert!(listing(&out.join("shards")) == shards);
    assert_eq!(hidden(tmp.path()), Vec::<String>::new());
}
