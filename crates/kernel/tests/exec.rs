//! What fork and exec give a new program before its first step (exec.rs): a kernel stack
//! of the era's THREAD_SIZE, the image's anonymous pages, page tables and virtual size;
//! all gone when it exits. Shell builtins and kernel threads get none.

use memtwin_kernel::exec::{IMAGE_ANON_PAGES, IMAGE_PGTABLES, IMAGE_VM_KB};
use memtwin_kernel::{Kernel, Program, Sink, Step, TaskId, NS_PER_SEC};

/// Sleeps a second, then exits.
struct Nap(bool);
impl Program for Nap {
    fn step(&mut self, k: &mut Kernel, _me: TaskId) -> Step {
        if self.0 {
            return Step::Exit(0);
        }
        self.0 = true;
        Step::SleepUntil { t: k.now + NS_PER_SEC, io: false }
    }
}

fn boot(kernel: &str) -> Kernel {
    let mut m = memtwin_machine::preset("default").expect("preset");
    memtwin_machine::apply_set(&mut m, &format!("kernel={kernel}")).unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

/// (KernelStack kB, AnonPages kB, PageTables kB) of /proc/meminfo.
fn gauges(k: &Kernel) -> (u64, u64, u64) {
    let mi = k.meminfo();
    (mi.kernel_stack, mi.anon_pages, mi.page_tables)
}

#[test]
fn a_program_has_a_kernel_stack_and_an_image_until_it_exits() {
    // THREAD_SIZE: 16 KiB on x86-64 since 3.15, 8 KiB on 2.6.39 and 2.4's i386.
    for (era, stack_kb) in [("linux-6.x", 16), ("linux-5.4", 16), ("linux-2.6.39", 8), ("linux-2.4", 8)] {
        let mut k = boot(era);
        let (s0, a0, p0) = gauges(&k);
        let committed0 = k.committed_as();
        let t = k.spawn("sleep", "sleep 1", Box::new(Nap(false)), Sink::Null, Sink::Null);
        k.run_until(k.now + NS_PER_SEC / 2, &mut |_| false);
        let (s1, a1, p1) = gauges(&k);
        assert_eq!(s1 - s0, stack_kb, "{era}: kernel stack");
        assert_eq!(a1 - a0, IMAGE_ANON_PAGES * 4, "{era}: the image's anonymous pages");
        assert_eq!(p1 - p0, IMAGE_PGTABLES * 4, "{era}: the image's page tables");
        let task = &k.tasks[t as usize];
        assert_eq!((task.rss_anon, task.vm_kb), (IMAGE_ANON_PAGES, IMAGE_VM_KB), "{era}");
        assert_eq!(task.pgtables.nr_pages(), IMAGE_PGTABLES, "{era}");
        assert!(k.committed_as() > committed0, "{era}: the image's writable mappings are committed");
        k.run_until(k.now + 2 * NS_PER_SEC, &mut |k| k.task_exited(t));
        assert!(k.task_exited(t));
        assert_eq!(gauges(&k), (s0, a0, p0), "{era}: all of it goes at exit");
        assert_eq!(k.committed_as(), committed0, "{era}");
    }
}

#[test]
fn shell_builtins_run_in_the_shell_with_no_memory_of_their_own() {
    let mut k = boot("linux-6.x");
    let before = gauges(&k);
    let t = k.spawn("echo", "echo 3", Box::new(Nap(false)), Sink::Null, Sink::Null);
    k.run_until(k.now + NS_PER_SEC / 2, &mut |_| false);
    assert_eq!(gauges(&k), before);
    assert_eq!(k.tasks[t as usize].vm_kb, 0);
}

/// Faults in `left` anonymous pages, 256 at a time, then sleeps until `until`.
struct Hog {
    next: u64,
    left: u64,
    until: u64,
}
impl Program for Hog {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.left == 0 {
            return if k.now >= self.until { Step::Exit(0) } else { Step::SleepUntil { t: self.until, io: false } };
        }
        let n = self.left.min(256);
        match k.fault_anon_pages(me, self.next, n) {
            Ok(done) => {
                self.next += done;
                self.left -= done;
                Step::Cpu { user: 0, sys: 0 }
            }
            Err((done, wait)) => {
                self.next += done;
                self.left -= done;
                wait
            }
        }
    }
}

/// Sleeps until the given time, then exits.
struct Sleeper(u64);
impl Program for Sleeper {
    fn step(&mut self, k: &mut Kernel, _me: TaskId) -> Step {
        if k.now >= self.0 {
            Step::Exit(0)
        } else {
            Step::SleepUntil { t: self.0, io: false }
        }
    }
}

/// A millisecond of CPU every 10 ms until `until`.
struct Ticker {
    until: u64,
    burst: bool,
}
impl Program for Ticker {
    fn step(&mut self, k: &mut Kernel, _me: TaskId) -> Step {
        if k.now >= self.until {
            return Step::Exit(0);
        }
        self.burst = !self.burst;
        if self.burst {
            Step::Cpu { user: 1_000_000, sys: 0 }
        } else {
            Step::SleepUntil { t: k.now + 10_000_000, io: false }
        }
    }
}

#[test]
fn under_pressure_an_idle_image_is_swapped_out_and_a_running_one_keeps_its_hot_pages() {
    use memtwin_kernel::exec::IMAGE_HOT_PAGES;
    // Seed 000's machine: 1.9 GB of RAM, 4 GB of swap; the hog takes 2.5 GB.
    let m = memtwin_machine::preset("seed-000").expect("preset");
    let mut k = Kernel::boot(m, 1).expect("boot");
    let end = k.now + 60 * NS_PER_SEC;
    let idle = k.spawn("sleep", "sleep 60", Box::new(Sleeper(end)), Sink::Null, Sink::Null);
    let busy = k.spawn("ticker", "ticker", Box::new(Ticker { until: end, burst: false }), Sink::Null, Sink::Null);
    k.run_until(k.now + NS_PER_SEC / 10, &mut |_| false);
    assert_eq!(k.tasks[idle as usize].rss_anon, IMAGE_ANON_PAGES);
    let hog = k.spawn("hog", "hog", Box::new(Hog { next: 0, left: 2560 << 8, until: end }), Sink::Null, Sink::Null);
    k.tasks[hog as usize].image_done = true;
    k.run_until(end - NS_PER_SEC, &mut |_| false);
    assert!(k.vm.get(memtwin_procfs::VmItem::Pswpout) > 100_000, "the hog pushed memory to swap");
    // The sleeper's image was written once and is old: reclaim took it (a sleeping
    // process's RSS falls under pressure, as top shows on a real host).
    let idle_rss = k.tasks[idle as usize].rss_anon;
    assert!(idle_rss < IMAGE_ANON_PAGES / 2, "idle image still has {idle_rss} of {IMAGE_ANON_PAGES} pages");
    // The ticker writes its stack and libc data at every step: resident after each.
    let m = k.tasks[busy as usize].anon_mapping.expect("the ticker has an image");
    for idx in IMAGE_HOT_PAGES {
        assert!(k.mm.page(m, idx).is_some(), "hot page {idx} of a running program is resident");
    }
}
