//! The Kubernetes evidence: what the events JSON says about SIGTERMs and PRS
//! candidates, and what the pods JSON says about Ready.

use crate::fit::parse::{self, pod_uid, Event, Pod};
use std::collections::BTreeMap;

/// What the events and pods say, by tablet uid.
pub(super) struct KubeEvidence {
    /// Each deleted pod's SIGTERM: the `Deleted` event's instant and resolution (ns).
    pub drains: BTreeMap<u64, (i64, i64)>,
    /// The `PlannedReparent` events: the old primary's uid to the new one's.
    pub candidates: BTreeMap<u64, u64>,
    /// Each pod's Ready condition since (ns, whole seconds).
    pub ready: BTreeMap<u64, i64>,
}

/// Read `events` (`Deleted Pod <name>`, `PlannedReparent`) and `pods` (Ready since). Without
/// events the SIGTERMs and the PRS candidate are inferred from the logs later (a warning).
pub(super) fn kube(events: &[Event], pods: &[Pod], warnings: &mut Vec<String>) -> KubeEvidence {
    // Drain instants from the events: `Deleted Pod <name>`.
    let mut drains: BTreeMap<u64, (i64, i64)> = BTreeMap::new();
    let mut candidates: BTreeMap<u64, u64> = BTreeMap::new(); // old primary uid -> new
    for e in events {
        if e.reason == "Deleted" {
            if let Some(uid) = e.message.strip_prefix("deleted Pod ").and_then(pod_uid) {
                drains.entry(uid).or_insert((e.t, e.resolution));
            }
        }
        if e.reason == "PlannedReparent" {
            let m = &e.message;
            let get = |key: &str| {
                m.split(key)
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next())
                    .and_then(parse::alias_of)
            };
            if let (Some(a), Some(b)) = (get("old primary "), get("new primary ")) {
                candidates.insert(a.uid, b.uid);
            }
        }
    }
    if events.is_empty() {
        warnings.push(
            "no events JSON: SIGTERM instants are the first serving true => false lines minus \
             the default health_stream_delay (50ms), and the PRS candidate is assumed to be the \
             replica restarted first"
                .into(),
        );
    }
    let ready: BTreeMap<u64, i64> = pods
        .iter()
        .filter_map(|p| Some((p.uid.or_else(|| pod_uid(&p.name))?, p.ready_since?)))
        .collect();
    KubeEvidence {
        drains,
        candidates,
        ready,
    }
}
