//! Task states, the run queue and CPU assignment. The kernel model decides what a task
//! does when it runs; this module decides when it runs and accounts for it: vmstat's
//! r (runnable + running) and b (waiting on I/O), context switches, CPU time per task,
//! and block-I/O delay (taskstats blkio_delay, iotop's IO>).

use crate::{CpuAccount, Ns};
use std::collections::VecDeque;

pub type TaskId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// On the run queue, waiting for a CPU.
    Runnable,
    /// On a CPU.
    Running,
    /// Interruptible sleep (S).
    Sleeping,
    /// Uninterruptible sleep waiting on I/O (D, counted in iowait).
    DiskSleep,
    /// Exited, not yet reaped.
    Zombie,
}

#[derive(Clone, Debug)]
pub struct TaskSched {
    pub state: RunState,
    /// Bumped at every sleep, so a stale wake-up event can be recognised and ignored.
    pub wake_seq: u32,
    pub utime: u64,
    pub stime: u64,
    pub blkio_delay: u64,
    pub sleep_start: Ns,
    pub nvcsw: u64,
    pub nivcsw: u64,
    /// The CPU the task runs on, or last ran on (task_cpu).
    pub cpu: u32,
}

impl TaskSched {
    /// A task's scheduling state when it starts, with no CPU time or waits yet.
    fn fresh(state: RunState, wake_seq: u32) -> TaskSched {
        TaskSched { state, wake_seq, utime: 0, stime: 0, blkio_delay: 0, sleep_start: 0, nvcsw: 0, nivcsw: 0, cpu: 0 }
    }
}

pub struct Sched {
    pub cpu: CpuAccount,
    pub tasks: Vec<TaskSched>,
    pub runq: VecDeque<TaskId>,
    free_cpus: u32,
    /// The task on each CPU (rq->curr), None when idle.
    curr: Vec<Option<TaskId>>,
    /// Context switches since boot (/proc/stat ctxt).
    pub ctxt: u64,
    nr_running: u32,
}

impl Sched {
    pub fn new(ncpus: u32) -> Sched {
        Sched {
            cpu: CpuAccount::new(ncpus),
            tasks: Vec::new(),
            runq: VecDeque::with_capacity(64),
            free_cpus: ncpus,
            curr: vec![None; ncpus as usize],
            ctxt: 0,
            nr_running: 0,
        }
    }

    /// A new task, runnable at once.
    pub fn add_task(&mut self) -> TaskId {
        let id = self.tasks.len() as TaskId;
        self.tasks.push(TaskSched::fresh(RunState::Runnable, 0));
        self.runq.push_back(id);
        self.nr_running += 1;
        id
    }

    /// A reaped task's slot starts a new task. Its wake sequence carries on, so a wake-up
    /// still queued for the old task is recognised as stale.
    pub fn reuse_task(&mut self, tid: TaskId, runnable: bool) {
        let t = &mut self.tasks[tid as usize];
        debug_assert_eq!(t.state, RunState::Zombie);
        let seq = t.wake_seq.wrapping_add(1);
        *t = TaskSched::fresh(if runnable { RunState::Runnable } else { RunState::Sleeping }, seq);
        if runnable {
            self.runq.push_back(tid);
            self.nr_running += 1;
        }
    }

    /// Tasks runnable or running (vmstat r, /proc/stat procs_running).
    pub fn nr_running(&self) -> u32 {
        self.nr_running
    }
    /// Tasks in uninterruptible I/O sleep (vmstat b, procs_blocked).
    pub fn nr_iowait(&self) -> u32 {
        self.cpu.nr_iowait()
    }
    pub fn free_cpus(&self) -> u32 {
        self.free_cpus
    }

    /// Take the next runnable task onto a free CPU.
    pub fn pick(&mut self) -> Option<TaskId> {
        if self.free_cpus == 0 {
            return None;
        }
        let tid = self.runq.pop_front()?;
        // The CPU it last ran on if that one is idle (cache affinity), else the lowest
        // numbered idle CPU: deterministic.
        let last = self.tasks[tid as usize].cpu as usize;
        let cpu = if self.curr.get(last).is_some_and(|c| c.is_none()) {
            last
        } else {
            self.curr.iter().position(|c| c.is_none()).expect("a free CPU")
        };
        self.curr[cpu] = Some(tid);
        let t = &mut self.tasks[tid as usize];
        debug_assert_eq!(t.state, RunState::Runnable);
        t.state = RunState::Running;
        t.cpu = cpu as u32;
        self.free_cpus -= 1;
        Some(tid)
    }

    /// The CPU a task runs on (or last ran on).
    #[inline]
    pub fn task_cpu(&self, tid: TaskId) -> u32 {
        self.tasks[tid as usize].cpu
    }
    /// The task running on `cpu`.
    pub fn cpu_curr(&self, cpu: u32) -> Option<TaskId> {
        self.curr[cpu as usize]
    }
    pub fn nr_cpus(&self) -> u32 {
        self.curr.len() as u32
    }

    /// The running task gives its CPU up (sleep, exit, or preemption).
    fn release_cpu(&mut self, tid: TaskId) {
        debug_assert_eq!(self.tasks[tid as usize].state, RunState::Running);
        let cpu = self.tasks[tid as usize].cpu as usize;
        debug_assert_eq!(self.curr[cpu], Some(tid));
        self.curr[cpu] = None;
        self.free_cpus += 1;
        self.ctxt += 1;
    }

    /// The running task goes to sleep; returns the sequence number its wake-up must carry.
    pub fn sleep(&mut self, tid: TaskId, now: Ns, io: bool) -> u32 {
        self.release_cpu(tid);
        self.nr_running -= 1;
        if io {
            self.cpu.iowait_inc(now);
        }
        let t = &mut self.tasks[tid as usize];
        t.state = if io { RunState::DiskSleep } else { RunState::Sleeping };
        t.sleep_start = now;
        t.wake_seq = t.wake_seq.wrapping_add(1);
        t.nvcsw += 1;
        t.wake_seq
    }

    /// Wake a sleeping task; false if it was not asleep (or `seq` is stale).
    pub fn wake(&mut self, tid: TaskId, now: Ns, seq: Option<u32>) -> bool {
        let t = &mut self.tasks[tid as usize];
        if let Some(s) = seq {
            if s != t.wake_seq {
                return false;
            }
        }
        match t.state {
            RunState::Sleeping => {}
            RunState::DiskSleep => {
                t.blkio_delay += now - t.sleep_start;
                self.cpu.iowait_dec(now);
            }
            _ => return false,
        }
        let t = &mut self.tasks[tid as usize];
        t.state = RunState::Runnable;
        t.wake_seq = t.wake_seq.wrapping_add(1);
        self.nr_running += 1;
        self.runq.push_back(tid);
        true
    }

    /// The running task is preempted and goes to the back of the run queue.
    pub fn requeue(&mut self, tid: TaskId) {
        self.release_cpu(tid);
        let t = &mut self.tasks[tid as usize];
        t.state = RunState::Runnable;
        t.nivcsw += 1;
        self.runq.push_back(tid);
    }

    /// The task exits from whatever state it is in.
    pub fn exit(&mut self, tid: TaskId, now: Ns) {
        match self.tasks[tid as usize].state {
            RunState::Running => {
                self.release_cpu(tid);
                self.nr_running -= 1;
            }
            RunState::Runnable => {
                self.runq.retain(|&t| t != tid);
                self.nr_running -= 1;
            }
            RunState::DiskSleep => self.cpu.iowait_dec(now),
            RunState::Sleeping => {}
            RunState::Zombie => return,
        }
        self.tasks[tid as usize].state = RunState::Zombie;
    }

    /// A task that starts asleep (woken later by `wake`).
    pub fn add_sleeping_task(&mut self) -> TaskId {
        let id = self.add_task();
        self.runq.pop_back();
        self.nr_running -= 1;
        self.tasks[id as usize].state = RunState::Sleeping;
        id
    }

    /// A CPU burst of the running task begins / ends.
    pub fn burst_start(&mut self, now: Ns, sys: bool) {
        self.cpu.cpu_start(now, sys);
    }
    pub fn burst_end(&mut self, tid: TaskId, now: Ns, sys: bool, dur: Ns) {
        self.cpu.cpu_stop(now, sys);
        let t = &mut self.tasks[tid as usize];
        if sys { t.stime += dur } else { t.utime += dur }
    }

    /// A task someone waits to run (more runnable tasks than CPUs).
    pub fn contended(&self) -> bool {
        !self.runq.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn states_and_counts() {
        let mut s = Sched::new(1);
        let a = s.add_task();
        let b = s.add_task();
        assert_eq!(s.nr_running(), 2);
        assert_eq!(s.pick(), Some(a));
        assert_eq!(s.pick(), None, "one CPU");
        let seq = s.sleep(a, 10, true);
        assert_eq!(s.nr_iowait(), 1);
        assert_eq!(s.pick(), Some(b));
        assert!(!s.wake(a, 20, Some(seq.wrapping_add(5))), "stale wake ignored");
        assert!(s.wake(a, 30, Some(seq)));
        assert_eq!(s.tasks[a as usize].blkio_delay, 20);
        assert_eq!(s.nr_iowait(), 0);
        s.exit(b, 40);
        assert_eq!(s.pick(), Some(a));
        assert_eq!(s.nr_running(), 1);
    }

    #[test]
    fn tasks_get_cpus_deterministically_and_keep_their_last_one() {
        let mut s = Sched::new(4);
        let t: Vec<TaskId> = (0..4).map(|_| s.add_task()).collect();
        for (i, &x) in t.iter().enumerate() {
            assert_eq!(s.pick(), Some(x));
            assert_eq!(s.task_cpu(x), i as u32);
        }
        assert_eq!(s.cpu_curr(2), Some(t[2]));
        s.sleep(t[2], 5, false);
        s.sleep(t[1], 5, false);
        assert_eq!(s.cpu_curr(2), None);
        s.wake(t[2], 6, None);
        assert_eq!(s.pick(), Some(t[2]));
        assert_eq!(s.task_cpu(t[2]), 2, "back on its idle last CPU");
        s.wake(t[1], 7, None);
        assert_eq!(s.pick(), Some(t[1]));
        assert_eq!(s.task_cpu(t[1]), 1);
    }
}
