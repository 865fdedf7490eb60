//! Pressure stall information (kernel/sched/psi.c): /proc/pressure/{cpu,memory,io}.
//!
//! Each task contributes flags to the group of the CPU it runs or last ran on
//! (psi_task_change): TSK_IOWAIT while in an I/O sleep, TSK_MEMSTALL while stalled on memory
//! (asleep in reclaim, on a thrashing page, on a swap-in, on memory.high; running its own
//! reclaim), TSK_RUNNING while runnable or running, TSK_ONCPU while on a CPU and
//! TSK_MEMSTALL_RUNNING while running in a memory stall. Per CPU, test_state turns the task
//! counts into SOME/FULL states whose times are summed (psi_group_change); the system
//! totals weight each CPU by its non-idle time (collect_percpu_times) and the averages
//! decay every PSI_FREQ (update_averages, calc_avgs).
//!
//! The model has one run queue: a task's CPU is the one it last ran on, kept when it is
//! free again (a CPU is taken by the lowest-numbered free one otherwise), which is what
//! the kernel's wake-affine placement does on an idle machine.

use crate::delayacct::{Phase, WaitReason};
use crate::Kernel;
use memtwin_engine::{Ns, RunState, TaskId, NS_PER_SEC};
use memtwin_machine::KernelProfile;

pub const TSK_IOWAIT: u8 = 1;
pub const TSK_MEMSTALL: u8 = 2;
pub const TSK_RUNNING: u8 = 4;
pub const TSK_ONCPU: u8 = 8;
pub const TSK_MEMSTALL_RUNNING: u8 = 16;

const NR_IOWAIT: usize = 0;
const NR_MEMSTALL: usize = 1;
const NR_RUNNING: usize = 2;
const NR_ONCPU: usize = 3;
const NR_MEMSTALL_RUNNING: usize = 4;

/// enum psi_states.
pub const PSI_IO_SOME: usize = 0;
pub const PSI_IO_FULL: usize = 1;
pub const PSI_MEM_SOME: usize = 2;
pub const PSI_MEM_FULL: usize = 3;
pub const PSI_CPU_SOME: usize = 4;
pub const PSI_CPU_FULL: usize = 5;
const PSI_NONIDLE: usize = 6;
const NR_STATES: usize = 6;

const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// 1/exp(2s/10s), 1/exp(2s/60s), 1/exp(2s/300s) as fixed point.
pub const EXP_10S: u64 = 1677;
pub const EXP_60S: u64 = 1981;
pub const EXP_300S: u64 = 2034;
/// PSI_FREQ = 2 * HZ + 1 jiffies at HZ = 250 (distribution kernels): 2.004 s.
pub const PSI_PERIOD_NS: Ns = 2 * NS_PER_SEC + NS_PER_SEC / 250;

/// Which era's test_state: 6.x (PSI_MEM_FULL counts reclaimers running in a stall as not
/// productive, 6.0; CPU full, 5.13), 5.x before that, none before 4.20.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsiEra {
    None,
    V5,
    V6,
}

impl PsiEra {
    pub fn of(p: KernelProfile) -> PsiEra {
        match p {
            KernelProfile::Linux6 => PsiEra::V6,
            KernelProfile::Linux58 | KernelProfile::Linux5Pre59 => PsiEra::V5,
            KernelProfile::Linux2639 | KernelProfile::Linux24 => PsiEra::None,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct PsiCpu {
    tasks: [u32; 5],
    state_mask: u8,
    /// Since when the CPU has been in `state_mask` (psi_group_cpu.state_start).
    state_start: Ns,
    /// Time in each state (and non-idle) since the last collection.
    times: [Ns; 7],
}

impl PsiCpu {
    /// record_times: the time since `state_start` goes to the states the CPU was in.
    fn record_times(&mut self, now: Ns) {
        let dt = now.saturating_sub(self.state_start);
        self.state_start = now.max(self.state_start);
        if dt == 0 || self.state_mask == 0 {
            return;
        }
        for s in 0..=PSI_NONIDLE {
            if self.state_mask & (1 << s) != 0 {
                self.times[s] += dt;
            }
        }
    }
}

/// calc_load: one step of the fixed-point exponential decay towards `active`.
pub fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut newload = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        newload += FIXED_1 - 1;
    }
    newload / FIXED_1
}

/// calc_avgs: fold `time` stalled out of `period` into the three averages.
pub fn calc_avgs(avg: &mut [u64; 3], time: Ns, period: Ns) {
    let pct = (time as u128 * 100 / period.max(1) as u128) as u64 * FIXED_1;
    avg[0] = calc_load(avg[0], EXP_10S, pct);
    avg[1] = calc_load(avg[1], EXP_60S, pct);
    avg[2] = calc_load(avg[2], EXP_300S, pct);
}

/// LOAD_INT.LOAD_FRAC as psi_show prints an average.
pub fn fmt_avg(x: u64) -> String {
    let int = x >> FSHIFT;
    let frac = ((x & (FIXED_1 - 1)) * 100) >> FSHIFT;
    format!("{int}.{frac:02}")
}

/// test_state for one CPU's task counts.
fn test_state(t: &[u32; 5], s: usize, era: PsiEra) -> bool {
    match s {
        PSI_IO_SOME => t[NR_IOWAIT] > 0,
        PSI_IO_FULL => t[NR_IOWAIT] > 0 && t[NR_RUNNING] == 0,
        PSI_MEM_SOME => t[NR_MEMSTALL] > 0,
        PSI_MEM_FULL => {
            if era == PsiEra::V6 {
                t[NR_MEMSTALL] > 0 && t[NR_RUNNING] == t[NR_MEMSTALL_RUNNING]
            } else {
                t[NR_MEMSTALL] > 0 && t[NR_RUNNING] == 0
            }
        }
        PSI_CPU_SOME => t[NR_RUNNING] > t[NR_ONCPU],
        PSI_CPU_FULL => era == PsiEra::V6 && t[NR_RUNNING] > 0 && t[NR_ONCPU] == 0,
        _ => t[NR_IOWAIT] > 0 || t[NR_MEMSTALL] > 0 || t[NR_RUNNING] > 0,
    }
}

/// The system-wide psi_group (and, with `groups`, a cgroup's: cgroup->psi, for which only
/// the per-CPU states, totals and averages are used).
#[derive(Clone, Debug)]
pub struct Psi {
    pub era: PsiEra,
    cpus: Vec<PsiCpu>,
    cpu_owner: Vec<Option<TaskId>>,
    /// The time of the last update (states are summed lazily, per CPU, up to here).
    last: Ns,
    /// total[PSI_AVGS][s], ns.
    pub total: [u64; NR_STATES],
    avg_total: [u64; NR_STATES],
    /// avg[s][10s, 60s, 300s], fixed point percent.
    pub avg: [[u64; 3]; NR_STATES],
    avg_next_update: Ns,
    avg_last_update: Ns,
    /// (time, task): a running task's memory stall (its reclaim burst) ends.
    deadlines: Vec<(Ns, TaskId)>,
    /// Each v2 cgroup's psi_group, by cgroup id (None: the root, whose files show the
    /// system's, a v1 hierarchy, or a removed cgroup). psi_task_change updates the groups
    /// of the task's cgroup and its ancestors as well as the system's.
    groups: Vec<Option<Box<Psi>>>,
}

impl Psi {
    pub fn new(era: PsiEra, ncpus: u32) -> Psi {
        Psi {
            era,
            cpus: vec![PsiCpu::default(); ncpus as usize],
            cpu_owner: vec![None; ncpus as usize],
            last: 0,
            total: [0; NR_STATES],
            avg_total: [0; NR_STATES],
            avg: [[0; 3]; NR_STATES],
            avg_next_update: PSI_PERIOD_NS,
            avg_last_update: 0,
            deadlines: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// psi_cgroup_alloc: a new cgroup's group, its averages clocked from `now`.
    pub(crate) fn group_alloc(&mut self, id: u16, now: Ns) {
        if self.era == PsiEra::None {
            return;
        }
        let mut g = Psi::new(self.era, self.cpus.len() as u32);
        g.restart(now);
        let i = id as usize;
        if self.groups.len() <= i {
            self.groups.resize_with(i + 1, || None);
        }
        self.groups[i] = Some(Box::new(g));
    }
    /// A copy of the group's states without the cgroups' groups (to read totals from).
    pub fn snapshot(&self) -> Psi {
        Psi {
            era: self.era,
            cpus: self.cpus.clone(),
            cpu_owner: Vec::new(),
            last: self.last,
            total: self.total,
            avg_total: self.avg_total,
            avg: self.avg,
            avg_next_update: self.avg_next_update,
            avg_last_update: self.avg_last_update,
            deadlines: Vec::new(),
            groups: Vec::new(),
        }
    }
    /// psi_cgroup_free.
    pub(crate) fn group_free(&mut self, id: u16) {
        if let Some(g) = self.groups.get_mut(id as usize) {
            *g = None;
        }
    }
    /// The group of cgroup `id`, if it has one.
    pub fn group(&self, id: u16) -> Option<&Psi> {
        self.groups.get(id as usize)?.as_deref()
    }

    pub(crate) fn restart(&mut self, now: Ns) {
        self.last = now;
        self.avg_last_update = now;
        self.avg_next_update = now + PSI_PERIOD_NS;
        for c in &mut self.cpus {
            c.state_start = now;
        }
        for g in self.groups.iter_mut().flatten() {
            g.restart(now);
        }
    }

    /// collect_percpu_times at `now`: fold the CPUs' times into the totals, weighting each
    /// CPU by its non-idle time.
    pub(crate) fn collect(&mut self, now: Ns) {
        let mut deltas = [0u128; NR_STATES];
        let mut nonidle_total = 0u128;
        for c in &mut self.cpus {
            c.record_times(now);
            let nonidle = c.times[PSI_NONIDLE] as u128;
            nonidle_total += nonidle;
            for (s, d) in deltas.iter_mut().enumerate() {
                *d += c.times[s] as u128 * nonidle;
            }
            c.times = [0; 7];
        }
        for s in 0..NR_STATES {
            self.total[s] += (deltas[s] / nonidle_total.max(1)) as u64;
        }
    }

    /// update_averages at `now` (a PSI_FREQ boundary).
    fn update_averages(&mut self, now: Ns) {
        let period = now - self.avg_last_update;
        self.avg_last_update = now;
        self.avg_next_update = now + PSI_PERIOD_NS;
        for s in 0..NR_STATES {
            let sample = (self.total[s] - self.avg_total[s]).min(period);
            self.avg_total[s] += sample;
            calc_avgs(&mut self.avg[s], sample, period);
        }
    }

    /// psi_group_change at `now`: close the CPU's current states, then move the counts.
    fn change(&mut self, cpu: u32, clear: u8, set: u8, now: Ns) {
        let era = self.era;
        let c = &mut self.cpus[cpu as usize];
        c.record_times(now);
        for b in 0..5 {
            if clear & (1 << b) != 0 {
                c.tasks[b] -= 1;
            }
            if set & (1 << b) != 0 {
                c.tasks[b] += 1;
            }
        }
        let mut m = 0u8;
        for s in 0..=PSI_NONIDLE {
            if test_state(&c.tasks, s, era) {
                m |= 1 << s;
            }
        }
        c.state_mask = m;
    }

    /// One resource's file as psi_show prints it ("cpu", "memory" or "io").
    pub fn show(&self, res: &str) -> String {
        let (some, full) = match res {
            "io" => (PSI_IO_SOME, PSI_IO_FULL),
            "memory" => (PSI_MEM_SOME, PSI_MEM_FULL),
            _ => (PSI_CPU_SOME, PSI_CPU_FULL),
        };
        let mut out = String::new();
        for (name, s) in [("some", some), ("full", full)] {
            if res == "cpu" && name == "full" && self.era != PsiEra::V6 {
                // The cpu file has a full line since 5.13.
                continue;
            }
            // CPU full is undefined at the system level: zeros.
            let (avg, total) = if res == "cpu" && name == "full" { ([0; 3], 0) } else { (self.avg[s], self.total[s] / 1000) };
            out.push_str(&format!(
                "{name} avg10={} avg60={} avg300={} total={total}\n",
                fmt_avg(avg[0]),
                fmt_avg(avg[1]),
                fmt_avg(avg[2])
            ));
        }
        out
    }
}

impl Kernel {
    /// Sum the states up to `now`, folding into the averages at each PSI_FREQ boundary and
    /// ending running memory stalls at their deadlines.
    pub(crate) fn psi_advance(&mut self, now: Ns) {
        if self.psi.era == PsiEra::None {
            return;
        }
        loop {
            let mut next = now.min(self.psi.avg_next_update);
            if let Some(&(d, _)) = self.psi.deadlines.iter().min_by_key(|x| x.0) {
                next = next.min(d.max(self.psi.last));
            }
            if next < self.psi.last {
                next = self.psi.last;
            }
            let mut g_next = Ns::MAX;
            for g in self.psi.groups.iter_mut().flatten() {
                if g.avg_next_update <= next {
                    // A cgroup's averages are clocked from its creation (group_init).
                    let t = g.avg_next_update;
                    g.collect(t);
                    g.update_averages(t);
                }
                g_next = g_next.min(g.avg_next_update);
            }
            if g_next < next {
                next = g_next.max(self.psi.last);
            }
            self.psi.last = next;
            if next == self.psi.avg_next_update {
                self.psi.collect(next);
                self.psi.update_averages(next);
            }
            let mut i = 0;
            while i < self.psi.deadlines.len() {
                if self.psi.deadlines[i].0 <= next {
                    let (_, tid) = self.psi.deadlines.swap_remove(i);
                    self.psi_update_task(tid);
                } else {
                    i += 1;
                }
            }
            if next >= now && self.psi.deadlines.iter().all(|x| x.0 > now) {
                return;
            }
        }
    }

    fn psi_task_flags(&self, tid: TaskId) -> u8 {
        let d = &self.tasks[tid as usize].delay;
        let memstall_running = d.memstall_until > self.psi.last;
        match d.phase {
            Phase::Gone => 0,
            Phase::Runnable => TSK_RUNNING | if memstall_running { TSK_MEMSTALL } else { 0 },
            Phase::Running => {
                TSK_RUNNING | TSK_ONCPU | if memstall_running { TSK_MEMSTALL | TSK_MEMSTALL_RUNNING } else { 0 }
            }
            Phase::Asleep(r) => {
                let io = if self.sched.tasks[tid as usize].state == RunState::DiskSleep { TSK_IOWAIT } else { 0 };
                let mem = match r {
                    WaitReason::ReclaimWait | WaitReason::Swapin | WaitReason::Thrashing | WaitReason::MemcgHigh => TSK_MEMSTALL,
                    _ => 0,
                };
                io | mem
            }
        }
    }

    /// psi_task_change for one task: move its flags to what its state says now.
    fn psi_update_task(&mut self, tid: TaskId) {
        let ncpus = self.psi.cpus.len() as u32;
        let new = self.psi_task_flags(tid);
        let d = &self.tasks[tid as usize].delay;
        let (old, old_cpu) = (d.psi_flags, d.psi_cpu);
        let mut cpu = self.tasks[tid as usize].delay.psi_cpu;
        if cpu == u32::MAX {
            cpu = tid % ncpus;
        }
        if let Some(c) = self.psi.cpu_owner.iter().position(|&o| o == Some(tid)) {
            cpu = c as u32;
        }
        let (old_cg, cg) = (d.psi_memcg, self.tasks[tid as usize].memcg);
        if old == new && old_cpu == cpu && old_cg == cg {
            return;
        }
        let now = self.psi.last;
        if old != 0 && old_cpu != u32::MAX {
            self.psi.change(old_cpu, old, 0, now);
            self.psi_cgroups_change(old_cg, old_cpu, old, 0, now);
        }
        if new != 0 {
            self.psi.change(cpu, 0, new, now);
            self.psi_cgroups_change(cg, cpu, 0, new, now);
        }
        let d = &mut self.tasks[tid as usize].delay;
        d.psi_flags = new;
        d.psi_cpu = cpu;
        d.psi_memcg = cg;
    }

    /// psi_task_change's walk up the cgroup tree: the groups of cgroup `id` and of its
    /// ancestors below the root (the root's is the system's).
    fn psi_cgroups_change(&mut self, mut id: u16, cpu: u32, clear: u8, set: u8, now: Ns) {
        if self.psi.groups.is_empty() {
            return;
        }
        while id != crate::mm::memcontrol::ROOT_MEMCG {
            if let Some(Some(g)) = self.psi.groups.get_mut(id as usize) {
                g.change(cpu, clear, set, now);
            }
            match self.memcg.cgs.get(id as usize).and_then(|c| c.parent) {
                Some(p) => id = p,
                None => break,
            }
        }
    }

    /// cgroup_move_task: a task changed cgroups; its states move to the new groups.
    pub(crate) fn psi_cgroup_move(&mut self, tid: TaskId) {
        if self.psi.era == PsiEra::None {
            return;
        }
        self.delayacct_flush();
        self.psi_advance(self.now);
        self.psi_update_task(tid);
    }

    /// memory.pressure (or io/cpu) of cgroup `id` as read now; None without a group.
    pub fn cgroup_pressure(&mut self, id: u16, res: &str) -> Option<String> {
        if id == crate::mm::memcontrol::ROOT_MEMCG {
            return self.pressure(res);
        }
        self.psi.group(id)?;
        self.delayacct_flush();
        let now = self.now;
        let g = self.psi.groups[id as usize].as_mut()?;
        g.collect(now);
        Some(g.show(res))
    }

    /// The tasks in `changed` moved at `self.now`: place running ones on CPUs and update
    /// their flags.
    pub(crate) fn psi_tasks_changed(&mut self, changed: &[TaskId]) {
        if self.psi.era == PsiEra::None {
            return;
        }
        let now = self.now;
        for &tid in changed {
            if self.tasks[tid as usize].delay.phase != Phase::Running {
                if let Some(c) = self.psi.cpu_owner.iter_mut().find(|o| **o == Some(tid)) {
                    *c = None;
                }
            }
        }
        for &tid in changed {
            let d = &mut self.tasks[tid as usize].delay;
            if d.phase != Phase::Running {
                continue;
            }
            if d.pending_reclaim > 0 {
                // The reclaim charged in this step runs first in the burst now starting.
                d.memstall_until = now + std::mem::take(&mut d.pending_reclaim);
                let until = d.memstall_until;
                self.psi.deadlines.push((until, tid));
            }
            if self.psi.cpu_owner.contains(&Some(tid)) {
                continue;
            }
            let home = self.tasks[tid as usize].delay.psi_cpu as usize;
            let c = if home < self.psi.cpu_owner.len() && self.psi.cpu_owner[home].is_none() {
                home
            } else {
                match self.psi.cpu_owner.iter().position(|o| o.is_none()) {
                    Some(c) => c,
                    None => continue,
                }
            };
            self.psi.cpu_owner[c] = Some(tid);
        }
        for &tid in changed {
            self.psi_update_task(tid);
        }
    }

    /// /proc/pressure/RES ("cpu", "memory", "io") as read now; None where the kernel has no
    /// such file (before 4.20).
    pub fn pressure(&mut self, res: &str) -> Option<String> {
        if self.psi.era == PsiEra::None {
            return None;
        }
        self.delayacct_flush();
        // psi_show: bring the totals up to date first (collect_percpu_times).
        self.psi.collect(self.now);
        Some(self.psi.show(res))
    }

    /// Bring the pressure totals up to now (what `pressure` does before it prints), for
    /// readers that can only look (`pressure_shown`); nothing before 4.20.
    pub fn pressure_sync(&mut self) {
        if self.psi.era == PsiEra::None {
            return;
        }
        self.delayacct_flush();
        self.psi.collect(self.now);
    }

    /// /proc/pressure/RES as of the last `pressure_sync` or `pressure`; None before 4.20.
    pub fn pressure_shown(&self, res: &str) -> Option<String> {
        if self.psi.era == PsiEra::None {
            return None;
        }
        Some(self.psi.show(res))
    }

    /// The system's stall totals so far, µs: [io some, io full, memory some, memory full,
    /// cpu some, cpu full]; None before 4.20.
    pub fn pressure_totals_us(&mut self) -> Option<[u64; 6]> {
        if self.psi.era == PsiEra::None {
            return None;
        }
        self.delayacct_flush();
        self.psi.collect(self.now);
        let mut t = self.psi.total.map(|x| x / 1000);
        if self.psi.era == PsiEra::V6 {
            t[PSI_CPU_FULL] = 0;
        }
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calc_load_matches_hand_computed_decay() {
        // One period fully stalled from zero: pct = 100 * 2048 = 204800.
        // avg10 = (0 * 1677 + 204800 * (2048 - 1677) + 2047) / 2048 = 37100 (18.11 %).
        let mut a = [0u64; 3];
        calc_avgs(&mut a, PSI_PERIOD_NS, PSI_PERIOD_NS);
        assert_eq!(a[0], (204_800 * 371 + 2047) / 2048);
        assert_eq!(a[0], 37_100);
        assert_eq!(fmt_avg(a[0]), "18.11");
        // avg60 = (204800 * 67 + 2047) / 2048 = 6700 (3.27 %); avg300 = 204800*14/2048 = 1400.
        assert_eq!(a[1], 6_700);
        assert_eq!(fmt_avg(a[1]), "3.27");
        assert_eq!(a[2], 1_400);
        assert_eq!(fmt_avg(a[2]), "0.68");
        // A second, idle period decays: 37100 * 1677 / 2048 = 30379 (14.83 %).
        calc_avgs(&mut a, 0, PSI_PERIOD_NS);
        assert_eq!(a[0], 37_100 * 1677 / 2048);
        assert_eq!(fmt_avg(a[0]), "14.83");
        // Half a period stalled: pct = 50 * 2048.
        let mut b = [0u64; 3];
        calc_avgs(&mut b, PSI_PERIOD_NS / 2, PSI_PERIOD_NS);
        assert_eq!(b[0], (102_400 * 371 + 2047) / 2048);
    }

    #[test]
    fn test_state_definitions_per_era() {
        // One task asleep in reclaim, one running: some but not full (both eras).
        let t = [0, 1, 1, 1, 0];
        for era in [PsiEra::V5, PsiEra::V6] {
            assert!(test_state(&t, PSI_MEM_SOME, era));
            assert!(!test_state(&t, PSI_MEM_FULL, era));
        }
        // The only task runs its own reclaim: full on 6.x, not before.
        let t = [0, 1, 1, 1, 1];
        assert!(test_state(&t, PSI_MEM_FULL, PsiEra::V6));
        assert!(!test_state(&t, PSI_MEM_FULL, PsiEra::V5));
        // Two runnable, one on the CPU: cpu some.
        let t = [0, 0, 2, 1, 0];
        assert!(test_state(&t, PSI_CPU_SOME, PsiEra::V6));
        assert!(!test_state(&t, PSI_CPU_FULL, PsiEra::V6));
        // I/O wait and nothing running: io full.
        let t = [1, 0, 0, 0, 0];
        assert!(test_state(&t, PSI_IO_FULL, PsiEra::V5));
        assert!(test_state(&t, PSI_NONIDLE, PsiEra::V5));
        assert!(!test_state(&[0; 5], PSI_NONIDLE, PsiEra::V5));
    }

    #[test]
    fn layout_per_era() {
        let p = Psi::new(PsiEra::V6, 2);
        assert_eq!(p.show("memory"), "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        assert_eq!(p.show("cpu").lines().count(), 2);
        let p = Psi::new(PsiEra::V5, 2);
        assert_eq!(p.show("cpu"), "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        assert_eq!(p.show("io").lines().count(), 2);
    }

    #[test]
    fn totals_weight_cpus_by_nonidle_time() {
        // CPU 0 fully memory-stalled for 1 s, CPU 1 busy (not stalled) for 1 s: some = 0.5 s.
        let mut p = Psi::new(PsiEra::V6, 2);
        p.change(0, 0, TSK_MEMSTALL, 0);
        p.change(1, 0, TSK_RUNNING | TSK_ONCPU, 0);
        p.collect(NS_PER_SEC);
        assert_eq!(p.total[PSI_MEM_SOME], NS_PER_SEC / 2);
        assert_eq!(p.total[PSI_MEM_FULL], NS_PER_SEC / 2);
        assert_eq!(p.total[PSI_IO_SOME], 0);
        // An idle CPU does not dilute: CPU 0 alone stalled, CPU 1 idle -> 100 %.
        let mut p = Psi::new(PsiEra::V6, 2);
        p.change(0, 0, TSK_IOWAIT, 0);
        p.collect(NS_PER_SEC);
        // Half a second more with CPU 0 running instead: no new stall, total unchanged.
        p.change(0, TSK_IOWAIT, TSK_RUNNING | TSK_ONCPU, NS_PER_SEC);
        p.collect(NS_PER_SEC * 3 / 2);
        assert_eq!(p.total[PSI_IO_SOME], NS_PER_SEC);
        assert_eq!(p.total[PSI_IO_SOME], NS_PER_SEC);
        assert_eq!(p.total[PSI_IO_FULL], NS_PER_SEC);
    }
}
