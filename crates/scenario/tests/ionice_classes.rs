//! I/O priority classes in the elevator: on 6.x's mq-deadline (the default machine's SATA
//! disk) and 2.6.39's CFQ, a class is dispatched only while no request of a better class is
//! queued or in flight, so an idle-class reader beside a busy best-effort job waits for the
//! disk to be otherwise idle, and a real-time one goes first; with `none` (a multi-queue
//! virtio disk) the class changes nothing.

mod common;
use common::run_on;

/// The real time (s) of `ionice PRIO dd` reading a cold 64 MiB file while a best-effort fio
/// job keeps 16 direct reads in flight for `busy_s` seconds (0: the reader alone).
fn reader(machine: &str, prio: &str, busy_s: u32) -> f64 {
    let fio = if busy_s > 0 {
        format!("fio --name=be --filename=/root/big --size=256M --rw=randread --bs=64k --direct=1 --ioengine=libaio --iodepth=16 --time_based --runtime={busy_s} > /dev/null &\nsleep 0.5\n")
    } else {
        String::new()
    };
    let script = format!(
        "dd if=/dev/zero of=/root/a bs=1M count=64 2>/dev/null\ndd if=/dev/zero of=/root/big bs=1M count=256 2>/dev/null\nsync\necho 3 > /proc/sys/vm/drop_caches\n{fio}ionice {prio} dd if=/root/a of=/dev/null bs=1M\nwait\n"
    );
    let r = run_on(&script, machine, &[]);
    let c = r.commands.iter().find(|c| c.source.starts_with("ionice")).unwrap_or_else(|| panic!("{}", r.transcript));
    (c.end_ns - c.start_ns) as f64 / 1e9
}

#[test]
fn classes_on_mq_deadline() {
    let alone = reader("default", "-c2", 0);
    let (idle, be, rt) = (reader("default", "-c3", 4), reader("default", "-c2", 4), reader("default", "-c1", 4));
    // Best effort shares the disk with fio's 16 requests; idle waits until fio's 4 s end
    // (it started 0.5 s in); real time goes ahead of fio's queued requests.
    assert!(be > alone * 1.5, "BE {be} s, alone {alone} s");
    assert!(idle > 3.0 && idle > be * 1.5, "idle {idle} s, BE {be} s");
    assert!(rt < be && rt < alone * 2.0, "RT {rt} s, BE {be} s, alone {alone} s");
}

#[test]
fn classes_change_nothing_without_an_elevator() {
    // seed-000's virtio disk has a queue per vCPU: `none`.
    let (idle, be, rt) = (reader("seed-000", "-c3", 4), reader("seed-000", "-c2", 4), reader("seed-000", "-c1", 4));
    assert_eq!((idle, rt), (be, be), "none ignores the class");
}

#[test]
fn cfq_serves_the_idle_class_last() {
    // On the HDD a best-effort reader queues behind fio's requests too (CFQ's per-process
    // time slices are not modelled, so requests of one class are served in order); the idle
    // one in addition waits until fio is done.
    let (idle, be, rt) = (reader("ml110-g6", "-c3", 4), reader("ml110-g6", "-c2", 4), reader("ml110-g6", "-c1", 4));
    assert!(idle > 3.0 && idle > be, "idle {idle} s, BE {be} s");
    assert!(rt < be * 0.75, "RT {rt} s, BE {be} s");
}
