//! The samplers: uniform, exponential (a ziggurat), normal, Poisson (inversion and PTRS)
//! and shuffle, all on any [`Rng`] and bit-identical on every machine (`libm`).

use rand::Rng;

/// Uniform in [0, 1) with 53 random bits.
#[inline]
pub fn uniform01<R: Rng>(rng: &mut R) -> f64 {
    unit_f64(rng.next_u64())
}

/// The uniform in [0, 1) [`uniform01`] makes of a 64-bit draw: its high 53 bits.
#[inline]
pub fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Exponential with the given mean: `mean` times a standard exponential from
/// [`standard_exponential`] (`mean <= 0` gives 0, and draws nothing). The number of draws
/// does not depend on the mean, so sweep points that scale a mean keep their common random
/// numbers.
#[inline]
pub fn exponential<R: Rng>(rng: &mut R, mean: f64) -> f64 {
    if mean <= 0.0 {
        return 0.0;
    }
    mean * standard_exponential(rng)
}

/// The ziggurat's right edge `r` for 256 layers of the exponential density (Marsaglia and
/// Tsang 2000, "The Ziggurat Method for Generating Random Variables", Journal of Statistical
/// Software 5(8), section 4; the value rand_distr's `ZIG_EXP_R` also uses).
pub(super) const ZIG_EXP_R: f64 = 7.697_117_470_131_05;

/// The layers of the exponential ziggurat: `x[0] = v / f(r)` (the base layer, a rectangle of
/// height `f(r)` plus the tail beyond `r`, as one virtual rectangle of area `v`), `x[1] = r`,
/// `x[i + 1] = f⁻¹(f(x[i]) + v / x[i])` (each layer of area `v`), `x[256] = 0`, and
/// `f[i] = f(x[i]) = exp(-x[i])`, with `v = (r + 1) exp(-r)` (the tail's area plus the base
/// rectangle's). Computed once with `libm`, so they are the same bits on every machine.
pub(super) struct ZigTables {
    pub(super) x: [f64; 257],
    pub(super) f: [f64; 257],
}

/// The area `v` of each layer: `(r + 1) exp(-r)`.
pub(super) fn zig_exp_v() -> f64 {
    (ZIG_EXP_R + 1.0) * libm::exp(-ZIG_EXP_R)
}

pub(super) fn zig_exp_tables() -> ZigTables {
    let r = ZIG_EXP_R;
    let v = zig_exp_v();
    let mut x = [0.0; 257];
    x[0] = v / libm::exp(-r);
    x[1] = r;
    for i in 1..255 {
        x[i + 1] = -libm::log(v / x[i] + libm::exp(-x[i]));
    }
    x[256] = 0.0;
    let mut f = [0.0; 257];
    for i in 0..257 {
        f[i] = libm::exp(-x[i]);
    }
    ZigTables { x, f }
}

static ZIG_EXP: std::sync::LazyLock<ZigTables> = std::sync::LazyLock::new(zig_exp_tables);

/// The layer a 64-bit draw picks (its low 8 bits) and its point `u · x[layer]`, `u` in (0, 1)
/// from its high 52 bits.
#[inline(always)]
pub(super) fn zig_point(t: &ZigTables, bits: u64) -> (usize, f64) {
    let i = (bits & 0xff) as usize;
    // [1, 2) from the high 52 bits, shifted into (0, 1): never 0.
    let u = f64::from_bits((bits >> 12) | 0x3ff0_0000_0000_0000) - (1.0 - f64::EPSILON / 2.0);
    (i, u * t.x[i])
}

/// A standard exponential (mean 1) by the ziggurat method (Marsaglia and Tsang 2000), in the
/// form of rand_distr's `Exp1` (rand_distr/src/utils.rs, `ziggurat`): one 64-bit draw gives
/// the layer (its low 8 bits) and a uniform in (0, 1) (its high 52 bits); 97.8 % of draws
/// end there with one multiplication and a comparison. The rest take a second uniform: the tail beyond
/// `r` (layer 0) is `r` plus an exponential by inversion (`-log1p(-u)`), and a draw in a
/// layer's wedge is accepted when a uniform point under the layer lies under the density.
/// A sample takes 1.034 64-bit draws on average (the test below counts them). Exact in
/// distribution up to floating-point rounding. It replaced `-log1p(-u)` for every
/// draw, which made every digest change (issue 15): `libm`'s `log1p` is a long chain of
/// dependent floating-point operations, about 20 % of an M/M/c+M run's time.
///
/// The one-draw path is inlined into each caller; the rest (2.2 % of samples) is a call.
#[inline]
pub fn standard_exponential<R: Rng>(rng: &mut R) -> f64 {
    let t = &*ZIG_EXP;
    let (i, x) = zig_point(t, rng.next_u64());
    if x < t.x[i + 1] {
        return x;
    }
    standard_exponential_rest(rng, t, i, x)
}

/// [`standard_exponential`] after a first point `x` in layer `i` that is not inside the
/// layer below: the base's tail, the wedge test, and further tries.
#[cold]
#[inline(never)]
fn standard_exponential_rest<R: Rng>(rng: &mut R, t: &ZigTables, i: usize, x: f64) -> f64 {
    let (mut i, mut x) = (i, x);
    loop {
        if i == 0 {
            return ZIG_EXP_R - libm::log1p(-uniform01(rng));
        }
        if t.f[i + 1] + (t.f[i] - t.f[i + 1]) * uniform01(rng) < libm::exp(-x) {
            return x;
        }
        (i, x) = zig_point(t, rng.next_u64());
        if x < t.x[i + 1] {
            return x;
        }
    }
}

/// Uniform in [lo, hi).
#[inline]
pub fn uniform<R: Rng>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * uniform01(rng)
}

/// Uniform integer in `0..n` (Lemire's widening multiply, unbiased by rejection). `n > 0`.
#[inline]
pub fn below<R: Rng>(rng: &mut R, n: u64) -> u64 {
    assert!(n > 0, "below(0)");
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = rng.next_u64();
        let m = (x as u128) * (n as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// Standard normal by Box–Muller (one draw per call; two uniforms consumed).
pub fn standard_normal<R: Rng>(rng: &mut R) -> f64 {
    let u1 = 1.0 - uniform01(rng); // (0, 1]
    let u2 = uniform01(rng);
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
}

/// Poisson with mean `lambda`, exact in distribution (up to floating-point rounding): inversion
/// by sequential search below a mean of 10 (one uniform), the transformed rejection method PTRS
/// of Hörmann (1993, "The transformed rejection method for generating Poisson random
/// variables", Insurance: Mathematics and Economics 12(1), 39-45) from 10 on (two uniforms per
/// attempt, about 1.1 attempts per draw whatever the mean; the constants are the paper's, as in
/// numpy's `random_poisson_ptrs`, numpy/random/src/distributions/distributions.c). A mean that
/// is not positive (or NaN) gives 0.
#[inline]
pub fn poisson<R: Rng>(rng: &mut R, lambda: f64) -> u64 {
    if lambda.is_nan() || lambda <= 0.0 {
        return 0;
    }
    if lambda < 10.0 {
        poisson_inversion(rng, lambda)
    } else {
        poisson_ptrs(rng, lambda)
    }
}

/// Inversion by sequential search: the smallest k with U < F(k), F the Poisson cdf built up
/// term by term (`0 < lambda < 10`, so `exp(-lambda)` is far from underflow and the search
/// takes about `lambda` steps).
fn poisson_inversion<R: Rng>(rng: &mut R, lambda: f64) -> u64 {
    let u = uniform01(rng);
    let mut p = libm::exp(-lambda);
    let mut f = p;
    let mut k = 0u64;
    while u >= f {
        k += 1;
        p *= lambda / k as f64;
        let next = f + p;
        if next == f {
            // The cdf has reached 1 in floating point (u within 1e-16 of 1): the tail left is
            // below rounding.
            break;
        }
        f = next;
    }
    k
}

/// PTRS (Hörmann 1993, algorithm PTRS), `lambda >= 10`.
fn poisson_ptrs<R: Rng>(rng: &mut R, lambda: f64) -> u64 {
    let slam = libm::sqrt(lambda);
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let invalpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    let mut logs: Option<(f64, f64)> = None;
    loop {
        let u = uniform01(rng) - 0.5;
        let v = uniform01(rng);
        let us = 0.5 - u.abs();
        // `as` saturates: an infinite or huge value (us near 0) lands far outside and is
        // rejected below.
        let k = floor_i64((2.0 * a / us + b) * u + lambda + 0.43);
        if us >= 0.07 && v <= vr {
            return k as u64;
        }
        if k < 0 || (us < 0.013 && v > us) {
            continue;
        }
        // log(lambda) and log(invalpha) only here, once a draw: most draws are accepted
        // above without them (pure functions, so computing them on the way, as numpy does,
        // or here gives the same values).
        let (loglam, log_invalpha) =
            *logs.get_or_insert_with(|| (libm::log(lambda), libm::log(invalpha)));
        // log(v) of v == 0 is -inf, which accepts: the same as the paper.
        if libm::log(v) + log_invalpha - libm::log(a / (us * us) + b)
            <= -lambda + k as f64 * loglam - log_factorial(k as u64)
        {
            return k as u64;
        }
    }
}

/// `floor(x) as i64` (saturating, NaN to 0), without a call: truncate toward zero, then step
/// down where that rounded a negative non-integer up. Floor is exact, so this is
/// `libm::floor(x) as i64` for every `x` (a test checks the edges and a million draws).
#[inline]
pub(super) fn floor_i64(x: f64) -> i64 {
    let t = x as i64;
    if (t as f64) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// How many `log(k!)` [`log_factorial`] keeps.
pub(super) const LOG_FACTORIALS: usize = 2048;

/// `lgamma(k + 1)` for `k < LOG_FACTORIALS`, computed once with `libm`.
static LOG_FACTORIAL: std::sync::LazyLock<Box<[f64]>> = std::sync::LazyLock::new(|| {
    (0..LOG_FACTORIALS)
        .map(|k| libm::lgamma(k as f64 + 1.0))
        .collect()
});

/// `log(k!)` as `libm::lgamma(k + 1)` gives it, the same bits: from a table below
/// `LOG_FACTORIALS` (PTRS's slow path, about a third of its draws at a mean of 100, needs
/// one a try), by `lgamma` above.
#[inline]
pub(super) fn log_factorial(k: u64) -> f64 {
    match LOG_FACTORIAL.get(k as usize) {
        Some(&x) => x,
        None => libm::lgamma(k as f64 + 1.0),
    }
}

/// In-place Fisher–Yates shuffle.
pub fn shuffle<R: Rng, T>(rng: &mut R, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = below(rng, (i + 1) as u64) as usize;
        v.swap(i, j);
    }
}
