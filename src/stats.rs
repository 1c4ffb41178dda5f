//! Per-sweep-point statistics (statrs for the Student t and normal quantiles).
//!
//! For a measurement: mean, sample standard deviation, a 95 % confidence interval of the mean
//! (Student t with n − 1 degrees of freedom), and the p50/p90/p99/max of the replicates
//! (nearest-rank quantiles, exact). For a 0/1 outcome additionally the proportion with a
//! 95 % Wilson score interval, which stays honest at 0 and 1 (where a t interval collapses).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Confidence level of every interval vtsim reports.
pub const CONFIDENCE: f64 = 0.95;

/// Summary of one metric at one sweep point.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Replicates.
    pub n: u64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for n < 2).
    pub sd: f64,
    /// Lower end of the 95 % CI of the mean.
    pub ci_lo: f64,
    /// Upper end of the 95 % CI of the mean.
    pub ci_hi: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

/// Two-sided critical value of Student's t with `df` degrees of freedom at [`CONFIDENCE`].
pub fn t_critical(df: u64) -> f64 {
    let q = 1.0 - (1.0 - CONFIDENCE) / 2.0;
    if df == 0 {
        return f64::INFINITY;
    }
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("valid t")
        .inverse_cdf(q)
}

/// Two-sided standard normal critical value at [`CONFIDENCE`] (1.959963…).
pub fn z_critical() -> f64 {
    let q = 1.0 - (1.0 - CONFIDENCE) / 2.0;
    Normal::new(0.0, 1.0).expect("valid normal").inverse_cdf(q)
}

/// Two-sided standard normal critical value for a miss probability `alpha` (both tails
/// together): `z_two_sided(0.05)` is 1.959963….
pub fn z_two_sided(alpha: f64) -> f64 {
    Normal::new(0.0, 1.0)
        .expect("valid normal")
        .inverse_cdf(1.0 - alpha / 2.0)
}

/// Two-sided Student t critical value with `df` degrees of freedom for a miss probability
/// `alpha` (infinite for `df` = 0).
pub fn t_two_sided(df: u64, alpha: f64) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    StudentsT::new(0.0, 1.0, df as f64)
        .expect("valid t")
        .inverse_cdf(1.0 - alpha / 2.0)
}

/// Nearest-rank quantile of sorted values (`q` in [0, 1]).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let n = sorted.len();
    let rank = (q * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Summarise replicate values (order does not matter; the sum is taken in the given order,
/// which is job order, so results do not depend on threads).
pub fn summarize(values: &[f64]) -> Summary {
    let n = values.len() as u64;
    if n == 0 {
        return Summary {
            n: 0,
            mean: f64::NAN,
            sd: f64::NAN,
            ci_lo: f64::NAN,
            ci_hi: f64::NAN,
            p50: f64::NAN,
            p90: f64::NAN,
            p99: f64::NAN,
            max: f64::NAN,
        };
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let half = if n > 1 {
        t_critical(n - 1) * sd / (n as f64).sqrt()
    } else {
        f64::INFINITY
    };
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Summary {
        n,
        mean,
        sd,
        ci_lo: mean - half,
        ci_hi: mean + half,
        p50: quantile_sorted(&sorted, 0.50),
        p90: quantile_sorted(&sorted, 0.90),
        p99: quantile_sorted(&sorted, 0.99),
        max: *sorted.last().expect("non-empty"),
    }
}

/// 95 % Wilson score interval for `successes` out of `n`.
pub fn wilson(successes: u64, n: u64) -> (f64, f64) {
    wilson_z(successes, n, z_critical())
}

/// Wilson score interval for `successes` out of `n` with critical value `z` (e.g.
/// [`z_two_sided`] of a smaller miss probability).
pub fn wilson_z(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let nf = n as f64;
    let p = successes as f64 / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let centre = (p + z2 / (2.0 * nf)) / denom;
    let half = z * ((p * (1.0 - p) / nf) + z2 / (4.0 * nf * nf)).sqrt() / denom;
    // At 0 and n the exact bounds are 0 and 1; say so rather than print rounding residue.
    let lo = if successes == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if successes == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_and_z_critical_values() {
        assert!((z_critical() - 1.959_963_985).abs() < 1e-6);
        assert!((t_critical(9) - 2.262_157).abs() < 1e-5);
        assert!((t_critical(1000) - 1.962_339).abs() < 1e-5);
    }

    #[test]
    fn summary_of_known_values() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!(s.mean, 5.5);
        assert!((s.sd - 3.027_650_354).abs() < 1e-8);
        assert_eq!(s.p50, 5.0);
        assert_eq!(s.p90, 9.0);
        assert_eq!(s.p99, 10.0);
        assert_eq!(s.max, 10.0);
        let half = 2.262_157 * 3.027_650_354 / 10f64.sqrt();
        assert!((s.ci_hi - 5.5 - half).abs() < 1e-4);
    }

    #[test]
    fn critical_values_at_any_level() {
        assert!((z_two_sided(0.05) - z_critical()).abs() < 1e-12);
        assert!((z_two_sided(0.01) - 2.575_829).abs() < 1e-5);
        assert!((t_two_sided(9, 0.05) - t_critical(9)).abs() < 1e-12);
        assert!((t_two_sided(9, 0.01) - 3.249_836).abs() < 1e-5);
        assert_eq!(t_two_sided(0, 0.05), f64::INFINITY);
    }

    #[test]
    fn wilson_matches_the_textbook() {
        // 0 of 1000: upper bound ~ 3.83e-3 (z^2 / (n + z^2)).
        let (lo, hi) = wilson(0, 1000);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.003_826).abs() < 1e-5, "{hi}");
        // 50 of 100: 0.4038 .. 0.5962
        let (lo, hi) = wilson(50, 100);
        assert!((lo - 0.4038).abs() < 1e-4 && (hi - 0.5962).abs() < 1e-4);
    }
}
