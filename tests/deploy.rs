//! The shipped cluster files (`deploy/`) do what they say: each Kubernetes index and each Slurm
//! array task runs its own shard with the command the file holds (the batch engine's variable
//! set as the engine sets it, no wrapper), and the merge command joins them into files
//! byte-identical to one run. The sweep itself is swapped for a small hold-model experiment so
//! the test takes seconds; the files' own experiment path is checked to exist.
//! `.ci/run` also validates the manifests against the Kubernetes API schema.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// The value of the first `key: value` line (leading spaces ignored) in `text`.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    let prefix = format!("{key}:");
    text.lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no `{key}:` line"))
        .trim()
}

/// The container's `args:` (a JSON-style flow sequence on one line).
fn container_args(manifest: &str) -> Vec<String> {
    serde_json::from_str(field(manifest, "args")).expect("args is a one-line flow sequence")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// `args` with the experiment (argument 1) replaced by `exp` and `/out/...` by `out`; the
/// file's own experiment must exist in the repository (the image's /vtsim is the repo's
/// experiments/ and models/).
fn localised(args: &[String], exp: &Path, out: &Path) -> Vec<String> {
    assert!(
        root().join(&args[1]).is_file(),
        "the manifest's experiment {} is not in the repository",
        args[1]
    );
    let mut a = args.to_vec();
    a[1] = exp.display().to_string();
    let at = a.iter().position(|x| x == "--out").expect("--out") + 1;
    assert!(a[at].starts_with("/out/"), "--out is on the volume");
    a[at] = out.display().to_string();
    a
}

fn run_ok(args: &[String], env: &[(&str, &str)]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = vtsim(&root(), &args, env);
    assert!(o.status.success(), "vtsim {args:?} {env:?}: {}", stderr(&o));
    o
}

#[test]
fn kubernetes_indexed_job_shards_merge_to_one_run() {
    let job = read("deploy/kubernetes/sweep-job.yaml");
    let completions: u64 = field(&job, "completions").parse().unwrap();
    let parallelism: u64 = field(&job, "parallelism").parse().unwrap();
    assert!((1..=completions).contains(&parallelism));
    assert_eq!(field(&job, "completionMode"), "Indexed");
    // A pod failure policy needs restartPolicy Never; bad input (exit 2) fails the Job at once.
    assert_eq!(field(&job, "restartPolicy"), "Never");
    assert!(job.contains("action: FailJob") && job.contains("values: [2]"));
    let args = container_args(&job);
    assert_eq!(args[0], "run");
    let at = args.iter().position(|a| a == "--shard").expect("--shard") + 1;
    assert_eq!(
        args[at],
        format!("auto/{completions}"),
        "the shard count must equal spec.completions"
    );
    assert!(args.iter().any(|a| a == "--resume"));

    let merge_job = read("deploy/kubernetes/merge-job.yaml");
    let merge_args = container_args(&merge_job);
    assert_eq!(merge_args[0], "merge");
    assert_eq!(
        merge_args[1], args[1],
        "the merge joins the sweep's experiment"
    );
    let out_of = |a: &[String]| a[a.iter().position(|x| x == "--out").unwrap() + 1].clone();
    assert_eq!(out_of(&merge_args), out_of(&args));
    // The image's entrypoint is vtsim, so `args` are vtsim's arguments.
    assert!(read("deploy/Containerfile").contains(r#"ENTRYPOINT ["vtsim"]"#));

    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "k8s", 4);
    let (split, whole) = (tmp.path().join("split"), tmp.path().join("whole"));
    let sweep = localised(&args, &exp, &split);
    for i in 0..completions {
        run_ok(&sweep, &[("JOB_COMPLETION_INDEX", &i.to_string())]);
    }
    run_ok(&localised(&merge_args, &exp, &split), &[]);
    run_into(tmp.path(), &exp, &whole, &[]);
    assert_same_tree(&whole, &split);
    // A retried pod of a finished index verifies its shard and simulates nothing.
    let shard = split.join(format!("shards/3-of-{completions}/runs.csv"));
    let before = std::fs::read(&shard).unwrap();
    let o = run_ok(&sweep, &[("JOB_COMPLETION_INDEX", "2")]);
    assert!(stderr(&o).contains("vtsim: 0 runs"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&shard).unwrap(), before);
}

/// The `--array=A-B` of an sbatch script.
fn array_range(script: &str) -> (u64, u64) {
    let spec = script
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --array="))
        .expect("an #SBATCH --array= line")
        .trim();
    let (a, b) = spec.split_once('-').expect("A-B");
    (a.parse().unwrap(), b.parse().unwrap())
}

fn bash(script: &Path, env: &[(&str, String)]) -> std::process::Output {
    let mut c = std::process::Command::new("bash");
    c.arg(script).current_dir(root()).env("CI", "true");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = wait_bounded(spawn(c), CHILD_TIMEOUT);
    assert!(
        o.status.success(),
        "bash {script:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn slurm_array_tasks_merge_to_one_run() {
    let sweep = root().join("deploy/slurm/sweep.sbatch");
    let (min, max) = array_range(&read("deploy/slurm/sweep.sbatch"));
    assert!(min <= max);
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "slurm", 4);
    let (split, whole) = (tmp.path().join("split"), tmp.path().join("whole"));
    let common = |id: Option<u64>| {
        let mut env = vec![
            ("VTSIM", env!("CARGO_BIN_EXE_vtsim").to_string()),
            ("EXPERIMENT", exp.display().to_string()),
            ("OUT", split.display().to_string()),
            ("SLURM_CPUS_PER_TASK", "1".to_string()),
        ];
        if let Some(id) = id {
            // As Slurm sets them for each task of `--array=min-max`.
            env.push(("SLURM_ARRAY_TASK_ID", id.to_string()));
            env.push(("SLURM_ARRAY_TASK_MIN", min.to_string()));
            env.push(("SLURM_ARRAY_TASK_MAX", max.to_string()));
            env.push(("SLURM_ARRAY_TASK_STEP", "1".to_string()));
            env.push(("SLURM_ARRAY_TASK_COUNT", (max - min + 1).to_string()));
        }
        env
    };
    for id in min..=max {
        bash(&sweep, &common(Some(id)));
    }
    let n = max - min + 1;
    assert!(split
        .join(format!("shards/{n}-of-{n}/shard.json"))
        .is_file());
    bash(&root().join("deploy/slurm/merge.sbatch"), &common(None));
    run_into(tmp.path(), &exp, &whole, &[]);
    assert_same_tree(&whole, &split);
}

#[test]
fn slurm_submit_chains_the_merge_after_the_array() {
    // A stand-in `sbatch` that logs its arguments and answers as `--parsable` does.
    let tmp = tempfile::tempdir().unwrap();
    let bin: PathBuf = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = tmp.path().join("sbatch.log");
    let fake = format!(
        "#!/usr/bin/env bash\necho \"$*\" >> {log}\nn=$(wc -l < {log})\necho \"$((4100 + n));cluster1\"\n",
        log = log.display()
    );
    std::fs::write(bin.join("sbatch"), fake).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("sbatch"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = bash(&root().join("deploy/slurm/submit.sh"), &[("PATH", path)]);
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[0].starts_with("--parsable ") && calls[0].ends_with("deploy/slurm/sweep.sbatch"));
    assert!(
        calls[1].contains("--dependency=afterok:4101 ")
            && calls[1].ends_with("deploy/slurm/merge.sbatch"),
        "{calls:?}"
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "submitted array 4101 and merge 4102"
    );
}
