//! Reading `vtsim fit`'s inputs, each recognised by its content (not its name):
//! - a vtgate log in glog text (Vitess <= v23) or slog JSON (v24 and later), either one
//!   optionally prefixed by the `kubectl logs --timestamps` RFC 3339 time; one file per vtgate
//!   (its name, without extension, names the vtgate);
//! - the short form of incident write-ups, `[t+44s] vtgate-02: replica-A false => true (REPLICA)`;
//! - `kubectl get events -o json` and `kubectl get pods -o json`.
//!
//! Every error names the file and the line (and, for JSON, the column or the field).

use super::names::{parse_rfc3339, NS};
use crate::sim::SimDuration;
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// The largest input file read (bounded memory).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// A bad input: the file, the line (1-based, 0: the whole file), and what is wrong.
#[derive(Debug, Clone)]
pub struct InputError {
    /// The file.
    pub path: PathBuf,
    /// The line (0: not a line).
    pub line: usize,
    /// What is wrong.
    pub msg: String,
    /// The file is not an input the fit reads at all (not text, empty, not a recognised
    /// format): in a folder it is skipped with a warning rather than failing the fit.
    pub unrecognised: bool,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.msg)
        } else {
            write!(f, "{}: {}", self.path.display(), self.msg)
        }
    }
}

impl std::error::Error for InputError {}

pub(super) fn err(path: &Path, line: usize, msg: impl Into<String>) -> InputError {
    InputError {
        path: path.to_path_buf(),
        line,
        msg: msg.into(),
        unrecognised: false,
    }
}

/// A file that is no input of the fit's (see [`InputError::unrecognised`]).
pub(super) fn unrecognised(path: &Path, line: usize, msg: impl Into<String>) -> InputError {
    InputError {
        unrecognised: true,
        ..err(path, line, msg)
    }
}

/// A tablet as a vtgate line names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Alias {
    /// Cell.
    pub cell: String,
    /// Uid (as a number: `101` and `0000000101` are the same tablet).
    pub uid: u64,
}

impl fmt::Display for Alias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{:010}", self.cell, self.uid)
    }
}

/// A tablet record as protobuf text prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The alias.
    pub alias: Alias,
    /// Hostname (`None`: the record `tm.Close` cleared).
    pub host: Option<String>,
    /// Keyspace.
    pub keyspace: String,
    /// Shard.
    pub shard: String,
    /// Type PRIMARY.
    pub primary: bool,
}

/// What one vtgate line says (the lines the fit uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Said {
    /// `loading tablets for cells: ...` (vtgate start-up): the `--cells_to_watch` value.
    Start(String),
    /// `Adding tablet to healthcheck: <record>`.
    Adding(Record),
    /// `Removing tablet from healthcheck: <record>`.
    Removing(Record),
    /// `HealthCheckUpdate(Serving State): tablet: <ident> serving A => B for ks/shard (TYPE)`.
    Serving {
        /// The tablet.
        alias: Alias,
        /// Its host in the ident.
        host: String,
        /// Serving before.
        from: bool,
        /// Serving after.
        to: bool,
        /// Keyspace/shard.
        keyspace_shard: String,
        /// Type PRIMARY.
        primary: bool,
        /// The reason is `finalizeConn closing connection` (a removal, not a state change).
        finalize: bool,
    },
    /// `tablet <record> healthcheck stream error: ...`.
    StreamError(Record),
    /// `We will have no health data for the next new primary tablet after demoting ...`.
    Reload(Alias),
    /// An `Execute:` / `StreamExecute:` / `Prepare:` error line; `none`: no healthy tablet.
    Error {
        /// "no healthy tablet available".
        none: bool,
    },
    /// `<logger>: skipped N log messages`.
    Skipped(u64),
    /// Any other line.
    Other,
}

/// One parsed vtgate line.
#[derive(Clone, Debug)]
pub struct VLine {
    /// Line number in its file.
    pub line: usize,
    /// Unix ns (glog without a kubectl prefix: year resolved later, see [`VtgateLog::glog_year`]).
    pub t: i64,
    /// What it says.
    pub said: Said,
}

/// One vtgate's log.
#[derive(Clone, Debug)]
pub struct VtgateLog {
    /// The file.
    pub path: PathBuf,
    /// The vtgate's name (the file stem).
    pub name: String,
    /// `glog` or `json`, and whether lines had the kubectl prefix.
    pub format: &'static str,
    /// Time resolution of its lines (ns): 1000 for glog, 1 for slog JSON.
    pub resolution: i64,
    /// glog lines without a year: their `t` assumes year 1970 and must be shifted.
    pub glog_year: bool,
    /// The lines the fit uses, in time order.
    pub lines: Vec<VLine>,
    /// Lines skipped (not a log line of this format), with the first such line.
    pub skipped: (usize, usize),
    /// Lines out of order by more than 1 ms (first line number, count).
    pub out_of_order: (usize, usize),
}

/// One short-form line: `[t+44s] vtgate-02: replica-A false => true (REPLICA)`.
#[derive(Clone, Debug)]
pub struct ShortLine {
    /// Line number.
    pub line: usize,
    /// The offset.
    pub at: SimDuration,
    /// The vtgate.
    pub vtgate: String,
    /// The tablet's name as written.
    pub tablet: String,
    /// Serving before.
    pub from: bool,
    /// Serving after.
    pub to: bool,
}

/// One operator event.
#[derive(Clone, Debug)]
pub struct Event {
    /// Index in `items`.
    pub item: usize,
    /// Unix ns: from the name's hex suffix when it is within the whole second of
    /// `firstTimestamp`, else `firstTimestamp` (or `eventTime`).
    pub t: i64,
    /// Resolution (ns): 1 from the name, 1e9 from the timestamp, 1000 from `eventTime`.
    pub resolution: i64,
    /// `reason`.
    pub reason: String,
    /// `message`.
    pub message: String,
    /// How many times it happened (`count`, or `series.count`; 1 when absent): client-go
    /// folds identical events into one with a count (`tools/record/events_cache.go`).
    pub count: u64,
    /// The last occurrence, when it happened more than once (`lastTimestamp`, or
    /// `series.lastObservedTime`; Unix ns, resolution 1 s or 1 us).
    pub last: Option<i64>,
}

/// One tablet pod.
#[derive(Clone, Debug)]
pub struct Pod {
    /// `metadata.name`.
    pub name: String,
    /// `planetscale.com/tablet-uid`, if labelled.
    pub uid: Option<u64>,
    /// `metadata.creationTimestamp` (Unix ns, whole seconds).
    pub created: Option<i64>,
    /// The Ready condition's `lastTransitionTime` when `status` is `True`.
    pub ready_since: Option<i64>,
}

/// One input file, by kind.
#[derive(Clone, Debug)]
pub enum Input {
    /// A vtgate log.
    Vtgate(VtgateLog),
    /// Short-form lines.
    Short(PathBuf, Vec<ShortLine>),
    /// `kubectl get events -o json`.
    Events(PathBuf, Vec<Event>),
    /// `kubectl get pods -o json`.
    Pods(PathBuf, Vec<Pod>),
}

/// Every file under `paths` (a folder gives its files, in name order, not recursing).
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut out = vec![];
    for p in paths {
        let md = std::fs::metadata(p).map_err(|e| err(p, 0, format!("cannot read: {e}")))?;
        if md.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| err(p, 0, format!("cannot list: {e}")))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|q| q.is_file())
                .filter(|q| {
                    !q.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with('.'))
                })
                .collect();
            v.sort();
            out.extend(v);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Read and recognise one file.
pub fn read(path: &Path) -> Result<Input, InputError> {
    let md = std::fs::metadata(path).map_err(|e| err(path, 0, format!("cannot read: {e}")))?;
    if md.len() > MAX_FILE_BYTES {
        return Err(err(
            path,
            0,
            format!(
                "{} bytes: larger than the {} MiB limit",
                md.len(),
                MAX_FILE_BYTES >> 20
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| err(path, 0, format!("cannot read: {e}")))?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = upto.iter().filter(|b| **b == b'\n').count() + 1;
            return Err(unrecognised(path, line, "not UTF-8 text"));
        }
    };
    parse(path, &text)
}

/// Recognise and parse `text` (the contents of `path`).
pub fn parse(path: &Path, text: &str) -> Result<Input, InputError> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Err(unrecognised(path, 0, "empty file"));
    }
    let is_short = |l: &str| l.trim_start().starts_with("[t+");
    if (trimmed.starts_with('{') || trimmed.starts_with('[')) && !is_short(trimmed) {
        // A whole JSON document (kubectl -o json), or JSON lines (a v24 vtgate log).
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            return super::kubectl::kube_list(path, &v);
        }
        if !trimmed.starts_with("{\"time\"") {
            // Report where the document breaks.
            let e = serde_json::from_str::<Value>(text).unwrap_err();
            return Err(err(
                path,
                e.line(),
                format!("not valid JSON at column {}: {e}", e.column()),
            ));
        }
    }
    let first = text
        .lines()
        .map(|l| strip_prefix(l).1)
        .find(|l| !l.trim().is_empty() && !is_noise(l) && !l.starts_with('#'))
        .unwrap_or("");
    if first.starts_with("[t+") {
        return short_form(path, text).map(|v| Input::Short(path.to_path_buf(), v));
    }
    if first.starts_with("apiVersion:") || first.starts_with("kind:") || first.starts_with("---") {
        return Err(unrecognised(
            path,
            0,
            "a YAML file: give a VitessCluster with --cluster FILE",
        ));
    }
    if first.starts_with('{') || is_glog(first) {
        return vtgate_log(path, text).map(Input::Vtgate);
    }
    let line = text
        .lines()
        .position(|l| strip_prefix(l).1 == first)
        .map_or(1, |i| i + 1);
    Err(unrecognised(
        path,
        line,
        "not a recognised input (a vtgate log in glog or JSON, the short form `[t+Ns] vtgate: \
         tablet false => true (REPLICA)`, or kubectl events / pods JSON)",
    ))
}

/// Lines a v24 vtgate prints on stderr that are not JSON (flag warnings).
fn is_noise(l: &str) -> bool {
    l.starts_with("WARNING:") || l.starts_with("Flag --") || l.starts_with("[WARNING]")
}

/// Split off a `kubectl logs --timestamps` prefix: (its Unix ns, the rest).
fn strip_prefix(l: &str) -> (Option<i64>, &str) {
    if let Some((head, rest)) = l.split_once(' ') {
        if head.len() >= 20 && head.as_bytes()[4] == b'-' && head.as_bytes()[10] == b'T' {
            if let Some(t) = parse_rfc3339(head) {
                return (Some(t), rest);
            }
        }
    }
    (None, l)
}

fn is_glog(l: &str) -> bool {
    let b = l.as_bytes();
    b.len() > 22
        && matches!(b[0], b'I' | b'W' | b'E' | b'F')
        && b[1..5].iter().all(u8::is_ascii_digit)
        && b[5] == b' '
        && b[8] == b':'
        && b[11] == b':'
        && b[14] == b'.'
}

/// A glog envelope: (month, day, ns of day, message).
fn glog(l: &str) -> Option<(u32, u32, i64, &str)> {
    if !is_glog(l) {
        return None;
    }
    let mo: u32 = l.get(1..3)?.parse().ok()?;
    let d: u32 = l.get(3..5)?.parse().ok()?;
    let h: i64 = l.get(6..8)?.parse().ok()?;
    let mi: i64 = l.get(9..11)?.parse().ok()?;
    let s: i64 = l.get(12..14)?.parse().ok()?;
    let us: i64 = l.get(15..21)?.parse().ok()?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let rest = l.get(21..)?.trim_start();
    // PID (space-padded to 7 or longer), then file:line] msg.
    let (pid, rest) = rest.split_once(' ')?;
    if !pid.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (_site, msg) = rest.split_once("] ")?;
    Some((mo, d, ((h * 60 + mi) * 60 + s) * NS + us * 1000, msg))
}

fn vtgate_log(path: &Path, text: &str) -> Result<VtgateLog, InputError> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("vtgate")
        .to_string();
    let mut log = VtgateLog {
        path: path.to_path_buf(),
        name,
        format: "",
        resolution: 1,
        glog_year: false,
        lines: vec![],
        skipped: (0, 0),
        out_of_order: (0, 0),
    };
    let mut kind: Option<&'static str> = None;
    let mut last = i64::MIN;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let (prefix, l) = strip_prefix(raw);
        if l.trim().is_empty() || is_noise(l) {
            continue;
        }
        let this: &'static str = if l.starts_with('{') {
            "json"
        } else if is_glog(l) {
            "glog"
        } else {
            if log.skipped.1 == 0 {
                log.skipped.0 = n;
            }
            log.skipped.1 += 1;
            continue;
        };
        match kind {
            None => kind = Some(this),
            Some(k) if k != this => {
                return Err(err(
                    path,
                    n,
                    format!(
                        "a {this} line in a {k} log: mixed Vitess versions (glog is v23 and \
                         earlier, JSON v24 and later); give each vtgate process its own file"
                    ),
                ))
            }
            _ => {}
        }
        let (t, msg) = if this == "json" {
            let v: Value = serde_json::from_str(l).map_err(|e| {
                err(
                    path,
                    n,
                    format!(
                        "not a JSON log line (column {}): {e}; truncated file?",
                        e.column()
                    ),
                )
            })?;
            let ts = v["time"]
                .as_str()
                .ok_or_else(|| err(path, n, "field `time`: missing or not a string"))?;
            let t = parse_rfc3339(ts)
                .ok_or_else(|| err(path, n, format!("field `time`: not RFC 3339: {ts:?}")))?;
            let msg = v["msg"]
                .as_str()
                .ok_or_else(|| err(path, n, "field `msg`: missing or not a string"))?
                .to_string();
            (t, msg)
        } else {
            let (mo, d, ns, msg) = glog(l)
                .ok_or_else(|| err(path, n, "a glog line with a bad time or no `file:line] `"))?;
            log.resolution = 1000;
            let t = match prefix {
                // The prefix gives the year (the runtime's read time: slightly later).
                Some(p) => {
                    let (y, ..) = super::names::civil(p);
                    let mut best = i64::MAX;
                    let mut tb = 0;
                    for yy in [y - 1, y] {
                        let t = super::names::days_from_civil(yy, mo, d) * 86_400 * NS + ns;
                        if (p - t).abs() < best {
                            best = (p - t).abs();
                            tb = t;
                        }
                    }
                    tb
                }
                None => {
                    log.glog_year = true;
                    super::names::days_from_civil(1970, mo, d) * 86_400 * NS + ns
                }
            };
            (t, msg.to_string())
        };
        if t + NS / 1000 < last {
            if log.out_of_order.1 == 0 {
                log.out_of_order.0 = n;
            }
            log.out_of_order.1 += 1;
        }
        last = last.max(t);
        let said = message(&msg).map_err(|m| err(path, n, m))?;
        if said != Said::Other {
            log.lines.push(VLine { line: n, t, said });
        }
    }
    log.format = match kind {
        Some(k) => k,
        None => return Err(err(path, 0, "no log lines")),
    };
    log.lines.sort_by_key(|l| l.t);
    Ok(log)
}

/// What a message says; an error for a discovery line that cannot be read.
pub fn message(msg: &str) -> Result<Said, String> {
    if let Some(cells) = msg.strip_prefix("loading tablets for cells: ") {
        return Ok(Said::Start(cells.trim().to_string()));
    }
    if msg == "loading tablets for cells:" {
        return Ok(Said::Start(String::new()));
    }
    if let Some(r) = msg.strip_prefix("Adding tablet to healthcheck: ") {
        return record(r).map(Said::Adding);
    }
    if let Some(r) = msg.strip_prefix("Removing tablet from healthcheck: ") {
        return record(r).map(Said::Removing);
    }
    if let Some(r) = msg.strip_prefix("HealthCheckUpdate(Serving State): tablet: ") {
        let bad = || format!("a HealthCheckUpdate line that cannot be read: {msg:?}");
        let (ident, rest) = r.split_once(" serving ").ok_or_else(bad)?;
        let (alias, host) = ident_of(ident).ok_or_else(bad)?;
        let (states, rest) = rest.split_once(" for ").ok_or_else(bad)?;
        let (a, b) = states.split_once(" => ").ok_or_else(bad)?;
        let tf = |s: &str| match s {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        };
        let (ks, rest) = rest.split_once(" (").ok_or_else(bad)?;
        let (ty, reason) = rest.split_once(')').ok_or_else(bad)?;
        return Ok(Said::Serving {
            alias,
            host,
            from: tf(a).ok_or_else(bad)?,
            to: tf(b).ok_or_else(bad)?,
            keyspace_shard: ks.to_string(),
            primary: ty == "PRIMARY" || ty == "MASTER",
            finalize: reason.contains("finalizeConn"),
        });
    }
    if let Some(r) = msg.strip_prefix("tablet ") {
        if let Some((rec, _)) = r.split_once(" healthcheck stream error") {
            return record(rec).map(Said::StreamError);
        }
    }
    if let Some(r) = msg.strip_prefix(
        "We will have no health data for the next new primary tablet after demoting the tablet: ",
    ) {
        let ident = r.split(", so start").next().unwrap_or(r);
        return ident_of(ident)
            .map(|(a, _)| Said::Reload(a))
            .ok_or_else(|| format!("a reload line that cannot be read: {msg:?}"));
    }
    for logger in ["Execute: ", "StreamExecute: ", "Prepare: "] {
        if let Some(r) = msg.strip_prefix(logger) {
            if let Some(n) = r.strip_prefix("skipped ") {
                if let Some(k) = n.strip_suffix(" log messages") {
                    return k
                        .parse()
                        .map(Said::Skipped)
                        .map_err(|_| format!("a bad skipped count: {msg:?}"));
                }
            }
            if r.contains("target: ") && r.contains(".replica") {
                return Ok(Said::Error {
                    none: r.contains("no healthy tablet available"),
                });
            }
        }
    }
    Ok(Said::Other)
}

/// A quoted field `key:"value"` of protobuf text.
fn quoted<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let i = s.find(&format!("{key}:\""))? + key.len() + 2;
    let j = s[i..].find('"')?;
    Some(&s[i..i + j])
}

/// A tablet record in protobuf text (1 or 2 spaces between fields, `{}` or the old `<>`).
pub fn record(s: &str) -> Result<Record, String> {
    let bad = |what: &str| format!("a tablet record without {what}: {s:?}");
    let cell = quoted(s, "cell").ok_or_else(|| bad("alias.cell"))?;
    let uid = s
        .find("uid:")
        .map(|i| &s[i + 4..])
        .map(|r| {
            r.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|d| d.parse::<u64>().ok())
        .ok_or_else(|| bad("alias.uid"))?;
    let ty = s
        .find(" type:")
        .map(|i| &s[i + 6..])
        .map(|r| {
            r.chars()
                .take_while(|c| c.is_ascii_uppercase())
                .collect::<String>()
        })
        .unwrap_or_default();
    Ok(Record {
        alias: Alias {
            cell: cell.to_string(),
            uid,
        },
        host: quoted(s, "hostname").map(str::to_string),
        keyspace: quoted(s, "keyspace").unwrap_or("").to_string(),
        shard: quoted(s, "shard").unwrap_or("").to_string(),
        primary: ty == "PRIMARY" || ty == "MASTER",
    })
}

/// `zone1-101 (10.244.0.42)` (TabletIdent) or `zone1-0000000101`: the alias and the host.
fn ident_of(s: &str) -> Option<(Alias, String)> {
    let (a, host) = match s.split_once(" (") {
        Some((a, h)) => (a, h.trim_end_matches(')').to_string()),
        None => (s, String::new()),
    };
    let alias = alias_of(a)?;
    Some((alias, host))
}

/// `cell-uid` (uid padded or not; a cell may contain dashes).
pub fn alias_of(a: &str) -> Option<Alias> {
    let (cell, uid) = a.rsplit_once('-')?;
    if cell.is_empty() || uid.is_empty() || !uid.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(Alias {
        cell: cell.to_string(),
        uid: uid.parse().ok()?,
    })
}

fn short_form(path: &Path, text: &str) -> Result<Vec<ShortLine>, InputError> {
    let mut out = vec![];
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let bad = |what: &str| {
            err(
                path,
                n,
                format!(
                    "{what}: expected `[t+44s] vtgate-02: replica-A false => true (REPLICA)`, \
                     found {l:?}"
                ),
            )
        };
        let rest = l
            .strip_prefix("[t+")
            .ok_or_else(|| bad("no `[t+` offset"))?;
        let (off, rest) = rest.split_once(']').ok_or_else(|| bad("no `]`"))?;
        let at = SimDuration::parse(off).map_err(|m| bad(&format!("the offset: {m}")))?;
        let (g, rest) = rest
            .trim()
            .split_once(": ")
            .ok_or_else(|| bad("no `vtgate: `"))?;
        // Everything after a `←` or `<-` is a comment.
        let rest = rest.split('←').next().unwrap_or(rest);
        let rest = rest.split(" <-").next().unwrap_or(rest).trim();
        let (tab, states) = rest.split_once(' ').ok_or_else(|| bad("no tablet"))?;
        let (a, rest) = states.split_once(" => ").ok_or_else(|| bad("no `=>`"))?;
        let b = rest.split_whitespace().next().unwrap_or("");
        let tf = |s: &str| match s {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(bad("a state that is not true or false")),
        };
        out.push(ShortLine {
            line: n,
            at,
            vtgate: g.trim().to_string(),
            tablet: tab.to_string(),
            from: tf(a.trim())?,
            to: tf(b)?,
        });
    }
    if out.is_empty() {
        return Err(err(path, 0, "no short-form lines"));
    }
    Ok(out)
}

/// The tablet uid in an operator pod name `<cluster>-vttablet-<cell>-<uid %010d>-<hash>`.
pub fn pod_uid(name: &str) -> Option<u64> {
    let parts: Vec<&str> = name.split('-').collect();
    let v = parts.iter().position(|p| *p == "vttablet")?;
    parts[v + 1..]
        .iter()
        .find(|p| p.len() == 10 && p.bytes().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}
