//! Past 1024 replicates per point the report summarises each metric from a running sum, a
//! running variance and a quantile sketch instead of holding the values (src/report.rs
//! `MetricAcc`): the means stay bit-identical to the exact ones, the sd within rounding, and
//! p50/p90/p99 within the sketch's stated relative error (1e-3) of the exact nearest-rank
//! values computed here from `runs.csv`; the maximum is exact.

mod common;
use common::*;

fn column(header: &[&str], name: &str) -> usize {
    header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn summaries_past_the_exact_limit_match_the_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "big", 1500);
    let out = tmp.path().join("out");
    run_into(tmp.path(), &exp, &out, &[]);
    let runs = std::fs::read_to_string(out.join("runs.csv")).unwrap();
    let mut lines = runs.lines();
    let rh: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let points = std::fs::read_to_string(out.join("points.csv")).unwrap();
    let mut plines = points.lines();
    let ph: Vec<&str> = plines.next().unwrap().split(',').collect();
    let prows: Vec<Vec<&str>> = plines.map(|l| l.split(',').collect()).collect();
    assert_eq!(prows.len(), 6);
    let mut checked = 0;
    for metric in ["end_time_s"] {
        let m = column(&rh, metric);
        for (p, prow) in prows.iter().enumerate() {
            let vals: Vec<f64> = rows
                .iter()
                .filter(|r| r[column(&rh, "point")] == p.to_string())
                .map(|r| r[m].parse().unwrap())
                .collect();
            assert_eq!(vals.len(), 1500);
            let get = |suffix: &str| -> f64 {
                prow[column(&ph, &format!("{metric}_{suffix}"))]
                    .parse()
                    .unwrap()
            };
            let mean = vals.iter().sum::<f64>() / vals.len() as f64;
            assert_eq!(get("mean"), mean, "point {p}: the mean is the exact one");
            let mut sorted = vals.clone();
            sorted.sort_by(f64::total_cmp);
            assert_eq!(get("max"), *sorted.last().unwrap());
            let n = sorted.len() as f64;
            let sd =
                (sorted.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt();
            assert!(
                (get("sd") - sd).abs() <= 1e-9 * sd,
                "point {p}: sd {} vs {sd}",
                get("sd")
            );
            for (q, name) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")] {
                let rank = ((q * n).ceil() as usize).clamp(1, sorted.len());
                let exact = sorted[rank - 1];
                let got = get(name);
                assert!(
                    (got - exact).abs() <= 1e-3 * exact.abs(),
                    "point {p} {name}: {got} vs exact {exact}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 18);
}
