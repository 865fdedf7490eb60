//! Discrete-event engine: simulated time, an event queue, a seeded RNG, CPU accounting
//! and a task scheduler with run queues and wait states. It knows nothing of memory:
//! the kernel model drives it and decides what tasks do.
//!
//! Invariants: time never goes backwards; events at the same instant run in the order
//! they were scheduled; nothing here allocates per event once capacities have grown.

pub mod cpu;
pub mod lock;
pub mod queue;
pub mod rng;
pub mod sched;

pub use cpu::CpuAccount;
pub use lock::{LockKind, LockQueue};
pub use queue::EventQueue;
pub use rng::Rng;
pub use sched::{FairParams, RunState, Sched, TaskId, NICE_0_LOAD};

/// Simulated time in nanoseconds since boot.
pub type Ns = u64;
pub const NS_PER_US: Ns = 1_000;
pub const NS_PER_MS: Ns = 1_000_000;
pub const NS_PER_SEC: Ns = 1_000_000_000;

/// Seconds as f64 from ns.
#[inline]
pub fn secs(t: Ns) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// The proleptic Gregorian date (year, month 1..=12, day 1..=31) of `days` since 1970-01-01
/// (Howard Hinnant's civil_from_days), for tools that print dates.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + (m <= 2) as i64, m as u32, d as u32)
}
