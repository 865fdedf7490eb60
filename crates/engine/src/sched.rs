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
    /// Niceness, -20..=19 (task_nice).
    pub nice: i32,
    /// Load weight of the niceness (se.load.weight; NICE_0_LOAD = 1024).
    pub weight: u32,
    /// CPU time scaled by NICE_0_LOAD / weight (se.vruntime), ns.
    pub vruntime: u64,
    /// CPU time when it was last picked (se.prev_sum_exec_runtime).
    pub exec_at_pick: u64,
}

impl TaskSched {
    /// A task's scheduling state when it starts, with no CPU time or waits yet.
    fn fresh(state: RunState, wake_seq: u32) -> TaskSched {
        TaskSched { state, wake_seq, utime: 0, stime: 0, blkio_delay: 0, sleep_start: 0, nvcsw: 0, nivcsw: 0, cpu: 0, nice: 0, weight: NICE_0_LOAD, vruntime: 0, exec_at_pick: 0 }
    }
}

/// Load weight of a nice-0 task (NICE_0_LOAD).
pub const NICE_0_LOAD: u32 = 1024;

/// The scheduler tick at HZ = 250 (distribution kernels): scheduler_tick -> task_tick_fair
/// -> check_preempt_tick runs this often on a busy CPU.
pub const TICK_NS: Ns = crate::NS_PER_SEC / 250;

/// sched_prio_to_weight (kernel/sched/core.c; prio_to_weight in 2.6.23+ kernel/sched.c):
/// each nice level is ~10% of CPU time against a nice-0 neighbour (weights ~1.25x apart).
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291,
    /* -15 */ 29154, 23254, 18705, 14949, 11916,
    /* -10 */ 9548, 7620, 6100, 4904, 3906,
    /*  -5 */ 3121, 2501, 1991, 1586, 1277,
    /*   0 */ 1024, 820, 655, 526, 423,
    /*   5 */ 335, 272, 215, 172, 137,
    /*  10 */ 110, 87, 70, 56, 45,
    /*  15 */ 36, 29, 23, 18, 15,
];

/// How the run queue weighs tasks of different niceness (one per kernel era).
#[derive(Clone, Copy, Debug)]
pub struct FairParams {
    /// Load weight of nice -20..=19 (index nice + 20); nice 0 must weigh NICE_0_LOAD.
    pub weights: [u32; 40],
    /// How far (ns of vruntime) a task may be ahead of the least-served runnable task and
    /// still be served in its turn (CFS: sysctl_sched_min_granularity).
    pub granularity: Ns,
    /// The credit a task waking from sleep keeps against the least-served runnable task
    /// (place_entity: sysctl_sched_latency / 2 with GENTLE_FAIR_SLEEPERS).
    pub sleeper_credit: Ns,
}

impl FairParams {
    /// CFS (2.6.23+): sched_prio_to_weight; min_granularity 0.75 ms and latency 6 ms, both
    /// times 1 + ilog2(min(ncpus, 8)) (update_sysctl, SCHED_TUNABLESCALING_LOG).
    pub fn cfs(ncpus: u32) -> FairParams {
        let factor = 1 + (31 - ncpus.clamp(1, 8).leading_zeros()) as u64;
        FairParams { weights: SCHED_PRIO_TO_WEIGHT, granularity: 750_000 * factor, sleeper_credit: 3_000_000 * factor }
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
    /// Tasks whose state changed since the kernel last looked (in order, may repeat): the
    /// kernel's delay accounting and pressure stall information drain it.
    pub changed: Vec<TaskId>,
    pub fair: FairParams,
    /// Live tasks with a niceness other than 0. While there are none every task weighs the
    /// same and the run queue is served in order (round robin at the end of each slice).
    nr_reniced: u32,
    /// The least vruntime the run queue has seen (cfs_rq->min_vruntime, monotonic).
    min_vruntime: u64,
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
            changed: Vec::with_capacity(64),
            fair: FairParams::cfs(ncpus),
            nr_reniced: 0,
            min_vruntime: 0,
        }
    }

    /// A new task, runnable at once.
    pub fn add_task(&mut self) -> TaskId {
        let id = self.tasks.len() as TaskId;
        let mut t = TaskSched::fresh(RunState::Runnable, 0);
        // place_entity(initial): a new task starts level with the queue (START_DEBIT's
        // extra slice is not modelled).
        t.vruntime = self.placement();
        self.tasks.push(t);
        self.runq.push_back(id);
        self.nr_running += 1;
        self.changed.push(id);
        id
    }

    /// A reaped task's slot starts a new task. Its wake sequence carries on, so a wake-up
    /// still queued for the old task is recognised as stale.
    pub fn reuse_task(&mut self, tid: TaskId, runnable: bool) {
        let t = &mut self.tasks[tid as usize];
        debug_assert_eq!(t.state, RunState::Zombie);
        let seq = t.wake_seq.wrapping_add(1);
        *t = TaskSched::fresh(if runnable { RunState::Runnable } else { RunState::Sleeping }, seq);
        t.vruntime = 0;
        let v = self.placement();
        self.tasks[tid as usize].vruntime = v;
        if runnable {
            self.runq.push_back(tid);
            self.nr_running += 1;
        }
        self.changed.push(tid);
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
        let tid = if self.nr_reniced == 0 {
            self.runq.pop_front()?
        } else {
            let i = self.first_eligible()?;
            self.runq.remove(i).expect("queued task")
        };
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
        t.exec_at_pick = t.utime + t.stime;
        self.free_cpus -= 1;
        self.changed.push(tid);
        Some(tid)
    }

    /// The least vruntime among runnable and running tasks, and the monotonic
    /// cfs_rq->min_vruntime brought up to it (update_min_vruntime).
    fn update_min_vruntime(&mut self) -> u64 {
        let queued = self.runq.iter().map(|&t| self.tasks[t as usize].vruntime);
        let running = self.curr.iter().flatten().map(|&t| self.tasks[t as usize].vruntime);
        if let Some(m) = queued.chain(running).min() {
            self.min_vruntime = self.min_vruntime.max(m);
            return m;
        }
        self.min_vruntime
    }

    /// Where a task joining the queue starts: the queue's min_vruntime (0 while every task
    /// weighs the same and none is compared).
    fn placement(&mut self) -> u64 {
        if self.nr_reniced == 0 {
            return 0;
        }
        self.update_min_vruntime()
    }

    /// The first queued task (in queue order) within one granularity of the least-served
    /// runnable task. CFS serves the leftmost task of its vruntime tree and lets the
    /// current one run while it is less than a granularity ahead (check_preempt_tick,
    /// wakeup_preempt_entity); the model keeps its queue order among tasks that close
    /// together, so that over any span longer than a few slices each gets CPU time in
    /// proportion to its weight.
    fn first_eligible(&mut self) -> Option<usize> {
        if self.runq.is_empty() {
            return None;
        }
        let least = self.update_min_vruntime();
        let limit = least + self.fair.granularity;
        self.runq.iter().position(|&t| self.tasks[t as usize].vruntime <= limit)
    }

    /// At the end of a CPU burst of `dur` ns: should the running task give its CPU up?
    /// While every task has nice 0, a burst of 0.25 ms or more is a time slice and the task
    /// goes behind any waiting one. Otherwise CFS's rule (check_preempt_tick): once it has
    /// run sched_min_granularity since it was picked, it yields to a waiting task it is not
    /// ahead of by more than the granularity.
    pub fn slice_over(&mut self, tid: TaskId, dur: Ns) -> bool {
        if self.nr_reniced == 0 {
            return dur >= crate::NS_PER_MS / 4 && !self.runq.is_empty();
        }
        let t = &self.tasks[tid as usize];
        if t.utime + t.stime - t.exec_at_pick < self.fair.granularity {
            return false;
        }
        self.first_eligible().is_some()
    }

    /// sched_slice of a nice-0 task: the period (sched_latency, stretched to nr x
    /// min_granularity once more than sched_nr_latency tasks share a CPU) shared among the
    /// tasks of one CPU's queue (the runnable tasks spread over the CPUs).
    pub fn sched_slice(&self) -> Ns {
        let nr = (self.nr_running as u64).div_ceil(self.curr.len().max(1) as u64).max(1);
        let latency = 2 * self.fair.sleeper_credit;
        latency.max(nr * self.fair.granularity) / nr
    }

    /// What is left of `tid`'s slice since it was last picked (check_preempt_tick sets
    /// need_resched once it is used up and another task waits).
    pub fn slice_left(&self, tid: TaskId) -> Ns {
        let t = &self.tasks[tid as usize];
        self.sched_slice().saturating_sub(t.utime + t.stime - t.exec_at_pick)
    }

    /// Whether a task waits for a CPU.
    pub fn cpu_wanted(&self) -> bool {
        !self.runq.is_empty()
    }

    /// set_user_nice: the task's niceness and load weight. Its vruntime is kept (the
    /// kernel re-weights the queued entity; what it has run stays run).
    pub fn set_nice(&mut self, tid: TaskId, nice: i32) {
        let nice = nice.clamp(-20, 19);
        let t = &mut self.tasks[tid as usize];
        if t.state == RunState::Zombie {
            return;
        }
        let was_reniced = t.nice != 0;
        match (t.nice != 0, nice != 0) {
            (false, true) => self.nr_reniced += 1,
            (true, false) => self.nr_reniced -= 1,
            _ => {}
        }
        t.nice = nice;
        t.weight = self.fair.weights[(nice + 20) as usize];
        if nice != 0 && self.nr_reniced == 1 && !was_reniced {
            // Weights start to matter: what the tasks ran while they all weighed the same
            // (served in turn) gives none of them a claim, so all start level.
            for t in self.tasks.iter_mut() {
                t.vruntime = 0;
            }
            self.min_vruntime = 0;
        }
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
        self.changed.push(tid);
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
        // place_entity: a sleeper comes back at most sleeper_credit behind the queue, so
        // a long sleep earns no unbounded claim on the CPU.
        let floor = self.placement().saturating_sub(self.fair.sleeper_credit);
        let t = &mut self.tasks[tid as usize];
        t.vruntime = t.vruntime.max(floor);
        t.state = RunState::Runnable;
        t.wake_seq = t.wake_seq.wrapping_add(1);
        self.nr_running += 1;
        self.runq.push_back(tid);
        self.changed.push(tid);
        true
    }

    /// The running task is preempted and goes to the back of the run queue.
    pub fn requeue(&mut self, tid: TaskId) {
        self.release_cpu(tid);
        let t = &mut self.tasks[tid as usize];
        t.state = RunState::Runnable;
        t.nivcsw += 1;
        self.runq.push_back(tid);
        self.changed.push(tid);
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
        if self.tasks[tid as usize].nice != 0 {
            self.nr_reniced -= 1;
        }
        self.tasks[tid as usize].state = RunState::Zombie;
        self.changed.push(tid);
    }

    /// A task that starts asleep (woken later by `wake`).
    pub fn add_sleeping_task(&mut self) -> TaskId {
        let id = self.add_task();
        self.runq.pop_back();
        self.nr_running -= 1;
        self.tasks[id as usize].state = RunState::Sleeping;
        self.changed.push(id);
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
        // update_curr: calc_delta_fair scales the time run by NICE_0_LOAD / weight.
        t.vruntime += if t.weight == NICE_0_LOAD { dur } else { dur * NICE_0_LOAD as u64 / t.weight as u64 };
        if !sys && t.nice > 0 {
            // account_user_time: a niced task's user time is CPUTIME_NICE (/proc/stat nice).
            self.cpu.user -= dur;
            self.cpu.nice += dur;
        }
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

    /// sched_slice: sched_latency (6 ms x (1 + ilog2(min(CPUs, 8)))) shared among one CPU's
    /// tasks, stretched to nr x min_granularity beyond eight of them; what a task has run
    /// since it was picked comes off it.
    #[test]
    fn sched_slice_follows_the_tasks_per_cpu() {
        let mut s = Sched::new(1);
        s.add_task();
        assert_eq!(s.sched_slice(), 6_000_000, "1 CPU, 1 task: the whole latency");
        s.add_task();
        assert_eq!(s.sched_slice(), 3_000_000);
        let mut s = Sched::new(32);
        for _ in 0..256 {
            s.add_task();
        }
        assert_eq!(s.sched_slice(), 3_000_000, "8 a CPU: 24 ms / 8");
        for _ in 0..256 {
            s.add_task();
        }
        assert_eq!(s.sched_slice(), 3_000_000, "16 a CPU: min_granularity, the period stretched");
        let mut one = Sched::new(1);
        let t = one.add_task();
        one.add_task();
        assert_eq!(one.pick(), Some(t));
        one.burst_start(0, true);
        one.burst_end(t, 1_000_000, true, 1_000_000);
        assert_eq!(one.slice_left(t), 2_000_000);
    }

    /// Two CPU-bound tasks on one CPU in 1 ms slices for `ms` ms: their CPU times.
    fn share(s: &mut Sched, a: TaskId, b: TaskId, now: &mut Ns, ms: u64) -> (u64, u64) {
        let mut cur = match s.curr[0] {
            Some(c) => c,
            None => s.pick().expect("runnable"),
        };
        let (ua, ub) = (s.tasks[a as usize].utime, s.tasks[b as usize].utime);
        for _ in 0..ms {
            s.burst_start(*now, false);
            *now += 1_000_000;
            s.burst_end(cur, *now, false, 1_000_000);
            if s.slice_over(cur, 1_000_000) {
                s.requeue(cur);
                cur = s.pick().expect("runnable");
            }
        }
        (s.tasks[a as usize].utime - ua, s.tasks[b as usize].utime - ub)
    }

    #[test]
    fn nice_levels_share_the_cpu_in_the_ratio_of_their_weights() {
        let mut s = Sched::new(1);
        let a = s.add_task();
        let b = s.add_task();
        s.set_nice(b, 19);
        let mut now = 0;
        let (ta, tb) = share(&mut s, a, b, &mut now, 20_000);
        let ratio = ta as f64 / tb as f64;
        let want = 1024.0 / 15.0;
        assert!((ratio / want - 1.0).abs() < 0.05, "nice 0 : nice 19 = {ratio:.1}, weights {want:.1}");
        assert_eq!(s.cpu.nice, tb, "a niced task's user time is nice time");
        // renice the second to -5 (3121): now it gets ~3x the first.
        s.set_nice(b, -5);
        let (ta, tb) = share(&mut s, a, b, &mut now, 20_000);
        let ratio = tb as f64 / ta as f64;
        assert!((ratio / (3121.0 / 1024.0) - 1.0).abs() < 0.05, "nice -5 : nice 0 = {ratio:.2}");
    }

    #[test]
    fn equal_niceness_is_served_in_turn() {
        // All at nice 0: round robin, as before weights existed; all at nice 5: the same.
        for nice in [0, 5] {
            let mut s = Sched::new(1);
            let t: Vec<TaskId> = (0..3).map(|_| s.add_task()).collect();
            for &x in &t {
                s.set_nice(x, nice);
            }
            let mut order = Vec::new();
            let mut cur = s.pick().unwrap();
            for i in 0..6 {
                order.push(cur);
                s.burst_start(i * 1_000_000, false);
                s.burst_end(cur, (i + 1) * 1_000_000, false, 1_000_000);
                assert!(s.slice_over(cur, 1_000_000));
                s.requeue(cur);
                cur = s.pick().unwrap();
            }
            assert_eq!(order, [t[0], t[1], t[2], t[0], t[1], t[2]], "nice {nice}");
        }
    }
}
