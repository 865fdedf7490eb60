//! The task table: exited tasks whose status was collected are reaped and their slots
//! reused, so the table (and the scheduler's per-task state) follows the tasks alive, not
//! every task a run has started; children's CPU time is summed at exit.

use memtwin_kernel::exec::IMAGE_ANON_PAGES;
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
        // A bare task (no process image to fault in): its CPU time is its program's.
        k.tasks[t as usize].image_done = true;
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
/// returns: every resident page of its private anonymous memory is unmapped and freed at
/// the per-page cost `rm` pays for a cached file (page_cache_ns); a page of its shared
/// anonymous memory pays that twice (unmapped, then truncated from its object).
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
        // A shared page takes two passes: out of the page tables, then out of its object;
        // the image's anonymous pages (exec.rs) are private ones.
        let passes = if shared { 3 * pages } else { pages } + IMAGE_ANON_PAGES;
        let teardown = k.tasks[t as usize].end - at.get();
        assert_eq!(teardown, passes * per_page, "{pages} pages, shared {shared}");
    }
}

/// A task already in its own exit (PF_EXITING, do_exit's exit_mm running) ignores a
/// signal: it exits with the status it chose, when its teardown is done.
#[test]
fn a_signal_to_a_task_already_exiting_changes_nothing() {
    let m = memtwin_machine::preset("seed-000").expect("preset");
    let per_page = m.cpu_model.page_cache_ns;
    let mut k = Kernel::boot(m, 1).expect("boot");
    let at = std::rc::Rc::new(std::cell::Cell::new(0));
    let pages = 5_000;
    let prog = Toucher { pages, shared: false, pos: 0, exit_step_at: at.clone() };
    let t = k.spawn("touch", "touch", Box::new(prog), Sink::Null, Sink::Null);
    let limit = k.now + 60 * NS_PER_SEC;
    k.run_until(limit, &mut |_| at.get() > 0);
    assert!(!k.task_exited(t), "its teardown is running");
    k.kill(t, 137);
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert_eq!(k.tasks[t as usize].exit_code, Some(0), "the status it exited with");
    assert_eq!(k.tasks[t as usize].end - at.get(), (pages + IMAGE_ANON_PAGES) * per_page, "the teardown ran to its end");
}

/// Touches its memory like `Toucher`, then sleeps for an hour.
struct Sleeper(Toucher);
impl Program for Sleeper {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.0.pos < self.0.pages {
            return self.0.step(k, me);
        }
        Step::SleepUntil { t: k.now + 3600 * NS_PER_SEC, io: false }
    }
}

fn sleeper(k: &mut Kernel, pages: u64, shared: bool) -> TaskId {
    let at = std::rc::Rc::new(std::cell::Cell::new(0));
    let prog = Sleeper(Toucher { pages, shared, pos: 0, exit_step_at: at });
    let t = k.spawn("sleeper", "sleeper", Box::new(prog), Sink::Null, Sink::Null);
    let limit = k.now + NS_PER_SEC;
    k.run_until(limit, &mut |_| false);
    t
}

/// A task killed in its sleep runs its exit teardown too (do_exit -> exit_mmap in the
/// dying task): the signal ends the sleep, the teardown is its last system time, and its
/// memory is freed, and its parent's wait returns, only when the teardown is done.
#[test]
fn a_killed_task_tears_its_memory_down_before_it_exits() {
    for shared in [false, true] {
        let m = memtwin_machine::preset("seed-000").expect("preset");
        let per_page = m.cpu_model.page_cache_ns;
        let mut k = Kernel::boot(m, 1).expect("boot");
        let pages = 5_000;
        let t = sleeper(&mut k, pages, shared);
        let anon = k.tasks[t as usize].anon_mapping.expect("anonymous memory");
        let sys_before = k.sched.tasks[t as usize].stime;
        let killed_at = k.now;
        k.kill(t, 137);
        assert!(!k.task_exited(t), "the teardown takes time");
        assert_eq!(k.mm.mappings[anon as usize].nrpages, pages + IMAGE_ANON_PAGES, "memory is held until the teardown ends");
        let limit = k.now + NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        let passes = if shared { 3 * pages } else { pages } + IMAGE_ANON_PAGES;
        assert_eq!(k.tasks[t as usize].exit_code, Some(137));
        assert_eq!(k.tasks[t as usize].end - killed_at, passes * per_page, "shared {shared}");
        assert_eq!(k.sched.tasks[t as usize].stime - sys_before, passes * per_page);
        // A second signal to a dying task changes nothing.
        k.kill(t, 143);
        assert_eq!(k.tasks[t as usize].exit_code, Some(137));
    }
}

/// The OOM killer's victim exits the same way. From 4.6 to 5.18 the oom_reaper, woken at
/// once, unmaps the victim's private anonymous memory first, so the victim's own teardown
/// is only its shared anonymous memory; 6.x's reaper waits 2 s and the victim tears all
/// of it down itself.
#[test]
fn an_oom_victim_tears_down_what_the_oom_reaper_left() {
    use memtwin_machine::KernelProfile;
    for (era, reaped) in [(KernelProfile::Linux6, false), (KernelProfile::Linux58, true)] {
        let mut m = memtwin_machine::preset("seed-000").expect("preset");
        m.kernel = era;
        let per_page = m.cpu_model.page_cache_ns;
        let mut k = Kernel::boot(m, 1).expect("boot");
        let pages = 5_000;
        let t = sleeper(&mut k, pages, true);
        k.tasks[t as usize].oom_score_adj = 1000;
        let anon = k.tasks[t as usize].anon_mapping.expect("anonymous memory");
        let killed_at = k.now;
        k.out_of_memory(t);
        assert!(k.tasks[t as usize].killed, "{era:?}: the sleeper is the victim");
        assert_eq!(k.tasks[t as usize].anon_mapping.is_none(), reaped, "{era:?}");
        if !reaped {
            assert_eq!(k.mm.mappings[anon as usize].nrpages, pages + IMAGE_ANON_PAGES);
        }
        let limit = k.now + NS_PER_SEC;
        k.run_until(limit, &mut |k| k.task_exited(t));
        // The shared pages take two passes each; the private ones (the image's too) one,
        // unless reaped.
        let torn_down = if reaped { 2 * pages } else { 3 * pages + IMAGE_ANON_PAGES };
        assert_eq!(k.tasks[t as usize].end - killed_at, torn_down * per_page, "{era:?}");
        let log: String = k.log.records.iter().map(|r| format!("{}\n", r.text)).collect();
        assert_eq!(log.contains("oom_reaper: reaped process"), reaped, "{era:?}: {log}");
        if reaped {
            assert!(log.contains(&format!("shmem-rss:{}kB", pages * 4)), "{log}");
        }
    }
}
