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

/// Touches `pages` pages of private anonymous memory (and, with `shared`, as many of a
/// MAP_SHARED|MAP_ANONYMOUS object) in its first steps; its last step does nothing but
/// exit, and notes when it did.
struct Toucher {
    pages: u64,
    shared: bool,
    pos: u64,
    exit_step_at: std::rc::Rc<std::cell::Cell<u64>>,
}
impl Program for Toucher {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.pos == self.pages {
            self.exit_step_at.set(k.now);
            return Step::Exit(0);
        }
        if self.pos == 0 && self.shared && k.tasks[me as usize].vmas.is_empty() {
            k.map_shared_anon(me, self.pages, memtwin_kernel::mm::Content::Zero);
        }
        let anon = k.anon_mapping(me);
        let shm = k.tasks[me as usize].vmas.first().copied();
        while self.pos < self.pages {
            if let Err(s) = k.touch(me, anon, self.pos, true) {
                return s;
            }
            if let Some(m) = shm {
                if let Err(s) = k.touch(me, m, self.pos, true) {
                    return s;
                }
            }
            self.pos += 1;
        }
        Step::Cpu { user: 0, sys: 0 }
    }
}

/// exit_mmap's teardown is the exiting task's last system time, before its parent's wait
/// returns: every resident page of its private and shared anonymous memory is taken out
/// and freed at the per-page cost `rm` pays for a cached file (page_cache_ns).
#[test]
fn exit_mmap_charges_the_exiting_task_per_resident_anonymous_page() {
    for (pages, shared) in [(0u64, false), (5_000, false), (5_000, true)] {
        let m = memtwin_machine::preset("seed-000").expect("preset");
        let per_page = m.cpu_model.page_cache_ns;
        let mut k = Kernel::boot(m, 1).expect("boot");
        let at = std::rc::Rc::new(std::cell::Cell::new(0));
        let prog = Toucher { pages, shared, pos: 0, exit_step_at: at.clone() };
        let t = k.spawn("touch", "touch", Box::new(prog), Sink::Null, Sink::Null);
        let limit = k.now + 60 * NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        assert_eq!(k.tasks[t as usize].exit_code, Some(0));
        let resident = if shared { 2 * pages } else { pages };
        let teardown = k.tasks[t as usize].end - at.get();
        assert_eq!(teardown, resident * per_page, "{pages} pages, shared {shared}");
    }
}
