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
pub use lock::LockQueue;
pub use queue::EventQueue;
pub use rng::Rng;
pub use sched::{RunState, Sched, TaskId};

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
