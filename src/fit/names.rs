//! Names, clocks and spellings shared by the log emitter and the fit: the civil calendar
//! (no time-zone database: every clock here is UTC), the RFC 3339 forms Kubernetes and Go
//! print, and the names vtsim gives a simulated cluster's objects.

/// Nanoseconds per second.
pub const NS: i64 = 1_000_000_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The broken-down UTC time of `unix_ns`: (year, month, day, hour, minute, second, ns).
pub fn civil(unix_ns: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let secs = unix_ns.div_euclid(NS);
    let ns = unix_ns.rem_euclid(NS) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400) as u32;
    let (y, m, d) = civil_from_days(days);
    (y, m, d, sod / 3600, sod / 60 % 60, sod % 60, ns)
}

/// `2006-01-02T15:04:05Z` (Kubernetes `metav1.Time`: whole seconds, truncated).
pub fn rfc3339_secs(unix_ns: i64) -> String {
    let (y, mo, d, h, mi, s, _) = civil(unix_ns);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// Go's `time.RFC3339Nano` in UTC: the fraction with its trailing zeros trimmed (slog JSON).
pub fn rfc3339_nano(unix_ns: i64) -> String {
    let (y, mo, d, h, mi, s, ns) = civil(unix_ns);
    let mut out = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
    if ns > 0 {
        let f = format!("{ns:09}");
        out.push('.');
        out.push_str(f.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// Parse an RFC 3339 time with 0-9 fraction digits and a `Z` or `±hh:mm` zone, to Unix ns.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b't') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut ns = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = &s[start..i];
        if digits.is_empty() || digits.len() > 9 {
            return None;
        }
        ns = digits.parse::<i64>().ok()? * 10i64.pow(9 - digits.len() as u32);
    }
    let off = match &s[i..] {
        "Z" | "z" => 0,
        z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) => {
            let hh: i64 = z[1..3].parse().ok()?;
            let mm: i64 = z[4..6].parse().ok()?;
            let o = (hh * 3600 + mm * 60) * NS;
            if z.starts_with('-') {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    Some((days * 86_400 + h * 3600 + mi * 60 + sec) * NS + ns - off)
}

/// The simulated cluster's names (`replay --emit-logs`): cell `zone1`, keyspace `commerce`,
/// cluster `example`, tablet uid `101 + index`, pod IPs `10.244.x.y` from the model's
/// address numbers.
pub struct Cluster {
    /// The cell.
    pub cell: String,
    /// The keyspace.
    pub keyspace: String,
    /// The VitessCluster name.
    pub cluster: String,
    /// Shard names in shard order (`-` for one shard, else an equal hex split).
    pub shards: Vec<String>,
    /// Each tablet's cell, when the model lists its cells (empty: every tablet in `cell`).
    pub tablet_cells: Vec<String>,
}

impl Cluster {
    /// The names of a one-keyspace cluster with `shards` shards.
    pub fn new(shards: u32) -> Self {
        let shards = if shards == 1 {
            vec!["-".to_string()]
        } else {
            let (space, width) = if shards <= 256 {
                (256u64, 2)
            } else {
                (65_536, 4)
            };
            let b = |k: u64| {
                if k == 0 || k == shards as u64 {
                    String::new()
                } else {
                    format!("{:0width$x}", k * space / shards as u64)
                }
            };
            (0..shards as u64)
                .map(|k| format!("{}-{}", b(k), b(k + 1)))
                .collect()
        };
        Cluster {
            cell: "zone1".into(),
            keyspace: "commerce".into(),
            cluster: "example".into(),
            shards,
            tablet_cells: Vec::new(),
        }
    }
    /// The names of model `p`'s cluster: its shards, and each tablet in its cell.
    pub fn of_model(p: &crate::model::rollout::RolloutParams) -> Self {
        let mut c = Cluster::new(p.shards);
        if let Some(sh) = crate::model::rollout::cells::Shape::of(p) {
            c.tablet_cells = sh
                .tablet_cell
                .iter()
                .map(|&k| sh.names[k as usize].clone())
                .collect();
        }
        c
    }
    /// The cell of tablet `t`.
    pub fn cell_of(&self, t: usize) -> &str {
        self.tablet_cells.get(t).unwrap_or(&self.cell)
    }
    /// The uid of tablet `t`.
    pub fn uid(&self, t: usize) -> u64 {
        101 + t as u64
    }
    /// `topotools.TabletIdent`: `zone1-101 (10.244.0.2)` (uid not padded).
    pub fn ident(&self, t: usize, addr: u32) -> String {
        format!("{}-{} ({})", self.cell_of(t), self.uid(t), ip(addr))
    }
    /// `topoproto.TabletAliasString`: `zone1-0000000101`.
    pub fn alias_string(&self, t: usize) -> String {
        format!("{}-{:010}", self.cell_of(t), self.uid(t))
    }
    /// The tablet record as protobuf compact text (one space between fields); `addr` `None`:
    /// the record `tm.Close` leaves (no hostname, no ports).
    pub fn record(&self, t: usize, shard: usize, addr: Option<u32>, primary: bool) -> String {
        let ty = if primary { "PRIMARY" } else { "REPLICA" };
        let mut s = format!("alias:{{cell:\"{}\" uid:{}}}", self.cell_of(t), self.uid(t));
        if let Some(a) = addr {
            s.push_str(&format!(
                " hostname:\"{}\" port_map:{{key:\"grpc\" value:15999}} port_map:{{key:\"vt\" value:15000}}",
                ip(a)
            ));
        }
        s.push_str(&format!(
            " keyspace:\"{}\" shard:\"{}\" type:{ty}",
            self.keyspace, self.shards[shard]
        ));
        s
    }
    /// The operator's pod name of tablet `t`: `<cluster>-vttablet-<cell>-<uid %010d>-<hash>`
    /// (the real hash is an md5 of the parts; here an FNV-1a of the same string).
    pub fn pod(&self, t: usize) -> String {
        let base = format!(
            "{}-vttablet-{}-{:010}",
            self.cluster,
            self.cell_of(t),
            self.uid(t)
        );
        format!("{base}-{:08x}", fnv32(&base))
    }
    /// The VitessShard object's name: `<cluster>-<keyspace>-<start>-<end>-<hash>` (`x` for an
    /// open end).
    pub fn vitess_shard(&self, shard: usize) -> String {
        let name = &self.shards[shard];
        let (a, b) = name.split_once('-').unwrap_or(("", ""));
        let x = |s: &str| {
            if s.is_empty() {
                "x".to_string()
            } else {
                s.to_string()
            }
        };
        let base = format!("{}-{}-{}-{}", self.cluster, self.keyspace, x(a), x(b));
        format!("{base}-{:08x}", fnv32(&base))
    }
}

/// The pod IP of model address `a`: `10.244.<a / 250>.<a % 250 + 2>`.
pub fn ip(a: u32) -> String {
    format!("10.244.{}.{}", a / 250, a % 250 + 2)
}

/// 32-bit FNV-1a.
fn fnv32(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_round_trip_and_match_go() {
        let t = parse_rfc3339("2026-07-18T14:03:40.00134Z").unwrap();
        assert_eq!(rfc3339_nano(t), "2026-07-18T14:03:40.00134Z");
        assert_eq!(rfc3339_secs(t), "2026-07-18T14:03:40Z");
        assert_eq!(
            parse_rfc3339("2026-07-18T16:03:40.00134+02:00"),
            Some(t),
            "zone offsets"
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_nano(-1), "1969-12-31T23:59:59.999999999Z");
        for bad in [
            "2026-13-01T00:00:00Z",
            "2026-07-18 14:03:40Z",
            "2026-07-18T14:03:40.Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        assert_eq!(Cluster::new(2).shards, ["-80", "80-"]);
        assert!(Cluster::new(1)
            .vitess_shard(0)
            .starts_with("example-commerce-x-x-"));
        assert_eq!(Cluster::new(1).alias_string(0), "zone1-0000000101");
    }
}
