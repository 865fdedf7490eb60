//! Sequential page-cache I/O: the run fast paths (filemap_read over a run of cached pages,
//! generic_perform_write over a run of a file's pages) against the per-page loop
//! (`Kernel::per_page_io`). The same sequential workloads — buffered write, read from the
//! disk and re-read from the cache, writeback and sync, a file larger than RAM streamed
//! under reclaim, drop_caches, unaligned transfers, the raw block device — run through
//! both on machines of several kernel eras; /proc/vmstat and /proc/meminfo (printed in the
//! transcript, sampled every second in the series and recorded before and after every
//! command) and the transcripts must be identical, byte for byte.

use memtwin_kernel::mm::filemap::with_per_page_io;
use memtwin_scenario::{RunOptions, RunResult};

const SCRIPT: &str = "\
vmstat 1 30 > /root/vmstat.txt &
dd if=/dev/zero of=/root/a bs=1M count=48
cat /proc/vmstat
dd if=/root/a of=/dev/null bs=1M
dd if=/root/a of=/dev/null bs=1M
dd if=/root/a of=/dev/null bs=6000 count=3000 skip=7
dd if=/dev/zero of=/root/a bs=6000 count=1000 seek=3 conv=notrunc
sync
cat /proc/meminfo
dd if=/dev/zero of=/root/b bs=1M count=320
dd if=/root/b of=/dev/null bs=64k
cp /root/a /root/c
echo 3 > /proc/sys/vm/drop_caches
dd if=/root/a of=/dev/null bs=1M
dd if=/root/a of=/dev/null bs=1M
dd if=/dev/sda of=/dev/null bs=1M count=32
dd if=/dev/sda of=/dev/null bs=1M count=32
wait
cat /root/vmstat.txt
cat /proc/vmstat
cat /proc/meminfo
free
";

fn run(machine: &str, sets: &[&str], per_page: bool) -> RunResult {
    let opts = RunOptions {
        script_text: Some(SCRIPT.to_string()),
        machine: machine.to_string(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        seed: 7,
        ..Default::default()
    };
    with_per_page_io(per_page, || memtwin_scenario::run(&opts)).unwrap_or_else(|e| panic!("{machine} {sets:?}: {e}"))
}

/// Growth of a series column ("vm.pgpgin") over the run.
fn grew(r: &RunResult, col: &str) -> u64 {
    let (_, v) = r.series.columns.iter().find(|(n, _)| n == col).unwrap_or_else(|| panic!("no column {col}"));
    v.last().unwrap_or(&0) - v.first().unwrap_or(&0)
}

fn check(machine: &str, sets: &[&str]) {
    let fast = run(machine, sets, false);
    let slow = run(machine, sets, true);
    assert_eq!(fast.exit_status, 0, "{machine} {sets:?}:\n{}", fast.transcript);
    // The workload did what it is for (KiB): b (320 MiB on 256 MiB of RAM) cannot stay
    // cached, a is read again after drop_caches and the disk's first 32 MiB once: at least
    // 144 MiB from the disk; b does not fit in RAM, so most of it was written back to be
    // reclaimed (more than 256 MiB of a and b); reclaim made room all along.
    let (pgpgin, pgpgout) = (grew(&fast, "vm.pgpgin"), grew(&fast, "vm.pgpgout"));
    // The series carry the era's /proc/vmstat names: pgsteal_kswapd/direct from 3.x,
    // pgsteal per zone on 2.6.39; Linux 2.4 has no reclaim counter at all.
    let has = |c: &str| fast.series.columns.iter().any(|(n, _)| n == c);
    let stolen = if has("vm.pgsteal_kswapd") {
        Some(grew(&fast, "vm.pgsteal_kswapd") + grew(&fast, "vm.pgsteal_direct"))
    } else if has("vm.kswapd_steal") {
        let zones: Vec<String> = fast.series.columns.iter().map(|(n, _)| n.clone()).filter(|n| n.starts_with("vm.pgsteal_")).collect();
        Some(zones.iter().map(|z| grew(&fast, z)).sum())
    } else {
        None
    };
    assert!(pgpgin > 144 * 1024 && pgpgout > 256 * 1024 && stolen.is_none_or(|s| s > 10_000), "{machine}: pgpgin {pgpgin} KiB, pgpgout {pgpgout} KiB, pgsteal {stolen:?}");
    assert!(fast.transcript == slow.transcript, "{machine} {sets:?}: transcripts differ:\n--- runs\n{}\n--- per page\n{}", fast.transcript, slow.transcript);
    assert_eq!(fast.series.t_s, slow.series.t_s, "{machine}: sample times differ");
    for ((name, a), (name_b, b)) in fast.series.columns.iter().zip(&slow.series.columns) {
        assert_eq!(name, name_b);
        assert_eq!(a, b, "{machine} {sets:?}: series {name} differs");
    }
    assert_eq!(format!("{:?}", fast.commands), format!("{:?}", slow.commands), "{machine} {sets:?}: command records differ");
    assert_eq!(fast.sim_seconds, slow.sim_seconds);
}

#[test]
fn linux_6x_runs_match_the_per_page_loop() {
    check("default", &["ram=256M", "cpus=2"]);
}

#[test]
fn linux_5x_runs_match_the_per_page_loop() {
    check("default", &["ram=256M", "cpus=2", "kernel=linux-5.4"]);
}

#[test]
fn linux_2639_runs_match_the_per_page_loop() {
    check("ml110-g6", &["ram=256M"]);
}

#[test]
fn linux_24_runs_match_the_per_page_loop() {
    check("seed-002", &["ram=256M"]);
}
