//! Per-task delay accounting (kernel/delayacct.c, the scheduler's sched_info run_delay and
//! taskstats): every nanosecond of a task's life goes to exactly one part — on a CPU (user,
//! or system split by what the kernel was doing), waiting for a CPU, or asleep for a
//! reason (block I/O, dirty throttling, reclaim throttling, swap-in, thrashing, locks,
//! memory-cgroup throttling, or a plain voluntary sleep).
//!
//! How it is kept: the scheduler logs which tasks changed state (`Sched::changed`); before
//! the clock moves (and before anyone reads a record) `delayacct_flush` closes, for each such
//! task, the part it was in at the time of its last change and opens the part its new state
//! says. A task that sleeps says why by setting `Task::wait_reason` before returning its
//! `Step` (`Kernel::set_wait_reason`); without one an I/O sleep is block I/O and any other
//! sleep a voluntary sleep. System CPU time is split by the purpose its charges carried
//! (`Kernel::charge_sys_for`). Because parts are closed only at state changes and every
//! change is logged, the parts of a task always sum to its wall time exactly.

use crate::Kernel;
use memtwin_engine::{Ns, RunState, TaskId};

/// Why a task sleeps (the delayacct / PSI category of the wait).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitReason {
    /// Waiting for a read or a direct I/O to complete (delayacct_blkio_start/end).
    Blkio,
    /// Paused in balance_dirty_pages (io_schedule_timeout: counted as iowait).
    DirtyThrottle,
    /// Asleep inside direct reclaim: reclaim_throttle, waiting for a request slot of the
    /// swap device (delayacct_freepages_start/end around __perform_reclaim).
    ReclaimWait,
    /// Waiting for a page to come back from swap (delayacct_swapin_start/end in
    /// do_swap_page).
    Swapin,
    /// Waiting for the read of a page that was part of the workingset when it was evicted
    /// (delayacct_thrashing_start/end in folio_wait_bit_common / filemap_read_folio).
    Thrashing,
    /// Asleep on a contended sleeping lock (a mutex or rwsem; none is modelled yet).
    Lock,
    /// Throttled above memory.high (mem_cgroup_handle_over_high's penalty sleep).
    MemcgHigh,
    /// A voluntary sleep: waiting for a timer, a child, more work (not a delay).
    Sleep,
}

/// Kinds of system CPU work told apart in the breakdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysWork {
    /// Reclaim done by the task (direct reclaim, or kswapd's own), including zram
    /// compression of the pages it swaps out.
    Reclaim,
    /// Memory compaction (compact_memory: scanning and migrating pages, mm/compaction.rs).
    Compaction,
    /// zram decompression at swap-in.
    Zram,
    /// Copying or zeroing data between user buffers and the page cache.
    Copy,
    /// Spinning on a contended spinlock (reclaim's lru_lock).
    LockSpin,
}

const N_WAIT: usize = 8;
const N_WORK: usize = 5;

fn wait_index(r: WaitReason) -> usize {
    r as usize
}

/// What a task is doing now, as far as accounting goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Runnable,
    Running,
    Asleep(WaitReason),
    /// Exited: nothing more is added.
    Gone,
}

/// A task's accumulated delays (struct task_delay_info plus sched_info), ns.
#[derive(Clone, Debug)]
pub struct TaskDelay {
    /// When the current phase began.
    pub since: Ns,
    pub phase: Phase,
    /// sched_info.run_delay: runnable, waiting for a CPU.
    pub run_delay: Ns,
    /// sched_info.pcount: times the task got a CPU.
    pub pcount: u64,
    /// On a CPU.
    pub on_cpu: Ns,
    pub wait: [Ns; N_WAIT],
    /// System CPU time charged per `SysWork` kind.
    pub sys_work: [Ns; N_WORK],
    /// PSI: the task's flags as counted in its CPU's group, and that CPU.
    pub(crate) psi_flags: u8,
    pub(crate) psi_cpu: u32,
    /// The cgroup whose PSI groups hold the task's flags.
    pub(crate) psi_memcg: u16,
    /// PSI: reclaim CPU time charged but not yet started (becomes a memstall-running span).
    pub(crate) pending_reclaim: Ns,
    /// PSI: the task counts as memstall while running until this time.
    pub(crate) memstall_until: Ns,
}

impl TaskDelay {
    pub fn new(now: Ns) -> TaskDelay {
        TaskDelay {
            since: now,
            phase: Phase::Runnable,
            run_delay: 0,
            pcount: 0,
            on_cpu: 0,
            wait: [0; N_WAIT],
            sys_work: [0; N_WORK],
            psi_flags: 0,
            psi_cpu: u32::MAX,
            psi_memcg: 0,
            pending_reclaim: 0,
            memstall_until: 0,
        }
    }

    fn add(&mut self, until: Ns) {
        let d = until.saturating_sub(self.since);
        match self.phase {
            Phase::Runnable => self.run_delay += d,
            Phase::Running => self.on_cpu += d,
            Phase::Asleep(r) => self.wait[wait_index(r)] += d,
            Phase::Gone => {}
        }
        self.since = until.max(self.since);
    }
}

/// Where a task's (or a command's) wall time went, ns. The fields sum to `wall_ns`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    pub wall_ns: Ns,
    /// On a CPU in user mode.
    pub cpu_user_ns: Ns,
    /// On a CPU in the kernel, other than the kinds below (syscalls, faults, I/O set-up).
    pub cpu_sys_ns: Ns,
    pub cpu_sys_reclaim_ns: Ns,
    pub cpu_sys_compaction_ns: Ns,
    pub cpu_sys_zram_ns: Ns,
    pub cpu_sys_copy_ns: Ns,
    pub cpu_sys_lock_spin_ns: Ns,
    /// Runnable, waiting for a CPU (sched_info run_delay).
    pub run_delay_ns: Ns,
    pub blkio_ns: Ns,
    pub dirty_throttle_ns: Ns,
    pub reclaim_wait_ns: Ns,
    pub swapin_ns: Ns,
    pub thrashing_ns: Ns,
    pub lock_wait_ns: Ns,
    pub memcg_high_ns: Ns,
    pub sleep_ns: Ns,
    /// Time no task of the command existed (shell built-ins: `sleep`, `wait`, `cd`).
    pub shell_ns: Ns,
}

impl Breakdown {
    /// (name, ns) of every part, in a fixed order (the record's field names).
    pub fn parts(&self) -> [(&'static str, Ns); 18] {
        [
            ("cpu_user_ns", self.cpu_user_ns),
            ("cpu_sys_ns", self.cpu_sys_ns),
            ("cpu_sys_reclaim_ns", self.cpu_sys_reclaim_ns),
            ("cpu_sys_compaction_ns", self.cpu_sys_compaction_ns),
            ("cpu_sys_zram_ns", self.cpu_sys_zram_ns),
            ("cpu_sys_copy_ns", self.cpu_sys_copy_ns),
            ("cpu_sys_lock_spin_ns", self.cpu_sys_lock_spin_ns),
            ("run_delay_ns", self.run_delay_ns),
            ("blkio_ns", self.blkio_ns),
            ("dirty_throttle_ns", self.dirty_throttle_ns),
            ("reclaim_wait_ns", self.reclaim_wait_ns),
            ("swapin_ns", self.swapin_ns),
            ("thrashing_ns", self.thrashing_ns),
            ("lock_wait_ns", self.lock_wait_ns),
            ("memcg_high_ns", self.memcg_high_ns),
            ("sleep_ns", self.sleep_ns),
            ("shell_ns", self.shell_ns),
            ("wall_ns", self.wall_ns),
        ]
    }

    /// Sum of the parts (everything but `wall_ns`).
    pub fn sum(&self) -> Ns {
        self.parts().iter().filter(|(n, _)| *n != "wall_ns").map(|&(_, v)| v).sum()
    }

    /// Add another breakdown's parts (a command with several tasks).
    pub fn add(&mut self, o: &Breakdown) {
        self.wall_ns += o.wall_ns;
        self.cpu_user_ns += o.cpu_user_ns;
        self.cpu_sys_ns += o.cpu_sys_ns;
        self.cpu_sys_reclaim_ns += o.cpu_sys_reclaim_ns;
        self.cpu_sys_compaction_ns += o.cpu_sys_compaction_ns;
        self.cpu_sys_zram_ns += o.cpu_sys_zram_ns;
        self.cpu_sys_copy_ns += o.cpu_sys_copy_ns;
        self.cpu_sys_lock_spin_ns += o.cpu_sys_lock_spin_ns;
        self.run_delay_ns += o.run_delay_ns;
        self.blkio_ns += o.blkio_ns;
        self.dirty_throttle_ns += o.dirty_throttle_ns;
        self.reclaim_wait_ns += o.reclaim_wait_ns;
        self.swapin_ns += o.swapin_ns;
        self.thrashing_ns += o.thrashing_ns;
        self.lock_wait_ns += o.lock_wait_ns;
        self.memcg_high_ns += o.memcg_high_ns;
        self.sleep_ns += o.sleep_ns;
        self.shell_ns += o.shell_ns;
    }
}

/// A task's accounting as a command record wants it.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskAcct {
    pub start_ns: Ns,
    /// Exit time, or now for a task still alive.
    pub end_ns: Ns,
    pub breakdown: Breakdown,
    pub utime_ns: Ns,
    pub stime_ns: Ns,
    /// Bytes through read(2)/write(2) (/proc/PID/io rchar, wchar).
    pub rchar: u64,
    pub wchar: u64,
    /// Bytes the task made storage read / write (/proc/PID/io read_bytes, write_bytes).
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub min_flt: u64,
    pub maj_flt: u64,
    pub killed: bool,
}

impl Kernel {
    /// Give the step about to be returned a reason for the sleep it asks for.
    #[inline]
    pub fn set_wait_reason(&mut self, tid: TaskId, r: WaitReason) {
        self.tasks[tid as usize].wait_reason = Some(r);
    }

    /// `charge_sys` for work of a known kind.
    #[inline]
    pub fn charge_sys_for(&mut self, tid: TaskId, ns: Ns, work: SysWork) {
        self.charge_sys(tid, ns);
        let d = &mut self.tasks[tid as usize].delay;
        d.sys_work[work as usize] += ns;
        if work == SysWork::Reclaim {
            d.pending_reclaim += ns;
            self.sched.changed.push(tid);
        }
    }

    /// The reason of a wait for the read of page `p` (at `index` of mapping `m`) to finish:
    /// a swap-cache page is a swap-in (do_swap_page); a page that was part of the workingset
    /// when it was evicted is thrashing (folio_wait_bit_common / filemap_read_folio check
    /// PG_workingset); any other is plain block I/O.
    pub(crate) fn wait_on_page_reason(&mut self, tid: TaskId, m: u32, index: u64, p: crate::mm::page::Pfn) {
        let r = if self.mm.swap_cache_slot(m, index).is_some() {
            WaitReason::Swapin
        } else if self.mm.pages.workingset(p) {
            WaitReason::Thrashing
        } else {
            WaitReason::Blkio
        };
        self.set_wait_reason(tid, r);
    }

    /// A lock wait of `ns` the lock model accounted itself (time the task spent spinning
    /// on a CPU: it moves from plain system time to the lock part).
    pub fn note_lock_wait(&mut self, tid: TaskId, ns: Ns) {
        self.tasks[tid as usize].delay.sys_work[SysWork::LockSpin as usize] += ns;
    }

    /// The memcg model's over-high throttling spent on a CPU (reclaim in
    /// mem_cgroup_handle_over_high); sleeps use `WaitReason::MemcgHigh`.
    pub fn note_memcg_high_delay(&mut self, tid: TaskId, ns: Ns) {
        self.tasks[tid as usize].delay.sys_work[SysWork::Reclaim as usize] += ns;
    }

    /// The phase the scheduler's state of `tid` means now.
    fn phase_now(&self, tid: TaskId) -> Phase {
        let t = &self.tasks[tid as usize];
        match self.sched.tasks[tid as usize].state {
            RunState::Runnable => Phase::Runnable,
            RunState::Running => Phase::Running,
            RunState::Sleeping => Phase::Asleep(t.wait_reason.unwrap_or(WaitReason::Sleep)),
            RunState::DiskSleep => Phase::Asleep(t.wait_reason.unwrap_or(WaitReason::Blkio)),
            RunState::Zombie => Phase::Gone,
        }
    }

    /// Close the parts of every task whose state changed at `self.now` and open their new
    /// ones; bring pressure stall information up to `self.now`. Call before the clock moves.
    pub fn delayacct_flush(&mut self) {
        let now = self.now;
        self.psi_advance(now);
        if self.sched.changed.is_empty() {
            return;
        }
        let mut changed = std::mem::take(&mut self.sched.changed);
        for &tid in &changed {
            let phase = self.phase_now(tid);
            let d = &mut self.tasks[tid as usize].delay;
            if d.phase != phase {
                d.add(now);
                if phase == Phase::Running {
                    d.pcount += 1;
                }
                d.phase = phase;
            }
        }
        self.psi_tasks_changed(&changed);
        changed.clear();
        // Keep the allocation (no per-event allocation).
        if self.sched.changed.is_empty() {
            self.sched.changed = changed;
        }
    }

    /// The clock was set without running (a new boot continues an old one's clock).
    pub(crate) fn delayacct_restart_clock(&mut self) {
        let now = self.now;
        for t in &mut self.tasks {
            t.delay.since = now;
        }
        self.psi.restart(now);
    }

    /// The accounting of task `tid` (alive or exited, not reaped) up to now.
    pub fn task_acct(&mut self, tid: TaskId) -> TaskAcct {
        self.delayacct_flush();
        let now = self.now;
        let t = &self.tasks[tid as usize];
        let st = &self.sched.tasks[tid as usize];
        let mut d = t.delay.clone();
        if d.phase != Phase::Gone {
            d.add(now);
        }
        let end = if t.exit_code.is_some() { t.end } else { now };
        let mut b = Breakdown { wall_ns: end.saturating_sub(t.start), ..Default::default() };
        // On-CPU time as measured by state, split by the scheduler's user/system totals.
        // A burst still running is in on_cpu already but joins the totals only when it
        // ends: count its elapsed part with them, as user or system time by its kind, so
        // that a task caught mid-burst reports the same CPU time both ways.
        let running = if t.exit_code.is_none() { d.on_cpu.saturating_sub(st.utime + st.stime) } else { 0 };
        let (utime, stime) = match t.burst {
            Some((false, _)) => (st.utime + running, st.stime),
            _ => (st.utime, st.stime + running),
        };
        let user = utime.min(d.on_cpu);
        b.cpu_user_ns = user;
        let mut sys = d.on_cpu - user;
        let mut take = |want: Ns| {
            let x = want.min(sys);
            sys -= x;
            x
        };
        b.cpu_sys_reclaim_ns = take(d.sys_work[SysWork::Reclaim as usize]);
        b.cpu_sys_compaction_ns = take(d.sys_work[SysWork::Compaction as usize]);
        b.cpu_sys_zram_ns = take(d.sys_work[SysWork::Zram as usize]);
        b.cpu_sys_copy_ns = take(d.sys_work[SysWork::Copy as usize]);
        b.cpu_sys_lock_spin_ns = take(d.sys_work[SysWork::LockSpin as usize]);
        b.cpu_sys_ns = sys;
        b.run_delay_ns = d.run_delay;
        let w = |r: WaitReason| d.wait[wait_index(r)];
        b.blkio_ns = w(WaitReason::Blkio);
        b.dirty_throttle_ns = w(WaitReason::DirtyThrottle);
        b.reclaim_wait_ns = w(WaitReason::ReclaimWait);
        b.swapin_ns = w(WaitReason::Swapin);
        b.thrashing_ns = w(WaitReason::Thrashing);
        b.lock_wait_ns = w(WaitReason::Lock);
        b.memcg_high_ns = w(WaitReason::MemcgHigh);
        b.sleep_ns = w(WaitReason::Sleep);
        TaskAcct {
            start_ns: t.start,
            end_ns: end,
            breakdown: b,
            utime_ns: utime,
            stime_ns: stime,
            rchar: t.rchar,
            wchar: t.wchar,
            read_bytes: t.read_bytes,
            write_bytes: t.write_bytes,
            min_flt: t.min_flt,
            maj_flt: t.maj_flt,
            killed: t.killed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Program, Sink, Step};
    use memtwin_engine::NS_PER_MS;

    /// A program that runs a list of steps, with a reason before each.
    struct Steps(Vec<(Option<WaitReason>, Step)>);
    impl Program for Steps {
        fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
            if self.0.is_empty() {
                return Step::Exit(0);
            }
            let (r, s) = self.0.remove(0);
            if let Some(r) = r {
                k.set_wait_reason(me, r);
            }
            s
        }
    }

    fn kernel(cpus: u32) -> Kernel {
        let mut m = memtwin_machine::load("default").unwrap();
        m.ram_bytes = 256 << 20;
        m.cpus = cpus;
        Kernel::boot(m, 1).unwrap()
    }

    #[test]
    fn parts_sum_to_wall_and_reasons_land_in_their_part() {
        let mut k = kernel(1);
        let t0 = k.now;
        let prog = Steps(vec![
            (None, Step::Cpu { user: 3 * NS_PER_MS, sys: NS_PER_MS }),
            (Some(WaitReason::DirtyThrottle), Step::SleepUntil { t: t0 + 10 * NS_PER_MS, io: true }),
            (None, Step::SleepUntil { t: t0 + 20 * NS_PER_MS, io: true }),
            (None, Step::SleepUntil { t: t0 + 25 * NS_PER_MS, io: false }),
        ]);
        let a = k.spawn("a", "a", Box::new(prog), Sink::Null, Sink::Null);
        // A second task competes for the single CPU: one of them waits (run_delay).
        let b = k.spawn("b", "b", Box::new(Steps(vec![(None, Step::Cpu { user: 2 * NS_PER_MS, sys: 0 })])), Sink::Null, Sink::Null);
        // Bare tasks (no process image to fault in, exec.rs): their time is their steps'.
        k.tasks[a as usize].image_done = true;
        k.tasks[b as usize].image_done = true;
        k.run_until(t0 + NS_PER_MS * 100, &mut |k| k.task_exited(a) && k.task_exited(b));
        let x = k.task_acct(a);
        let y = k.task_acct(b);
        for acct in [&x, &y] {
            assert_eq!(acct.breakdown.sum(), acct.end_ns - acct.start_ns, "{:?}", acct.breakdown);
            assert_eq!(acct.breakdown.cpu_user_ns, acct.utime_ns);
        }
        let bd = x.breakdown;
        assert_eq!(bd.cpu_user_ns, 3 * NS_PER_MS);
        assert_eq!(bd.cpu_sys_ns, NS_PER_MS);
        // The throttle sleep began after the 4 ms burst (and any wait for the CPU) and ended
        // at 10 ms; the plain I/O sleep ran from 10 to 20 ms, the voluntary one to 25 ms.
        assert!(bd.dirty_throttle_ns > 0 && bd.dirty_throttle_ns <= 6 * NS_PER_MS, "{bd:?}");
        // A kernel thread may hold the single CPU when the throttle sleep ends: the I/O sleep
        // then starts late by that run delay.
        assert!(bd.blkio_ns > 5 * NS_PER_MS && bd.blkio_ns <= 10 * NS_PER_MS, "{bd:?}");
        assert!(bd.blkio_ns + bd.run_delay_ns >= 9 * NS_PER_MS, "{bd:?}");
        assert!(bd.sleep_ns > 4 * NS_PER_MS && bd.sleep_ns <= 5 * NS_PER_MS, "{bd:?}");
        assert_eq!(bd.reclaim_wait_ns + bd.swapin_ns + bd.thrashing_ns, 0);
        // One CPU, two tasks that both want it at once: one of them waited.
        assert!(bd.run_delay_ns + y.breakdown.run_delay_ns >= 2 * NS_PER_MS, "{bd:?} {:?}", y.breakdown);
        assert!(x.end_ns - x.start_ns >= 25 * NS_PER_MS);
    }

    #[test]
    fn sys_work_kinds_are_carved_out_of_system_time() {
        struct Charger(u32);
        impl Program for Charger {
            fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
                self.0 += 1;
                if self.0 > 1 {
                    return Step::Exit(0);
                }
                k.charge_sys_for(me, 700_000, SysWork::Reclaim);
                k.charge_sys_for(me, 200_000, SysWork::Copy);
                k.charge_sys(me, 100_000);
                Step::Yield
            }
        }
        let mut k = kernel(2);
        let a = k.spawn("c", "c", Box::new(Charger(0)), Sink::Null, Sink::Null);
        k.tasks[a as usize].image_done = true;
        k.run_until(NS_PER_MS * 50, &mut |k| k.task_exited(a));
        let x = k.task_acct(a);
        assert_eq!(x.breakdown.cpu_sys_reclaim_ns, 700_000);
        assert_eq!(x.breakdown.cpu_sys_copy_ns, 200_000);
        assert_eq!(x.breakdown.sum(), x.end_ns - x.start_ns);
        assert_eq!(x.breakdown.cpu_sys_ns + 900_000, x.stime_ns);
    }
}
