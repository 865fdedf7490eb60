//! Waits for I/O as kernel paths (include/linux/wait.h, mm/filemap.c's folio_wait_bit_common,
//! mm/page-writeback.c's balance_dirty_pages, fs/sync.c).
//!
//! A kernel call that must wait for an I/O returns `Step::Wait(Wait)`: what the task waits
//! for (`WaitOn`, named after the kernel function that sleeps) and why (its delay-accounting
//! reason). The step takes effect like any other (after the CPU work the call charged);
//! then the task is on a wait path: asleep, on the wait queue of the event it waits for.
//! The block layer's completion (`Kernel::io_done`, after end_io has unlocked pages and
//! ended writeback) wakes the waiters it concerns, in the order they began to wait: a
//! reader when its page is unlocked — exactly when that page's read completes, whatever
//! order requests complete in — and a writeback waiter at each completion of the writeback
//! it waits for (it waits page by page, as folio_wait_writeback does). A woken task
//! re-checks its condition (the loop in folio_wait_bit_common) and sleeps again if it does
//! not hold; once it holds, the task's program runs again and retries its call.
//!
//! A timed wait (balance_dirty_pages' io_schedule_timeout) is the same path with a timer
//! instead of a wait queue.

use crate::delayacct::WaitReason;
use crate::kernel::Event;
use crate::mm::page::Pfn;
use crate::mm::Slot;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId, NS_PER_MS};

/// What a task waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOn {
    /// folio_wait_locked / wait_on_page_locked (folio_wait_bit_common on PG_locked): the page
    /// `pfn` at `index` of `mapping` is locked while its read is in flight; the read's end_io
    /// unlocks it (folio_unlock -> folio_wake_bit). Also over if the page left that slot.
    FolioLocked { mapping: u32, index: u64, pfn: Pfn },
    /// filemap_fdatawait_range (folio_wait_writeback on each page under writeback): the
    /// writeback of `mapping` — of every mapping when None (wait_sb_inodes) — submitted up
    /// to request sequence `upto` has completed. Writeback started later is not waited for.
    FdataWait { mapping: Option<u32>, upto: u64 },
    /// sync(2): sync_inodes_sb then wait_sb_inodes: no page is dirty or under writeback.
    SyncInodes,
    /// io_schedule_timeout: a timed sleep (balance_dirty_pages' pause).
    Timeout { until: Ns },
    /// The task's O_DIRECT transfer (its requests submitted up to sequence `upto`) has
    /// completed: the synchronous direct I/O wait (blk_wait_io in __blkdev_direct_IO_simple,
    /// iomap_dio_rw's wait for dio->ref), woken by the bios' end_io.
    DirectIo { task: TaskId, upto: u64 },
    /// inode_dio_wait, then truncate_inode_pages' folio_wait_writeback (a truncation): the
    /// direct transfers on inode `ino` (any task's) and the writeback of its `mapping`
    /// submitted up to sequence `upto` have completed.
    InodeDio { ino: u32, mapping: u32, upto: u64 },
    /// flush_work: the work queued on other CPUs (lru_add_drain_all's per-CPU drains) has
    /// run; `until` is when the last of it finishes (its lru_lock waits and holds).
    FlushWork { until: Ns },
    /// filemap_flush (ext4's and XFS's flush at close) sleeping in blk_mq_get_tag: every
    /// request slot of the device is taken and dirty pages of `mapping` are still to be
    /// submitted. Woken by a completion on that device; it then submits what the free
    /// slots take (`Kernel::filemap_flush_submit`) and sleeps again until all is submitted.
    FlushSubmit { mapping: u32 },
}

/// A wait, as a kernel call hands it to the task: what, why (the delay-accounting part its
/// time goes to) and whether it is an uninterruptible I/O sleep (D state, iowait).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    pub on: WaitOn,
    pub reason: WaitReason,
    pub io: bool,
}

impl Wait {
    /// filemap_fdatawait for writeback of `mapping` (None: every mapping) submitted so far.
    pub fn fdatawait(mapping: Option<u32>, upto: u64) -> Wait {
        Wait { on: WaitOn::FdataWait { mapping, upto }, reason: WaitReason::Blkio, io: true }
    }
    /// The waits of several fsyncs made one after the other (their writeback all in
    /// flight): one of them alone, or the writeback of every mapping submitted up to
    /// `upto`, which ends with the last of theirs on a device that completes writes in
    /// order.
    pub fn all_of(waits: Vec<Step>, upto: u64) -> Option<Step> {
        match waits.len() {
            0 => None,
            1 => waits.into_iter().next(),
            _ => Some(Step::Wait(Wait::fdatawait(None, upto))),
        }
    }
    /// A truncation's wait for the inode's direct I/O and its mapping's writeback.
    pub fn inode_dio_wait(ino: u32, mapping: u32, upto: u64) -> Wait {
        Wait {
            on: WaitOn::InodeDio { ino, mapping, upto },
            reason: WaitReason::Blkio,
            io: true,
        }
    }
    /// flush_work of work items that finish at `until` (wait_for_completion: asleep,
    /// uninterruptible, not an I/O wait).
    pub fn flush_work(until: Ns) -> Wait {
        Wait { on: WaitOn::FlushWork { until }, reason: WaitReason::Sleep, io: false }
    }
    /// The close-time flush of `mapping` waiting for a request slot.
    pub fn flush_submit(mapping: u32) -> Wait {
        Wait { on: WaitOn::FlushSubmit { mapping }, reason: WaitReason::Blkio, io: true }
    }
    /// sync(2)'s wait for all dirty data to be written.
    pub fn sync_inodes() -> Wait {
        Wait { on: WaitOn::SyncInodes, reason: WaitReason::Blkio, io: true }
    }
}

/// sync(2) waits for writeback that the flushers have not submitted yet: with nothing in
/// flight (no completion will wake it) it looks again after this long.
const SYNC_RECHECK_NS: Ns = 10 * NS_PER_MS;

/// The wait path each task is in, and the wait queue of tasks a completion may wake.
#[derive(Default)]
pub struct WaitPaths {
    /// By task id: the wait the task is asleep in (None: not waiting).
    pub paths: Vec<Option<Wait>>,
    /// Tasks asleep until a completion, in the order they began to wait.
    pub queue: Vec<TaskId>,
    /// Waits ended by a completion's wake-up.
    pub woken: u64,
}

impl WaitPaths {
    /// The task is asleep in a wait path.
    #[inline]
    pub fn in_path(&self, tid: TaskId) -> bool {
        matches!(self.paths.get(tid as usize), Some(Some(_)))
    }
    /// The wait `tid` is in.
    pub fn get(&self, tid: TaskId) -> Option<Wait> {
        self.paths.get(tid as usize).copied().flatten()
    }
    fn set(&mut self, tid: TaskId, w: Wait) {
        if self.paths.len() <= tid as usize {
            self.paths.resize(tid as usize + 1, None);
        }
        self.paths[tid as usize] = Some(w);
    }
    /// The task leaves its wait path (done, or killed).
    pub(crate) fn clear(&mut self, tid: TaskId) {
        if let Some(p) = self.paths.get_mut(tid as usize) {
            *p = None;
        }
        self.queue.retain(|&t| t != tid);
    }
}

impl Kernel {
    /// The wait for the read of page `p` (at `index` of `m`) to complete, with the reason
    /// delay accounting gives it (swap-in, thrashing, block I/O: `wait_on_page_reason`).
    pub(crate) fn folio_wait_locked(&mut self, tid: TaskId, m: u32, index: u64, p: Pfn) -> Step {
        self.wait_on_page_reason(tid, m, index, p);
        let reason = self.tasks[tid as usize].wait_reason.unwrap_or(WaitReason::Blkio);
        Step::Wait(Wait { on: WaitOn::FolioLocked { mapping: m, index, pfn: p }, reason, io: true })
    }

    /// Does what `on` waits for hold now?
    pub fn wait_satisfied(&self, on: WaitOn) -> bool {
        match on {
            WaitOn::FolioLocked { mapping, index, pfn } => {
                !self.mm.mappings[mapping as usize].live
                    || !matches!(self.mm.slot(mapping, index), Slot::Page(p) if p == pfn)
                    || !self.mm.pages.locked(pfn)
            }
            WaitOn::FdataWait { mapping, upto } => !self.block.writeback_in_flight(mapping, upto),
            WaitOn::SyncInodes => self.mm.stat.dirty + self.mm.stat.writeback == 0,
            WaitOn::Timeout { until } | WaitOn::FlushWork { until } => self.now >= until,
            WaitOn::DirectIo { task, upto } => !self.block.direct_in_flight(task, upto),
            WaitOn::InodeDio { ino, mapping, upto } => {
                !self.block.dio_in_flight(ino, upto)
                    && !self.block.writeback_in_flight(Some(mapping), upto)
            }
            WaitOn::FlushSubmit { mapping } => {
                let s = &self.mm.mappings[mapping as usize];
                !s.live || s.nr_dirty == 0
            }
        }
    }

    /// A completion freed a request slot the flush of `mapping` can take (or nothing is
    /// left for it to submit).
    fn flush_submit_may_go(&self, mapping: u32) -> bool {
        let s = &self.mm.mappings[mapping as usize];
        match s.dev {
            Some(dev) if s.live && s.nr_dirty > 0 => !self.block.devs[dev as usize].congested(),
            _ => true,
        }
    }

    /// When the I/O a wait is for is due to complete, as the device model computed it at
    /// submission (None: not known, or not an I/O). For programs that model asynchronous
    /// I/O themselves (fio's libaio engine reaps completions by time).
    pub fn wait_due(&self, w: &Wait) -> Option<Ns> {
        match w.on {
            WaitOn::FolioLocked { mapping, index, .. } => self.block.read_completion(mapping, index),
            WaitOn::Timeout { until } | WaitOn::FlushWork { until } => Some(until),
            WaitOn::DirectIo { task, upto } => self.block.direct_completion(task, upto),
            WaitOn::FdataWait { .. }
            | WaitOn::SyncInodes
            | WaitOn::FlushSubmit { .. }
            | WaitOn::InodeDio { .. } => None,
        }
    }

    /// The task takes a `Step::Wait` (prepare_to_wait + io_schedule): it goes on at once,
    /// behind other runnable tasks, if what it waits for already happened; otherwise it
    /// sleeps in its wait path.
    pub(crate) fn wait_start(&mut self, tid: TaskId, w: Wait) {
        if self.wait_satisfied(w.on) {
            self.sched.requeue(tid);
            return;
        }
        self.waits.set(tid, w);
        self.wait_sleep(tid, w);
    }

    fn wait_sleep(&mut self, tid: TaskId, w: Wait) {
        self.set_wait_reason(tid, w.reason);
        let seq = self.sched.sleep(tid, self.now, w.io);
        let timer = match w.on {
            WaitOn::Timeout { until } | WaitOn::FlushWork { until } => Some(until),
            WaitOn::SyncInodes if !self.block.any_in_flight() => Some(self.now + SYNC_RECHECK_NS),
            _ => None,
        };
        if let Some(t) = timer {
            self.events.push(t, Event::Wake(tid, seq));
        }
        if !matches!(w.on, WaitOn::Timeout { .. } | WaitOn::FlushWork { .. }) {
            self.waits.queue.push(tid);
        }
    }

    /// The task was woken inside its wait path (finish_wait, and the loop of
    /// folio_wait_bit_common): true if what it waited for happened (the path is over and
    /// its program goes on), false if it went back to sleep.
    pub(crate) fn run_wait_path(&mut self, tid: TaskId) -> bool {
        let Some(w) = self.waits.get(tid) else { return true };
        self.waits.queue.retain(|&t| t != tid);
        if let WaitOn::FlushSubmit { mapping } = w.on {
            // Back from blk_mq_get_tag: submit what the free slots take.
            if self.filemap_flush_submit(mapping, tid) {
                self.waits.clear(tid);
                return true;
            }
            self.wait_sleep(tid, w);
            return false;
        }
        if self.wait_satisfied(w.on) {
            self.waits.clear(tid);
            return true;
        }
        self.wait_sleep(tid, w);
        false
    }

    /// After the end_io of completion `r`: wake, in the order they began to wait, the tasks
    /// it concerns (folio_wake_bit). A reader is woken when its page is unlocked. A
    /// writeback waiter (filemap_fdatawait_range, wait_sb_inodes) waits on one page under
    /// writeback at a time (folio_wait_writeback): it is woken by each completion of the
    /// writeback it waits for, goes on to the next page still under writeback and sleeps
    /// again, until none is left.
    pub(crate) fn wake_io_waiters(&mut self, r: &crate::block::Completion) {
        let wb_mapping = match r.kind {
            crate::block::ReqKind::Writeback { mapping, .. } => Some(mapping),
            _ => None,
        };
        let mut i = 0;
        while i < self.waits.queue.len() {
            let tid = self.waits.queue[i];
            let wake = match self.waits.get(tid) {
                None => true,
                Some(w) => match w.on {
                    WaitOn::FdataWait { mapping, upto } => {
                        r.seq <= upto && wb_mapping.is_some_and(|m| mapping.is_none_or(|x| x == m))
                    }
                    WaitOn::SyncInodes => wb_mapping.is_some() || self.wait_satisfied(w.on),
                    WaitOn::FlushSubmit { mapping } => self.flush_submit_may_go(mapping),
                    on => self.wait_satisfied(on),
                },
            };
            if wake {
                self.waits.queue.remove(i);
                self.waits.woken += 1;
                self.sched.wake(tid, self.now, None);
            } else {
                i += 1;
            }
        }
    }
}
