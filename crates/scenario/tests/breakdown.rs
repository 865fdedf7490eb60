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
        // A pipeline's breakdown is its last member's; the others' CPU is in the totals only.
        if c.source.contains('|') {
            assert!(cpu <= c.cpu_user_ns + c.cpu_sys_ns, "{name}:{} '{}': {:?}", c.line, c.source, b);
        } else {
            assert_eq!(cpu, c.cpu_user_ns + c.cpu_sys_ns, "{name}:{} '{}': {:?}", c.line, c.source, b);
        }
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
        // Seed 004's runs are hours of simulated NFS load at full scale; tests/seed004.rs
        // runs them at reduced scale.
        .filter(|n| !n.starts_with("seed-004-"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "scenarios found: {names:?}");
    for name in names {
        let r = run(&RunOptions { script_path: Some(format!("{dir}/{name}")), ..Default::default() })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!r.commands.is_empty(), "{name}");
        check_sums(&name, &r.commands);
        // The kernel threads' records too: every thread's parts sum to its lifetime, and its
        // time on a CPU is its CPU time; kswapd and the flushers are always there.
        for t in &r.kthreads {
            let b = &t.breakdown;
            assert_eq!(b.sum(), b.wall_ns, "{name}: {t:?}");
            let cpu = b.cpu_user_ns + b.cpu_sys_ns + b.cpu_sys_reclaim_ns + b.cpu_sys_compaction_ns + b.cpu_sys_zram_ns + b.cpu_sys_copy_ns + b.cpu_sys_lock_spin_ns;
            assert_eq!(cpu, t.cpu_user_ns + t.cpu_sys_ns, "{name}: {t:?}");
        }
        assert!(r.kthreads.iter().any(|t| t.comm.starts_with("kswapd")), "{name}: {:?}", r.kthreads);
        if name == "seed-000-swap.sh" {
            // The 2 GiB buffer on a 1.9 GB machine: dd reclaims and waits in reclaim, and the
            // system's memory pressure shows it.
            let dd = r.commands.iter().find(|c| c.source.starts_with("dd if=/dev/zero of=/dev/null bs=2G")).expect("the bs=2G dd");
            let b = &dd.breakdown;
            assert!(b.cpu_sys_reclaim_ns > 0 && b.reclaim_wait_ns > b.wall_ns / 10, "{b:?}");
            let p = r.pressure_total_us.expect("PSI");
            assert!(p[2] > 100_000 && p[3] > 0 && p[3] <= p[2], "memory some/full {p:?}");
        }
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

#[test]
fn proc_pressure_files_exist_from_4_20_in_the_kernel_layout() {
    let script = "dd if=/dev/zero of=f bs=1M count=512\ncat /proc/pressure/io\ncat /proc/pressure/cpu\ncat /proc/pressure/memory\n";
    let r = common::run_on(script, "seed-000", &[]);
    let lines: Vec<&str> = r.transcript.lines().filter(|l| l.starts_with("some ") || l.starts_with("full ")).collect();
    // io: some + full; cpu: some + full (5.13+); memory: some + full.
    assert_eq!(lines.len(), 6, "{}", r.transcript);
    for l in &lines {
        let w: Vec<&str> = l.split(' ').collect();
        assert_eq!(w.len(), 5, "{l}");
        for (i, key) in ["avg10=", "avg60=", "avg300="].iter().enumerate() {
            let v = w[i + 1].strip_prefix(key).unwrap_or_else(|| panic!("{l}"));
            let (int, frac) = v.split_once('.').unwrap_or_else(|| panic!("{l}"));
            assert!(int.parse::<u32>().is_ok() && frac.len() == 2 && frac.parse::<u32>().is_ok(), "{l}");
        }
        assert!(w[4].strip_prefix("total=").unwrap().parse::<u64>().is_ok(), "{l}");
    }
    // The buffered write waited on I/O (its dirty throttling): io some > 0.
    let io_some: u64 = lines[0].rsplit("total=").next().unwrap().parse().unwrap();
    assert!(io_some > 0, "{}", r.transcript);
    // cpu full is undefined at system level: zeros.
    assert_eq!(lines[3], "full avg10=0.00 avg60=0.00 avg300=0.00 total=0");
    // 5.4: the cpu file has no full line.
    let r = common::run_on("cat /proc/pressure/cpu\n", "seed-000", &["kernel=linux-5.4"]);
    assert_eq!(r.transcript.lines().filter(|l| l.starts_with("some ") || l.starts_with("full ")).count(), 1, "{}", r.transcript);
    // 2.6.39: no PSI.
    let r = common::run_on("cat /proc/pressure/memory\n", "seed-000", &["kernel=linux-2.6.39"]);
    assert!(r.transcript.contains("cat: /proc/pressure/memory: No such file or directory\n"), "{}", r.transcript);
    assert_eq!(r.exit_status, 1);
    assert!(r.pressure_total_us.is_none());
}

#[test]
fn psi_averages_follow_a_sustained_stall() {
    // A long O_DIRECT write keeps one task in I/O wait for many PSI periods: avg10 rises
    // towards the stalled share and avg300 lags behind it.
    let script = "dd if=/dev/zero of=f bs=1M count=1500 oflag=direct\ncat /proc/pressure/io\n";
    let r = common::run_on(script, "seed-000", &[]);
    let some = r.transcript.lines().find(|l| l.starts_with("some ")).expect("io some line");
    let avg = |key: &str| -> f64 {
        some.split(' ').find_map(|w| w.strip_prefix(key)).unwrap().parse().unwrap()
    };
    let (a10, a60, a300) = (avg("avg10="), avg("avg60="), avg("avg300="));
    assert!(a10 > 50.0 && a10 <= 100.0, "{some}");
    assert!(a10 > a60 && a60 > a300 && a300 > 0.0, "{some}");
}
