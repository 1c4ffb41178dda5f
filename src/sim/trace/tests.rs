//! Unit tests of the trace: the encoding against a one-piece reference encoder, the
//! buffered digest, the name numbers and the JSONL lines.

use super::buf::SPARE_BUFS;
use super::encode::{leb128, MAX_RECORD};
use super::names::{Names, KNOWN_KEPT};
use super::*;

/// The digest of an encoding without its padding, padded here by the module doc's rule.
fn reference_digest(records: &[u8]) -> String {
    let mut b = records.to_vec();
    if b.len() > 1024 {
        while !b.len().is_multiple_of(1024) {
            b.push(0);
        }
    }
    blake3::hash(&b).to_hex().to_string()
}

#[test]
fn a_trace_that_is_off_has_the_digest_of_no_bytes() {
    let mut t = Trace::off();
    t.event(SimTime(5), &R);
    assert_eq!(t.digest_hex(), reference_digest(&[]));
    assert_eq!(t.digest_hex(), blake3::hash(b"").to_hex().as_str());
}

#[test]
fn the_padding_fills_the_last_chunk_past_one_chunk() {
    let cases = [
        (0, 0),
        (1, 0),
        (1024, 0),
        (1025, 1023),
        (2047, 1),
        (2048, 0),
        (9000, 216),
    ];
    for (len, pad) in cases {
        assert_eq!(padding(len), pad, "{len}");
    }
    // Traces ending on either side of the first two chunk boundaries (a record of `R` is 6
    // bytes after the first, of 18), read in the buffer.
    for n in [60u64, 167, 168, 169, 170, 338, 339, 340, 341] {
        let mut t = Trace::digest_only();
        let (mut want, mut last_t) = (Vec::new(), 0u64);
        let mut pairs = std::collections::HashMap::new();
        for i in 0..n {
            t.event(SimTime(i), &R);
            reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, i, &R);
        }
        assert_eq!(t.digest_hex(), reference_digest(&want), "{n} records");
        // The padding is not part of the trace: the next record follows the last one.
        t.event(SimTime(n), &R);
        reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, n, &R);
        assert_eq!(t.digest_hex(), reference_digest(&want), "{n} + 1 records");
    }
}

const R: TraceRecord = TraceRecord {
    component: "vtgate",
    index: 3,
    kind: "poll",
    a: 300,
    b: 0,
};

/// The bytes of `R` as an event or draw record with time delta `dt`, its pair numbered
/// `p` (0: its first record, names spelt out).
fn timed_bytes(tag: u8, p: u8, dt: u64) -> Vec<u8> {
    let mut want = vec![p << 2 | tag];
    leb128(&mut want, dt);
    if p == 0 {
        want.push(6);
        want.extend_from_slice(b"vtgate");
        want.push(4);
        want.extend_from_slice(b"poll");
    }
    want.push(3);
    want.extend_from_slice(&[0xAC, 0x02]); // 300
    want.push(0);
    want
}

/// The word encoder against the byte loop, at every length boundary (2^(7k) and its
/// neighbours), at every power of two and its neighbours, and at random values of every
/// bit length, at the first and the last offset a record's word can start at: the same
/// bytes and the same end.
#[test]
fn the_word_encoder_writes_the_reference_bytes() {
    use rand::{Rng, SeedableRng};
    let mut vs = vec![0u64, 1, u64::MAX, u64::MAX - 1];
    for k in 0..64 {
        let p = 1u64 << k;
        vs.extend([p - 1, p, p + 1]);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for bits in 1..=64u32 {
        for _ in 0..200 {
            vs.push(rng.next_u64() >> (64 - bits));
        }
    }
    for &v in &vs {
        let mut want = vec![];
        leb128(&mut want, v);
        for at in [0, 7, MAX_RECORD - 10] {
            let mut out = [0xAAu8; MAX_RECORD];
            let end = leb128_at(&mut out, at, v);
            assert_eq!(end, at + want.len(), "end of {v:#x} at {at}");
            assert_eq!(&out[at..end], &want[..], "bytes of {v:#x} at {at}");
            assert!(out[..at].iter().all(|&b| b == 0xAA), "wrote before {at}");
        }
    }
}

#[test]
fn the_encoding_is_the_documented_one() {
    let mut t = Trace::digest_only();
    t.event(SimTime(1_000), &R);
    t.draw(SimTime(1_000), &R);
    t.event(SimTime(1_500), &R);
    let names = metric_names_digest(["errors", "p"]);
    assert_eq!(&names, blake3::hash(b"\x06errors\x01p").as_bytes());
    t.metric_names(&names);
    t.metric(0, "errors", 2.0);
    t.metric(1, "p", f64::NAN);
    let mut want = vec![];
    want.extend(timed_bytes(0x01, 0, 1_000));
    want.extend(timed_bytes(0x02, 1, 0));
    want.extend(timed_bytes(0x01, 1, 500));
    want.push(0x04);
    want.extend_from_slice(&names);
    want.extend_from_slice(&[0x03, 0]);
    want.extend_from_slice(&2.0f64.to_bits().to_le_bytes());
    want.extend_from_slice(&[0x03, 1]);
    want.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0xF8, 0x7F]);
    assert_eq!(&want[1..3], &[0xE8, 0x07]); // 1000
    assert_eq!(t.digest_hex(), reference_digest(&want));
    assert_eq!((t.events(), t.draws(), t.metrics()), (2, 1, 2));
    // A second pair gets number 2; the same text at another address is the same pair.
    let other_kind = String::from("poll").leak();
    let same = TraceRecord {
        kind: other_kind,
        ..R
    };
    let second = TraceRecord { kind: "tick", ..R };
    t.event(SimTime(1_500), &second);
    t.event(SimTime(1_500), &same);
    t.event(SimTime(1_500), &second);
    want.extend_from_slice(&[0x01, 0, 6]);
    want.extend_from_slice(b"vtgate");
    want.push(4);
    want.extend_from_slice(b"tick");
    want.extend_from_slice(&[3, 0xAC, 0x02, 0]);
    want.extend(timed_bytes(0x01, 1, 0));
    want.extend_from_slice(&[2 << 2 | 0x01, 0, 3, 0xAC, 0x02, 0]);
    assert_eq!(t.digest_hex(), reference_digest(&want));
}

/// One trace of `n` event records of `R` with the kinds `kind(i)`: its digest must be the
/// reference encoder's, which numbers pairs by text. Returns the distinct pairs.
fn check_trace(n: u64, kind: impl Fn(u64) -> &'static str) -> usize {
    let mut t = Trace::digest_only();
    let (mut want, mut last_t) = (Vec::new(), 0u64);
    let mut pairs = std::collections::HashMap::new();
    for i in 0..n {
        let r = TraceRecord { kind: kind(i), ..R };
        t.event(SimTime(i), &r);
        reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, i, &r);
    }
    assert_eq!(t.digest_hex(), reference_digest(&want));
    pairs.len()
}

/// Two pairs whose addresses hash to one slot, recorded in turn, both stay in the table
/// (the two ways of their slot), so neither misses again; a third pair of that slot takes
/// it and the pair it displaced stays in the other way.
#[test]
fn two_pairs_of_one_slot_both_stay() {
    let mut by_slot: std::collections::HashMap<usize, Vec<&'static str>> = Default::default();
    let same = (0..100_000)
        .find_map(|i| {
            let c: &'static str = format!("c{i}").leak();
            let v = by_slot.entry(Names::slot_of(c, "k")).or_default();
            v.push(c);
            (v.len() == 3).then(|| v.clone())
        })
        .expect("three pairs of one slot");
    let i = Names::slot_of(same[0], "k");
    let mut names = Names::new();
    names.reset();
    let (a, b, c) = (same[0], same[1], same[2]);
    assert_eq!((names.number(a, "k"), names.number(b, "k")), (0, 0));
    for _ in 0..3 {
        assert_eq!((names.number(a, "k"), names.number(b, "k")), (1, 2));
    }
    let held = |n: &Names, x: &'static str| {
        n.holds(&n.slots[i], x, "k") || n.holds(&n.slots[i ^ 1], x, "k")
    };
    assert!(held(&names, a) && held(&names, b));
    assert_eq!(names.number(c, "k"), 0);
    assert!(names.holds(&names.slots[i], c, "k"));
    assert_eq!(names.number(c, "k"), 3);
    assert!(
        held(&names, a) != held(&names, b),
        "one of the first two stays"
    );
}

/// The address pairs the next trace on this thread starts with.
fn known_addresses() -> usize {
    drop(Trace::digest_only()); // takes the spare tables and puts them back
    SPARE_BUFS.with(|s| s.borrow().last().map_or(0, |b| b.names.known_len))
}

/// Pair numbers past the one-byte heads (31 pairs), records of pairs whose addresses
/// collide in the slot table, and a pair met again under a new address: the bytes are the
/// reference encoder's, which numbers pairs by text. Then traces on the same thread, which
/// reuse the text ids of the first, with their pairs in other orders (each trace numbers
/// them afresh) and more copies: the bytes are still the reference encoder's.
#[test]
fn name_numbers_depend_only_on_the_text() {
    let kinds: Vec<&'static str> = (0..300).map(|i| &*format!("k{i}").leak()).collect();
    // Every tenth record names its kind through a fresh copy (a new address).
    let copy_every_tenth = |i: u64, k: &'static str| -> &'static str {
        if i.is_multiple_of(10) {
            String::from(k).leak()
        } else {
            k
        }
    };
    let n = check_trace(20_000, |i| {
        copy_every_tenth(i, kinds[((i * 7919) % 300) as usize])
    });
    assert_eq!(n, 300);
    let met = known_addresses();
    // The 30 kinds of index 0 mod 10 are met only through copies.
    assert_eq!(met, 270 + 2_000);
    // Another order, the same addresses but those 30: no other address is new.
    let n = check_trace(5_000, |i| kinds[((i * 104_729 + 17) % 300) as usize]);
    assert_eq!((n, known_addresses()), (300, met + 30));
    // A few of them, first met in another order, and new copies of them.
    let n = check_trace(600, |i| {
        copy_every_tenth(i, kinds[(299 - (i * 31) % 40) as usize])
    });
    assert_eq!((n, known_addresses()), (40, met + 30 + 60));
}

/// A thread that keeps meeting new addresses gets its tables emptied between traces, and
/// the numbering goes on by text.
#[test]
fn the_address_table_stays_bounded() {
    let fresh = |i: u64| -> &'static str { format!("k{}", i % 50).leak() };
    assert_eq!(check_trace(KNOWN_KEPT as u64 + 10, fresh), 50);
    assert_eq!(known_addresses(), 0);
    assert_eq!(check_trace(100, fresh), 50);
    assert_eq!(known_addresses(), 100);
}

/// The reference encoder: the documented byte string, built in one `Vec`; `pairs` is the
/// trace's (component, kind) pairs by text, with their numbers.
fn reference_bytes(
    out: &mut Vec<u8>,
    pairs: &mut std::collections::HashMap<(String, String), u64>,
    last_t: &mut u64,
    tag: u8,
    t: u64,
    r: &TraceRecord,
) {
    let name = |out: &mut Vec<u8>, s: &str| {
        let n = s.len().min(255);
        out.push(n as u8);
        out.extend_from_slice(&s.as_bytes()[..n]);
    };
    let key = (r.component.to_string(), r.kind.to_string());
    let p = pairs.get(&key).copied().unwrap_or(0);
    leb128(out, p << 2 | tag as u64);
    leb128(out, t.wrapping_sub(*last_t));
    *last_t = t;
    if p == 0 {
        let n = pairs.len() as u64 + 1;
        pairs.insert(key, n);
        name(out, r.component);
        name(out, r.kind);
    }
    leb128(out, r.index as u64);
    leb128(out, r.a);
    leb128(out, r.b);
}

/// Records of every name length (0 to 300 bytes: cut at 255), every LEB128 length and
/// enough of them to fill the 64 KiB buffer several times: the buffered digest is the
/// BLAKE3 hash of the whole byte string in one call, whatever the flush points.
#[test]
fn the_buffered_digest_is_the_hash_of_the_whole_encoding() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let names: Vec<&'static str> = (0..=300)
        .map(|n| &*Box::leak("abcdefghij".repeat(31)[..n].to_string().into_boxed_str()))
        .collect();
    let mut t = Trace::digest_only();
    let (mut want, mut last_t, mut now) = (Vec::new(), 0u64, 0u64);
    let mut pairs = std::collections::HashMap::new();
    let mut checked_midway = false;
    for i in 0..40_000u32 {
        let word = |rng: &mut rand_chacha::ChaCha8Rng| rng.next_u64() >> (rng.next_u32() % 64);
        let r = TraceRecord {
            component: names[(rng.next_u32() % 301) as usize],
            index: rng.next_u32() >> (rng.next_u32() % 32),
            kind: names[(rng.next_u32() % 20) as usize],
            a: word(&mut rng),
            b: word(&mut rng),
        };
        now = match i % 3 {
            0 => now,
            1 => now + word(&mut rng) % 1_000_000,
            _ => word(&mut rng), // also backwards: Δt wraps
        };
        let tag = if i % 4 == 0 { TAG_DRAW } else { TAG_EVENT };
        if tag == TAG_DRAW {
            t.draw(SimTime(now), &r);
        } else {
            t.event(SimTime(now), &r);
        }
        reference_bytes(&mut want, &mut pairs, &mut last_t, tag, now, &r);
        if i % 7 == 0 {
            let n = names[(rng.next_u32() % 301) as usize];
            let v = f64::from_bits(rng.next_u64());
            // A names record of one name (every name length, cut at 255), then the metric.
            let digest = metric_names_digest([n]);
            t.metric_names(&digest);
            t.metric(i, n, v);
            let mut spelt = vec![n.len().min(255) as u8];
            spelt.extend_from_slice(&n.as_bytes()[..n.len().min(255)]);
            assert_eq!(&digest, blake3::hash(&spelt).as_bytes());
            want.push(TAG_METRIC_NAMES);
            want.extend_from_slice(&digest);
            want.push(TAG_METRIC);
            leb128(&mut want, i as u64);
            want.extend_from_slice(&metric_bits(v).to_le_bytes());
        }
        if i == 20_000 {
            assert_eq!(t.digest_hex(), reference_digest(&want));
            checked_midway = true;
        }
    }
    assert!(
        checked_midway && want.len() > 4 * FLUSH_AT,
        "{} bytes",
        want.len()
    );
    assert_eq!(t.digest_hex(), reference_digest(&want));
    // The next trace on this thread reuses the (dirty) buffer: it hashes only its own bytes.
    drop(t);
    let mut u = Trace::digest_only();
    u.event(SimTime(1_000), &R);
    let (mut one, mut last_t) = (Vec::new(), 0);
    reference_bytes(
        &mut one,
        &mut Default::default(),
        &mut last_t,
        TAG_EVENT,
        1_000,
        &R,
    );
    assert_eq!(u.digest_hex(), reference_digest(&one));
}

#[test]
fn reading_the_digest_does_not_disturb_what_follows() {
    let mut t = Trace::digest_only();
    t.event(SimTime(1_000), &R);
    let _ = t.digest_hex();
    t.event(SimTime(2_000), &R);
    let mut u = Trace::digest_only();
    u.event(SimTime(1_000), &R);
    u.event(SimTime(2_000), &R);
    assert_eq!(t.digest_hex(), u.digest_hex());
}

/// Digests read while the bytes are in the buffer alone (below and past 8 KiB) and after
/// flushes, in two long traces in a row on one thread (the second reuses the first one's
/// hasher and buffer): each is the hash of the bytes so far.
#[test]
fn every_digest_read_on_the_way_is_the_hash_so_far() {
    for _ in 0..2 {
        let mut t = Trace::digest_only();
        let (mut want, mut last_t) = (Vec::new(), 0u64);
        let mut pairs = std::collections::HashMap::new();
        let mut read = 0;
        for i in 0..30_000u64 {
            let r = TraceRecord { a: i * i, ..R };
            t.event(SimTime(i * 3), &r);
            reference_bytes(&mut want, &mut pairs, &mut last_t, TAG_EVENT, i * 3, &r);
            if [0, 1, 500, 1_500, 2_000, 9_000, 9_001, 29_999].contains(&i) {
                assert_eq!(t.digest_hex(), reference_digest(&want));
                read += 1;
            }
        }
        // The reads cover the buffer alone below and past 8 KiB, and several flushes.
        assert!(want.len() > 3 * FLUSH_AT, "{} bytes", want.len());
        assert_eq!(read, 8);
    }
}

#[test]
fn record_types_are_distinguished() {
    let digest = |f: &dyn Fn(&mut Trace)| {
        let mut t = Trace::digest_only();
        f(&mut t);
        t.digest_hex()
    };
    let e = digest(&|t| t.event(SimTime(7), &R));
    let d = digest(&|t| t.draw(SimTime(7), &R));
    assert_ne!(e, d);
    // An event then a draw is not a draw then an event.
    let ed = digest(&|t| {
        t.event(SimTime(7), &R);
        t.draw(SimTime(7), &R)
    });
    let de = digest(&|t| {
        t.draw(SimTime(7), &R);
        t.event(SimTime(7), &R)
    });
    assert_ne!(ed, de);
    // Every bit of a metric counts; its name (through the names record) and position
    // count too.
    let m = |p: u32, n: &'static str, v: f64| {
        digest(&|t| {
            t.metric_names(&metric_names_digest([n]));
            t.metric(p, n, v)
        })
    };
    assert_ne!(m(0, "x", 0.0), m(0, "x", -0.0));
    assert_ne!(
        m(0, "x", 1.0),
        m(0, "x", f64::from_bits(1.0f64.to_bits() + 1))
    );
    assert_ne!(m(0, "x", 1.0), m(0, "y", 1.0));
    assert_ne!(m(0, "x", 1.0), m(1, "x", 1.0));
    // Every NaN is one NaN.
    assert_eq!(
        m(0, "x", f64::NAN),
        m(0, "x", f64::from_bits(0xfff8_0000_0000_0001))
    );
}

#[test]
fn the_jsonl_trace_has_one_line_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let mut t = Trace::with_jsonl(std::fs::File::create(&p).unwrap());
    t.event(SimTime(1_500_000_000), &R);
    t.draw(SimTime(1_500_000_000), &R);
    t.metric(0, "errors", 2.0);
    t.metric(1, "p", f64::INFINITY);
    t.metric(2, "q", 1e-7);
    t.finish().unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"type":"event","t_ns":1500000000,"t_s":1.5,"component":"vtgate","index":3,"kind":"poll","a":300,"b":0}"#,
            r#"{"type":"draw","t_ns":1500000000,"t_s":1.5,"component":"vtgate","index":3,"kind":"poll","a":300,"b":0}"#,
            r#"{"type":"metric","index":0,"name":"errors","value":2.0,"bits":"0x4000000000000000"}"#,
            r#"{"type":"metric","index":1,"name":"p","value":null,"bits":"0x7ff0000000000000"}"#,
            r#"{"type":"metric","index":2,"name":"q","value":1e-7,"bits":"0x3e7ad7f29abcaf48"}"#,
        ]
    );
    for l in lines {
        serde_json::from_str::<serde_json::Value>(l).unwrap();
    }
}

#[test]
fn any_writer_takes_the_jsonl_lines() {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Shared::default();
    let mut t = Trace::with_writer(Box::new(buf.clone()));
    t.event(SimTime(5), &R);
    t.metric(0, "x", 0.5);
    t.finish().unwrap();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(text.starts_with(r#"{"type":"event","t_ns":5,"#), "{text}");
}
