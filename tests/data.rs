//! The sweep's data loads as-is: `runs.csv`, `points.csv` and `data-dictionary.csv` read with
//! a pandas-style per-column type inference (integers, else floats, else strings) give numbers
//! where numbers belong, no integer beyond i64 (polars' Int128), duration axes in seconds,
//! Wilson bounds for 0/1 metrics and intervals inside what a metric can take.

mod common;

use common::{hold_experiment, root, run_into};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Int,
    Float,
    Str,
    /// Integers, some beyond i64: what polars reads as Int128 (and pandas as object).
    Int128,
}

/// A CSV as a pandas-style reader types it: per column, i64 if every value is one, else f64
/// (with NaN/inf) if every value is one, else string.
fn infer(path: &std::path::Path) -> (Vec<String>, Vec<Ty>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    let types = (0..header.len())
        .map(|c| {
            let col = rows.iter().map(|row| row[c].as_str());
            let is_int = |v: &str| v.parse::<i64>().is_ok();
            let is_big = |v: &str| v.parse::<i128>().is_ok();
            let is_float = |v: &str| v.parse::<f64>().is_ok();
            if col.clone().all(is_int) {
                Ty::Int
            } else if col.clone().all(is_big) {
                Ty::Int128
            } else if col.clone().all(is_float) {
                Ty::Float
            } else {
                Ty::Str
            }
        })
        .collect();
    (header, types, rows)
}

#[test]
fn the_csvs_type_as_numbers_with_a_dictionary() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = hold_experiment(tmp.path(), "data", 40);
    let out = tmp.path().join("out");
    run_into(tmp.path(), &exp, &out, &[]);

    let (rh, rt, rrows) = infer(&out.join("runs.csv"));
    let rty: HashMap<&str, Ty> = rh
        .iter()
        .map(String::as_str)
        .zip(rt.iter().copied())
        .collect();
    for c in [
        "job",
        "point",
        "replicate",
        "pending",
        "events",
        "ended_late",
        "handled_events",
    ] {
        assert_eq!(rty[c], Ty::Int, "runs.csv {c}");
    }
    assert_eq!(rty["end_time_s"], Ty::Float);
    assert!(!rt.contains(&Ty::Int128), "{rh:?} {rt:?}");
    // The seed is text, the hex replay takes.
    assert_eq!(rty["seed"], Ty::Str);
    let si = rh.iter().position(|h| h == "seed").unwrap();
    assert!(rrows
        .iter()
        .all(|r| r[si].len() == 18 && r[si].starts_with("0x")));

    let (ph, pt, prows) = infer(&out.join("points.csv"));
    let pty: HashMap<&str, Ty> = ph
        .iter()
        .map(String::as_str)
        .zip(pt.iter().copied())
        .collect();
    assert!(!pt.contains(&Ty::Int128));
    // The duration axis: its label, and beside it its seconds.
    let li = ph.iter().position(|h| h == "mean_increment").unwrap();
    assert_eq!(ph[li + 1], "mean_increment_s");
    assert_eq!(pty["mean_increment"], Ty::Str);
    assert_eq!(pty["mean_increment_s"], Ty::Float);
    let secs: Vec<f64> = prows.iter().map(|r| r[li + 1].parse().unwrap()).collect();
    assert_eq!(secs, [0.001, 0.002, 0.001, 0.002, 0.001, 0.002]);
    assert_eq!(pty["pending"], Ty::Int);
    assert!(
        !ph.contains(&"pending_s".to_string()),
        "a number axis needs no seconds column"
    );
    for (h, t) in ph.iter().zip(&pt) {
        if h != "mean_increment" {
            assert!(matches!(t, Ty::Int | Ty::Float), "points.csv {h} is {t:?}");
        }
    }
    // A 0/1 metric's interval is Wilson (its upper bound above 0 even with no event); a
    // value's is clamped to what the metric can take (no negative lower bound).
    let col = |n: &str| ph.iter().position(|h| h == n).unwrap();
    for r in &prows {
        let f = |n: &str| r[col(n)].parse::<f64>().unwrap();
        assert_eq!(f("ended_late_ci_hi"), f("ended_late_wilson_hi"));
        assert_eq!(f("ended_late_ci_lo"), f("ended_late_wilson_lo"));
        if f("ended_late_mean") == 0.0 {
            let (_, hi) = vtsim::stats::wilson(0, 40);
            assert_eq!(f("ended_late_ci_hi"), hi);
        }
        assert!(f("end_time_s_ci_lo") >= 0.0);
    }

    // The dictionary names every column of both files once, with a type that matches.
    let (dh, _, drows) = infer(&out.join("data-dictionary.csv"));
    assert_eq!(dh, ["file", "column", "type", "unit", "meaning"]);
    for (file, header, types) in [("runs.csv", &rh, &rt), ("points.csv", &ph, &pt)] {
        let entries: Vec<&Vec<String>> = drows.iter().filter(|r| r[0] == file).collect();
        let names: Vec<&str> = entries.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(
            names,
            header.iter().map(String::as_str).collect::<Vec<_>>(),
            "{file}"
        );
        for (e, t) in entries.iter().zip(types.iter()) {
            let ok = match e[2].as_str() {
                "integer" => *t == Ty::Int,
                "float" => matches!(t, Ty::Int | Ty::Float),
                "string" => *t == Ty::Str,
                other => panic!("type {other}"),
            };
            assert!(
                ok,
                "{file} {}: dictionary {} but reads as {t:?}",
                e[1], e[2]
            );
            assert!(!e[4].is_empty(), "{file} {}: no meaning", e[1]);
        }
    }
    let unit = |c: &str| {
        drows
            .iter()
            .find(|r| r[0] == "points.csv" && r[1] == c)
            .unwrap()[3]
            .clone()
    };
    assert_eq!(unit("mean_increment_s"), "s");
    assert_eq!(unit("end_time_s_mean"), "s");
    assert_eq!(unit("ended_late_mean"), "probability");

    // summary.json: the seed as hex (and decimal text), Wilson for the 0/1 metric.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(v["seed"], "0x0000000000000063");
    assert_eq!(v["seed_decimal"], "99");
    let m = &v["point_means"][0]["metrics"]["ended_late"];
    assert_eq!(m["interval"], "wilson");
    assert!(m["ci_hi"].as_f64().unwrap() > 0.0);
    assert_eq!(
        v["point_means"][0]["axes_numeric"]["mean_increment_s"],
        0.001
    );
}

#[test]
fn every_shipped_models_metrics_lie_in_their_declared_range() {
    for e in std::fs::read_dir(root().join("models")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("ron") {
            continue;
        }
        let m = vtsim::experiment::load_model_file(&p).unwrap();
        let out = m.world.run(1, vtsim::model::RunOptions::default());
        for (d, v) in m.world.metric_defs().iter().zip(&out.metrics) {
            let (lo, hi) = d.range();
            assert!(
                (lo..=hi).contains(v) || v.is_nan(),
                "{}: {} = {v} outside [{lo}, {hi}]",
                p.display(),
                d.name
            );
        }
    }
}
