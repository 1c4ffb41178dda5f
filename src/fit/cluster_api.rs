//! The VitessCluster API's field names, for naming the keys of a cluster file that the API
//! does not have (`vtsim fit --cluster`): a misspelt `extraFlag:` drops what it holds, and the
//! incident's cause with it.

use super::cluster::{seq, text};
use saphyr::{MarkedYaml, YamlData};
use std::path::Path;

/// One level of the VitessCluster API: its field names, and the levels below it that vtsim
/// walks (field, is a list, the level). Field names are the `json` tags of the Go types in
/// planetscale/vitess-operator `pkg/apis/planetscale/v2/` (main, 6b0a1b8c):
/// `vitesscluster_types.go` `VitessCluster`, `VitessClusterSpec`; `vitesscell_types.go`
/// `VitessCellTemplate`, `VitessCellGatewaySpec`, `AutoscalerSpec`; `vitesskeyspace_types.go`
/// `VitessKeyspaceTemplate`, `VitessKeyspacePartitioning`, `VitessKeyspaceEqualPartitioning`,
/// `VitessKeyspaceCustomPartitioning`, `VitessKeyspaceKeyRangeShard`; `vitessshard_types.go`
/// `VitessShardTemplate`, `VitessShardTabletPool`.
struct Level {
    fields: &'static [&'static str],
    below: &'static [(&'static str, bool, &'static Level)],
}

const POOL: Level = Level {
    fields: &[
        "cell",
        "type",
        "name",
        "replicas",
        "dataVolumeClaimTemplate",
        "backupLocationName",
        "vttablet",
        "mysqld",
        "mysqldExporter",
        "externalDatastore",
        "affinity",
        "annotations",
        "extraLabels",
        "extraEnv",
        "extraVolumes",
        "extraVolumeMounts",
        "initContainers",
        "sidecarContainers",
        "tolerations",
        "topologySpreadConstraints",
    ],
    below: &[],
};
const SHARD_TEMPLATE: Level = Level {
    fields: &[
        "tabletPools",
        "databaseInitScriptSecret",
        "replication",
        "annotations",
    ],
    below: &[("tabletPools", true, &POOL)],
};
const CUSTOM_SHARD: Level = Level {
    fields: &[
        "keyRange",
        "tabletPools",
        "databaseInitScriptSecret",
        "replication",
        "annotations",
    ],
    below: &[("tabletPools", true, &POOL)],
};
const EQUAL: Level = Level {
    fields: &["parts", "hexWidth", "shardTemplate"],
    below: &[("shardTemplate", false, &SHARD_TEMPLATE)],
};
const CUSTOM: Level = Level {
    fields: &["shards"],
    below: &[("shards", true, &CUSTOM_SHARD)],
};
const PARTITIONING: Level = Level {
    fields: &["equal", "custom"],
    below: &[("equal", false, &EQUAL), ("custom", false, &CUSTOM)],
};
const KEYSPACE: Level = Level {
    fields: &[
        "name",
        "databaseName",
        "durabilityPolicy",
        "vitessOrchestrator",
        "partitionings",
        "turndownPolicy",
        "annotations",
        "images",
        "sidecarDbName",
    ],
    below: &[("partitionings", true, &PARTITIONING)],
};
const AUTOSCALER: Level = Level {
    fields: &["minReplicas", "maxReplicas", "metrics", "behavior"],
    below: &[],
};
const GATEWAY: Level = Level {
    fields: &[
        "replicas",
        "autoscaler",
        "resources",
        "authentication",
        "secureTransport",
        "extraFlags",
        "extraEnv",
        "extraVolumes",
        "extraVolumeMounts",
        "initContainers",
        "sidecarContainers",
        "affinity",
        "annotations",
        "extraLabels",
        "service",
        "tolerations",
        "topologySpreadConstraints",
        "lifecycle",
        "terminationGracePeriodSeconds",
        "strategy",
    ],
    below: &[("autoscaler", false, &AUTOSCALER)],
};
const CELL: Level = Level {
    fields: &["name", "zone", "lockserver", "gateway"],
    below: &[("gateway", false, &GATEWAY)],
};
const SPEC: Level = Level {
    fields: &[
        "images",
        "imagePullPolicies",
        "imagePullSecrets",
        "backup",
        "globalLockserver",
        "vitessDashboard",
        "vtadmin",
        "cells",
        "keyspaces",
        "extraVitessFlags",
        "topologyReconciliation",
        "updateStrategy",
        "gatewayService",
        "tabletService",
        // vitess-operator PR #797 (not yet released).
        "tabletRefreshInterval",
    ],
    below: &[("cells", true, &CELL), ("keyspaces", true, &KEYSPACE)],
};
const ROOT: Level = Level {
    fields: &["apiVersion", "kind", "metadata", "spec", "status"],
    below: &[("spec", false, &SPEC)],
};

/// The vtgate flags the model reads, for the misspelling check of `extraFlags` keys.
const READ_FLAGS: &[&str] = &[
    "tablet_refresh_interval",
    "tablet-refresh-interval",
    "cells_to_watch",
    "cells-to-watch",
];

/// Levenshtein distance, for "did you mean" (short keys only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The known name `key` is most likely a misspelling of (case, dashes and at most two edits).
fn nearest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    let fold = |s: &str| s.to_ascii_lowercase().replace(['-', '_'], "");
    let dashed = key.contains('-');
    known
        .iter()
        .map(|k| {
            (
                edit_distance(&fold(key), &fold(k)),
                k.contains('-') != dashed,
                *k,
            )
        })
        .filter(|(d, _, _)| *d <= 2)
        .min()
        .map(|(_, _, k)| k)
}

/// Warn, by name and place, of every key the VitessCluster API does not have at the levels
/// vtsim reads, and of `extraFlags` keys one or two edits from a flag the model reads: a
/// misspelt `extraFlag:` or `tablet_refresh_intreval` silently drops what may be the
/// incident's cause (the API server prunes unknown fields; vtgate refuses unknown flags).
pub(super) fn unknown_keys(path: &Path, doc: &MarkedYaml, warnings: &mut Vec<String>) {
    fn walk(path: &Path, node: &MarkedYaml, at: &str, level: &Level, out: &mut Vec<String>) {
        let YamlData::Mapping(m) = &node.data else {
            return;
        };
        for (k, v) in m.iter() {
            let Some(key) = text(k) else { continue };
            let field = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            if !level.fields.contains(&key.as_str()) {
                let hint = match nearest(&key, level.fields) {
                    Some(n) => format!(" (did you mean `{n}`?)"),
                    None => String::new(),
                };
                out.push(format!(
                    "{}:{}:{}: unknown key `{field}`{hint}: not a field of the VitessCluster API \
                     (planetscale/vitess-operator pkg/apis/planetscale/v2); ignored",
                    path.display(),
                    k.span.start.line(),
                    k.span.start.col() + 1
                ));
                continue;
            }
            if key == "extraFlags" || key == "extraVitessFlags" {
                if let YamlData::Mapping(flags) = &v.data {
                    for (fk, _) in flags.iter() {
                        let Some(name) = text(fk) else { continue };
                        let bare = name.trim_start_matches('-');
                        if READ_FLAGS.contains(&bare) {
                            continue;
                        }
                        if let Some(n) = nearest(bare, READ_FLAGS) {
                            out.push(format!(
                                "{}:{}:{}: flag `{field}.{name}` is not a vtgate flag vtsim \
                                 reads: did you mean `{n}`? (vtgate would refuse to start with \
                                 an unknown flag); ignored",
                                path.display(),
                                fk.span.start.line(),
                                fk.span.start.col() + 1
                            ));
                        }
                    }
                }
            }
            for (name, list, sub) in level.below {
                if *name != key {
                    continue;
                }
                if *list {
                    for (i, item) in seq(v).into_iter().flatten().enumerate() {
                        walk(path, item, &format!("{field}[{i}]"), sub, out);
                    }
                } else {
                    walk(path, v, &field, sub, out);
                }
            }
        }
    }
    walk(path, doc, "", &ROOT, warnings);
}
