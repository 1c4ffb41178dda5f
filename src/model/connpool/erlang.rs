//! Exact steady-state values of the Erlang-A queue (M/M/c+M), ported from
//! `peer/erlang_a.py` (Palm 1943; Garnett, Mandelbaum & Reiman 2002): the birth-death chain
//! with birth rate λ and death rate min(n, c)·μ + max(n − c, 0)·θ, and a tagged-customer
//! computation of the waiting time of those served.

/// Erlang-A values.
#[derive(Clone, Copy, Debug)]
pub struct ErlangA {
    /// P(an arrival must wait) = P(N ≥ c).
    pub p_wait: f64,
    /// P(an arrival abandons) = θ·E\[Q\]/λ.
    pub p_abandon: f64,
    /// Mean time in queue over all arrivals (abandoners included) = E\[Q\]/λ.
    pub mean_wait_all: f64,
    /// Mean time in queue of the customers served.
    pub mean_wait_served: f64,
}

/// Erlang-A for arrival rate `lam`, service rate `mu`, `c` servers, patience rate `theta`.
pub fn erlang_a(lam: f64, mu: f64, c: u32, theta: f64) -> ErlangA {
    assert!(theta > 0.0 && lam > 0.0 && mu > 0.0 && c > 0);
    let c_f = c as f64;
    let mut logp = vec![0.0f64];
    let mut best = 0.0f64;
    let tol = (1e-15f64).ln();
    let mut n = 0usize;
    loop {
        n += 1;
        let death = (n.min(c as usize)) as f64 * mu + (n.saturating_sub(c as usize)) as f64 * theta;
        let next = logp[n - 1] + lam.ln() - death.ln();
        logp.push(next);
        best = best.max(next);
        if n > c as usize + 10 && next - best < tol {
            break;
        }
        if n >= 100_000 {
            break;
        }
    }
    let w: Vec<f64> = logp.iter().map(|x| (x - best).exp()).collect();
    let z: f64 = w.iter().sum();
    let pi: Vec<f64> = w.iter().map(|x| x / z).collect();
    let c_u = c as usize;
    let p_wait: f64 = pi[c_u..].iter().sum();
    let eq: f64 = pi
        .iter()
        .enumerate()
        .skip(c_u)
        .map(|(k, p)| (k - c_u) as f64 * p)
        .sum();
    let mut p_served: f64 = pi[..c_u].iter().sum();
    let mut w_served = 0.0;
    for (k, pk) in pi.iter().enumerate().skip(c_u) {
        let j = k - c_u;
        let mut ps = 1.0;
        let mut ws = 0.0;
        for i in 0..=j {
            let i = i as f64;
            ps *= (c_f * mu + i * theta) / (c_f * mu + (i + 1.0) * theta);
            ws += 1.0 / (c_f * mu + (i + 1.0) * theta);
        }
        p_served += pk * ps;
        w_served += pk * ps * ws;
    }
    ErlangA {
        p_wait,
        p_abandon: theta * eq / lam,
        mean_wait_all: eq / lam,
        mean_wait_served: w_served / p_served,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_python_peer() {
        // `python3 peer/erlang_a.py` (lam 25, mu 1, c 20, theta 2), also in
        // peer/results/simpy_mmc_200k_run1.json "theory".
        let r = erlang_a(25.0, 1.0, 20, 2.0);
        assert!((r.p_abandon - 0.2261332543714174).abs() < 1e-12);
        assert!((r.p_wait - 0.764441378237288).abs() < 1e-12);
        assert!((r.mean_wait_all - 0.1130666271857087).abs() < 1e-12);
        assert!((r.mean_wait_served - 0.11169328085926741).abs() < 1e-12);
    }
}
