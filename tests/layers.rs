//! The house's shape, checked on the source (issue 39): layers point one way, each model folder
//! reads top-down, and no source file is longer than a reader can hold.
//!
//! - **Layers.** Every `crate::NAME` path in a library module names a module of a lower layer
//!   (the table in [`LAYERS`]; CONTRIBUTING.md draws it). The kernel knows nothing of models,
//!   models nothing of experiments, the runner nothing of the report.
//! - **Model folders.** Inside `src/model/NAME/`, the files' imports of each other (`super::X`,
//!   `crate::model::NAME::X`) form no cycle, so the folder reads from `mod.rs` down.
//! - **Size.** No file under `src/` has more than 800 lines.
//!
//! The scan reads code lines only (comments and doc comments are skipped: a doc link upward
//! is a reference for the reader, not a dependency).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The library's top-level modules, lowest layer first. A module may name only modules of a
/// strictly lower layer (and itself).
const LAYERS: &[(&str, u32)] = &[
    ("sim", 0),
    ("stats", 1),
    ("io", 1),
    ("sketch", 2),
    ("chart", 2),
    ("model", 3),
    ("experiment", 4),
    ("report", 5),
    ("tracediff", 5),
    ("fit", 5),
    ("advise", 5),
    ("bench", 5),
    ("replay", 6),
];

const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The file's lines that are code: `//` comments (doc comments included) dropped, and the
/// text after a `//` on a code line too.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let t = l.trim_start();
            if t.starts_with("//") {
                return None;
            }
            let code = match l.find("//") {
                // A `//` inside a string literal (a URL) is kept: good enough for paths.
                Some(at) if !l[..at].contains('"') => &l[..at],
                _ => l,
            };
            Some((i + 1, code.to_string()))
        })
        .collect()
}

/// Every `PREFIX::name` in `line`, with `name` the identifier after the prefix.
fn names_after<'a>(line: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + prefix.len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') && end > 0 {
            out.push(&after[..end]);
        }
        rest = &after[end..];
    }
    out
}

/// `use super::{a, b::C}` and `use crate::model::x::{a, b}` groups name several siblings: the
/// first identifier of each top-level item of the braces after `prefix`.
fn grouped_after(line: &str, prefix: &str) -> Vec<String> {
    let group = format!("{prefix}{{");
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find(&group) {
        let body = &rest[at + group.len()..];
        let (mut depth, mut word, mut first) = (0usize, String::new(), true);
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    end = i;
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if first && !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                    word.clear();
                    first = true;
                    continue;
                }
                _ => {}
            }
            if depth == 0 && first {
                if c.is_ascii_alphanumeric() || c == '_' {
                    word.push(c);
                } else if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                    first = false;
                }
            }
        }
        if first && !word.is_empty() {
            out.push(word);
        }
        rest = &body[end..];
    }
    out
}

#[test]
fn no_source_file_is_longer_than_800_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = fs::read_to_string(f).unwrap().lines().count();
            (n > MAX_LINES)
                .then(|| format!("{} ({n} lines)", f.strip_prefix(src()).unwrap().display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn layers_point_one_way() {
    let rank: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut climbs = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let top = top.strip_suffix(".rs").unwrap_or(top);
        if matches!(top, "main" | "lib" | "cli") {
            continue;
        }
        let own = *rank
            .get(top)
            .unwrap_or_else(|| panic!("src/{top} has no layer in tests/layers.rs LAYERS"));
        let text = fs::read_to_string(f).unwrap();
        for (n, line) in code_lines(&text) {
            let mut named: Vec<String> = names_after(&line, "crate::")
                .into_iter()
                .map(str::to_string)
                .collect();
            named.extend(grouped_after(&line, "crate::"));
            for m in named {
                // `metric_set!` is the model layer's macro, exported at the crate root.
                let m = if m == "metric_set" {
                    "model".to_string()
                } else {
                    m
                };
                if m == top {
                    continue;
                }
                let Some(&r) = rank.get(m.as_str()) else {
                    continue;
                };
                if r >= own {
                    climbs.push(format!(
                        "src/{}:{n}: {top} (layer {own}) names crate::{m} (layer {r})",
                        rel.display()
                    ));
                }
            }
        }
    }
    assert!(
        climbs.is_empty(),
        "imports that climb:\n{}",
        climbs.join("\n")
    );
}

/// The files of one model folder and the siblings each imports.
fn folder_graph(dir: &Path, folder: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(dir, &mut files);
    let stem = |p: &Path| -> String {
        let rel = p.strip_prefix(dir).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        first.strip_suffix(".rs").unwrap_or(first).to_string()
    };
    let nodes: BTreeSet<String> = files.iter().map(|f| stem(f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let long = format!("crate::model::{folder}::");
    for f in &files {
        let me = stem(f);
        // A file in a subfolder (`world/handlers.rs`) is part of its top-level node; its
        // `super::` is that node, not the folder.
        let depth = f.strip_prefix(dir).unwrap().components().count();
        let text = fs::read_to_string(f).unwrap();
        let edges = graph.entry(me.clone()).or_default();
        for (_, line) in code_lines(&text) {
            let mut named: Vec<String> = Vec::new();
            if depth == 1 {
                named.extend(
                    names_after(&line, "super::")
                        .into_iter()
                        .map(str::to_string),
                );
                named.extend(grouped_after(&line, "super::"));
            }
            named.extend(names_after(&line, &long).into_iter().map(str::to_string));
            named.extend(grouped_after(&line, &long));
            for n in named {
                if n != me && nodes.contains(&n) && me != "mod" {
                    edges.insert(n);
                }
            }
        }
    }
    graph
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m.as_str()).copied().unwrap_or(0) {
                1 => {
                    let at = path.iter().position(|p| p == m).unwrap();
                    let mut c = path[at..].to_vec();
                    c.push(m.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(m, graph, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if state.get(n.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn each_model_folder_reads_top_down() {
    let model = src().join("model");
    let mut cycles = Vec::new();
    let mut dirs: Vec<_> = fs::read_dir(&model)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 5, "model folders: {dirs:?}");
    for d in dirs {
        let name = d.file_name().unwrap().to_str().unwrap().to_string();
        let g = folder_graph(&d, &name);
        if let Some(c) = find_cycle(&g) {
            cycles.push(format!("src/model/{name}/: {}", c.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_checks_see_what_they_check() {
    // The scanners find what they are for: a test that cannot fail is a defect.
    assert_eq!(
        names_after("use crate::model::X;", "crate::"),
        vec!["model"]
    );
    assert_eq!(names_after("a::crate::x", "crate::"), vec!["x"]);
    assert!(names_after("my_crate::x", "crate::").is_empty());
    assert_eq!(
        grouped_after("use super::{event::Ev, world::{A, B}, tablet};", "super::"),
        vec!["event", "world", "tablet"]
    );
    assert_eq!(code_lines("// crate::x\nlet a = 1; // crate::y\n").len(), 1);
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        find_cycle(&g),
        Some(vec!["a".into(), "b".into(), "a".into()])
    );
    g.insert("b".to_string(), BTreeSet::new());
    assert_eq!(find_cycle(&g), None);
}
