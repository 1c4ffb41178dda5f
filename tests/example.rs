//! The `examples/replay_model.rs` program builds (cargo builds examples with the tests) and
//! prints the pinned digest and the library's metric values for a shipped model.

use std::path::{Path, PathBuf};
use std::process::Command;

fn example_bin() -> PathBuf {
    // target/<profile>/deps/<this test> -> target/<profile>/examples/replay_model
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("examples")
        .join(format!("replay_model{}", std::env::consts::EXE_SUFFIX))
}

#[test]
fn the_example_replays_the_hold_fixture_to_its_pinned_digest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = example_bin();
    assert!(
        bin.is_file(),
        "{} is not built: a plain `cargo test` builds the examples (a `--test` filter does \
         not; then run `cargo build --release --examples` first)",
        bin.display()
    );
    let o = Command::new(&bin)
        .arg(root.join("models/hold-fixture.ron"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let pinned = std::fs::read_to_string(root.join("tests/pinned-digests.txt")).unwrap();
    let want = pinned
        .lines()
        .find_map(|l| l.strip_prefix("hold-fixture 1 "))
        .expect("hold-fixture is pinned");
    assert!(text.contains(&format!("digest  {want}")), "{text}");
    let m = vtsim::experiment::load_model_file(&root.join("models/hold-fixture.ron")).unwrap();
    let out = m.world.run(1, vtsim::model::RunOptions::default());
    let end = out.metric("end_time_s").unwrap();
    assert!(
        text.contains(&format!("end_time_s{}{end}\n", " ".repeat(32 - 10 + 1))),
        "{text}"
    );
    assert_eq!(out.metric("no_such_metric"), None);
}
