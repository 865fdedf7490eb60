//! A kernel lock that tasks queue on (a spinlock, mutex or rwsem seen from far away):
//! holders are served one at a time in FIFO order, each for its own hold time. Queueing here
//! is what makes many concurrent reclaimers wait on each other.
//!
//! The queue is analytic: a caller asks at its current time for the lock and a hold time
//! and learns when it gets the lock. Calls come in time order from the event loop, so
//! this is exactly FIFO service. How the caller waits until then is the caller's kind of
//! lock: a spinlock waiter burns CPU (a system-time burst), a sleeping lock's waiter sleeps.
//!
//! A step of a path may also ask for a lock at a later instant than the event's (a hold
//! after its own work or after a wait for another lock). Such a hold is booked in the
//! queue's calendar of granted holds, and a caller asking at an earlier instant is served
//! in a gap before it when its hold fits there: the booked caller would, in time order,
//! have asked only then. Without the calendar a hold booked behind a seconds-long wait
//! would keep everyone else off an idle lock until it ends.

use crate::{Ns, TaskId};
use std::collections::VecDeque;

/// How a waiter waits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockKind {
    /// spinlock_t: the waiter spins on its CPU (system time).
    #[default]
    Spin,
    /// mutex / rw_semaphore: the waiter sleeps (off CPU) until the lock is handed over.
    Sleep,
}

#[derive(Clone, Debug, Default)]
pub struct LockQueue {
    pub kind: LockKind,
    /// When the current holder releases it.
    pub free_at: Ns,
    pub waiters: VecDeque<TaskId>,
    /// Total time tasks spent waiting for it, acquisitions, acquisitions that had to wait,
    /// and the longest single wait.
    pub wait_ns: u64,
    pub acquisitions: u64,
    pub contended: u64,
    pub max_wait_ns: u64,
    /// Total time it was held, and the longest single hold.
    pub hold_ns: u64,
    pub max_hold_ns: u64,
    /// Granted holds not yet over, (start, end), in time order and disjoint: `booked`, then
    /// `last`, the latest (a zero-length grant may leave `free_at` past its end). The last
    /// is kept apart so that the common case, a lock that is idle at the event loop's time,
    /// touches no other memory.
    booked: VecDeque<(Ns, Ns)>,
    last: Option<(Ns, Ns)>,
}

impl LockQueue {
    pub fn new(kind: LockKind) -> LockQueue {
        LockQueue { kind, ..Default::default() }
    }

    /// Acquire at `now` for `hold` ns; returns the time the caller gets the lock (the
    /// caller spins or sleeps until then) and so releases it at `return + hold`.
    pub fn acquire(&mut self, now: Ns, hold: Ns) -> Ns {
        self.acquire_from(now, now, hold)
    }

    /// Acquire at `at` (at or after `clock`, the event loop's time, which never goes back)
    /// for `hold` ns: the earliest gap of the calendar from `at` that the hold fits in.
    /// Holds that ended before `clock` are forgotten; a later caller may still ask for
    /// any instant from `clock` on, so holds after it are kept.
    pub fn acquire_from(&mut self, clock: Ns, at: Ns, hold: Ns) -> Ns {
        debug_assert!(at >= clock);
        if self.free_at <= clock {
            // Every hold has ended.
            if !self.booked.is_empty() {
                self.booked.clear();
            }
            self.last = None;
        } else {
            while self.booked.front().is_some_and(|&(_, end)| end <= clock) {
                self.booked.pop_front();
            }
        }
        let start = if self.free_at <= at {
            // Nothing booked from `at` on: the common, in-order case. A hold that starts as
            // the last one ends extends it (no gap between them could take a caller).
            if hold > 0 {
                match self.last {
                    Some((s, e)) if e == at => self.last = Some((s, at + hold)),
                    Some(l) => {
                        self.booked.push_back(l);
                        self.last = Some((at, at + hold));
                    }
                    None => self.last = Some((at, at + hold)),
                }
            }
            at
        } else {
            // The earliest gap from `at` that the hold fits in, over the whole calendar.
            if let Some(l) = self.last.take() {
                self.booked.push_back(l);
            }
            let mut start = at;
            let mut pos = self.booked.len();
            for (i, &(s, e)) in self.booked.iter().enumerate() {
                if s >= start + hold.max(1) {
                    pos = i;
                    break;
                }
                start = start.max(e);
            }
            if hold > 0 {
                self.booked.insert(pos, (start, start + hold));
            }
            self.last = self.booked.pop_back();
            start
        };
        let wait = start - at;
        self.wait_ns += wait;
        if wait > 0 {
            self.contended += 1;
            self.max_wait_ns = self.max_wait_ns.max(wait);
        }
        self.free_at = self.free_at.max(start + hold);
        self.hold_ns += hold;
        self.max_hold_ns = self.max_hold_ns.max(hold);
        self.acquisitions += 1;
        start
    }

    /// Whether a caller at `now` would have to wait.
    pub fn is_locked(&self, now: Ns) -> bool {
        self.booked.iter().chain(self.last.iter()).any(|&(s, e)| s <= now && now < e)
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
        assert_eq!(l.contended, 2);
        assert_eq!(l.max_wait_ns, 14);
        assert_eq!(l.acquisitions, 4);
    }

    /// A hold booked for later (after the booker's wait elsewhere) does not keep an
    /// earlier caller off the idle lock; a caller whose hold does not fit before it comes
    /// after it.
    #[test]
    fn booked_holds_leave_the_lock_free_before_them() {
        let mut l = LockQueue::default();
        assert_eq!(l.acquire(1000, 10), 1000, "booked for t=1000");
        assert_eq!(l.acquire(0, 10), 0, "free until then");
        assert_eq!(l.acquire(5, 10), 10, "after the first, still before the booking");
        assert_eq!(l.acquire(6, 985), 1010, "does not fit before the booking: after it");
        assert!(l.is_locked(1005) && !l.is_locked(500) && l.is_locked(1500));
        assert_eq!(l.free_at, 1995);
        assert_eq!(l.acquire(2000, 10), 2000);
        // A hold booked ahead does not make the queue forget holds before it: a caller at
        // the event loop's time still finds them.
        let mut l = LockQueue::default();
        assert_eq!(l.acquire_from(0, 0, 100), 0);
        assert_eq!(l.acquire_from(0, 500, 10), 500);
        assert_eq!(l.acquire_from(50, 50, 10), 100, "the first hold is still on at 50");
    }

    #[test]
    fn n_simultaneous_arrivals_wait_n_minus_one_holds_on_average_half() {
        // N callers at the same instant: the k-th waits k holds; the total grows as N^2.
        for n in [1u64, 4, 16, 32] {
            let mut l = LockQueue::new(LockKind::Spin);
            for _ in 0..n {
                l.acquire(1000, 50);
            }
            assert_eq!(l.wait_ns, 50 * n * (n - 1) / 2);
            assert_eq!(l.free_at, 1000 + 50 * n);
            assert!(!l.is_locked(1000 + 50 * n));
        }
    }
}
