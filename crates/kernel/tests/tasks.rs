//! The task table: exited tasks whose status was collected are reaped and their slots
//! reused, so the table (and the scheduler's per-task state) follows the tasks alive, not
//! every task a run has started; children's CPU time is summed at exit.

use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId, NS_PER_SEC};

struct Burn(bool);
impl Program for Burn {
    fn step(&mut self, _k: &mut Kernel, _me: TaskId) -> Step {
        if self.0 {
            return Step::Exit(3);
        }
        self.0 = true;
        Step::Cpu { user: 1_000, sys: 2_000 }
    }
}

#[test]
fn reaped_slots_are_reused_and_cpu_is_summed_at_exit() {
    let m = memtwin_machine::preset("seed-000").expect("preset");
    let mut k = Kernel::boot(m, 1).expect("boot");
    let before = k.tasks.len();
    let mut pids = Vec::new();
    for _ in 0..5000 {
        let t = k.spawn("burn", "burn", Box::new(Burn(false)), Sink::Null, Sink::Null);
        pids.push(k.pid_of(t));
        let limit = k.now + NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        assert_eq!(k.tasks[t as usize].exit_code, Some(3));
        k.reap(t);
    }
    assert!(k.tasks.len() <= before + 1, "task table grew to {} slots", k.tasks.len());
    assert_eq!(k.sched.tasks.len(), k.tasks.len());
    pids.dedup();
    assert_eq!(pids.len(), 5000, "every task gets a new pid");
    assert_eq!(k.children_utime, 5000 * 1_000);
    assert_eq!(k.children_stime, 5000 * 2_000);
}
