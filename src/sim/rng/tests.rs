//! Unit tests of the streams, the ChaCha8 kernels against rand_chacha, and the samplers
//! against their distributions and pinned draws.

use super::chacha::{chacha8_first_block_portable, chacha8_first_u64s4_portable};
use super::sample::{
    floor_i64, log_factorial, zig_exp_tables, zig_exp_v, zig_point, LOG_FACTORIALS, ZIG_EXP_R,
};
use super::stream::seed_key;
use super::*;
use rand::{Rng, SeedableRng};

#[test]
fn streams_are_independent_of_each_other() {
    let mut a = stream(42, "vtgate", 0);
    let mut b = stream(42, "vtgate", 1);
    let mut a2 = stream(42, "vtgate", 0);
    let x: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
    let y: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
    let x2: Vec<u64> = (0..4).map(|_| a2.next_u64()).collect();
    assert_ne!(x, y);
    assert_eq!(x, x2);
}

#[test]
fn a_lazy_stream_draws_what_the_eager_one_does() {
    let mut eager = stream(9, "tablet", 3);
    let mut lazy = LazyRng::new(9, "tablet", 3);
    let mut cached = cached_stream(9, "tablet", 3);
    for _ in 0..4 {
        let x = eager.next_u64();
        assert_eq!(lazy.get().next_u64(), x);
        assert_eq!(cached.next_u64(), x);
    }
    assert_ne!(
        LazyRng::new(9, "tablet", 4).get().next_u64(),
        stream(9, "tablet", 3).next_u64()
    );
}

/// Streams made through the per-thread seed cache, interleaving seeds and tags (so the
/// cache is hit and missed), draw exactly what a freshly seeded generator does.
#[test]
fn the_seed_cache_changes_no_draw() {
    let fresh = |seed: u64, tag: &str, i: u32| {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        r.set_stream(stream_id(tag, i));
        (0..70).map(|_| r.next_u64()).collect::<Vec<_>>()
    };
    for seed in [1u64, 1, 2, 1, u64::MAX, u64::MAX, 0] {
        for (tag, i) in [("vtgate", 0), ("vtgate", 9), ("tablet", 3)] {
            let mut a = stream(seed, tag, i);
            let mut b = cached_stream(seed, tag, i);
            let mut c = LazyRng::new(seed, tag, i);
            let want = fresh(seed, tag, i);
            assert_eq!((0..70).map(|_| a.next_u64()).collect::<Vec<_>>(), want);
            assert_eq!((0..70).map(|_| b.next_u64()).collect::<Vec<_>>(), want);
            assert_eq!(
                (0..70).map(|_| c.get().next_u64()).collect::<Vec<_>>(),
                want
            );
        }
    }
    assert_ne!(fresh(1, "vtgate", 0), fresh(2, "vtgate", 0));
}

/// The one-block ChaCha8 is rand_chacha's first block, for many keys and stream ids.
#[test]
fn the_first_block_is_the_generators() {
    for seed in [0u64, 1, 42, 0xDEAD_BEEF, u64::MAX] {
        for id in [0u64, 1, 7, 1 << 32, stream_id("vtgate", 3), u64::MAX] {
            let key = seed_key(seed);
            let mut r = ChaCha8Rng::from_seed(key);
            r.set_stream(id);
            let want: Vec<u32> = (0..16).map(|_| r.next_u32()).collect();
            assert_eq!(
                chacha8_first_block(&key, id).to_vec(),
                want,
                "seed {seed} id {id}"
            );
            let portable = chacha8_first_block_portable(&key, id);
            assert_eq!(portable.to_vec(), want, "seed {seed} id {id}");
        }
    }
}

/// Drawn through its `Rng` (first u64 from the first block, then the generator), a lazy
/// stream gives the eager stream's draws, in any mix of u32 and u64 draws, and after a
/// reseed.
#[test]
fn a_lazy_stream_drawn_directly_draws_what_the_eager_one_does() {
    for seed in [3u64, 3, 17, u64::MAX] {
        for i in [0u32, 5, 9999] {
            let mut eager = stream(seed, "vtgate", i);
            let mut lazy = LazyRng::new(seed ^ 1, "vtgate", i);
            lazy.reseed(seed);
            for k in 0..40 {
                if k % 3 == 2 {
                    assert_eq!(lazy.next_u32(), eager.next_u32(), "seed {seed} {i} {k}");
                } else {
                    assert_eq!(lazy.next_u64(), eager.next_u64(), "seed {seed} {i} {k}");
                }
            }
            // One draw through the trait, the rest through `get`.
            let mut eager = stream(seed, "tablet", i);
            let mut lazy = LazyRng::new(seed, "tablet", i);
            assert_eq!(lazy.next_u64(), eager.next_u64());
            for _ in 0..70 {
                assert_eq!(lazy.get().next_u64(), eager.next_u64());
            }
        }
    }
    let (mut a, mut b) = (LazyRng::new(1, "vtgate", 0), LazyRng::new(1, "vtgate", 1));
    assert_ne!(a.next_u64(), b.next_u64());
}

#[test]
fn chacha8_first_draw_is_the_documented_one() {
    // rand_chacha 0.3, 0.9 and 0.10 all give 12578764544318200737 first for seed 42.
    let mut r = ChaCha8Rng::seed_from_u64(42);
    assert_eq!(r.next_u64(), 12578764544318200737);
}

#[test]
fn poisson_mean_is_right() {
    let mut r = stream(7, "t", 0);
    for lambda in [0.5, 12.0, 80.0, 2000.0] {
        let n = 4000;
        let s: u64 = (0..n).map(|_| poisson(&mut r, lambda)).sum();
        let m = s as f64 / n as f64;
        let se = (lambda / n as f64).sqrt();
        assert!((m - lambda).abs() < 4.0 * se, "lambda {lambda}: mean {m}");
    }
}

/// The Poisson pmf at 0..=hi (log-space recurrence from the mode, independent of the
/// sampler's `lgamma`).
fn poisson_pmf(lambda: f64, hi: usize) -> Vec<f64> {
    let m = lambda.floor() as usize;
    let log_fact_m: f64 = (1..=m).map(|i| (i as f64).ln()).sum();
    let log_pm = -lambda + m as f64 * lambda.ln() - log_fact_m;
    let mut pmf = vec![0.0; hi.max(m) + 1];
    pmf[m] = log_pm.exp();
    for k in m + 1..pmf.len() {
        pmf[k] = pmf[k - 1] * lambda / k as f64;
    }
    for k in (0..m).rev() {
        pmf[k] = pmf[k + 1] * (k + 1) as f64 / lambda;
    }
    pmf.truncate(hi + 1);
    pmf
}

/// G statistic of `draws` against Poisson(`lambda`) and its degrees of freedom: cells are
/// single values with expected count >= 5, the two tails pooled into the end cells.
fn g_test(draws: &[u64], lambda: f64) -> (f64, usize) {
    let n = draws.len() as f64;
    let hi = (lambda + 12.0 * lambda.sqrt() + 30.0) as usize;
    let pmf = poisson_pmf(lambda, hi);
    let lo = pmf.iter().position(|p| p * n >= 5.0).unwrap();
    let top = pmf.iter().rposition(|p| p * n >= 5.0).unwrap();
    // Cell c covers value lo + c; the first also everything below, the last everything above.
    let cells = top - lo + 1;
    let mut expected: Vec<f64> = pmf[lo..=top].iter().map(|p| p * n).collect();
    expected[0] += pmf[..lo].iter().sum::<f64>() * n;
    let below_top: f64 = pmf[..=top].iter().sum();
    expected[cells - 1] += (1.0 - below_top).max(0.0) * n;
    let mut observed = vec![0u64; cells];
    for &x in draws {
        let c = (x as usize).clamp(lo, top) - lo;
        observed[c] += 1;
    }
    let g: f64 = observed
        .iter()
        .zip(&expected)
        .filter(|(o, _)| **o > 0)
        .map(|(&o, &e)| 2.0 * o as f64 * (o as f64 / e).ln())
        .sum();
    (g, cells - 1)
}

/// Upper 1e-6 quantile of chi-square with `df` degrees of freedom (Wilson-Hilferty).
fn chi2_crit(df: usize) -> f64 {
    let d = df as f64;
    let z = 4.753; // standard normal upper 1e-6 point
    d * (1.0 - 2.0 / (9.0 * d) + z * (2.0 / (9.0 * d)).sqrt()).powi(3)
}

/// The sampler against the pmf at means on both sides of the switch at 10 and far out in
/// PTRS's range; the same test rejects a rounded normal (the old sampler above 500) and a
/// mean 3 % off, so it can fail.
#[test]
fn poisson_follows_the_pmf() {
    let n = 200_000;
    for (i, lambda) in [0.3, 2.5, 9.99, 10.0, 17.5, 63.0, 400.0, 5000.0, 1e5]
        .into_iter()
        .enumerate()
    {
        let mut r = stream(11, "poisson-g", i as u32);
        let draws: Vec<u64> = (0..n).map(|_| poisson(&mut r, lambda)).collect();
        let (g, df) = g_test(&draws, lambda);
        assert!(g < chi2_crit(df), "lambda {lambda}: G {g:.1} on {df} df");
    }
    let mut r = stream(11, "poisson-g", 100);
    let normal: Vec<u64> = (0..n)
        .map(|_| (30.0 + 30f64.sqrt() * standard_normal(&mut r) + 0.5).max(0.0) as u64)
        .collect();
    let (g, df) = g_test(&normal, 30.0);
    assert!(
        g > chi2_crit(df),
        "rounded normal not rejected: G {g:.1} on {df} df"
    );
    let off: Vec<u64> = (0..n).map(|_| poisson(&mut r, 200.0 * 1.03)).collect();
    let (g, df) = g_test(&off, 200.0);
    assert!(
        g > chi2_crit(df),
        "3 % off not rejected: G {g:.1} on {df} df"
    );
}

/// The layers against the published table (rand_distr's `ZIG_EXP_X` / `ZIG_EXP_F`,
/// computed in higher precision by its `ziggurat_tables.py`) and the recurrence closing
/// at 0: equal areas all the way up, so picking a layer uniformly is right.
#[test]
#[allow(clippy::excessive_precision)] // the published digits, as printed
fn the_exponential_ziggurat_is_the_published_one() {
    let t = zig_exp_tables();
    let published = [
        (0, 8.697117470131052741, 0.000167066692307963),
        (1, 7.697117470131050077, 0.000454134353841497),
        (2, 6.941033629377212577, 0.000967269282327174),
        (128, 1.6703499537164521, 0.18818119940425426),
        (254, 0.104838507565818778, 0.900469929925747703),
        (255, 0.063852163815001570, 0.938143680862176477),
    ];
    for (i, x, f) in published {
        assert!((t.x[i] - x).abs() < 1e-12 * x, "x[{i}] {} vs {x}", t.x[i]);
        assert!((t.f[i] - f).abs() < 1e-12, "f[{i}] {} vs {f}", t.f[i]);
    }
    let top = -libm::log(zig_exp_v() / t.x[255] + libm::exp(-t.x[255]));
    assert!(top.abs() < 1e-9, "the top layer ends at {top}, not 0");
    assert_eq!((t.x[256], t.f[256]), (0.0, 1.0));
    for i in 0..256 {
        assert!(t.x[i] > t.x[i + 1] && t.f[i] < t.f[i + 1], "layer {i}");
    }
}

/// G statistic of standard exponential `draws` against Exp(1) on `cells` cells of equal
/// probability, the last one open to infinity, and its degrees of freedom.
fn exp_g_test(draws: &[f64], cells: usize) -> (f64, usize) {
    let n = draws.len() as f64;
    let mut observed = vec![0u64; cells];
    for &x in draws {
        // The cdf 1 - exp(-x) is uniform under the hypothesis.
        let c = ((-libm::expm1(-x)) * cells as f64) as usize;
        observed[c.min(cells - 1)] += 1;
    }
    let e = n / cells as f64;
    let g = observed
        .iter()
        .filter(|&&o| o > 0)
        .map(|&o| 2.0 * o as f64 * (o as f64 / e).ln())
        .sum();
    (g, cells - 1)
}

/// The sampler against the exponential's cdf on 2,000 equiprobable cells and its tail
/// beyond the ziggurat's edge `r` (where the base layer hands over to inversion) and
/// beyond `r + 3`; the same tests reject the sampler with its wedge test left out (every
/// wedge draw accepted, about 1 % of the mass misplaced) and a mean 2 % off, so they can
/// fail. Also measures how often one 64-bit draw is enough.
#[test]
fn the_exponential_follows_its_cdf() {
    let n = 2_000_000;
    let mut r = stream(13, "exp-g", 0);
    let draws: Vec<f64> = (0..n).map(|_| standard_exponential(&mut r)).collect();
    let (g, df) = exp_g_test(&draws, 2000);
    assert!(g < chi2_crit(df), "G {g:.1} on {df} df");
    let mean = draws.iter().sum::<f64>() / n as f64;
    // sd 1, so the mean's standard error is 1/sqrt(n); 5 standard errors.
    assert!((mean - 1.0).abs() < 5.0 / (n as f64).sqrt(), "mean {mean}");
    // Tail counts, Poisson: within 5 standard deviations of their expectation.
    for edge in [ZIG_EXP_R, ZIG_EXP_R + 3.0] {
        let k = draws.iter().filter(|&&x| x > edge).count() as f64;
        let e = n as f64 * libm::exp(-edge);
        assert!(
            (k - e).abs() < 5.0 * e.sqrt(),
            "beyond {edge}: {k} vs {e:.1}"
        );
    }
    // How many 64-bit draws a sample takes.
    struct Counting<'a>(&'a mut SimRng, u64);
    impl rand::TryRng for Counting<'_> {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            self.1 += 1;
            Ok(self.0.next_u32())
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            self.1 += 1;
            Ok(self.0.next_u64())
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            self.0.fill_bytes(dst);
            Ok(())
        }
    }
    let mut c = Counting(&mut r, 0);
    for _ in 0..100_000 {
        standard_exponential(&mut c);
    }
    // 256 v attempts a sample (the ziggurat's area over the density's), each of one draw
    // plus one more off the fast path (the mean of 1 - x[i+1]/x[i] over the layers):
    // 1.0336. The count's standard deviation is about 0.19 a sample.
    let t = zig_exp_tables();
    let slow = (0..256).map(|i| 1.0 - t.x[i + 1] / t.x[i]).sum::<f64>() / 256.0;
    let expected = 256.0 * zig_exp_v() * (1.0 + slow);
    let per = c.1 as f64 / 100_000.0;
    assert!(
        (per - expected).abs() < 5.0 * 0.19 / 100_000f64.sqrt(),
        "{per} draws a sample, {expected} expected"
    );

    // Without the wedge test: rejected.
    let no_wedge: Vec<f64> = (0..n)
        .map(|_| {
            let (i, x) = zig_point(&t, r.next_u64());
            if i == 0 && x >= t.x[1] {
                ZIG_EXP_R - libm::log1p(-uniform01(&mut r))
            } else {
                x
            }
        })
        .collect();
    let (g, df) = exp_g_test(&no_wedge, 2000);
    assert!(g > chi2_crit(df), "no wedge test not rejected: G {g:.1}");
    let off: Vec<f64> = (0..n).map(|_| exponential(&mut r, 1.02)).collect();
    let (g, df) = exp_g_test(&off, 2000);
    assert!(g > chi2_crit(df), "2 % off not rejected: G {g:.1}");
}

/// The draws are pinned: a change here changes the digest of every model that draws an
/// exponential (all of them).
#[test]
fn exponential_draws_are_pinned() {
    let mut r = stream(5, "exp-pin", 0);
    let got: Vec<u64> = (0..8)
        .map(|_| standard_exponential(&mut r).to_bits())
        .collect();
    assert_eq!(
        got,
        vec![
            4606519615489702542,
            4612790533891082935,
            4613116426204088493,
            4598101942069241254,
            4606186170794011865,
            4613005163252117087,
            4601442828631284293,
            4600281803480597401
        ]
    );
    assert_eq!(exponential(&mut r, 0.0), 0.0);
    assert_eq!(exponential(&mut r, -1.0), 0.0);
}

#[test]
fn floor_i64_is_libm_floor() {
    let mut xs = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.0,
        -1.0,
        -1.5,
        2.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        4503599627370495.5,
        -4503599627370495.5,
        9.223372036854775e18,
        -9.223372036854775e18,
        9.223372036854776e18,
        -9.223372036854776e18,
        -9.223372036854778e18,
    ];
    for k in [1.0f64, 2f64.powi(52), 2f64.powi(53), 2f64.powi(63)] {
        for x in [k, -k] {
            xs.extend([
                x,
                f64::from_bits(x.to_bits() + 1),
                f64::from_bits(x.to_bits() - 1),
            ]);
        }
    }
    let mut r = stream(3, "floor", 0);
    for _ in 0..1_000_000 {
        let u = uniform01(&mut r) - 0.5;
        xs.push(u * 1e3);
        xs.push(1.0 / u);
    }
    for x in xs {
        assert_eq!(floor_i64(x), libm::floor(x) as i64, "{x:e}");
    }
}

/// Four streams' first `u64` at once are what each stream draws first, for every
/// number of streams modulo 4; a stream told so draws its second next.
#[test]
fn first_u64s_are_each_streams_first_draw() {
    for seed in [0u64, 1, 0xDEAD_BEEF, u64::MAX] {
        for n in [0usize, 1, 3, 4, 5, 10, 13] {
            let mut out = vec![0u64; n];
            first_u64s(seed, "vtgate", &mut out);
            for (i, &x) in out.iter().enumerate() {
                let mut eager = stream(seed, "vtgate", i as u32);
                assert_eq!(x, eager.next_u64(), "seed {seed} stream {i}");
                let mut lazy = LazyRng::new(seed, "vtgate", i as u32);
                lazy.first_u64_drawn(x);
                assert_eq!(lazy.next_u64(), eager.next_u64());
                assert_eq!(lazy.next_u32(), eager.next_u32());
            }
        }
    }
    let mut r = stream(9, "keys", 0);
    for _ in 0..200 {
        let mut key = [0u8; 32];
        r.fill_bytes(&mut key);
        let ids: [u64; 4] = std::array::from_fn(|_| r.next_u64());
        let got = chacha8_first_u64s4(&key, ids);
        assert_eq!(got, chacha8_first_u64s4_portable(&key, ids));
        for l in 0..4 {
            assert_eq!(
                got[l],
                chacha8_first_u64(&chacha8_first_block(&key, ids[l]))
            );
        }
    }
}

/// The table gives `lgamma(k + 1)`'s bits, and so does the fallback past it.
#[test]
fn log_factorials_are_lgammas() {
    for k in (0..LOG_FACTORIALS as u64 + 10).chain([1 << 20, u32::MAX as u64]) {
        let want = libm::lgamma(k as f64 + 1.0);
        assert_eq!(log_factorial(k).to_bits(), want.to_bits(), "{k}");
    }
    assert_eq!(log_factorial(0), 0.0);
    assert!((log_factorial(10) - 3_628_800f64.ln()).abs() < 1e-12);
}

/// The draws are pinned: a change here changes every rollout digest.
#[test]
fn poisson_draws_are_pinned() {
    let mut r = stream(5, "poisson-pin", 0);
    let got: Vec<u64> = [0.0, -1.0, f64::NAN, 0.7, 9.5, 10.0, 250.0, 1e6]
        .into_iter()
        .map(|l| poisson(&mut r, l))
        .collect();
    assert_eq!(got, vec![0, 0, 0, 0, 9, 5, 273, 997_098]);
}
