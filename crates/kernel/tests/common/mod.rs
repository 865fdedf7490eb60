//! Helpers shared by the kernel's integration tests: boot a preset with the invariant checks
//! on, run closures as tasks, wait for them. Each test binary compiles its own copy, so not
//! every helper is used by every binary.
#![allow(dead_code)]

use memtwin_kernel::{Kernel, Program, Step, TaskId, NS_PER_SEC};

/// The seed-000 machine, invariants checked after every event.
pub fn boot() -> Kernel {
    let m = memtwin_machine::preset("seed-000").expect("preset");
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

/// A task whose program is a closure; `None` ends it with status 0.
pub struct Script<F: FnMut(&mut Kernel, TaskId) -> Option<Step>>(pub F);
impl<F: FnMut(&mut Kernel, TaskId) -> Option<Step>> Program for Script<F> {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        (self.0)(k, me).unwrap_or(Step::Exit(0))
    }
}

pub fn spawn<F: FnMut(&mut Kernel, TaskId) -> Option<Step> + 'static>(k: &mut Kernel, f: F) -> TaskId {
    k.spawn("test", "test", Box::new(Script(f)), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null)
}

/// Run until every task in `tasks` has exited (at most 600 simulated seconds).
pub fn run(k: &mut Kernel, tasks: &[TaskId]) {
    let limit = k.now + 600 * NS_PER_SEC;
    let ts = tasks.to_vec();
    k.run_until(limit, &mut |k| ts.iter().all(|&t| k.task_exited(t)));
    assert!(tasks.iter().all(|&t| k.task_exited(t)), "tasks did not finish");
}
