//! A mergeable quantile sketch with a stated relative error, for quantiles of many replicates
//! in memory that does not grow with their number.
//!
//! # What it answers, and how well
//!
//! [`QuantileSketch::quantile`] answers the same question as [`crate::stats::quantile_sorted`]:
//! the *nearest-rank* quantile, the value of rank `k = ceil(q·n)` (clamped to `1..=n`) among
//! the `n` values in `f64::total_cmp` order. Let `x` be that exact value. The sketch returns
//! `v` with
//!
//! ```text
//! |v − x| ≤ α·|x|        (α = the relative error the sketch was made with)
//! ```
//!
//! for every finite `x` (zeros, infinities and NaNs are answered exactly: `v == x`, NaN for
//! NaN), every `q` and every input, whatever the distribution. The minimum and maximum are
//! kept exactly and answer ranks 1 and `n`. While at most `exact_limit` values have been
//! added, the sketch keeps them all and answers exactly (`v == x`, the same bits as
//! `quantile_sorted`).
//!
//! How: past `exact_limit`, a value `x > 0` is counted in bucket `i = ceil(log_γ x)` with
//! `γ = (1 + α)/(1 − α)`, i.e. the bucket holding `(γ^(i−1), γ^i]`, and a bucket answers with
//! `2γ^i/(γ + 1)`, within `α` of every value in it (the DDSketch construction: Masson, Rim and
//! Lee, "DDSketch: a fast and fully-mergeable quantile sketch with relative-error guarantees",
//! VLDB 2019). Negative values have their own mirrored buckets. Logarithms are the `libm`
//! crate's, so a bucket, and so an answer, is the same on every machine.
//!
//! # Memory
//!
//! One `u64` count per bucket between the smallest and the largest bucket used: about
//! `ln(max/min)/(2α)` buckets for positive values between `min` and `max`, whatever the number
//! of values (the allocation grows by doubling, so at most about twice that). At `α = 1e-3`,
//! values spanning 1e-3 to 1e3 use about 6,900 buckets (55 KB); no input can use more than
//! the whole `f64` range, about 727,000 buckets a sign (5.8 MB). Below `exact_limit` the
//! values themselves are held (8 bytes each).
//!
//! # Determinism and merging
//!
//! The state is a function of the *multiset* of values added (counts are integers, the
//! bucket of a value does not depend on the others; below the limit the values are compared
//! sorted), so:
//!
//! - adding the same values in any order gives equal sketches (`==`) and bit-identical
//!   answers;
//! - [`QuantileSketch::merge`] of sketches of the parts of a data set gives a sketch equal to
//!   the one of the whole data set, so merging shards in shard order, in any other order or in
//!   any tree, gives the same result, bit for bit, as one pass over every replicate.
//!
//! Merging two sketches made with different `α` or `exact_limit` is refused.

use std::fmt;

/// The relative error of [`QuantileSketch::default`]: 0.1 %.
pub const DEFAULT_RELATIVE_ERROR: f64 = 1e-3;
/// How many values [`QuantileSketch::default`] keeps exactly before it counts buckets.
pub const DEFAULT_EXACT_LIMIT: usize = 1024;

/// Why a sketch could not be made or merged.
#[derive(Clone, Debug, PartialEq)]
pub enum SketchError {
    /// The relative error is not in `[1e-6, 0.5]`.
    RelativeError(f64),
    /// The exact limit is above 1e7 values (80 MB).
    ExactLimit(usize),
    /// Two sketches with different parameters cannot be merged.
    Mismatch {
        /// `(α, exact_limit)` of the sketch merged into.
        left: (f64, usize),
        /// `(α, exact_limit)` of the sketch merged.
        right: (f64, usize),
    },
}

impl fmt::Display for SketchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SketchError::RelativeError(a) => {
                write!(f, "relative error {a}: must be between 1e-6 and 0.5")
            }
            SketchError::ExactLimit(n) => write!(f, "exact limit {n}: must be at most 1e7"),
            SketchError::Mismatch { left, right } => write!(
                f,
                "cannot merge a sketch of relative error {} and exact limit {} into one of {} and {}",
                right.0, right.1, left.0, left.1
            ),
        }
    }
}

impl std::error::Error for SketchError {}

/// Counts of consecutive buckets, `counts[j]` being bucket `first + j`; grown by doubling so
/// that adding values in decreasing order stays linear.
#[derive(Clone, Debug, Default)]
struct Store {
    first: i32,
    counts: Vec<u64>,
    total: u64,
}

impl Store {
    #[inline]
    fn add(&mut self, i: i32, c: u64) {
        if self.counts.is_empty() {
            self.first = i;
            self.counts.push(0);
        } else if i < self.first {
            let need = (self.first - i) as usize;
            let grow = need.max(self.counts.len());
            let mut v = vec![0u64; grow + self.counts.len()];
            v[grow..].copy_from_slice(&self.counts);
            self.counts = v;
            self.first -= grow as i32;
        } else if (i - self.first) as usize >= self.counts.len() {
            let need = (i - self.first) as usize + 1;
            let len = need.max(2 * self.counts.len());
            self.counts.resize(len, 0);
        }
        self.counts[(i - self.first) as usize] += c;
        self.total += c;
    }
    /// The used buckets: the index of the first non-zero one and the counts up to the last.
    fn used(&self) -> (i32, &[u64]) {
        let Some(a) = self.counts.iter().position(|&c| c > 0) else {
            return (0, &[]);
        };
        let b = self
            .counts
            .iter()
            .rposition(|&c| c > 0)
            .expect("one is non-zero");
        (self.first + a as i32, &self.counts[a..=b])
    }
    /// The bucket holding the `k`-th smallest (1-based) of the counted values, walking up
    /// (`ascending`) or down.
    fn bucket_of_rank(&self, k: u64, ascending: bool) -> i32 {
        let (first, c) = self.used();
        let mut seen = 0u64;
        let mut visit = |j: usize| {
            seen += c[j];
            seen >= k
        };
        let j = if ascending {
            (0..c.len()).find(|&j| visit(j))
        } else {
            (0..c.len()).rev().find(|&j| visit(j))
        };
        first + j.expect("rank within the store") as i32
    }
}

impl PartialEq for Store {
    fn eq(&self, o: &Self) -> bool {
        self.total == o.total && self.used() == o.used()
    }
}

/// A mergeable quantile sketch (see the module doc for its error bound and merge rule).
#[derive(Clone, Debug)]
pub struct QuantileSketch {
    alpha: f64,
    exact_limit: usize,
    /// `ln γ`.
    ln_gamma: f64,
    /// The values, while there are at most `exact_limit`; `None` once bucketed.
    exact: Option<Vec<f64>>,
    /// Buckets of positive finite values.
    pos: Store,
    /// Buckets of `|x|` for negative finite values.
    neg: Store,
    /// Counts of: NaN with the sign bit set, −∞, zeros (either sign), +∞, NaN without it
    /// (the `total_cmp` order).
    neg_nan: u64,
    neg_inf: u64,
    zeros: u64,
    pos_inf: u64,
    pos_nan: u64,
    n: u64,
    min: f64,
    max: f64,
}

impl Default for QuantileSketch {
    fn default() -> Self {
        Self::new(DEFAULT_RELATIVE_ERROR, DEFAULT_EXACT_LIMIT).expect("valid defaults")
    }
}

impl QuantileSketch {
    /// A sketch with relative error `alpha` (1e-6 to 0.5) that answers exactly while it holds
    /// at most `exact_limit` values (0: bucket from the first value).
    pub fn new(alpha: f64, exact_limit: usize) -> Result<Self, SketchError> {
        if !(1e-6..=0.5).contains(&alpha) {
            return Err(SketchError::RelativeError(alpha));
        }
        if exact_limit > 10_000_000 {
            return Err(SketchError::ExactLimit(exact_limit));
        }
        let gamma = (1.0 + alpha) / (1.0 - alpha);
        Ok(QuantileSketch {
            alpha,
            exact_limit,
            ln_gamma: libm::log(gamma),
            exact: Some(Vec::new()),
            pos: Store::default(),
            neg: Store::default(),
            neg_nan: 0,
            neg_inf: 0,
            zeros: 0,
            pos_inf: 0,
            pos_nan: 0,
            n: 0,
            min: f64::NAN,
            max: f64::NAN,
        })
    }

    /// The relative error α.
    pub fn relative_error(&self) -> f64 {
        self.alpha
    }
    /// Values added (NaNs and infinities included).
    pub fn count(&self) -> u64 {
        self.n
    }
    /// The smallest value in `total_cmp` order (NaN when empty).
    pub fn min(&self) -> f64 {
        self.min
    }
    /// The largest value in `total_cmp` order (NaN when empty).
    pub fn max(&self) -> f64 {
        self.max
    }
    /// The values in the order they were added (merged sketches: in merge order), while
    /// every value is held; `None` once the sketch counts buckets. A caller that needs more
    /// than quantiles (a two-pass standard deviation) can use them exactly as it would use its
    /// own list.
    pub fn exact_values(&self) -> Option<&[f64]> {
        self.exact.as_deref()
    }
    /// True while every value is held and answers are exact.
    pub fn is_exact(&self) -> bool {
        self.exact.is_some()
    }
    /// Bucket counts held (allocated, not only used): the sketch's memory is about 8 bytes
    /// per bucket plus 8 per exactly held value.
    pub fn buckets(&self) -> usize {
        self.pos.counts.len() + self.neg.counts.len()
    }

    /// The bucket of a positive finite `x`: `ceil(log_γ x)`.
    #[inline]
    fn index(&self, x: f64) -> i32 {
        libm::ceil(libm::log(x) / self.ln_gamma) as i32
    }
    /// What bucket `i` answers: `2γ^i/(γ + 1)`.
    fn value(&self, i: i32) -> f64 {
        let g = libm::exp(self.ln_gamma);
        2.0 * libm::exp(i as f64 * self.ln_gamma) / (g + 1.0)
    }

    fn count_in_buckets(&mut self, x: f64, c: u64) {
        if x.is_nan() {
            if x.is_sign_negative() {
                self.neg_nan += c;
            } else {
                self.pos_nan += c;
            }
        } else if x == 0.0 {
            self.zeros += c;
        } else if x == f64::INFINITY {
            self.pos_inf += c;
        } else if x == f64::NEG_INFINITY {
            self.neg_inf += c;
        } else if x > 0.0 {
            let i = self.index(x);
            self.pos.add(i, c);
        } else {
            let i = self.index(-x);
            self.neg.add(i, c);
        }
    }

    fn bucket_all(&mut self) {
        if let Some(v) = self.exact.take() {
            for x in v {
                self.count_in_buckets(x, 1);
            }
        }
    }

    fn extremes(&mut self, lo: f64, hi: f64) {
        if self.n == 0 || lo.total_cmp(&self.min).is_lt() {
            self.min = lo;
        }
        if self.n == 0 || hi.total_cmp(&self.max).is_gt() {
            self.max = hi;
        }
    }

    /// Add one value.
    pub fn add(&mut self, x: f64) {
        self.extremes(x, x);
        self.n += 1;
        match &mut self.exact {
            Some(v) if v.len() < self.exact_limit => v.push(x),
            Some(_) => {
                self.bucket_all();
                self.count_in_buckets(x, 1);
            }
            None => self.count_in_buckets(x, 1),
        }
    }

    /// Add every value of `other` (made with the same α and exact limit): afterwards `self`
    /// equals the sketch of both data sets together.
    pub fn merge(&mut self, other: &QuantileSketch) -> Result<(), SketchError> {
        if self.alpha.to_bits() != other.alpha.to_bits() || self.exact_limit != other.exact_limit {
            return Err(SketchError::Mismatch {
                left: (self.alpha, self.exact_limit),
                right: (other.alpha, other.exact_limit),
            });
        }
        if other.n == 0 {
            return Ok(());
        }
        self.extremes(other.min, other.max);
        self.n += other.n;
        let fits = match (&self.exact, &other.exact) {
            (Some(a), Some(b)) => a.len() + b.len() <= self.exact_limit,
            _ => false,
        };
        if fits {
            let b = other.exact.as_ref().expect("exact");
            self.exact.as_mut().expect("exact").extend_from_slice(b);
            return Ok(());
        }
        self.bucket_all();
        match &other.exact {
            Some(b) => {
                for &x in b {
                    self.count_in_buckets(x, 1);
                }
            }
            None => {
                for (store, theirs) in [(&mut self.pos, &other.pos), (&mut self.neg, &other.neg)] {
                    let (first, c) = theirs.used();
                    for (j, &k) in c.iter().enumerate() {
                        if k > 0 {
                            store.add(first + j as i32, k);
                        }
                    }
                }
                self.neg_nan += other.neg_nan;
                self.neg_inf += other.neg_inf;
                self.zeros += other.zeros;
                self.pos_inf += other.pos_inf;
                self.pos_nan += other.pos_nan;
            }
        }
        Ok(())
    }

    /// The nearest-rank `q`-quantile (`q` in [0, 1], clamped; NaN `q` or no values: NaN),
    /// within the stated error of [`crate::stats::quantile_sorted`] of the same values.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 || q.is_nan() {
            return f64::NAN;
        }
        let q = q.clamp(0.0, 1.0);
        let k = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        if let Some(v) = &self.exact {
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            return s[k as usize - 1];
        }
        if k == 1 {
            return self.min;
        }
        if k == self.n {
            return self.max;
        }
        let mut k = k;
        // Classes in total_cmp order: -NaN, -inf, negatives (largest magnitude first), zeros,
        // positives, +inf, +NaN.
        if k <= self.neg_nan {
            return -f64::NAN;
        }
        k -= self.neg_nan;
        if k <= self.neg_inf {
            return f64::NEG_INFINITY;
        }
        k -= self.neg_inf;
        let v = if k <= self.neg.total {
            -self.value(self.neg.bucket_of_rank(k, false))
        } else {
            k -= self.neg.total;
            if k <= self.zeros {
                return 0.0;
            }
            k -= self.zeros;
            if k <= self.pos.total {
                self.value(self.pos.bucket_of_rank(k, true))
            } else {
                k -= self.pos.total;
                return if k <= self.pos_inf {
                    f64::INFINITY
                } else {
                    f64::NAN
                };
            }
        };
        // The exact answer lies between the extremes; clamping only moves closer to it (and
        // turns a bucket value past f64::MAX back into the largest value).
        let lo = if self.min.is_nan() {
            f64::NEG_INFINITY
        } else {
            self.min
        };
        let hi = if self.max.is_nan() {
            f64::INFINITY
        } else {
            self.max
        };
        v.max(lo).min(hi)
    }
}

impl PartialEq for QuantileSketch {
    /// Equal parameters and equal contents (the multiset of values added, as the sketch
    /// holds it), however they were added or merged.
    fn eq(&self, o: &Self) -> bool {
        let sorted = |v: &Vec<f64>| {
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            s.into_iter().map(f64::to_bits).collect::<Vec<_>>()
        };
        self.alpha.to_bits() == o.alpha.to_bits()
            && self.exact_limit == o.exact_limit
            && self.n == o.n
            && self.min.to_bits() == o.min.to_bits()
            && self.max.to_bits() == o.max.to_bits()
            && match (&self.exact, &o.exact) {
                (Some(a), Some(b)) => sorted(a) == sorted(b),
                (None, None) => {
                    self.pos == o.pos
                        && self.neg == o.neg
                        && (
                            self.neg_nan,
                            self.neg_inf,
                            self.zeros,
                            self.pos_inf,
                            self.pos_nan,
                        ) == (o.neg_nan, o.neg_inf, o.zeros, o.pos_inf, o.pos_nan)
                }
                _ => false,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::{exponential, shuffle, stream, uniform01};
    use crate::stats::quantile_sorted;

    const QS: [f64; 12] = [
        0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0,
    ];

    fn sketch_of(alpha: f64, limit: usize, v: &[f64]) -> QuantileSketch {
        let mut s = QuantileSketch::new(alpha, limit).unwrap();
        v.iter().for_each(|&x| s.add(x));
        s
    }

    /// Check the stated bound at every q in `QS` and every 1/1000; returns the worst
    /// relative error seen.
    fn check_bound(s: &QuantileSketch, values: &[f64]) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mut worst = 0.0f64;
        let grid = (0..=1000).map(|i| i as f64 / 1000.0);
        for q in QS.iter().copied().chain(grid) {
            let x = quantile_sorted(&sorted, q);
            let v = s.quantile(q);
            if !x.is_finite() || x == 0.0 {
                assert!(
                    v.to_bits() == x.to_bits()
                        || (x.is_nan() && v.is_nan())
                        || (x == 0.0 && v == 0.0),
                    "q {q}: exact {x}, sketch {v}"
                );
                continue;
            }
            let rel = (v - x).abs() / x.abs();
            // 1e-12: the rounding of one log and one exp.
            assert!(
                rel <= s.relative_error() * (1.0 + 1e-9) + 1e-12,
                "q {q}: exact {x}, sketch {v}, relative error {rel} > {}",
                s.relative_error()
            );
            worst = worst.max(rel);
        }
        worst
    }

    fn exponentials(seed: u64, n: usize, mean: f64) -> Vec<f64> {
        let mut r = stream(seed, "sketch-test", 0);
        (0..n).map(|_| exponential(&mut r, mean)).collect()
    }

    #[test]
    fn the_error_bound_holds_on_known_distributions() {
        let mut r = stream(1, "sketch-test", 1);
        let n = 50_000;
        let data: Vec<(&str, Vec<f64>)> = vec![
            ("exponential", exponentials(2, n, 30.0)),
            // Log-uniform over 12 decades: many buckets, both sides of 1.
            (
                "log-uniform",
                (0..n)
                    .map(|_| libm::pow(10.0, -6.0 + 12.0 * uniform01(&mut r)))
                    .collect(),
            ),
            // Heavy tail: Pareto with shape 1.1.
            (
                "pareto",
                (0..n)
                    .map(|_| libm::pow(1.0 - uniform01(&mut r), -1.0 / 1.1))
                    .collect(),
            ),
            // Signed, with zeros, infinities and NaNs mixed in.
            (
                "mixed",
                (0..n)
                    .map(|i| match i % 50 {
                        0 => 0.0,
                        1 => -0.0,
                        2 => f64::INFINITY,
                        3 => f64::NEG_INFINITY,
                        4 => f64::NAN,
                        _ => (uniform01(&mut r) - 0.4) * 1e4,
                    })
                    .collect(),
            ),
            // A 0/1 indicator: every quantile is exact.
            (
                "indicator",
                (0..n)
                    .map(|i| if i % 97 == 0 { 1.0 } else { 0.0 })
                    .collect(),
            ),
        ];
        for alpha in [1e-3, 1e-2, 0.05] {
            for (name, v) in &data {
                let s = sketch_of(alpha, 0, v);
                assert!(!s.is_exact());
                let worst = check_bound(&s, v);
                // The bound is not vacuous: on the continuous data the error is a sizeable
                // part of it (a sketch returning exact values would be suspicious too).
                if *name != "indicator" && *name != "mixed" {
                    assert!(worst > alpha / 10.0, "{name} alpha {alpha}: worst {worst}");
                }
                if *name == "indicator" {
                    // 0 is exact; 1 falls in the bucket (1/γ, 1] and comes back within α
                    // (rank n is the kept maximum, exactly 1).
                    assert!(worst <= alpha * (1.0 + 1e-9), "{worst}");
                    assert_eq!(s.quantile(0.5), 0.0);
                    assert_eq!(s.quantile(1.0), 1.0);
                }
            }
        }
    }

    #[test]
    fn a_coarse_sketch_is_measurably_coarse() {
        // With α = 0.5 a bucket spans a factor of 3: the median of 1..=1000 (500) comes back
        // as the bucket's value, not 500, and within 50 %.
        let v: Vec<f64> = (1..=1000).map(|i| i as f64).collect();
        let s = sketch_of(0.5, 0, &v);
        let m = s.quantile(0.5);
        assert_ne!(m, 500.0);
        assert!((m - 500.0).abs() <= 250.0, "{m}");
        assert_eq!((s.quantile(0.0), s.quantile(1.0)), (1.0, 1000.0));
    }

    #[test]
    fn below_the_exact_limit_answers_are_exact() {
        let v = exponentials(3, 1024, 5.0);
        let s = sketch_of(1e-2, 1024, &v);
        assert!(s.is_exact());
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        for q in QS {
            assert_eq!(
                s.quantile(q).to_bits(),
                quantile_sorted(&sorted, q).to_bits()
            );
        }
        assert_eq!(s.exact_values(), Some(&v[..]));
        let mut t = s.clone();
        t.add(1.0);
        assert!(!t.is_exact() && t.exact_values().is_none());
    }

    #[test]
    fn order_and_merging_do_not_change_the_sketch() {
        let v = exponentials(4, 20_000, 1.0);
        for limit in [0, 1024, 30_000] {
            let whole = sketch_of(1e-3, limit, &v);
            let mut shuffled = v.clone();
            shuffle(&mut stream(5, "sketch-test", 2), &mut shuffled);
            assert_eq!(sketch_of(1e-3, limit, &shuffled), whole);
            // Shards of uneven sizes (some below the exact limit, some above), merged in
            // shard order, in reverse, and as a tree.
            let cuts = [0, 10, 700, 1500, 9000, 9001, 20_000];
            let shards: Vec<QuantileSketch> = cuts
                .windows(2)
                .map(|w| sketch_of(1e-3, limit, &v[w[0]..w[1]]))
                .collect();
            let mut in_order = QuantileSketch::new(1e-3, limit).unwrap();
            shards.iter().for_each(|s| in_order.merge(s).unwrap());
            let mut reverse = QuantileSketch::new(1e-3, limit).unwrap();
            shards.iter().rev().for_each(|s| reverse.merge(s).unwrap());
            let mut left = shards[0].clone();
            left.merge(&shards[1]).unwrap();
            left.merge(&shards[2]).unwrap();
            let mut right = shards[3].clone();
            right.merge(&shards[4]).unwrap();
            right.merge(&shards[5]).unwrap();
            left.merge(&right).unwrap();
            for m in [&in_order, &reverse, &left] {
                assert_eq!(*m, whole, "limit {limit}");
                for q in QS {
                    assert_eq!(m.quantile(q).to_bits(), whole.quantile(q).to_bits());
                }
            }
        }
        // A sketch of other values is not equal.
        let mut other = sketch_of(1e-3, 0, &v);
        other.add(1e-9);
        assert_ne!(other, sketch_of(1e-3, 0, &v));
    }

    #[test]
    fn memory_does_not_grow_with_the_number_of_values() {
        let small = sketch_of(1e-3, 0, &exponentials(6, 1_000, 1.0));
        let big = sketch_of(1e-3, 0, &exponentials(6, 200_000, 1.0));
        // The buckets span ln(max/min)/ln γ: the same order for 1 000 and 200 000 values.
        let span =
            |s: &QuantileSketch| (libm::log(s.max() / s.min()) / libm::log(1.001 / 0.999)).ceil();
        assert!(
            big.buckets() as f64 <= 4.0 * span(&big) + 16.0,
            "{}",
            big.buckets()
        );
        assert!(
            big.buckets() < 8 * small.buckets(),
            "{} vs {}",
            big.buckets(),
            small.buckets()
        );
        assert!(big.buckets() < 20_000);
    }

    #[test]
    fn bad_parameters_and_mismatched_merges_are_refused() {
        assert_eq!(
            QuantileSketch::new(0.0, 0).unwrap_err(),
            SketchError::RelativeError(0.0)
        );
        assert!(QuantileSketch::new(f64::NAN, 0).is_err());
        assert!(QuantileSketch::new(0.6, 0).is_err());
        assert!(QuantileSketch::new(0.01, 20_000_000).is_err());
        let mut a = QuantileSketch::new(0.01, 0).unwrap();
        let b = QuantileSketch::new(0.02, 0).unwrap();
        let e = a.merge(&b).unwrap_err();
        assert!(e.to_string().contains("0.02"), "{e}");
        assert!(QuantileSketch::default().quantile(0.5).is_nan());
    }
}
