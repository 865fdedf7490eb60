//! The host-memory estimate against what a run really allocates (a counting allocator), and
//! the refusal of a machine the host cannot hold.

use memtwin_scenario::{host, ErrorKind, RunOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new > l.size() {
                let now = LIVE.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Tests here measure the whole process's heap: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Peak heap bytes above what was live before, while running `text` with `sets`.
fn peak_of(text: &str, sets: &[&str]) -> usize {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let r = memtwin_scenario::run(&RunOptions {
        script_text: Some(text.into()),
        machine: "default".into(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .expect("runs");
    assert!(r.stopped.is_none());
    PEAK.load(Ordering::Relaxed) - base
}

fn machine(sets: &[&str]) -> memtwin_machine::Machine {
    let mut m = memtwin_machine::load("default").unwrap();
    for s in sets {
        memtwin_machine::apply_set(&mut m, s).unwrap();
    }
    m
}

#[test]
fn frame_table_costs_what_the_estimate_says_per_page() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // Boot two sizes and run nothing: the difference is the per-page part of the model.
    let small = ["ram=512M"];
    let large = ["ram=2G"];
    let d_measured = peak_of("true\n", &large) as f64 - peak_of("true\n", &small) as f64;
    let (es, el) = (host::estimate(&machine(&small)), host::estimate(&machine(&large)));
    // The frame table and the boot slab caches (1% of memory) grow with the machine.
    let d_frames = ((el.frames + el.slab) - (es.frames + es.slab)) as f64;
    // The boot populates a small idle system on top of the frame table: within 10%.
    assert!((d_measured / d_frames - 1.0).abs() < 0.10, "measured {d_measured} B more for the larger machine, frame table estimate {d_frames} B");
}

#[test]
fn estimate_covers_a_run_that_fills_ram_and_swap() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // What every run allocates whatever the machine (tasks, queues, a short series), measured
    // on the smallest machine with its own tables taken out.
    let tiny = ["ram=16M", "swap=0"];
    let et = host::estimate(&machine(&tiny));
    let base = peak_of("true\n", &tiny) as u64 - (et.total() - et.fixed);
    // 256M of RAM and 256M of swap filled with anonymous memory, then a file as large as
    // RAM read through the page cache.
    let sets = ["ram=256M", "swap=256M"];
    let text = "memhog 450M &\nsleep 20\ndd if=/dev/zero of=/root/f bs=1M count=256\ndd if=/root/f of=/dev/null bs=1M\n";
    let peak = peak_of(text, &sets) as u64;
    let e = host::estimate(&machine(&sets));
    // (The written file's pages carry buffer heads: the estimate's buffer_heads part.)
    let model = e.total() - e.fixed;
    eprintln!("base {base} B, peak {peak} B, estimate {e:?}");
    assert!(base <= e.fixed, "fixed part {base} B above the estimate's {e:?}");
    // The estimate leaves out the maps of I/O in flight (swap_wb, the event queue): a few
    // percent here.
    assert!((peak - base) as f64 <= 1.05 * model as f64, "peak heap {peak} B less the fixed {base} B above the estimate {e:?}");
    assert!(peak <= e.total());
    // The per-unit costs describe this run: it uses most of what they add up to.
    assert!((peak - base) as f64 >= 0.6 * model as f64, "peak heap {peak} B less the fixed {base} B, estimate {e:?}");
}

#[test]
fn a_machine_larger_than_the_host_is_refused_before_it_boots() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let e = memtwin_scenario::run(&RunOptions {
        script_text: Some("free -m\n".into()),
        machine: "default".into(),
        sets: vec!["ram=16T".into()],
        host_available: Some(8 << 30),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::HostMemory);
    assert!(!e.message.contains('\n'));
    assert!(e.message.starts_with("machine 'default' (ram=16T) needs about "), "{}", e.message);
    assert!(e.message.contains("but the host has 8G available"), "{}", e.message);
    // Refused before anything large was allocated.
    assert!(PEAK.load(Ordering::Relaxed) - base < 64 << 20);
}

#[test]
fn a_machine_that_fits_runs() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let r = memtwin_scenario::run(&RunOptions {
        script_text: Some("free -m\n".into()),
        machine: "default".into(),
        sets: vec!["ram=1G".into()],
        host_available: Some(1 << 30),
        ..Default::default()
    });
    assert!(r.is_ok());
}
