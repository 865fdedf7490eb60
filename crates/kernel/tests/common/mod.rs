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

/// The seed-000 machine with `cpus` CPUs on the era `kernel`, invariants checked.
pub fn boot_era(kernel: &str, cpus: u32) -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, &format!("cpus={cpus}")).unwrap();
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

struct Idle;
impl Program for Idle {
    fn step(&mut self, _: &mut Kernel, _: TaskId) -> Step {
        Step::Block { io: false }
    }
}

/// Kernel work runs as a task on `cpu` from now on (`Kernel::current`); the task's id.
pub fn on_cpu(k: &mut Kernel, cpu: u32) -> TaskId {
    let t = k.spawn("worker", "worker", Box::new(Idle), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null);
    k.sched.tasks[t as usize].cpu = cpu;
    k.current = Some(t);
    t
}

/// `n` new clean pages of a fresh file, put on the LRU lists (the batches drained); returns
/// (mapping, pages).
pub fn listed_file_pages(k: &mut Kernel, n: u64) -> (u32, Vec<u32>) {
    let m = k.mm.new_mapping(memtwin_kernel::mm::MappingKind::File, None, 0);
    let pages = (0..n)
        .map(|i| {
            let p = k.mm.take_free().unwrap();
            k.filemap_add_page(m, i, p, false);
            p
        })
        .collect();
    k.lru_add_drain_all();
    (m, pages)
}
