//! The progress of an advise search on stderr: the [`Ticker`] and its lock.

use std::io::IsTerminal;
use std::time::Instant;
use vtsim::advise;

/// The ticker behind its lock (a panic elsewhere cannot leave it unusable).
pub fn lock(t: &std::sync::Mutex<Ticker>) -> std::sync::MutexGuard<'_, Ticker> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

/// Progress of an advise search on stderr: a spinner with the runs so far on a terminal,
/// else one line at most every 10 s; each decided candidate is one line either way.
pub struct Ticker {
    bar: Option<indicatif::ProgressBar>,
    t0: Instant,
    last_line: Instant,
}

impl Ticker {
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            if let Ok(st) =
                indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
            {
                b.set_style(st);
            }
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        let now = Instant::now();
        Ticker {
            bar,
            t0: now,
            last_line: now,
        }
    }

    /// A batch of runs finished (`runs` so far in all, on candidate `label`).
    pub fn runs(&mut self, knob: &str, label: &str, runs: u64) {
        let msg = format!("{knob}={label}: {runs} runs so far");
        match &self.bar {
            Some(b) => b.set_message(msg),
            None => {
                if self.last_line.elapsed().as_secs_f64() >= 10.0 {
                    self.last_line = Instant::now();
                    eprintln!(
                        "vtsim advise: {msg}, {:.0} s",
                        self.t0.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    /// A candidate was decided.
    pub fn decided(&mut self, s: &advise::Search, t: &advise::Tested, total: u64) {
        let line = format!(
            "vtsim advise: {}={}: {} after {} runs (estimate {}, decision interval [{}, {}]); \
             {} runs so far, {:.1} s",
            s.knob,
            t.value.label,
            t.decision.word(),
            t.runs,
            advise::num(t.estimate),
            advise::num(t.ci_decision.0),
            advise::num(t.ci_decision.1),
            total,
            self.t0.elapsed().as_secs_f64()
        );
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
