//! `kubectl get events -o json` and `kubectl get pods -o json`: the operator's events (with
//! client-go's folding of repeats: `count`, `lastTimestamp`, `series`) and the tablet pods'
//! Ready instants (`docs/fit.md`, "Formats read").

use super::names::{parse_rfc3339, NS};
use super::parse::{err, unrecognised, Event, Input, InputError, Pod};
use serde_json::Value;
use std::path::Path;

pub(super) fn kube_list(path: &Path, v: &Value) -> Result<Input, InputError> {
    let items = v["items"].as_array().ok_or_else(|| {
        err(
            path,
            0,
            "field `items`: missing (expected `kubectl get events|pods -o json`)",
        )
    })?;
    let kind_of = |it: &Value| it["kind"].as_str().unwrap_or("").to_string();
    let kinds: Vec<String> = items.iter().map(kind_of).collect();
    if kinds.iter().all(|k| k == "Event") && !items.is_empty() {
        let mut evs = vec![];
        for (i, it) in items.iter().enumerate() {
            let field = |f: &str| format!("items[{i}].{f}");
            let reason = it["reason"].as_str().unwrap_or("").to_string();
            let message = it["message"].as_str().unwrap_or("").to_string();
            let first = it["firstTimestamp"].as_str().and_then(parse_rfc3339);
            let micro = it["eventTime"].as_str().and_then(parse_rfc3339);
            let (mut t, mut res) = match (first, micro) {
                (Some(t), _) => (t, NS),
                (None, Some(t)) => (t, 1000),
                _ => {
                    return Err(err(
                        path,
                        0,
                        format!("{}: no time", field("firstTimestamp / eventTime")),
                    ))
                }
            };
            // client-go names an event `<object>.<UnixNano in hex>` of its first occurrence.
            if let Some(hex) = it["metadata"]["name"]
                .as_str()
                .and_then(|n| n.rsplit_once('.'))
                .map(|(_, h)| h)
            {
                if let Ok(ns) = i64::from_str_radix(hex, 16) {
                    if ns >= t && ns < t + res {
                        t = ns;
                        res = 1;
                    }
                }
            }
            let count = it["count"]
                .as_u64()
                .or(it["series"]["count"].as_u64())
                .unwrap_or(1)
                .max(1);
            let last = it["series"]["lastObservedTime"]
                .as_str()
                .or(it["lastTimestamp"].as_str())
                .and_then(parse_rfc3339)
                .filter(|l| count > 1 && *l > t);
            evs.push(Event {
                item: i,
                t,
                resolution: res,
                reason,
                message,
                count,
                last,
            });
        }
        evs.sort_by_key(|e| e.t);
        return Ok(Input::Events(path.to_path_buf(), evs));
    }
    if kinds.iter().all(|k| k == "Pod") && !items.is_empty() {
        let mut pods = vec![];
        for (i, it) in items.iter().enumerate() {
            let name = it["metadata"]["name"]
                .as_str()
                .ok_or_else(|| err(path, 0, format!("items[{i}].metadata.name: missing")))?
                .to_string();
            let uid = it["metadata"]["labels"]["planetscale.com/tablet-uid"]
                .as_str()
                .and_then(|u| u.parse().ok());
            let created = it["metadata"]["creationTimestamp"]
                .as_str()
                .and_then(parse_rfc3339);
            let ready_since = it["status"]["conditions"]
                .as_array()
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c["type"] == "Ready" && c["status"] == "True")
                })
                .and_then(|c| c["lastTransitionTime"].as_str())
                .and_then(parse_rfc3339);
            pods.push(Pod {
                name,
                uid,
                created,
                ready_since,
            });
        }
        return Ok(Input::Pods(path.to_path_buf(), pods));
    }
    Err(unrecognised(
        path,
        0,
        format!(
            "a JSON list of {:?}: expected only Event items (kubectl get events -o json) or only \
             Pod items (kubectl get pods -o json)",
            {
                let mut k = kinds.clone();
                k.dedup();
                k
            }
        ),
    ))
}
