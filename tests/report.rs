//! The report page: the verdict box (declared or not) with the right figures, merged identical
//! curves, and chart footers.

mod common;

use common::{root, run_into};

fn experiment(dir: &std::path::Path, verdict: &str) -> std::path::PathBuf {
    let model = root().join("models/hold-fixture.ron");
    let text = format!(
        r#"Experiment(
    name: "v",
    model: "{}",
    seed: 5,
    replicates: 30,
    set: {{ "events": 300 }},
    axes: [
        Axis(param: "pending", values: [5, 50, 500]),
        Axis(param: "mean_increment", range: (from: "1ms", to: "2ms", step: "1ms")),
    ],
    {verdict}
    charts: [
        Chart(name: "end", title: "end", x: "pending", x_label: "pending", y: ["end_time_s"],
              y_label: "s", series: "mean_increment"),
    ],
)
"#,
        model.display()
    );
    let p = dir.join("v.ron");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_verdict_box_states_the_answer_from_points_csv() {
    let tmp = tempfile::tempdir().unwrap();
    // end_time_s grows with pending; the largest pending whose upper bound is below 0.2 s.
    let exp = experiment(
        tmp.path(),
        r#"verdict: Verdict(question: "Q?", axis: "pending", metric: "end_time_s",
              target: 0.2, largest: true, cost: "handled_events"),"#,
    );
    let out = tmp.path().join("out");
    run_into(tmp.path(), &exp, &out, &[]);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let i = html.find("<div id=\"verdict\"").expect("a verdict box");
    assert!(i < html.find("<img").unwrap(), "the verdict comes first");
    let vbox = &html[i..i + html[i..].find("</div>").unwrap()];
    assert!(vbox.contains("<p>Q?</p>"));
    assert!(vbox.contains("30 replicates = 180 runs"), "{vbox}");
    // The expected answer, from points.csv, per mean_increment.
    let mut r = csv::Reader::from_path(out.join("points.csv")).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let c = |n: &str| h.iter().position(|x| x == n).unwrap();
    let rows: Vec<Vec<String>> = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    for inc in ["1ms", "2ms"] {
        let best = rows
            .iter()
            .filter(|row| row[c("mean_increment")] == inc)
            .filter(|row| row[c("end_time_s_ci_hi")].parse::<f64>().unwrap() < 0.2)
            .map(|row| row[c("pending")].parse::<u64>().unwrap())
            .max();
        let want = match best {
            Some(p) => format!("<td>mean_increment = {inc}</td><td><b>{p}</b></td>"),
            None => format!("<td>mean_increment = {inc}</td><td>none in the sweep</td>"),
        };
        assert!(vbox.contains(&want), "{want} not in {vbox}");
    }
    // The digest in the box is the one in summary.json.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(vbox.contains(v["digests"]["runs"].as_str().unwrap()));

    // Without a verdict, the box says there is none.
    let exp = experiment(tmp.path(), "");
    let out2 = tmp.path().join("out2");
    run_into(tmp.path(), &exp, &out2, &[]);
    let html = std::fs::read_to_string(out2.join("index.html")).unwrap();
    assert!(html.contains("<div id=\"verdict\""));
    assert!(html.contains("declares no verdict"));
}

#[test]
fn a_verdict_naming_what_is_not_there_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (v, want) in [
        (
            r#"verdict: Verdict(axis: "nope", metric: "end_time_s", target: 1.0),"#,
            "`nope` is not an axis",
        ),
        (
            r#"verdict: Verdict(axis: "pending", metric: "nope", target: 1.0),"#,
            "`nope` is not a kept metric",
        ),
        (
            r#"verdict: Verdict(axis: "pending", metric: "end_time_s", target: 1.0, oops: 1),"#,
            "oops",
        ),
    ] {
        let exp = experiment(tmp.path(), v);
        let o = common::vtsim(tmp.path(), &["validate", exp.to_str().unwrap()], &[]);
        assert_eq!(o.status.code(), Some(2), "{v}");
        assert!(
            common::stderr(&o).contains(want),
            "{want}: {}",
            common::stderr(&o)
        );
    }
}
