//! `--shard`: which shard of a sweep this invocation runs, given explicitly (`K/N`) or read
//! from a cluster batch engine's environment (`auto/N`, `auto`), so a Kubernetes indexed Job
//! or a Slurm array runs `vtsim` directly, without an `sh -c` wrapper.
//!
//! - `K/N`: shard K of N, 1-based.
//! - `auto/N`: shard K of N with K taken from the environment:
//!   - Kubernetes indexed Job: `JOB_COMPLETION_INDEX` (0-based), so K = index + 1;
//!   - Slurm job array: `SLURM_ARRAY_TASK_ID`, relative to `SLURM_ARRAY_TASK_MIN` and
//!     `SLURM_ARRAY_TASK_STEP` (default 1), so `--array=1-20`, `--array=0-19` and
//!     `--array=0-38:2` all give K = 1..20.
//! - `auto`: as `auto/N`, with N from `SLURM_ARRAY_TASK_COUNT` (Slurm only: Kubernetes does
//!   not tell a pod its Job's completion count, so write `auto/N` there).
//!
//! Anything else is refused with what to write instead: neither variable set, both set (the
//! index would be ambiguous), a value that is not a whole number, or an index outside 1..=N.

/// The environment variable of a Kubernetes indexed Job's 0-based completion index.
pub const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// The environment variable of a Slurm array task's id.
pub const SLURM_ID: &str = "SLURM_ARRAY_TASK_ID";
/// The smallest task id of the Slurm array.
pub const SLURM_MIN: &str = "SLURM_ARRAY_TASK_MIN";
/// The step between task ids of the Slurm array.
pub const SLURM_STEP: &str = "SLURM_ARRAY_TASK_STEP";
/// The number of tasks of the Slurm array.
pub const SLURM_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";

/// Parse a `--shard` value; `env` looks a variable up (`|k| std::env::var(k).ok()`).
/// Returns (K, N), 1 ≤ K ≤ N; the error is a whole sentence naming the flag.
pub fn parse(spec: &str, env: impl Fn(&str) -> Option<String>) -> Result<(u64, u64), String> {
    let flag = format!("--shard `{spec}`");
    let (k, n) = match spec.split_once('/') {
        Some((k, n)) => (k.trim(), Some(n.trim())),
        None if spec.trim() == "auto" => ("auto", None),
        None => {
            return Err(format!(
                "{flag}: expected K/N (e.g. 2/3), auto/N or auto (the index from \
                 {K8S_INDEX} or {SLURM_ID})"
            ))
        }
    };
    let n = match n {
        Some(n) => number(&flag, "N", n)?,
        None => match env(SLURM_COUNT) {
            Some(c) => number(&flag, SLURM_COUNT, &c)?,
            None => {
                let hint = if env(K8S_INDEX).is_some() {
                    " (a Kubernetes pod is not told its Job's completion count: write \
                     --shard auto/N with N = spec.completions)"
                        .to_string()
                } else {
                    String::new()
                };
                return Err(format!(
                    "{flag}: N comes from {SLURM_COUNT}, which is not set{hint}; write auto/N"
                ));
            }
        },
    };
    if n == 0 {
        return Err(format!("{flag}: N must be at least 1"));
    }
    let k = if k == "auto" {
        auto_index(&flag, &env)?
    } else {
        number(&flag, "K", k)?
    };
    if k == 0 || k > n {
        return Err(format!("{flag}: shard {k} of {n}: need 1 <= K <= N"));
    }
    Ok((k, n))
}

fn number(flag: &str, what: &str, v: &str) -> Result<u64, String> {
    v.trim()
        .parse()
        .map_err(|_| format!("{flag}: {what} `{v}` is not a whole number"))
}

/// K from the batch engine's variables.
fn auto_index(flag: &str, env: &impl Fn(&str) -> Option<String>) -> Result<u64, String> {
    match (env(K8S_INDEX), env(SLURM_ID)) {
        (Some(_), Some(_)) => Err(format!(
            "{flag}: both {K8S_INDEX} and {SLURM_ID} are set, so the shard index is \
             ambiguous; unset one, or give K explicitly (K/N)"
        )),
        (Some(i), None) => {
            let i = number(flag, K8S_INDEX, &i)?;
            i.checked_add(1)
                .ok_or_else(|| format!("{flag}: {K8S_INDEX} {i} is too large"))
        }
        (None, Some(id)) => {
            let id = number(flag, SLURM_ID, &id)?;
            let min = match env(SLURM_MIN) {
                Some(m) => number(flag, SLURM_MIN, &m)?,
                None => {
                    return Err(format!(
                        "{flag}: {SLURM_ID} is set but {SLURM_MIN} is not (Slurm sets both \
                         for a job array)"
                    ))
                }
            };
            let step = match env(SLURM_STEP) {
                Some(s) => number(flag, SLURM_STEP, &s)?.max(1),
                None => 1,
            };
            if id < min || (id - min) % step != 0 {
                return Err(format!(
                    "{flag}: {SLURM_ID} {id} is not on the array's grid ({SLURM_MIN} {min}, \
                     step {step})"
                ));
            }
            Ok((id - min) / step + 1)
        }
        (None, None) => Err(format!(
            "{flag}: neither {K8S_INDEX} (a Kubernetes indexed Job) nor {SLURM_ID} (a Slurm \
             job array) is set; give the shard explicitly as K/N"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn explicit_and_automatic_shards() {
        assert_eq!(parse("2/3", env(&[])), Ok((2, 3)));
        assert_eq!(parse("auto/20", env(&[(K8S_INDEX, "0")])), Ok((1, 20)));
        assert_eq!(parse("auto/20", env(&[(K8S_INDEX, "19")])), Ok((20, 20)));
        let slurm = [(SLURM_ID, "7"), (SLURM_MIN, "1"), (SLURM_COUNT, "20")];
        assert_eq!(parse("auto", env(&slurm)), Ok((7, 20)));
        assert_eq!(parse("auto/20", env(&slurm)), Ok((7, 20)));
        let zero_based = [(SLURM_ID, "0"), (SLURM_MIN, "0"), (SLURM_COUNT, "4")];
        assert_eq!(parse("auto", env(&zero_based)), Ok((1, 4)));
        let stepped = [
            (SLURM_ID, "6"),
            (SLURM_MIN, "0"),
            (SLURM_STEP, "2"),
            (SLURM_COUNT, "4"),
        ];
        assert_eq!(parse("auto", env(&stepped)), Ok((4, 4)));
    }

    #[test]
    fn refusals_say_what_to_write() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: &[Case] = &[
            ("auto/4", &[], "neither JOB_COMPLETION_INDEX"),
            ("auto", &[(K8S_INDEX, "1")], "write --shard auto/N"),
            ("auto", &[], "SLURM_ARRAY_TASK_COUNT, which is not set"),
            ("auto/4", &[(K8S_INDEX, "4")], "shard 5 of 4"),
            ("auto/4", &[(K8S_INDEX, "x")], "`x` is not a whole number"),
            (
                "auto/4",
                &[(K8S_INDEX, "0"), (SLURM_ID, "1"), (SLURM_MIN, "1")],
                "ambiguous",
            ),
            ("auto/4", &[(SLURM_ID, "2")], "SLURM_ARRAY_TASK_MIN is not"),
            (
                "auto/4",
                &[(SLURM_ID, "3"), (SLURM_MIN, "0"), (SLURM_STEP, "2")],
                "not on the array's grid",
            ),
            ("0/3", &[], "need 1 <= K <= N"),
            ("3", &[], "expected K/N"),
            ("1/0", &[], "N must be at least 1"),
        ];
        for (spec, vars, want) in cases {
            let e = parse(spec, env(vars)).unwrap_err();
            assert!(e.contains(want), "{spec} {vars:?}: {e}");
            assert!(e.starts_with(&format!("--shard `{spec}`")), "{e}");
        }
    }
}
