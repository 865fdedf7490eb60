//! A kernel lock that tasks queue on (a spinlock or mutex seen from far away): holders
//! are served one at a time in FIFO order, each for its own hold time. Queueing here is
//! what makes many concurrent reclaimers wait on each other.

use crate::{Ns, TaskId};
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct LockQueue {
    /// When the current holder releases it.
    pub free_at: Ns,
    pub waiters: VecDeque<TaskId>,
    /// Total time tasks spent waiting for it, and acquisitions.
    pub wait_ns: u64,
    pub acquisitions: u64,
}

impl LockQueue {
    /// Acquire at `now` for `hold` ns; returns the time the caller gets the lock (the
    /// caller spins or sleeps until then) and so releases it at `return + hold`.
    pub fn acquire(&mut self, now: Ns, hold: Ns) -> Ns {
        let start = self.free_at.max(now);
        self.wait_ns += start - now;
        self.free_at = start + hold;
        self.acquisitions += 1;
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn fifo_service() {
        let mut l = LockQueue::default();
        assert_eq!(l.acquire(0, 10), 0);
        assert_eq!(l.acquire(5, 10), 10);
        assert_eq!(l.acquire(6, 10), 20);
        assert_eq!(l.acquire(100, 10), 100);
        assert_eq!(l.wait_ns, 5 + 14);
    }
}
