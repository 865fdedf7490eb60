//! The paging counters as each era's kernel shows them: 2.4's /proc/stat page and swap
//! lines (it has no /proc/vmstat), /proc/vmstat in the era's names.

mod common;

use common::*;

fn outputs(r: &memtwin_scenario::RunResult) -> Vec<&str> {
    r.commands.iter().map(|c| &r.transcript[c.output_start..c.output_end]).collect()
}

#[test]
fn linux_2_4_shows_paging_in_proc_stat() {
    let r = run_on("dd if=/dev/zero of=/root/f bs=1M count=32 status=none\nsync\ncat /proc/stat\ncat /proc/vmstat\n", "optiplex-gx115", &[]);
    let o = outputs(&r);
    let stat = o[2];
    // kstat_read_proc: "cpu  user nice system idle", no iowait field.
    let cpu = stat.lines().next().unwrap();
    assert!(cpu.starts_with("cpu  ") && cpu.split_whitespace().count() == 5, "{stat}");
    let field = |name: &str| -> Vec<u64> {
        let l = stat.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("no {name} line: {stat}"));
        l.split_whitespace().skip(1).map(|v| v.parse().unwrap()).collect()
    };
    let page = field("page");
    assert!(page[1] >= 32 * 1024, "pgpgout in KiB after writing 32 MiB: {page:?}");
    assert_eq!(field("swap"), vec![0, 0]);
    assert!(stat.lines().any(|l| l.starts_with("disk_io: (")), "{stat}");
    assert!(!stat.contains("procs_running"), "2.4 has no procs_running: {stat}");
    let lines: Vec<&str> = stat.lines().map(|l| l.split(' ').next().unwrap()).collect();
    let pos = |n: &str| lines.iter().position(|l| *l == n).unwrap();
    assert!(pos("page") < pos("swap") && pos("swap") < pos("intr") && pos("intr") < pos("disk_io:") && pos("disk_io:") < pos("ctxt"));
    assert!(o[3].contains("No such file or directory"), "{}", o[3]);
}

#[test]
fn proc_vmstat_uses_the_eras_names() {
    let r = run_on("cat /proc/vmstat\n", "default", &["kernel=linux-2.6.39"]);
    let t = &r.transcript;
    assert!(t.contains("\nkswapd_steal ") && t.contains("\nallocstall ") && !t.contains("pgsteal_kswapd"), "{t}");
    let r = run_on("cat /proc/vmstat\n", "default", &["kernel=linux-5.4"]);
    assert!(r.transcript.contains("\nworkingset_refault ") && !r.transcript.contains("workingset_refault_file"));
}

/// The per-second series carry the era's own /proc/vmstat names and values: 2.6.39's
/// per-zone pgsteal (kswapd and direct summed, as that kernel counts PGSTEAL) and
/// kswapd_steal, 5.4's unsplit workingset_refault, 6.x's allocstall_movable; 2.4 has no
/// /proc/vmstat, only /proc/stat's paging fields.
#[test]
fn series_carry_each_eras_names() {
    let script = "dd if=/dev/zero of=/root/f bs=1M count=8 status=none\nsync\ncat /proc/vmstat\n";
    let names = |r: &memtwin_scenario::RunResult| -> Vec<String> { r.series.columns.iter().map(|(n, _)| n.clone()).collect() };
    let last = |r: &memtwin_scenario::RunResult, n: &str| -> u64 { *r.series.columns.iter().find(|(c, _)| c == n).unwrap_or_else(|| panic!("no {n}")).1.last().unwrap() };
    for (kernel, has, lacks) in [
        ("linux-2.6.39", &["vm.pgsteal_dma32", "vm.pgscan_kswapd_dma32", "vm.kswapd_steal", "vm.allocstall", "vm.pgalloc_dma32"][..], &["vm.pgsteal_kswapd", "vm.workingset_refault", "vm.allocstall_normal", "vm.allocstall_movable"][..]),
        ("linux-5.4", &["vm.workingset_refault", "vm.allocstall_movable", "vm.swap_ra_hit"][..], &["vm.pgscan_anon", "vm.workingset_refault_file", "vm.swpout_zero"][..]),
        ("linux-6.x", &["vm.workingset_refault_file", "vm.allocstall_movable", "vm.swpout_zero", "vm.nr_throttled_written"][..], &["vm.workingset_refault"][..]),
        ("linux-2.4", &["vm.pgpgin", "vm.pgpgout", "vm.pswpin", "vm.pswpout"][..], &["vm.pgfault", "vm.nr_free_pages"][..]),
    ] {
        let r = run_on(script, "default", &[&format!("kernel={kernel}")]);
        let n = names(&r);
        for h in has {
            assert!(n.iter().any(|c| c == h), "{kernel}: no {h} in {n:?}");
        }
        for l in lacks {
            assert!(!n.iter().any(|c| c == l), "{kernel}: {l} is not that era's");
        }
        if let Some(vmstat) = outputs(&r).get(2).filter(|_| kernel != "linux-2.4") {
            // The last sample, taken at the end, has the values /proc/vmstat printed for
            // the counters that do not move after it.
            for name in ["pgpgout", "pgalloc_dma32", "pgfree"] {
                if let Some(l) = vmstat.lines().find(|l| l.split(' ').next() == Some(name)) {
                    let v: u64 = l.split(' ').nth(1).unwrap().parse().unwrap();
                    assert!(last(&r, &format!("vm.{name}")) >= v, "{kernel}: {name}");
                }
            }
        }
        assert!(last(&r, "vm.pgpgout") >= 8 * 1024, "{kernel}: pgpgout in KiB");
    }
}

/// A dirty file page that kswapd meets a second time, already marked PG_reclaim, on a node
/// flagged PGDAT_DIRTY, goes to pageout (nr_vmscan_write) on the 5.x profiles — where
/// ext4_writepage redirties these new, delayed-allocation pages without writing them
/// (`kswapd_pageout_on_ext4_writes_only_pages_whose_blocks_are_on_disk` in vmscan.rs); 6.x
/// leaves it to the flushers; 2.6.39's kswapd writes every dirty page it takes. The flushers are held back (background ratio 90 %, expiry 1 h), memory is short
/// and there is no swap: reclaim can only take file pages, most of them dirty.
#[test]
fn kswapd_writes_dirty_file_pages_it_meets_twice_on_5_x() {
    let script = "sysctl -w vm.dirty_background_ratio=90 vm.dirty_ratio=95 vm.dirty_expire_centisecs=360000
dd if=/dev/zero of=f bs=1M count=300 status=none
memhog 300M --active 0.5 --every 1 &
sleep 10
grep -E '^nr_vmscan_write ' /proc/vmstat
";
    let writes = |kernel: &str| -> u64 {
        let r = common::run_on(script, "default", &["ram=512M", "swap=0", &format!("kernel={kernel}")]);
        let line = r.transcript.lines().find(|l| l.starts_with("nr_vmscan_write ")).unwrap_or_else(|| panic!("{}", r.transcript));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert!(writes("linux-5.4") > 1000, "5.4: kswapd writes the dirty pages it meets twice");
    assert!(writes("linux-5.8") > 1000, "5.8 too");
    assert_eq!(writes("linux-6.x"), 0, "6.x: only the flushers write file pages");
    assert!(writes("linux-2.6.39") > 1000, "2.6.39: kswapd writes what it takes");
}
