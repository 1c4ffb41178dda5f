//! `vtsim fit --cluster vitesscluster.yaml`: a VitessCluster's shape and vtgate flags as a
//! rollout model (`docs/fit.md`, "From config alone").
//!
//! Paths read (planetscale/vitess-operator `pkg/apis/planetscale/v2/vitesscluster_types.go`,
//! `vitesscell_types.go`, `vitesskeyspace_types.go`, `vitessshard_types.go`):
//! - `apiVersion: planetscale.com/v2`, `kind: VitessCluster`;
//! - `spec.cells[].name`, `.gateway.replicas` (default 2: `defaults.go`
//!   `defaultVtgateReplicas`), `.gateway.extraFlags` merged over `spec.extraVitessFlags`
//!   (`pkg/controller/vitesscell/reconcile_vtgate.go`);
//! - vtgate flags: `tablet_refresh_interval` / `tablet-refresh-interval` (the operator sets
//!   none, so 1m; `spec.tabletRefreshInterval`, vitess-operator PR #797, is read first), and
//!   `cells_to_watch` / `cells-to-watch` (the operator passes every cell unless overridden,
//!   `pkg/operator/vtgate/deployment.go`);
//! - `spec.keyspaces[].partitionings[]`: `equal.parts` with `equal.shardTemplate.tabletPools`,
//!   or `custom.shards[]` with their own `tabletPools`; `tabletPools[]`: `cell`, `type`,
//!   `replicas` (only `type: replica` pools are modelled: they hold the primary-eligible
//!   tablets the rolling restart and PRS act on).
//!
//! Choices where the cluster file is silent: the first keyspace is modelled (a warning names
//! the others); the shards' primary is placed in the first cell (in `spec.cells` order) with a
//! replica pool; an autoscaled gateway is modelled at `replicas` (else `minReplicas`).
//!
//! The YAML is read with `saphyr` (a maintained, pure-Rust YAML 1.2 parser, successor of
//! yaml-rust / yaml-rust2, whose nodes carry their line and column), not `serde_yaml` (archived
//! and deprecated by its author in 2024).

use super::cluster_api::unknown_keys;
use crate::model::rollout::{CellParams, RolloutParams};
use crate::sim::SimDuration;
use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use std::collections::BTreeMap;
use std::path::Path;

/// A cluster file read into a model, with what was assumed.
pub struct ClusterFit {
    /// The model's parameters.
    pub params: RolloutParams,
    /// The VitessCluster's name.
    pub name: String,
    /// What the file did not say and was assumed.
    pub warnings: Vec<String>,
    /// The refresh interval the file sets (`None`: vtgate's default, 1m).
    pub refresh: Option<SimDuration>,
}

/// One error: `file:line:column: field: message`.
fn bad(path: &Path, node: Option<&MarkedYaml>, field: &str, msg: impl std::fmt::Display) -> String {
    match node {
        Some(n) => format!(
            "{}:{}:{}: field `{field}`: {msg}",
            path.display(),
            n.span.start.line(),
            n.span.start.col() + 1
        ),
        None => format!("{}: field `{field}`: {msg}", path.display()),
    }
}

/// The value under `key` of mapping `node`.
fn get<'a, 'i>(node: &'a MarkedYaml<'i>, key: &str) -> Option<&'a MarkedYaml<'i>> {
    match &node.data {
        YamlData::Mapping(m) => m.iter().find_map(|(k, v)| match &k.data {
            YamlData::Value(Scalar::String(s)) if s == key => Some(v),
            _ => None,
        }),
        _ => None,
    }
}

/// A scalar as text (strings, numbers, booleans).
pub(super) fn text(node: &MarkedYaml) -> Option<String> {
    match &node.data {
        YamlData::Value(Scalar::String(s)) => Some(s.to_string()),
        YamlData::Value(Scalar::Integer(i)) => Some(i.to_string()),
        YamlData::Value(Scalar::Boolean(b)) => Some(b.to_string()),
        YamlData::Value(Scalar::FloatingPoint(f)) => Some(f.to_string()),
        _ => None,
    }
}

pub(super) fn seq<'a, 'i>(node: &'a MarkedYaml<'i>) -> Option<&'a [MarkedYaml<'i>]> {
    match &node.data {
        YamlData::Sequence(v) => Some(v),
        _ => None,
    }
}

/// The string flags of a map (`extraFlags`), keys without their leading dashes
/// (`strings.TrimLeft(key, "-")`, vitess-operator `pkg/operator/vtgate/deployment.go`).
fn flags(
    path: &Path,
    node: Option<&MarkedYaml>,
    field: &str,
) -> Result<BTreeMap<String, (String, usize)>, String> {
    let mut out = BTreeMap::new();
    let Some(n) = node else { return Ok(out) };
    let YamlData::Mapping(m) = &n.data else {
        return Err(bad(path, Some(n), field, "a map of flag names to values"));
    };
    for (k, v) in m.iter() {
        let key = text(k).ok_or_else(|| bad(path, Some(k), field, "a flag name"))?;
        let val = text(v)
            .ok_or_else(|| bad(path, Some(v), &format!("{field}.{key}"), "a string value"))?;
        out.insert(
            key.trim_start_matches('-').to_string(),
            (val, v.span.start.line()),
        );
    }
    Ok(out)
}

/// A Go duration flag value (`10s`, `1m0s`, `1m30s`, `500ms`).
fn go_duration(s: &str) -> Option<SimDuration> {
    SimDuration::parse(s).ok().or_else(|| {
        // `1m0s`: SimDuration::parse takes one unit per term; split Go's terms.
        let mut total = SimDuration::ZERO;
        let mut rest = s;
        while !rest.is_empty() {
            let i = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
            let j = rest[i..]
                .find(|c: char| c.is_ascii_digit())
                .map_or(rest.len(), |j| i + j);
            total += SimDuration::parse(&rest[..j]).ok()?;
            rest = &rest[j..];
        }
        Some(total)
    })
}

/// Read VitessCluster `text` (from `path`) into a rollout model of its shape and flags.
pub fn read(path: &Path, text_in: &str) -> Result<ClusterFit, String> {
    // A bound on the input: a cluster file is a few KiB.
    if text_in.len() > 16 << 20 {
        return Err(format!(
            "{}: larger than 16 MiB: not a VitessCluster file",
            path.display()
        ));
    }
    let docs = MarkedYaml::load_from_str(text_in).map_err(|e| {
        format!(
            "{}:{}:{}: not valid YAML: {}",
            path.display(),
            e.marker().line(),
            e.marker().col() + 1,
            e.info()
        )
    })?;
    let mut warnings = vec![];
    // `kubectl get vitesscluster -o yaml` without a name prints a `kind: List` whose `items`
    // are the clusters; several `---` documents are read the same way.
    let mut candidates: Vec<&MarkedYaml> = vec![];
    for d in &docs {
        if get(d, "kind").and_then(text).as_deref() == Some("List") {
            candidates.extend(get(d, "items").and_then(seq).into_iter().flatten());
        } else {
            candidates.push(d);
        }
    }
    let clusters: Vec<&MarkedYaml> = candidates
        .iter()
        .copied()
        .filter(|d| get(d, "kind").and_then(text).as_deref() == Some("VitessCluster"))
        .collect();
    if clusters.len() > 1 {
        let names: Vec<String> = clusters
            .iter()
            .map(|c| {
                get(c, "metadata")
                    .and_then(|m| get(m, "name"))
                    .and_then(text)
                    .unwrap_or_else(|| "?".into())
            })
            .collect();
        warnings.push(format!(
            "{} VitessClusters in the file ({}): only the first is modelled",
            clusters.len(),
            names.join(", ")
        ));
    }
    let doc = clusters
        .first()
        .or(candidates.first())
        .copied()
        .ok_or_else(|| format!("{}: empty YAML: not a VitessCluster", path.display()))?;
    let api = get(doc, "apiVersion");
    let kind = get(doc, "kind");
    match kind.and_then(text) {
        Some(k) if k == "VitessCluster" => {}
        Some(k) => {
            return Err(bad(
                path,
                kind,
                "kind",
                format!("VitessCluster expected, found `{k}`"),
            ));
        }
        None => return Err(bad(path, Some(doc), "kind", "missing: not a VitessCluster")),
    }
    match api.and_then(text) {
        Some(a) if a == "planetscale.com/v2" => {}
        Some(a) => {
            return Err(bad(
                path,
                api,
                "apiVersion",
                format!("planetscale.com/v2 expected, found `{a}`"),
            ))
        }
        None => return Err(bad(path, Some(doc), "apiVersion", "missing")),
    }
    let name = get(doc, "metadata")
        .and_then(|m| get(m, "name"))
        .and_then(text)
        .unwrap_or_else(|| "vitesscluster".into());
    let spec = get(doc, "spec").ok_or_else(|| bad(path, Some(doc), "spec", "missing"))?;
    unknown_keys(path, doc, &mut warnings);
    let global = flags(path, get(spec, "extraVitessFlags"), "spec.extraVitessFlags")?;

    // Cells and their vtgates.
    let cells_node =
        get(spec, "cells").ok_or_else(|| bad(path, Some(spec), "spec.cells", "missing"))?;
    let cells = seq(cells_node)
        .ok_or_else(|| bad(path, Some(cells_node), "spec.cells", "a list of cells"))?;
    if cells.is_empty() {
        return Err(bad(
            path,
            Some(cells_node),
            "spec.cells",
            "at least one cell",
        ));
    }
    struct Cell {
        name: String,
        vtgates: u32,
        watch: Option<Vec<String>>,
        refresh: Option<(SimDuration, usize)>,
    }
    let mut out_cells: Vec<Cell> = vec![];
    for (i, c) in cells.iter().enumerate() {
        let f = format!("spec.cells[{i}]");
        let cname = get(c, "name")
            .and_then(text)
            .ok_or_else(|| bad(path, Some(c), &format!("{f}.name"), "missing"))?;
        let gw = get(c, "gateway");
        let replicas = match gw.and_then(|g| get(g, "replicas")) {
            Some(r) => match &r.data {
                YamlData::Value(Scalar::Integer(k)) if (0..=10_000).contains(k) => *k as u32,
                _ => {
                    return Err(bad(
                        path,
                        Some(r),
                        &format!("{f}.gateway.replicas"),
                        "an integer 0 ..= 10000",
                    ))
                }
            },
            None => match gw
                .and_then(|g| get(g, "autoscaler"))
                .and_then(|a| get(a, "minReplicas"))
            {
                Some(r) => {
                    warnings.push(format!(
                        "cell {cname}: autoscaled gateway: modelled at its minReplicas"
                    ));
                    match &r.data {
                        YamlData::Value(Scalar::Integer(k)) if (0..=10_000).contains(k) => {
                            *k as u32
                        }
                        _ => {
                            return Err(bad(
                                path,
                                Some(r),
                                &format!("{f}.gateway.autoscaler.minReplicas"),
                                "an integer 0 ..= 10000",
                            ))
                        }
                    }
                }
                None => 2,
            },
        };
        let mut fl = global.clone();
        fl.extend(flags(
            path,
            gw.and_then(|g| get(g, "extraFlags")),
            &format!("{f}.gateway.extraFlags"),
        )?);
        let watch_flag = fl.get("cells_to_watch").or(fl.get("cells-to-watch"));
        let watch: Option<Vec<String>> = watch_flag.map(|(v, _)| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        });
        if let (Some(w), Some((_, line))) = (&watch, watch_flag) {
            let all: Vec<String> = cells
                .iter()
                .filter_map(|c| get(c, "name").and_then(text))
                .collect();
            if let Some(x) = w.iter().find(|x| !all.contains(x)) {
                return Err(format!(
                    "{}:{line}: field `{f}.gateway.extraFlags.cells_to_watch`: cells of spec.cells \
                     ({}), found `{x}`",
                    path.display(),
                    all.join(", ")
                ));
            }
        }
        let refresh = match fl.get("tablet_refresh_interval").or(fl.get("tablet-refresh-interval")) {
            Some((v, line)) => Some((
                go_duration(v).ok_or_else(|| {
                    format!(
                        "{}:{line}: field `{f}.gateway.extraFlags.tablet_refresh_interval`: a duration (10s, 1m0s), found `{v}`",
                        path.display()
                    )
                })?,
                *line,
            )),
            None => None,
        };
        out_cells.push(Cell {
            name: cname,
            vtgates: replicas,
            watch,
            refresh,
        });
    }
    let names: Vec<String> = out_cells.iter().map(|c| c.name.clone()).collect();

    // Keyspaces: the first one's shards and replica pools.
    let ks_node =
        get(spec, "keyspaces").ok_or_else(|| bad(path, Some(spec), "spec.keyspaces", "missing"))?;
    let kss = seq(ks_node)
        .ok_or_else(|| bad(path, Some(ks_node), "spec.keyspaces", "a list of keyspaces"))?;
    let ks = kss.first().ok_or_else(|| {
        bad(
            path,
            Some(ks_node),
            "spec.keyspaces",
            "at least one keyspace",
        )
    })?;
    if kss.len() > 1 {
        warnings.push(format!(
            "{} keyspaces: only the first ({}) is modelled",
            kss.len(),
            get(ks, "name").and_then(text).unwrap_or_default()
        ));
    }
    let parts_node = get(ks, "partitionings")
        .ok_or_else(|| bad(path, Some(ks), "spec.keyspaces[0].partitionings", "missing"))?;
    let parts = seq(parts_node).filter(|p| !p.is_empty()).ok_or_else(|| {
        bad(
            path,
            Some(parts_node),
            "spec.keyspaces[0].partitionings",
            "a non-empty list",
        )
    })?;
    if parts.len() > 1 {
        warnings.push(
            "several partitionings (a resharding in progress): only the first is modelled".into(),
        );
    }
    let p0 = &parts[0];
    let pf = "spec.keyspaces[0].partitionings[0]";
    // (shard count, the tablet pools of one shard, their field path)
    let (shards, pools, pools_field) = if let Some(eq) = get(p0, "equal") {
        let n = get(eq, "parts")
            .ok_or_else(|| bad(path, Some(eq), &format!("{pf}.equal.parts"), "missing"))?;
        let k = match &n.data {
            YamlData::Value(Scalar::Integer(k)) if (1..=4096).contains(k) => *k as u32,
            _ => {
                return Err(bad(
                    path,
                    Some(n),
                    &format!("{pf}.equal.parts"),
                    "an integer 1 ..= 4096",
                ))
            }
        };
        let tmpl = get(eq, "shardTemplate").ok_or_else(|| {
            bad(
                path,
                Some(eq),
                &format!("{pf}.equal.shardTemplate"),
                "missing",
            )
        })?;
        let pools = get(tmpl, "tabletPools").ok_or_else(|| {
            bad(
                path,
                Some(tmpl),
                &format!("{pf}.equal.shardTemplate.tabletPools"),
                "missing",
            )
        })?;
        (k, pools, format!("{pf}.equal.shardTemplate.tabletPools"))
    } else if let Some(cu) = get(p0, "custom") {
        let sh = get(cu, "shards")
            .and_then(seq)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                bad(
                    path,
                    Some(cu),
                    &format!("{pf}.custom.shards"),
                    "a non-empty list",
                )
            })?;
        let pools = get(&sh[0], "tabletPools").ok_or_else(|| {
            bad(
                path,
                Some(&sh[0]),
                &format!("{pf}.custom.shards[0].tabletPools"),
                "missing",
            )
        })?;
        (
            sh.len() as u32,
            pools,
            format!("{pf}.custom.shards[0].tabletPools"),
        )
    } else {
        return Err(bad(path, Some(p0), pf, "one of `equal` or `custom`"));
    };
    let pools =
        seq(pools).ok_or_else(|| bad(path, Some(pools), &pools_field, "a list of tablet pools"))?;
    let mut per_cell = vec![0u32; names.len()];
    for (i, pool) in pools.iter().enumerate() {
        let f = format!("{pools_field}[{i}]");
        let ty = get(pool, "type")
            .and_then(text)
            .ok_or_else(|| bad(path, Some(pool), &format!("{f}.type"), "missing"))?;
        let cell_node = get(pool, "cell")
            .ok_or_else(|| bad(path, Some(pool), &format!("{f}.cell"), "missing"))?;
        let cell = text(cell_node).unwrap_or_default();
        let c = names.iter().position(|n| *n == cell).ok_or_else(|| {
            bad(
                path,
                Some(cell_node),
                &format!("{f}.cell"),
                format!("one of spec.cells ({}), found `{cell}`", names.join(", ")),
            )
        })?;
        let r = get(pool, "replicas")
            .ok_or_else(|| bad(path, Some(pool), &format!("{f}.replicas"), "missing"))?;
        let k = match &r.data {
            YamlData::Value(Scalar::Integer(k)) if (0..=1000).contains(k) => *k as u32,
            _ => {
                return Err(bad(
                    path,
                    Some(r),
                    &format!("{f}.replicas"),
                    "an integer 0 ..= 1000",
                ))
            }
        };
        match ty.as_str() {
            "replica" => per_cell[c] += k,
            "rdonly" | "externalmaster" | "externalreplica" | "externalrdonly" => warnings.push(format!(
                "tablet pool {f} (type {ty}, cell {cell}): not modelled (only replica pools restart with PRS here)"
            )),
            _ => {
                let tn = get(pool, "type");
                return Err(bad(
                    path,
                    tn,
                    &format!("{f}.type"),
                    format!("one of replica, rdonly, externalmaster, externalreplica, externalrdonly; found `{ty}`"),
                ));
            }
        }
    }
    let total: u32 = per_cell.iter().sum();
    if total < 2 {
        return Err(bad(
            path,
            pools.first(),
            &pools_field,
            format!("at least 2 replica-type tablets per shard (a primary and a replica); found {total}"),
        ));
    }
    let primary = per_cell.iter().position(|k| *k > 0).unwrap_or(0);
    warnings.push(format!(
        "each shard's primary is placed in {} (the first cell with a replica pool): the cluster \
         file does not say which tablet is primary",
        names[primary]
    ));

    // The refresh interval: spec.tabletRefreshInterval (PR #797), else the vtgate flags.
    let mut refresh: Option<SimDuration> = None;
    if let Some(n) = get(spec, "tabletRefreshInterval") {
        let v = text(n).unwrap_or_default();
        refresh = Some(go_duration(&v).ok_or_else(|| {
            bad(
                path,
                Some(n),
                "spec.tabletRefreshInterval",
                format!("a duration, found `{v}`"),
            )
        })?);
    } else {
        let set: Vec<SimDuration> = out_cells
            .iter()
            .filter_map(|c| c.refresh.map(|r| r.0))
            .collect();
        if let Some(first) = set.first() {
            if set.iter().any(|r| r != first) || set.len() != out_cells.len() {
                warnings.push(format!(
                    "the cells' vtgates have different tablet_refresh_interval flags: modelled at {first}"
                ));
            }
            refresh = Some(*first);
        }
    }
    let mut p = RolloutParams {
        vtgates: out_cells.iter().map(|c| c.vtgates).sum(),
        shards,
        replicas_per_shard: total - 1,
        ..RolloutParams::default()
    };
    if let Some(r) = refresh {
        p.vtgate.tablet_refresh_interval = r;
    }
    p.cells = out_cells
        .iter()
        .enumerate()
        .map(|(c, cell)| CellParams {
            name: cell.name.clone(),
            vtgates: cell.vtgates,
            replicas: per_cell[c] - (c == primary) as u32,
            primary: c == primary,
            cells_to_watch: cell.watch.clone().filter(|w| {
                // The operator's default (every cell, in any order) is `None`.
                let mut a = w.clone();
                let mut b = names.clone();
                a.sort();
                b.sort();
                a != b
            }),
        })
        .collect();
    if p.vtgates == 0 {
        return Err(bad(
            path,
            Some(cells_node),
            "spec.cells[].gateway.replicas",
            "at least one vtgate in the cluster",
        ));
    }
    p.check()
        .map_err(|e| format!("{}: the cluster's model is not valid: {e}", path.display()))?;
    Ok(ClusterFit {
        params: p,
        name,
        warnings,
        refresh,
    })
}
