//! Past 1024 replicates per point the report summarises each metric from a running sum, a
//! running variance and a quantile sketch instead of holding the values (src/report/
//! `MetricAcc`): the means stay bit-identical to the exact ones, the sd within rounding, and
//! p50/p90/p99 within the sketch's stated relative error (1e-3) of the exact nearest-rank
//! values computed here from `runs.csv`; the maximum is exact.
//!
//! Rows are written, read back and summarised without an allocation per row: counted here by
//! a counting global allocator, per thread.

mod common;
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use vtsim::experiment::layout::{RowChecker, RowWriter};
use vtsim::experiment::runner::JobRunner;
use vtsim::report::Outputs;

/// Counts the allocations (and reallocations) made by the current thread.
struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// 3000 rows over two points (1500 replicates each, past the exact limit): writing them into
/// a reused buffer, checking them back and adding them to the outputs allocate a bounded
/// number of times, not once or more per row as `Vec<String>` fields or a CSV writer per row
/// did.
#[test]
fn rows_are_written_checked_and_summarised_without_allocating_per_row() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "alloc", 1500);
    let plan = vtsim::experiment::load_plan(&exp).unwrap();
    let n = 3000u64;
    let mut runner = JobRunner::new(&plan);
    let outs: Vec<_> = (0..n).map(|j| runner.run(j)).collect();

    let mut w = RowWriter::new();
    let mut row = Vec::with_capacity(1024);
    let mut all = Vec::with_capacity(1 << 20);
    let mut ends = Vec::with_capacity(n as usize);
    let a0 = allocs();
    for (j, r) in outs.iter().enumerate() {
        row.clear();
        w.write_row(&plan, j as u64, r, &mut row);
        all.extend_from_slice(&row);
        ends.push(all.len());
    }
    let written = allocs() - a0;
    assert!(all.len() < 1 << 20, "the test's buffers were big enough");
    // The point's labels are encoded once per point: two points.
    assert!(written <= 4, "{written} allocations writing {n} rows");
    // The rows are the ones the runner writes.
    assert_eq!(
        &all[..ends[0]],
        &vtsim::experiment::runner::job_row(&plan, 0).0[..]
    );

    let mut chk = RowChecker::new(&plan);
    let mut acc = Outputs::new(&plan);
    let (mut checked, mut added) = (0, 0);
    let mut start = 0;
    let (mut m, mut d) = (Vec::with_capacity(64), Vec::with_capacity(64));
    for (j, &end) in ends.iter().enumerate() {
        let a = allocs();
        let v = chk.check(&all[start..end], j as u64).unwrap();
        let e = v.events;
        m.clear();
        m.extend_from_slice(v.metrics);
        d.clear();
        d.extend_from_slice(v.digest);
        let b = allocs();
        checked += b - a;
        acc.add(m.iter().copied(), e, &d).unwrap();
        added += allocs() - b;
        start = end;
    }
    assert!(checked <= 2, "{checked} allocations checking {n} rows");
    // Per point and metric: the exact values' growth up to the limit, then the sketch.
    let per_point = 30 * plan.keep.len() as u64;
    assert!(
        added <= 2 * per_point,
        "{added} allocations adding {n} rows of {} metrics",
        plan.keep.len()
    );
    assert_eq!(acc.rows(), n);
}

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
