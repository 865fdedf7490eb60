//! The kernel model: memory management (page allocator and watermarks, LRU lists and
//! reclaim, workingset detection, page cache and readahead, dirty throttling and
//! writeback), filesystems and block devices, run on the discrete-event engine.
//!
//! Module names follow the kernel's files (mm/vmscan.c -> `mm::vmscan`), and rules cite
//! the kernel function they come from, so a kernel engineer can find each rule by name.

pub mod block;
pub mod cgroup;
pub mod delayacct;
pub mod exec;
pub mod fs;
pub mod host;
pub mod idhash;
pub mod ioprio;
mod kernel;
pub mod mm;
pub mod net;
pub mod pipe;
pub mod printk;
pub mod proc;
pub mod profile;
pub mod psi;
pub mod rcu;
mod reboot;
pub mod task;
pub mod wait;

pub use kernel::{Event, Kernel, KernelError, LatencySummary, ReclaimKind, ReclaimState, ReclaimStats, SwapState, WritebackState};
pub use profile::Profile;
pub use task::{Program, Sink, Step, Task};
pub use memtwin_engine::{Ns, TaskId, NS_PER_MS, NS_PER_SEC, NS_PER_US};
