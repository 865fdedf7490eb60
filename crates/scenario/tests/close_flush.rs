//! ext4's flush at close (ext4_release_file -> ext4_alloc_da_blocks -> filemap_flush) of a
//! file rewritten after truncation: close(2) submits every dirty page of the file and, like
//! any submitter, sleeps for a request slot when the device's queue is full
//! (blk_mq_get_tag). It returns once all but a queue's worth of the file is written, and dd
//! reports its time after closing (coreutils quit(): cleanup, then print_stats).
//!
//! Measured on a 6.18 host (ext4 on a virtio disk writing 1.1 GB/s, `strace -T`): dd of 1 GiB
//! into a new file 0.33-0.39 s with close() 5-7 us; the same dd over the existing file 0.82 s,
//! of which close() 0.49-0.51 s.

mod common;

use common::*;

const FILE_MIB: u64 = 512;

#[test]
fn closing_a_rewritten_file_waits_for_the_request_slots_of_its_flush() {
    let m = memtwin_machine::preset("default").unwrap();
    let disk = &m.disks[0].model;
    // The file fits below the background threshold (10% of ~7.6 GB): nothing of it is
    // written before the close, so the close submits all of it.
    let script = format!(
        "dd if=/dev/zero of=f bs=1M count={FILE_MIB}\nsync\n\
         dd if=/dev/zero of=f bs=1M count={FILE_MIB}\n\
         grep -E '^(Dirty|Writeback):' /proc/meminfo\nsync\nrm -f f\n\
         dd if=/dev/zero of=g bs=1M count={FILE_MIB}\n"
    );
    let r = run_on(&script, "default", &[]);
    let secs: Vec<f64> = r.transcript.lines().filter_map(parse_dd_copied).map(|d| d.1).collect();
    assert_eq!(secs.len(), 3, "{}", r.transcript);
    let (first, rewrite, new_file) = (secs[0], secs[1], secs[2]);
    let bytes = (FILE_MIB << 20) as f64;
    let write_s = bytes / disk.write_bw;
    // A new file: the close leaves the pages to the flusher; dd runs at memory speed.
    assert!(first < 0.5 * write_s && new_file < 0.5 * write_s, "new file: {first} s, {new_file} s (disk: {write_s} s)");
    // The rewrite: the close waits until at most nr_requests (2 x queue_depth) requests
    // of max_request_bytes are in flight.
    let queue = (2 * disk.queue_depth as u64 * disk.max_request_bytes) as f64;
    let must_wait = (bytes - queue) / disk.write_bw;
    assert!(rewrite - new_file >= 0.9 * must_wait, "rewrite {rewrite} s vs new file {new_file} s: the close waited less than {must_wait} s");
    assert!(rewrite - new_file <= 1.2 * write_s, "rewrite {rewrite} s vs new file {new_file} s: longer than writing it all ({write_s} s)");
    // Right after dd: nothing dirty, at most a queue's worth under writeback.
    let kb = |name: &str| -> f64 {
        let line = r.transcript.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name} in {}", r.transcript));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert_eq!(kb("Dirty:"), 0.0, "{}", r.transcript);
    assert!(kb("Writeback:") * 1024.0 <= queue, "Writeback {} kB, queue {queue} bytes", kb("Writeback:"));
}

/// While the close waits for a slot, /proc/PID/wchan names the tag wait (blk_mq_get_tag on
/// a blk-mq kernel) and the task is in D state.
#[test]
fn the_closing_task_sleeps_in_blk_mq_get_tag() {
    let script = format!(
        "dd if=/dev/zero of=f bs=1M count={FILE_MIB}\nsync\n\
         dd if=/dev/zero of=f bs=1M count={FILE_MIB} 2>/dev/null &\n\
         sleep 1\ncat /proc/$!/wchan; echo\ngrep State /proc/$!/status\nwait\n"
    );
    let r = run_on(&script, "default", &[]);
    assert!(r.transcript.lines().any(|l| l.starts_with("blk_mq_get_tag")), "{}", r.transcript);
    assert!(r.transcript.contains("State:\tD (disk sleep)"), "{}", r.transcript);
}
