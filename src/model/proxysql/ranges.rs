//! ProxySQL's ranges of the `mysql-*` variables the model reads, and the check of a value
//! against them (shared by the static parameters and the scripted `SET`s).

use crate::sim::SimDuration;

/// ProxySQL's own ranges of the `mysql-*` variables the model reads, as `(variable, min,
/// max)` in ProxySQL's units (milliseconds for durations, except the `_sec` one). From
/// `MySQL_Threads_Handler::get_variables_list()` in `lib/MySQL_Thread.cpp` (sysown/proxysql
/// v2.7, commit 5cc418bb): `VariablesPointers_int["connect_retries_on_failure"] =
/// make_tuple(&variables.connect_retries_on_failure, 0, 1000, false)` and so on, which
/// `MySQL_Threads_Handler::set_variable` enforces: a value outside `[min, max]` is refused and
/// the variable keeps its value. The model refuses it at validation, in the static `variables`
/// and `monitor` blocks and in `SetVariable` actions alike. One bound is the model's own:
/// `connect_retries_delay` must be at least 1 ms (ProxySQL takes 0, but the simulated session
/// would then retry without time passing; sub-millisecond values do not exist there).
pub const PROXYSQL_RANGES: &[(&str, u64, u64)] = &[
    ("mysql-shun_on_failures", 0, 10_000_000),
    ("mysql-shun_recovery_time_sec", 0, 31_536_000),
    ("mysql-unshun_algorithm", 0, 1),
    ("mysql-connect_retries_on_failure", 0, 1_000),
    ("mysql-connect_retries_delay", 0, 10_000),
    ("mysql-connect_timeout_server", 10, 120_000),
    ("mysql-connect_timeout_server_max", 10, 3_600_000),
    ("mysql-query_retries_on_failure", 0, 1_000),
    ("mysql-monitor_connect_timeout", 100, 600_000),
    ("mysql-monitor_ping_interval", 100, 604_800_000),
    ("mysql-monitor_ping_timeout", 100, 600_000),
    ("mysql-monitor_ping_max_failures", 1, 1_000_000),
    ("mysql-monitor_read_only_interval", 100, 604_800_000),
    ("mysql-monitor_read_only_timeout", 100, 600_000),
    ("mysql-monitor_read_only_max_timeout_count", 1, 1_000_000),
];

/// Where [`PROXYSQL_RANGES`] come from, for error messages.
pub(super) const RANGES_SOURCE: &str =
    "lib/MySQL_Thread.cpp, MySQL_Threads_Handler::get_variables_list";

/// `(min, max)` of `variable` in [`PROXYSQL_RANGES`], with the model's own floor of 1 ms on
/// `mysql-connect_retries_delay`.
pub fn proxysql_range(variable: &str) -> Option<(u64, u64)> {
    let (_, lo, hi) = PROXYSQL_RANGES.iter().find(|r| r.0 == variable)?;
    let lo = if variable == "mysql-connect_retries_delay" {
        1
    } else {
        *lo
    };
    Some((lo, *hi))
}

/// A value of a [`PROXYSQL_RANGES`] variable as the model holds it.
#[derive(Clone, Copy)]
pub(super) enum Setting {
    /// A count (or seconds, for `_sec`).
    Count(u64),
    /// A duration (milliseconds in ProxySQL).
    Millis(SimDuration),
}

/// `(field, expected)` when `value` of `variable` is outside its range.
pub(super) fn out_of_range(variable: &str, value: Setting) -> Option<String> {
    let (lo, hi) = proxysql_range(variable).expect("a ranged variable");
    let src = RANGES_SOURCE;
    match value {
        Setting::Count(n) => (!(lo..=hi).contains(&n)).then(|| {
            format!("an integer from {lo} to {hi} (ProxySQL's range for {variable}, {src})")
        }),
        Setting::Millis(d) => {
            let ns = d.as_nanos() as u128;
            let ok = ns >= lo as u128 * 1_000_000 && ns <= hi as u128 * 1_000_000;
            (!ok).then(|| {
                let (_, proxysql_lo, _) = PROXYSQL_RANGES
                    .iter()
                    .find(|r| r.0 == variable)
                    .expect("a ranged variable");
                let note = if *proxysql_lo != lo {
                    format!(
                        "; ProxySQL also takes {proxysql_lo} ms, which would retry without \
                         time passing here"
                    )
                } else {
                    String::new()
                };
                format!(
                    "a duration from {} to {} (ProxySQL's range for {variable} is \
                     {proxysql_lo} to {hi} ms, {src}{note})",
                    SimDuration::from_millis(lo),
                    SimDuration::from_millis(hi)
                )
            })
        }
    }
}
