//! Niceness and I/O priority of tasks (kernel/sys.c setpriority, block/ioprio.c
//! ioprio_set/ioprio_get) and the per-era CPU weights of nice levels.

use crate::Kernel;
use memtwin_engine::{FairParams, TaskId, NICE_0_LOAD};
use memtwin_machine::KernelProfile;

/// I/O scheduling classes (IOPRIO_CLASS_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IoClass {
    /// Real time: served before every other class.
    Rt = 1,
    /// Best effort, levels 0 (most) to 7 (least).
    Be = 2,
    /// Served only when no other class has I/O for the disk.
    Idle = 3,
}

/// An I/O priority: class and level (IOPRIO_PRIO_VALUE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoPrio {
    pub class: IoClass,
    /// 0..=7 (the idle class has none; 0 is kept).
    pub level: u8,
}

/// IOPRIO_NORM: the best-effort level of a task with nice 0.
pub const IOPRIO_NORM: u8 = 4;

/// task_nice_ioprio: the best-effort level a niceness maps to, (nice + 20) / 5.
pub fn task_nice_ioprio(nice: i32) -> u8 {
    ((nice + 20) / 5) as u8
}

/// The CPU weights of nice levels in the era's scheduler.
pub fn fair_params(kernel: KernelProfile, ncpus: u32) -> FairParams {
    match kernel {
        KernelProfile::Linux24 => {
            // 2.4 kernel/sched.c: each epoch gives a task counter = counter / 2 +
            // NICE_TO_TICKS(nice) ticks, NICE_TO_TICKS(n) = TICK_SCALE(20 - n) + 1 with
            // TICK_SCALE(x) = x >> 2 at HZ=100; goodness() runs the task with the most
            // ticks left, and a new epoch starts when every runnable task's are spent. A
            // CPU-bound task's share is its slice against the others': the weights are the
            // ticks, scaled so that nice 0 (6 ticks) weighs NICE_0_LOAD.
            let mut weights = [0u32; 40];
            for (i, w) in weights.iter_mut().enumerate() {
                let nice = i as i32 - 20;
                let ticks = ((20 - nice) >> 2) as u32 + 1;
                *w = ticks * NICE_0_LOAD / 6;
            }
            // One tick (10 ms) of scheduling granularity; a sleeper keeps at most the
            // counter / 2 carried into the next epoch, one nice-0 slice (60 ms).
            FairParams { weights, granularity: 10_000_000, sleeper_credit: 60_000_000 }
        }
        _ => FairParams::cfs(ncpus),
    }
}

impl Kernel {
    /// The task's niceness (task_nice).
    pub fn task_nice(&self, tid: TaskId) -> i32 {
        self.sched.tasks[tid as usize].nice
    }

    /// set_one_prio -> set_user_nice: the niceness is clamped to -20..=19.
    pub fn set_user_nice(&mut self, tid: TaskId, nice: i32) {
        self.sched.set_nice(tid, nice);
        self.sched.changed.push(tid);
    }

    /// ioprio_set(IOPRIO_WHO_PROCESS): None restores IOPRIO_CLASS_NONE.
    pub fn set_ioprio(&mut self, tid: TaskId, prio: Option<IoPrio>) {
        self.tasks[tid as usize].ioprio = prio;
    }

    /// The priority the elevators see (get_current_ioprio / the elevator's
    /// IOPRIO_CLASS_NONE handling): without a class set, best effort at the level of the
    /// task's niceness (task_nice_ioprio).
    pub fn effective_ioprio(&self, tid: TaskId) -> IoPrio {
        self.tasks[tid as usize].ioprio.unwrap_or(IoPrio { class: IoClass::Be, level: task_nice_ioprio(self.task_nice(tid)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn nice_maps_to_best_effort_levels() {
        assert_eq!(task_nice_ioprio(0), IOPRIO_NORM);
        assert_eq!(task_nice_ioprio(-20), 0);
        assert_eq!(task_nice_ioprio(19), 7);
        assert_eq!(task_nice_ioprio(5), 5);
    }
    #[test]
    fn linux_2_4_weights_are_timeslice_ticks() {
        let p = fair_params(KernelProfile::Linux24, 1);
        assert_eq!(p.weights[20], NICE_0_LOAD, "nice 0: 6 ticks");
        assert_eq!(p.weights[39], 1024 / 6, "nice 19: 1 tick");
        assert_eq!(p.weights[0], 11 * 1024 / 6, "nice -20: 11 ticks");
        let c = fair_params(KernelProfile::Linux2639, 4);
        assert_eq!(c.weights[39], 15);
        assert_eq!(c.granularity, 750_000 * 3, "1 + ilog2(4)");
    }
}
