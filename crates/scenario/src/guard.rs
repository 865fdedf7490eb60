//! What keeps a run bounded and visible: the limits (simulated time, wall time, events,
//! output) and the output hook that streams the transcript while the simulation makes it.
//!
//! The shell asks the guard after every kernel event (`on_event`) and at every sampled tick
//! and top-level command (`poll`). The hook gets each new piece of the transcript, in order,
//! at least every `HOOK_INTERVAL` of wall time while the simulation runs; returning false
//! (Ctrl-C, an error in the caller) stops the run as interrupted.

use crate::{Limits, OutputHook, StopReason};
use memtwin_kernel::{Kernel, NS_PER_SEC};
use std::time::{Duration, Instant};

/// Longest the hook waits while the simulation runs (also how soon Ctrl-C is seen).
const HOOK_INTERVAL: Duration = Duration::from_millis(100);
/// Events between looks at the output size and the clock (powers of two).
const OUTPUT_EVERY: u64 = 16;
const CLOCK_EVERY: u64 = 1024;

pub struct Guard {
    pub limits: Limits,
    hook: Option<OutputHook>,
    /// Bytes of the transcript already handed to the hook.
    flushed: usize,
    events: u64,
    started: Instant,
    last_hook: Instant,
    /// Why the run stopped early, and the message saying so.
    pub hit: Option<(StopReason, String)>,
}

impl Default for Guard {
    fn default() -> Guard {
        Guard::new(Limits::default(), None)
    }
}

impl Guard {
    pub fn new(limits: Limits, hook: Option<OutputHook>) -> Guard {
        let now = Instant::now();
        Guard { limits, hook, flushed: 0, events: 0, started: now, last_hook: now, hit: None }
    }

    fn stop(&mut self, reason: StopReason, what: String, k: &Kernel) -> bool {
        if self.hit.is_none() {
            let at = k.now as f64 / NS_PER_SEC as f64;
            self.hit = Some((reason, format!("{what} at {at:.3} s of simulated time; stopped ({})", reason.option())));
        }
        true
    }

    fn output_bytes(k: &Kernel) -> u64 {
        (k.transcript.len() + k.buffers.iter().map(String::len).sum::<usize>()) as u64
    }

    fn check_output(&mut self, k: &Kernel) -> bool {
        let limit = self.limits.max_output;
        if Self::output_bytes(k) > limit {
            return self.stop(StopReason::Output, format!("output limit of {limit} bytes reached"), k);
        }
        false
    }

    fn check_wall(&mut self, k: &Kernel) -> bool {
        if let Some(limit) = self.limits.max_wall {
            if self.started.elapsed() > limit {
                return self.stop(StopReason::Wall, format!("wall-time limit of {} s reached", limit.as_secs_f64()), k);
            }
        }
        false
    }

    /// Kernel events seen so far.
    #[cfg(test)]
    pub fn events(&self) -> u64 {
        self.events
    }

    /// After every kernel event: true to stop the run now.
    pub fn on_event(&mut self, k: &Kernel) -> bool {
        if self.hit.is_some() {
            return true;
        }
        self.events += 1;
        if self.events > self.limits.max_events {
            let limit = self.limits.max_events;
            return self.stop(StopReason::Events, format!("event limit of {limit} kernel events reached"), k);
        }
        if self.events & (OUTPUT_EVERY - 1) == 0 && self.check_output(k) {
            return true;
        }
        if self.events & (CLOCK_EVERY - 1) == 0 {
            if self.check_wall(k) {
                return true;
            }
            if self.hook.is_some() && self.last_hook.elapsed() >= HOOK_INTERVAL {
                return self.call_hook(k);
            }
        }
        false
    }

    /// At a sampled tick (`waiting`: the shell waits for time to pass, so reaching the
    /// simulated-time limit stops it) or after a top-level command (a script that ends exactly
    /// at the limit is within it): check the limits and stream what is new (at once when
    /// `now`, else when the hook is due). True to stop the run.
    pub fn poll(&mut self, k: &Kernel, waiting: bool, now: bool) -> bool {
        if self.hit.is_some() || self.check_output(k) || self.check_wall(k) {
            return true;
        }
        if k.now > self.limits.max_sim_ns || (waiting && k.now >= self.limits.max_sim_ns) {
            let s = self.limits.max_sim_ns as f64 / NS_PER_SEC as f64;
            return self.stop(StopReason::SimTime, format!("simulated-time limit of {s} s reached"), k);
        }
        if self.hook.is_some() && (now || self.last_hook.elapsed() >= HOOK_INTERVAL) {
            return self.call_hook(k);
        }
        false
    }

    fn call_hook(&mut self, k: &Kernel) -> bool {
        self.last_hook = Instant::now();
        let Some(hook) = self.hook.as_mut() else { return false };
        let text = k.transcript.get(self.flushed..).unwrap_or("");
        self.flushed = k.transcript.len();
        if !hook(text) {
            self.hit = Some((StopReason::Interrupted, "interrupted".into()));
            return true;
        }
        false
    }

    /// Hand the hook whatever it has not seen yet (at the end of the run).
    pub fn flush(&mut self, transcript: &str) {
        if let Some(hook) = self.hook.as_mut() {
            let text = transcript.get(self.flushed..).unwrap_or("");
            self.flushed = transcript.len();
            if !text.is_empty() && !hook(text) && self.hit.is_none() {
                self.hit = Some((StopReason::Interrupted, "interrupted".into()));
            }
        }
    }
}
