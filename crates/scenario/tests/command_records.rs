//! Each top-level command of a script leaves one record: its simulated start and end, its
//! exit status, what it printed and /proc/vmstat before and after (what `memtwin validate`
//! compares against a real kernel).

use memtwin_scenario::{run, RunOptions, RunResult};

fn vm(r: &RunResult, rec: &[u64], name: &str) -> u64 {
    let i = r.vmstat_names.iter().position(|n| n == name).expect("a /proc/vmstat field");
    rec[i]
}

#[test]
fn one_record_per_top_level_command() {
    let script = "dd if=/dev/zero of=f bs=1M count=64\nvmstat 1 2 &\nsleep 2\nwait\nfalse\nfor i in 1 2; do sync; done\n";
    let r = run(&RunOptions { script_text: Some(script.into()), machine: "default".into(), ..Default::default() }).unwrap();
    let c = &r.commands;
    assert_eq!(c.iter().map(|c| c.source.as_str()).collect::<Vec<_>>(), ["dd if=/dev/zero of=f bs=1M count=64", "vmstat 1 2 &", "sleep 2", "wait", "false", "for i in 1 2; do sync; done"]);
    assert_eq!(c.iter().map(|c| c.line).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
    // Records follow each other in time.
    for w in c.windows(2) {
        assert_eq!(w[0].end_ns, w[1].start_ns);
    }
    // dd: its summary line, and 64 MiB more page cache when it returned.
    assert!(r.transcript[c[0].output_start..c[0].output_end].contains("67108864 bytes (67 MB, 64 MiB) copied"));
    assert_eq!(vm(&r, &c[0].vmstat_end, "nr_file_pages") - vm(&r, &c[0].vmstat_start, "nr_file_pages"), 64 * 256);
    // A background command returns at once; sleep 2 takes two simulated seconds.
    assert!(c[1].background && c[1].start_ns == c[1].end_ns);
    assert_eq!(c[2].end_ns - c[2].start_ns, 2_000_000_000);
    assert_eq!(c[4].exit_status, 1);
    assert_eq!(c[5].vmstat_start.len(), r.vmstat_names.len());
    assert_eq!(c[5].vmstat_end.len(), r.vmstat_names.len());
}

/// CPU time and storage I/O of each command's own tasks (/proc/PID/io): a background job's
/// on its own record, up to the job's end.
#[test]
fn records_carry_cpu_time_and_storage_io() {
    let script = "dd if=/dev/zero of=f bs=1M count=64 oflag=direct\ndd if=f of=/dev/null bs=1M iflag=direct &\nwait\nsleep 1\n";
    let r = run(&RunOptions { script_text: Some(script.into()), machine: "default".into(), ..Default::default() }).unwrap();
    let c = &r.commands;
    // O_DIRECT: every byte goes to or comes from the disk.
    assert_eq!((c[0].read_bytes, c[0].write_bytes), (0, 64 << 20));
    assert!(c[0].cpu_sys_ns > 0, "dd spends system time");
    // The background dd's counts are its own, up to when it ended.
    assert_eq!((c[1].read_bytes, c[1].write_bytes), (64 << 20, 0));
    assert!(c[1].cpu_sys_ns > 0 && c[1].job_end_ns > c[1].end_ns);
    // `wait` and `sleep` run no task and do no I/O.
    assert_eq!((c[2].read_bytes, c[2].write_bytes, c[2].cpu_user_ns + c[2].cpu_sys_ns, c[2].tasks), (0, 0, 0, 0));
    assert_eq!((c[3].read_bytes, c[3].write_bytes), (0, 0));
}

/// Every reclaim pass the kernel records (ReclaimStats) reaches the result: a file larger
/// than RAM written through the page cache wakes kswapd.
#[test]
fn reclaim_passes_reach_the_result() {
    let script = "dd if=/dev/zero of=f bs=1M count=512\n";
    let opts = RunOptions { script_text: Some(script.into()), machine: "default".into(), sets: vec!["ram=256M".into()], ..Default::default() };
    let r = run(&opts).unwrap();
    let scanned = vm(&r, &r.commands[0].vmstat_end, "pgscan_kswapd");
    assert!(scanned > 0, "the page cache outgrew RAM");
    assert!(!r.reclaim_passes.passes[0].is_empty(), "kswapd ran, its passes are recorded");
    assert!(r.reclaim_passes.passes.iter().flatten().all(|&ns| ns > 0));
    for (p, w) in r.reclaim_passes.passes.iter().zip(&r.reclaim_passes.lock_wait) {
        assert_eq!(p.len(), w.len(), "one lock wait per invocation");
        assert!(p.iter().zip(w).all(|(p, w)| w <= p), "the lock wait is part of the latency");
    }
    assert_eq!(r.kernel_profile, "linux-6.x");
    assert!(r.machine_toml.contains("name = \"default\""), "the preset's file text");
}

/// Split reclaim records the allocating tasks' reclaims as page reclaim, never as classic
/// direct reclaim, and `reclaimstat` prints one row per path.
#[test]
fn split_reclaim_records_page_reclaim_instead_of_direct() {
    let script = "dd if=/dev/zero of=big bs=1M count=200 2>/dev/null\nfor i in 1 2 3 4 5 6 7 8; do memhog 20M >/dev/null & done\nwait\nreclaimstat --ns\n";
    let run_with = |sets: &[&str]| {
        let mut v: Vec<String> = vec!["ram=256M".into(), "cpus=4".into()];
        v.extend(sets.iter().map(|s| s.to_string()));
        run(&RunOptions { script_text: Some(script.into()), machine: "default".into(), sets: v, ..Default::default() }).unwrap()
    };
    let classic = run_with(&[]);
    let split = run_with(&["reclaim=split"]);
    let [_, direct, page, slab] = &classic.reclaim_passes.passes;
    assert!(!direct.is_empty(), "eight allocators outrun kswapd: direct reclaim");
    assert!(page.is_empty() && slab.is_empty(), "no split paths in classic reclaim");
    let [_, direct, page, slab] = &split.reclaim_passes.passes;
    assert!(direct.is_empty(), "split reclaim has no classic direct reclaim");
    assert!(!page.is_empty(), "the allocators run page reclaim");
    assert!(slab.is_empty(), "no slab reclaim below S_start");
    let t = split.transcript.split("# reclaimstat --ns\n").nth(1).unwrap();
    let rows: Vec<&str> = t.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(rows, ["path", "kswapd", "direct", "split_page", "split_slab"], "{t}");
    let page_row: Vec<&str> = t.lines().nth(3).unwrap().split_whitespace().collect();
    assert_eq!(page_row[1].parse::<usize>().unwrap(), page.len(), "{t}");
}

/// A record holds what the machine's kernel prints: 2.6.39 counts scans per zone
/// (pgscan_kswapd_normal) and has no pgscan_kswapd; Linux 2.4 has no /proc/vmstat, only the
/// paging fields of /proc/stat.
#[test]
fn records_use_the_eras_field_names() {
    let script = "dd if=/dev/zero of=f bs=1M count=512\n";
    let opts = RunOptions { script_text: Some(script.into()), machine: "ml110-g6".into(), sets: vec!["ram=256M".into()], ..Default::default() };
    let r = run(&opts).unwrap();
    assert!(r.vmstat_names.iter().any(|n| n == "pgscan_kswapd_normal" || n == "pgscan_kswapd_dma32"), "{:?}", r.vmstat_names);
    assert!(!r.vmstat_names.iter().any(|n| n == "pgscan_kswapd" || n == "workingset_refault_file"));
    assert_eq!(r.commands[0].vmstat_end.len(), r.vmstat_names.len());
    let zoned: u64 = ["dma", "dma32", "normal", "movable"]
        .iter()
        .filter_map(|z| r.vmstat_names.iter().position(|n| *n == format!("pgscan_kswapd_{z}")))
        .map(|i| r.commands[0].vmstat_end[i] - r.commands[0].vmstat_start[i])
        .sum();
    assert!(zoned > 0, "the page cache outgrew RAM and kswapd scanned");
    let opts = RunOptions { script_text: Some(script.into()), machine: "optiplex-gx115".into(), ..Default::default() };
    let r = run(&opts).unwrap();
    assert_eq!(r.vmstat_names, ["pgpgin", "pgpgout", "pswpin", "pswpout"]);
    assert!(vm(&r, &r.commands[0].vmstat_end, "pgpgout") > 0);
}
