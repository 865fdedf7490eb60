//! Where each command's time went: every record's breakdown (delay accounting of its tasks,
//! kernel/delayacct.c) sums exactly to its wall time, for every command of every scenario
//! shipped in scenarios/; and seed 000's buffered `dd` is attributed to the parts its
//! physics says it is made of.

mod common;

use memtwin_scenario::{run, CommandRecord, RunOptions};

fn check_sums(name: &str, commands: &[CommandRecord]) {
    for c in commands {
        let b = &c.breakdown;
        assert_eq!(b.sum(), b.wall_ns, "{name}:{} '{}': parts {:?}", c.line, c.source, b);
        assert_eq!(b.wall_ns, c.job_end_ns - c.start_ns, "{name}:{} '{}'", c.line, c.source);
        if !c.background {
            assert_eq!(b.wall_ns, c.end_ns - c.start_ns, "{name}:{} '{}'", c.line, c.source);
        }
        // Tasks' CPU time is what the breakdown shows on a CPU.
        let cpu = b.cpu_user_ns + b.cpu_sys_ns + b.cpu_sys_reclaim_ns + b.cpu_sys_compaction_ns + b.cpu_sys_zram_ns + b.cpu_sys_copy_ns + b.cpu_sys_lock_spin_ns;
        assert_eq!(cpu, c.cpu_user_ns + c.cpu_sys_ns, "{name}:{} '{}': {:?}", c.line, c.source, b);
    }
}

#[test]
fn every_command_of_every_scenario_sums_to_its_wall_time() {
    let dir = format!("{}/../../scenarios", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sh"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "scenarios found: {names:?}");
    for name in names {
        let r = run(&RunOptions { script_path: Some(format!("{dir}/{name}")), ..Default::default() })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!r.commands.is_empty(), "{name}");
        check_sums(&name, &r.commands);
    }
}

#[test]
fn seed000_buffered_dd_time_is_copies_throttling_and_writeback() {
    let r = common::run_seed000(0);
    check_sums("seed-000", &r.commands);
    let dd = r.commands.iter().find(|c| c.source == "dd if=/dev/zero of=test bs=1M count=512").expect("the first buffered dd");
    let b = &dd.breakdown;
    let wall = b.wall_ns as f64 / 1e9;
    // The article's ~1.8 s.
    assert!(wall > 1.2 && wall < 2.5, "dd took {wall} s: {b:?}");
    // 512 MiB went through write(2) and the dirty limits throttled it to the disk's pace:
    // most of the wall time is balance_dirty_pages pauses, the rest mostly copying.
    assert_eq!(dd.wchar, 512 << 20);
    assert_eq!(dd.rchar, 512 << 20);
    assert!(b.dirty_throttle_ns as f64 > 0.4 * b.wall_ns as f64, "{b:?}");
    assert!(b.cpu_sys_copy_ns > 0 && b.cpu_sys_copy_ns < b.wall_ns / 2, "{b:?}");
    // Nothing was swapped in or reclaimed directly on a machine with free memory.
    assert_eq!(b.swapin_ns + b.thrashing_ns + b.reclaim_wait_ns, 0, "{b:?}");
    assert!(dd.throughput_bytes_per_s > 150e6 && dd.throughput_bytes_per_s < 500e6, "{}", dd.throughput_bytes_per_s);
    assert_eq!(dd.tasks, 1);
    // The re-read right after is all page-cache copies: no block I/O wait.
    let rd = r.commands.iter().find(|c| c.source == "dd if=test of=/dev/null bs=1M count=512").unwrap();
    assert_eq!(rd.breakdown.blkio_ns, 0, "{:?}", rd.breakdown);
    assert!(rd.breakdown.cpu_sys_copy_ns > rd.breakdown.wall_ns / 2, "{:?}", rd.breakdown);
    // The raw-device read must wait for the disk.
    let raw = r.commands.iter().find(|c| c.source == "dd if=/dev/vda of=/dev/null bs=1M count=512").unwrap();
    assert!(raw.breakdown.blkio_ns > raw.breakdown.wall_ns / 4, "{:?}", raw.breakdown);
    // A background vmstat's record covers its job until it exited.
    let vm = r.commands.iter().find(|c| c.source == "vmstat 1 40 &").unwrap();
    assert!(vm.job_end_ns - vm.start_ns >= 39_000_000_000, "{}", vm.job_end_ns - vm.start_ns);
    assert!(vm.breakdown.sleep_ns > 38_000_000_000);
    // `wait` itself runs no task: its time is the shell's.
    let w = r.commands.iter().find(|c| c.source == "wait").unwrap();
    assert_eq!(w.breakdown.shell_ns, w.breakdown.wall_ns);
    // PSI exists on the 6.x profile and saw I/O stalls.
    let p = r.pressure_total_us.expect("PSI on linux-6.x");
    assert!(p[0] > 0, "io some total {p:?}");
}
