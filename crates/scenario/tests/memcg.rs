//! Memory cgroups through scenarios: the four container scenarios' shapes (derived from the
//! mechanism: limits hold, reclaim stays inside the cgroup, the host keeps its free memory,
//! protection keeps a cgroup's cache), the v1 interface, the eras, and the errors every
//! cgroup file gives for bad values.

mod common;
use common::{keyed, number, output_of, outputs_of};

use memtwin_scenario::{run, RunOptions, RunResult};

const MIB: u64 = 1 << 20;

fn scenario(name: &str) -> RunResult {
    let path = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    run(&RunOptions { script_path: Some(path), ..Default::default() }).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn script(text: &str, sets: &[&str]) -> RunResult {
    common::run_on(text, "default", sets)
}

/// `free -m`'s "free" column of the Mem: row, MiB.
fn free_mib(lines: &[&str]) -> u64 {
    let mem = lines.iter().find(|l| l.starts_with("Mem:")).expect("Mem: row");
    mem.split_whitespace().nth(3).unwrap().parse().unwrap()
}

/// dd's rate in bytes per second ("..., 482 MB/s").
fn dd_rate(lines: &[&str]) -> f64 {
    let l = lines.iter().find(|l| l.contains("copied")).expect("dd summary");
    let r = l.rsplit(", ").next().unwrap();
    let (v, unit) = r.split_once(' ').unwrap();
    let v: f64 = v.parse().unwrap();
    v * match unit {
        "kB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        u => panic!("unit {u}"),
    }
}

fn real_s(lines: &[&str]) -> f64 {
    let t = lines.iter().find_map(|l| l.strip_prefix("real\t")).expect("time output");
    let (m, s) = t.trim_end_matches('s').split_once('m').unwrap();
    m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
}

fn series_max(r: &RunResult, col: &str) -> u64 {
    r.series.columns.iter().find(|(n, _)| n == col).map(|(_, v)| *v.iter().max().unwrap()).expect(col)
}

// ---- (a) page cache at memory.max --------------------------------------------------------

#[test]
fn container_cache_is_reclaimed_inside_the_cgroup_while_the_host_has_free_memory() {
    let r = scenario("container-cache-limit.sh");
    let t = &r.transcript;
    let max = number(t, "cat /sys/fs/cgroup/web/memory.max");
    let current = number(t, "cat /sys/fs/cgroup/web/memory.current");
    assert_eq!(max, 512 * MIB);
    // The limit holds, and the cache fills it: a 2 GiB read leaves the cgroup full.
    assert!(current <= max && current > max * 9 / 10, "memory.current {current} of {max}");
    let stat = output_of(t, "cat /sys/fs/cgroup/web/memory.stat");
    assert!(keyed(&stat, "file") > max * 9 / 10, "the charge is page cache");
    assert_eq!(keyed(&stat, "anon"), 0);
    // Reclaim ran in the cgroup for about what was read beyond the limit (1.5 GiB).
    let steal = keyed(&stat, "pgsteal");
    assert!(steal * 4096 > 1200 * MIB && steal * 4096 < 2048 * MIB, "pgsteal {steal}");
    assert!(keyed(&stat, "pgscan") >= steal);
    let events = output_of(t, "cat /sys/fs/cgroup/web/memory.events");
    assert!(keyed(&events, "max") > 0);
    assert_eq!(keyed(&events, "oom_kill"), 0);
    // The host never ran short: kswapd did not wake, and free shows gigabytes.
    assert_eq!(series_max(&r, "vm.pgscan_kswapd"), 0);
    assert!(free_mib(&output_of(t, "free -m")) > 6000);
}

// ---- (b) OOM in a cgroup while free shows gigabytes --------------------------------------

#[test]
fn a_job_is_oom_killed_in_its_cgroup_while_free_shows_gigabytes() {
    let r = scenario("container-oom.sh");
    let t = &r.transcript;
    assert!(t.contains("Memory cgroup out of memory: Killed process"), "{t}");
    assert!(output_of(t, "cgexec -g memory:batch memhog 1500M").contains(&"Killed"));
    assert_eq!(output_of(t, "echo status $?"), vec!["status 137"]);
    let events = output_of(t, "cat /sys/fs/cgroup/batch/memory.events");
    assert_eq!(keyed(&events, "oom_kill"), 1);
    assert_eq!(keyed(&events, "oom"), 1);
    // MEMCG_MAX once per failed charge: the retries before the kill.
    assert!(keyed(&events, "max") > 16);
    assert!(number(t, "cat /sys/fs/cgroup/batch/memory.peak") <= 1024 * MIB);
    for f in outputs_of(t, "free -m") {
        assert!(free_mib(&f) > 7000, "free shows the host: {f:?}");
    }
    // The kernel log has the memcg report.
    assert_eq!(series_max(&r, "vm.oom_kill"), 1);
}

// ---- (c) memory.high throttles ------------------------------------------------------------

#[test]
fn memory_high_slows_the_job_instead_of_killing_it() {
    let r = scenario("container-high-throttle.sh");
    let t = &r.transcript;
    let free_run = real_s(&output_of(t, "time memhog 800M"));
    let throttled = real_s(&output_of(t, "time cgexec -g memory:job memhog 800M"));
    assert!(throttled > 2.0 * free_run, "throttled {throttled} s vs {free_run} s");
    assert!(!t.contains("Killed"));
    let events = output_of(t, "cat /sys/fs/cgroup/job/memory.events");
    assert!(keyed(&events, "high") > 0);
    assert_eq!(keyed(&events, "oom_kill"), 0);
    assert_eq!(keyed(&events, "max"), 0);
    // Reclaim on the way back to user space kept usage near high: the peak is far below
    // the 800 MiB the job touched; the rest went to swap.
    let peak = number(t, "cat /sys/fs/cgroup/job/memory.peak");
    assert!(peak < 400 * MIB, "peak {peak}");
    assert!(number(t, "cat /sys/fs/cgroup/job/memory.swap.peak") > 300 * MIB);
}

// ---- (d) memory.low protects a neighbour's cache ------------------------------------------

fn noisy(with_low: bool) -> RunResult {
    let path = format!("{}/../../scenarios/container-noisy-neighbour.sh", env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(path).unwrap();
    if !with_low {
        text = text.lines().filter(|l| !l.contains("memory.low")).map(|l| format!("{l}\n")).collect();
    }
    script(&text, &[])
}

#[test]
fn memory_low_keeps_the_protected_cgroups_cache_through_a_neighbours_stream() {
    let protected = noisy(true);
    let unprotected = noisy(false);
    let db_read = "cgexec -g memory:pod/db dd if=/root/db.dat of=/dev/null bs=1M";
    for r in [&protected, &unprotected] {
        let batch = number(&r.transcript, "cat /sys/fs/cgroup/pod/batch/memory.current");
        let db = number(&r.transcript, "cat /sys/fs/cgroup/pod/db/memory.current");
        assert!(batch + db <= 1024 * MIB, "the pod's limit holds");
    }
    // Protected: db's 300 MiB stay charged (cached), the re-read runs at memory speed.
    let db = number(&protected.transcript, "cat /sys/fs/cgroup/pod/db/memory.current");
    assert!(db >= 290 * MIB, "db kept {db}");
    let reads = outputs_of(&protected.transcript, db_read);
    assert!(dd_rate(&reads[1]) > 5.0 * dd_rate(&reads[0]), "cached re-read");
    // Unprotected: the stream evicted it and the re-read goes to the disk again.
    let db = number(&unprotected.transcript, "cat /sys/fs/cgroup/pod/db/memory.current");
    assert!(db < 100 * MIB, "db kept {db} without protection");
    let reads = outputs_of(&unprotected.transcript, db_read);
    assert!(dd_rate(&reads[1]) < 2.0 * dd_rate(&reads[0]));
}

// ---- Interface -----------------------------------------------------------------------------

#[test]
fn every_v2_file_write_gives_the_kernels_error_for_bad_values() {
    let cases = [
        ("memory.max", "abc"),
        ("memory.max", "-1"),
        ("memory.max", "12Q"),
        ("memory.high", "lots"),
        ("memory.low", "1.5G"),
        ("memory.min", "x"),
        ("memory.swap.max", "none"),
        ("memory.oom.group", "2"),
        ("memory.oom.group", "yes"),
        ("memory.reclaim", "max"),
        ("memory.reclaim", "abc"),
        ("cgroup.procs", "notapid"),
        ("cgroup.subtree_control", "memory"),
        ("cgroup.subtree_control", "+bogus"),
        ("memory.current", "1"),
        ("memory.stat", "1"),
        ("memory.events", "1"),
        ("memory.peak", "1"),
    ];
    let mut text = String::from("mkdir /sys/fs/cgroup/c\n");
    for (f, v) in cases {
        text.push_str(&format!("echo {v} > /sys/fs/cgroup/c/{f}\necho status $?\n"));
    }
    text.push_str("echo 99999 > /sys/fs/cgroup/c/cgroup.procs\necho status $?\n");
    let r = script(&text, &[]);
    for (f, v) in cases {
        let out = output_of(&r.transcript, &format!("echo {v} > /sys/fs/cgroup/c/{f}"));
        assert_eq!(out, vec!["bash: echo: write error: Invalid argument"], "{f} <- {v}");
    }
    let out = output_of(&r.transcript, "echo 99999 > /sys/fs/cgroup/c/cgroup.procs");
    assert_eq!(out, vec!["bash: echo: write error: No such process"]);
    assert_eq!(outputs_of(&r.transcript, "echo status $?").len(), cases.len() + 1);
    assert!(outputs_of(&r.transcript, "echo status $?").iter().all(|o| o == &vec!["status 1"]));
}

#[test]
fn values_read_back_as_the_kernel_prints_them() {
    let r = script(
        "mkdir /sys/fs/cgroup/c
echo 100M > /sys/fs/cgroup/c/memory.max
cat /sys/fs/cgroup/c/memory.max
echo max > /sys/fs/cgroup/c/memory.max
cat /sys/fs/cgroup/c/memory.max
echo 5000 > /sys/fs/cgroup/c/memory.low
cat /sys/fs/cgroup/c/memory.low
echo 1 > /sys/fs/cgroup/c/memory.oom.group
cat /sys/fs/cgroup/c/memory.oom.group
cat /sys/fs/cgroup/c/memory.events
cat /sys/fs/cgroup/c/cgroup.controllers
cat /sys/fs/cgroup/memory.current
",
        &[],
    );
    let t = &r.transcript;
    assert_eq!(number(t, "cat /sys/fs/cgroup/c/memory.max"), 100 * MIB);
    assert_eq!(outputs_of(t, "cat /sys/fs/cgroup/c/memory.max")[1], vec!["max"]);
    // Rounded down to pages.
    assert_eq!(number(t, "cat /sys/fs/cgroup/c/memory.low"), 4096);
    assert_eq!(number(t, "cat /sys/fs/cgroup/c/memory.oom.group"), 1);
    let ev: Vec<&str> = output_of(t, "cat /sys/fs/cgroup/c/memory.events").iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(ev, vec!["low", "high", "max", "oom", "oom_kill", "oom_group_kill"]);
    assert_eq!(output_of(t, "cat /sys/fs/cgroup/c/cgroup.controllers"), vec!["memory"]);
    // The root has no memory.current (v2).
    assert_eq!(output_of(t, "cat /sys/fs/cgroup/memory.current"), vec!["cat: /sys/fs/cgroup/memory.current: No such file or directory"]);
}

#[test]
fn nested_cgroups_need_the_controller_enabled_and_limits_apply_up_the_tree() {
    let r = script(
        "mkdir -p /sys/fs/cgroup/a/b
echo 64M > /sys/fs/cgroup/a/b/memory.max
echo +memory > /sys/fs/cgroup/a/cgroup.subtree_control
echo 64M > /sys/fs/cgroup/a/memory.max
echo 0 > /sys/fs/cgroup/a/memory.swap.max
cgexec -g memory:a/b memhog 100M
cat /sys/fs/cgroup/a/memory.events
cat /sys/fs/cgroup/a/b/memory.events
cat /sys/fs/cgroup/a/b/memory.events.local
cgexec -g memory:a memhog 1M
rmdir /sys/fs/cgroup/a
rmdir /sys/fs/cgroup/a/b
rmdir /sys/fs/cgroup/a
rmdir /sys/fs/cgroup/a
mkdir /sys/fs/cgroup/x /sys/fs/cgroup/x
",
        &[],
    );
    let t = &r.transcript;
    // b's memory files appear only once a enables the controller for its children.
    assert_eq!(output_of(t, "echo 64M > /sys/fs/cgroup/a/b/memory.max"), vec!["bash: echo: write error: No such file or directory"]);
    // a's limit stops b's job: the kill is counted where the victim is, up the tree too.
    let a = output_of(t, "cat /sys/fs/cgroup/a/memory.events");
    let b = output_of(t, "cat /sys/fs/cgroup/a/b/memory.events");
    let b_local = output_of(t, "cat /sys/fs/cgroup/a/b/memory.events.local");
    assert_eq!(keyed(&a, "oom_kill"), 1);
    assert_eq!(keyed(&b, "oom_kill"), 1);
    assert_eq!(keyed(&b_local, "oom_kill"), 1);
    assert!(keyed(&a, "max") > 0 && keyed(&b_local, "max") == 0, "max is counted where the limit is");
    // No internal processes: a has children with the controller, so tasks cannot join it.
    assert_eq!(output_of(t, "cgexec -g memory:a memhog 1M"), vec!["Device or resource busy"]);
    let rm = outputs_of(t, "rmdir /sys/fs/cgroup/a");
    assert_eq!(rm[0], vec!["rmdir: failed to remove '/sys/fs/cgroup/a': Device or resource busy"]);
    assert!(rm[1].is_empty());
    assert_eq!(rm[2], vec!["rmdir: failed to remove '/sys/fs/cgroup/a': No such file or directory"]);
    assert_eq!(output_of(t, "mkdir /sys/fs/cgroup/x /sys/fs/cgroup/x"), vec!["mkdir: cannot create directory '/sys/fs/cgroup/x': File exists"]);
}

#[test]
fn the_shell_joins_a_cgroup_with_dollar_dollar_and_its_commands_follow() {
    let r = script(
        "mkdir /sys/fs/cgroup/sh
echo $$ > /sys/fs/cgroup/sh/cgroup.procs
cat /proc/self/cgroup
memhog 64M --active 0.1 &
cat /proc/$!/cgroup
echo 32M > /sys/fs/cgroup/sh/memory.max
cat /sys/fs/cgroup/sh/memory.current
",
        &[],
    );
    let t = &r.transcript;
    assert_eq!(output_of(t, "cat /proc/self/cgroup"), vec!["0::/sh"]);
    assert_eq!(output_of(t, "cat /proc/$!/cgroup"), vec!["0::/sh"]);
    // Lowering memory.max below usage reclaims (to swap) down to it.
    assert!(number(t, "cat /sys/fs/cgroup/sh/memory.current") <= 32 * MIB);
}

#[test]
fn systemd_run_starts_a_scope_with_its_limits() {
    let r = script(
        "systemd-run --scope -p MemoryMax=64M -p MemorySwapMax=0 memhog 100M
echo status $?
systemd-run --scope -p MemoryHigh=32M -p MemoryLow=1M memhog 48M
echo status $?
",
        &[],
    );
    let t = &r.transcript;
    let first = output_of(t, "systemd-run --scope -p MemoryMax=64M -p MemorySwapMax=0 memhog 100M");
    assert!(first[0].starts_with("Running scope as unit: run-r") && first[0].ends_with(".scope"), "{first:?}");
    assert_eq!(first[0].len(), "Running scope as unit: run-r".len() + 32 + ".scope".len());
    assert!(t.contains("oom_memcg") || t.contains("Memory cgroup out of memory"));
    assert_eq!(outputs_of(t, "echo status $?"), vec![vec!["status 137"], vec!["status 0"]]);
}

#[test]
fn v1_interface_on_a_v1_machine() {
    let r = script(
        "mkdir /sys/fs/cgroup/memory/box
echo 64M > /sys/fs/cgroup/memory/box/memory.limit_in_bytes
echo 32M > /sys/fs/cgroup/memory/box/memory.memsw.limit_in_bytes
echo 96M > /sys/fs/cgroup/memory/box/memory.memsw.limit_in_bytes
echo 201 > /sys/fs/cgroup/memory/box/memory.swappiness
echo 10 > /sys/fs/cgroup/memory/box/memory.swappiness
echo 1 > /sys/fs/cgroup/memory/memory.force_empty
cat /sys/fs/cgroup/memory/box/memory.limit_in_bytes
cat /sys/fs/cgroup/memory/box/memory.swappiness
cgexec -g memory:box memhog 200M
cat /sys/fs/cgroup/memory/box/memory.failcnt
cat /sys/fs/cgroup/memory/box/memory.max_usage_in_bytes
cat /sys/fs/cgroup/memory/box/memory.stat
echo -1 > /sys/fs/cgroup/memory/box/memory.memsw.limit_in_bytes
cat /sys/fs/cgroup/memory/box/memory.memsw.limit_in_bytes
cat /proc/self/cgroup
",
        &["cgroup=v1"],
    );
    let t = &r.transcript;
    // memory.limit_in_bytes may not exceed memsw's.
    assert_eq!(output_of(t, "echo 32M > /sys/fs/cgroup/memory/box/memory.memsw.limit_in_bytes"), vec!["bash: echo: write error: Invalid argument"]);
    assert_eq!(output_of(t, "echo 201 > /sys/fs/cgroup/memory/box/memory.swappiness"), vec!["bash: echo: write error: Invalid argument"]);
    assert_eq!(output_of(t, "echo 1 > /sys/fs/cgroup/memory/memory.force_empty"), vec!["bash: echo: write error: Invalid argument"]);
    assert_eq!(number(t, "cat /sys/fs/cgroup/memory/box/memory.limit_in_bytes"), 64 * MIB);
    assert_eq!(number(t, "cat /sys/fs/cgroup/memory/box/memory.swappiness"), 10);
    // memsw: 64M of memory plus 32M of swap, then the OOM killer.
    assert!(t.contains("Memory cgroup out of memory: Killed process"));
    assert!(number(t, "cat /sys/fs/cgroup/memory/box/memory.failcnt") > 0);
    assert_eq!(number(t, "cat /sys/fs/cgroup/memory/box/memory.max_usage_in_bytes"), 64 * MIB);
    let stat = output_of(t, "cat /sys/fs/cgroup/memory/box/memory.stat");
    let keys: Vec<&str> = stat.iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(&keys[..4], &["cache", "rss", "rss_huge", "shmem"]);
    assert!(keys.contains(&"hierarchical_memory_limit") && keys.contains(&"total_rss"));
    assert_eq!(keyed(&stat, "hierarchical_memory_limit"), 64 * MIB);
    // Pages charged: 64M + the swapped 32M, less what page tables took of the limit
    // (kmem: 48 PTE pages for 96M, a PMD and a PUD page; the 11 of memhog's image).
    assert!(keyed(&stat, "pgpgin") >= 16384 + 8192 - 61, "charged 64M + the swapped 32M");
    assert_eq!(number(t, "cat /sys/fs/cgroup/memory/box/memory.memsw.limit_in_bytes"), 9223372036854771712);
    assert_eq!(output_of(t, "cat /proc/self/cgroup")[0], "4:memory:/");
}

#[test]
fn eras_without_cgroups_or_v2_refuse_clearly() {
    // 2.4: no control groups at all.
    let e = memtwin_scenario::run(&RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("mkdir /sys/fs/cgroup/x\n".into()),
        machine: "seed-002".into(),
        ..Default::default()
    })
    .err()
    .expect("2.4 has no cgroups")
    .message;
    assert!(e.starts_with("t.sh:1: ") && e.contains("no control groups"), "{e}");
    // 2.6.39: v1 only; its memory.stat has the old layout.
    let r = script(
        "mkdir /sys/fs/cgroup/memory/old
cat /sys/fs/cgroup/memory/old/memory.stat
",
        &["kernel=linux-2.6.39"],
    );
    let stat = output_of(&r.transcript, "cat /sys/fs/cgroup/memory/old/memory.stat");
    assert_eq!(stat[0..3], ["cache 0", "rss 0", "mapped_file 0"]);
    // v2 paths do not exist there.
    let e = memtwin_scenario::run(&RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("mkdir /sys/fs/cgroup/new\n".into()),
        machine: "default".into(),
        sets: vec!["kernel=linux-2.6.39".into()],
        ..Default::default()
    })
    .err()
    .expect("refused")
    .message;
    assert!(e.starts_with("t.sh:1: ") && e.contains("outside the memory cgroup hierarchy at /sys/fs/cgroup/memory"), "{e}");
}

#[test]
fn unmodelled_files_commands_and_options_are_refused_with_the_line() {
    for (text, want) in [
        ("mkdir /sys/fs/cgroup/c\ncat /sys/fs/cgroup/c/memory.swap.high\n", "not modelled"),
        ("mkdir /sys/fs/cgroup/c\necho 1 > /sys/fs/cgroup/c/cgroup.freeze\n", "not modelled"),
        ("mkdir /sys/fs/cgroup/c\ncat /sys/fs/cgroup/c/io.pressure\n", "'io.pressure' is not modelled"),
        ("systemd-run memhog 1M\n", "only --scope"),
        ("systemd-run --scope -p CPUQuota=50% memhog 1M\n", "'CPUQuota' is not modelled"),
        ("systemd-run --scope -p MemoryMax=lots memhog 1M\n", "invalid value"),
        ("cgexec -g cpu:x memhog 1M\n", "only the memory controller"),
        ("cgexec memhog 1M\n", "missing -g"),
        ("rmdir /root\n", "only cgroup directories"),
        ("echo 1 > /sys/kernel/mm/transparent_hugepage/enabled\n", "not modelled"),
    ] {
        let e = memtwin_scenario::run(&RunOptions {
            script_path: Some("t.sh".into()),
            script_text: Some(text.into()),
            machine: "default".into(),
            ..Default::default()
        })
        .err()
        .unwrap_or_else(|| panic!("{text:?} should be refused"))
        .message;
        assert!(e.starts_with("t.sh:") && e.contains(want), "{text:?}: {e}");
    }
    // A write of the cgroup.subtree_control of another controller is refused at run time.
    let r = script("echo +cpu > /sys/fs/cgroup/cgroup.subtree_control\necho status $?\n", &[]);
    assert!(r.transcript.contains("'cpu' controller is not modelled"));
    assert_eq!(output_of(&r.transcript, "echo status $?"), vec!["status 1"]);
}

#[test]
fn the_container_scenarios_expected_transcripts_are_current() {
    for name in ["container-cache-limit", "container-oom", "container-high-throttle", "container-noisy-neighbour"] {
        let r = scenario(&format!("{name}.sh"));
        let path = format!("{}/../../scenarios/{name}.expected", env!("CARGO_MANIFEST_DIR"));
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(r.transcript == want, "{name}: the transcript differs from {path} (regenerate it with `memtwin run scenarios/{name}.sh > scenarios/{name}.expected` if the change is intended):\n{}", r.transcript);
    }
}

#[test]
fn a_cgroup_setting_other_than_v1_or_v2_is_refused() {
    let e = memtwin_scenario::run(&RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("free\n".into()),
        machine: "default".into(),
        sets: vec!["cgroup=v3".into()],
        ..Default::default()
    })
    .err()
    .expect("refused")
    .message;
    assert!(e.contains("cgroup") && e.contains("\"v1\"") && e.contains("\"v2\""), "{e}");
}

/// v1 memory.force_empty per era. Linux 2.6.39 refuses it while the cgroup has a task
/// (EBUSY), sleeps congestion_wait(HZ/10) after each of its 5 rounds without progress
/// (MEM_CGROUP_RECLAIM_RETRIES), and charges what is left (here a tmpfs file with no swap to
/// go to) to the parent, so that the cgroup ends empty. 6.x only reclaims: 16 rounds without
/// a sleep, and the file stays charged to the cgroup.
#[test]
fn force_empty_follows_the_era() {
    let text = "mkdir /sys/fs/cgroup/memory/outer /sys/fs/cgroup/memory/outer/box
mount -t tmpfs -o size=64m tmpfs /mnt
cgexec -g memory:outer/box dd if=/dev/zero of=/mnt/f bs=1M count=16 status=none
echo $$ > /sys/fs/cgroup/memory/outer/box/tasks
echo 1 > /sys/fs/cgroup/memory/outer/box/memory.force_empty
echo $$ > /sys/fs/cgroup/memory/tasks
time echo 1 > /sys/fs/cgroup/memory/outer/box/memory.force_empty
cat /sys/fs/cgroup/memory/outer/box/memory.usage_in_bytes
grep -E '^(shmem|cache) ' /sys/fs/cgroup/memory/outer/memory.stat
";
    let old = common::run_on(text, "ml110-g6", &["cgroup=v1", "swap=0"]);
    let t = &old.transcript;
    assert_eq!(output_of(t, "echo 1 > /sys/fs/cgroup/memory/outer/box/memory.force_empty"), vec!["bash: echo: write error: Device or resource busy"], "{t}");
    let timed = output_of(t, "time echo 1 > /sys/fs/cgroup/memory/outer/box/memory.force_empty");
    let secs = real_s(&timed);
    assert!((0.5..0.6).contains(&secs), "five congestion_waits of 100 ms: {secs} s\n{t}");
    assert_eq!(number(t, "cat /sys/fs/cgroup/memory/outer/box/memory.usage_in_bytes"), 0, "{t}");
    let stat = output_of(t, "grep -E '^(shmem|cache) ' /sys/fs/cgroup/memory/outer/memory.stat");
    assert!(keyed(&stat, "cache") >= 16 * MIB, "the parent holds the file now: {stat:?}");

    let new = common::run_on(text, "default", &["cgroup=v1", "swap=0"]);
    let t = &new.transcript;
    assert!(output_of(t, "echo 1 > /sys/fs/cgroup/memory/outer/box/memory.force_empty").is_empty(), "{t}");
    let secs = real_s(&output_of(t, "time echo 1 > /sys/fs/cgroup/memory/outer/box/memory.force_empty"));
    assert!(secs < 0.05, "no sleeps: {secs} s");
    assert!(number(t, "cat /sys/fs/cgroup/memory/outer/box/memory.usage_in_bytes") >= 16 * MIB, "{t}");
}

/// The text tools read cgroup files as cat does: grep, head and awk on memory.stat, and cat
/// in a pipeline.
#[test]
fn text_tools_read_cgroup_files() {
    let r = script(
        "mkdir /sys/fs/cgroup/box
cat /sys/fs/cgroup/box/memory.current | head -1
grep -c . /sys/fs/cgroup/box/memory.stat
awk '$1 == \"anon\" { print \"anon=\" $2 }' /sys/fs/cgroup/box/memory.stat
grep nosuch /sys/fs/cgroup/box/memory.nosuch
",
        &[],
    );
    let t = &r.transcript;
    assert_eq!(output_of(t, "cat /sys/fs/cgroup/box/memory.current | head -1"), vec!["0"], "{t}");
    assert!(number(t, "grep -c . /sys/fs/cgroup/box/memory.stat") > 10, "{t}");
    assert_eq!(output_of(t, "awk '$1 == \"anon\" { print \"anon=\" $2 }' /sys/fs/cgroup/box/memory.stat"), vec!["anon=0"], "{t}");
    assert_eq!(output_of(t, "grep nosuch /sys/fs/cgroup/box/memory.nosuch"), vec!["grep: /sys/fs/cgroup/box/memory.nosuch: No such file or directory"], "{t}");
}

/// v1's memory.use_hierarchy: on 2.6.39 the root starts at 0 and new cgroups inherit it, so
/// a parent's limit does not reach its children (their pages are not in its counters) until
/// 1 is written into the parent while it has no children. 5.x hosts boot hierarchical
/// (systemd writes 1 into the root), and a child of a hierarchical cgroup cannot change;
/// 6.x accepts only 1.
#[test]
fn v1_use_hierarchy_follows_the_era() {
    let text = "cat /sys/fs/cgroup/memory/memory.use_hierarchy
mkdir /sys/fs/cgroup/memory/flat /sys/fs/cgroup/memory/flat/job
echo 32M > /sys/fs/cgroup/memory/flat/memory.limit_in_bytes
cgexec -g memory:flat/job memhog 64M
cat /sys/fs/cgroup/memory/flat/memory.usage_in_bytes
echo 1 > /sys/fs/cgroup/memory/flat/memory.use_hierarchy
mkdir /sys/fs/cgroup/memory/tree
echo 1 > /sys/fs/cgroup/memory/tree/memory.use_hierarchy
mkdir /sys/fs/cgroup/memory/tree/job
cat /sys/fs/cgroup/memory/tree/job/memory.use_hierarchy
echo 0 > /sys/fs/cgroup/memory/tree/job/memory.use_hierarchy
echo 32M > /sys/fs/cgroup/memory/tree/memory.limit_in_bytes
cgexec -g memory:tree/job memhog 64M
grep hierarchical_memory_limit /sys/fs/cgroup/memory/tree/job/memory.stat
dmesg | grep -E 'Task in|Kill process|Killed process|constraint'
";
    let old = common::run_on(text, "ml110-g6", &["cgroup=v1", "swap=0"]);
    let t = &old.transcript;
    assert_eq!(
        output_of(t, "cat /sys/fs/cgroup/memory/memory.use_hierarchy"),
        vec!["0"],
        "{t}"
    );
    let runs = outputs_of(t, "cgexec -g memory:flat/job memhog 64M");
    assert!(
        !runs[0].iter().any(|l| l.contains("Killed")),
        "the flat parent's limit does not apply: {t}"
    );
    assert_eq!(
        number(t, "cat /sys/fs/cgroup/memory/flat/memory.usage_in_bytes"),
        0,
        "the child's pages are not in the parent's counter: {t}"
    );
    assert_eq!(
        output_of(
            t,
            "echo 1 > /sys/fs/cgroup/memory/flat/memory.use_hierarchy"
        ),
        vec!["bash: echo: write error: Device or resource busy"],
        "{t}"
    );
    assert_eq!(
        output_of(t, "cat /sys/fs/cgroup/memory/tree/job/memory.use_hierarchy"),
        vec!["1"],
        "{t}"
    );
    assert_eq!(
        output_of(
            t,
            "echo 0 > /sys/fs/cgroup/memory/tree/job/memory.use_hierarchy"
        ),
        vec!["bash: echo: write error: Invalid argument"],
        "{t}"
    );
    let hier = outputs_of(t, "cgexec -g memory:tree/job memhog 64M");
    assert!(
        hier[0].iter().any(|l| l.contains("Killed")),
        "the hierarchical parent's 32M limit OOM-kills the 64M job: {t}"
    );
    assert_eq!(
        output_of(
            t,
            "grep hierarchical_memory_limit /sys/fs/cgroup/memory/tree/job/memory.stat"
        ),
        vec![format!("hierarchical_memory_limit {}", 32 * MIB)],
        "{t}"
    );
    // 2.6.39's report: mem_cgroup_print_oom_info and oom_kill_process's lines, no 5.0+
    // oom-kill summary.
    let log = output_of(
        t,
        "dmesg | grep -E 'Task in|Kill process|Killed process|constraint'",
    );
    assert!(
        log.iter()
            .any(|l| l.ends_with("Task in /tree/job killed as a result of limit of /tree")),
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|l| l.contains("Memory cgroup out of memory: Kill process ")
                && l.ends_with("(memhog) score 1000 or sacrifice child")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.contains("] Killed process ")),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("constraint")), "{log:?}");

    let five = common::run_on(
        text,
        "default",
        &["cgroup=v1", "swap=0", "kernel=linux-5.4"],
    );
    let t = &five.transcript;
    assert_eq!(
        output_of(t, "cat /sys/fs/cgroup/memory/memory.use_hierarchy"),
        vec!["1"],
        "systemd made the root hierarchical: {t}"
    );
    assert!(
        outputs_of(t, "cgexec -g memory:flat/job memhog 64M")[0]
            .iter()
            .any(|l| l.contains("Killed")),
        "{t}"
    );
    assert_eq!(
        output_of(
            t,
            "echo 0 > /sys/fs/cgroup/memory/tree/job/memory.use_hierarchy"
        ),
        vec!["bash: echo: write error: Invalid argument"],
        "{t}"
    );

    let six = common::run_on("echo 0 > /sys/fs/cgroup/memory/memory.use_hierarchy\ncat /sys/fs/cgroup/memory/memory.use_hierarchy\n", "default", &["cgroup=v1"]);
    let t = &six.transcript;
    assert_eq!(
        output_of(t, "echo 0 > /sys/fs/cgroup/memory/memory.use_hierarchy"),
        vec!["bash: echo: write error: Invalid argument"],
        "{t}"
    );
    assert_eq!(
        output_of(t, "cat /sys/fs/cgroup/memory/memory.use_hierarchy"),
        vec!["1"],
        "{t}"
    );
}

/// While an OOM victim is still exiting, the cgroup's OOM killer picks nobody else
/// (oom_evaluate_task aborts on tsk_is_oom_victim): the charging task retries until the
/// victim's memory is back. Three 150M jobs in a 200M cgroup on two CPUs: two kills, and
/// the second report's task list no longer holds the first victim.
#[test]
fn no_second_oom_victim_while_the_first_is_exiting() {
    let r = script(
        "mkdir /sys/fs/cgroup/box
echo 200M > /sys/fs/cgroup/box/memory.max
echo 0 > /sys/fs/cgroup/box/memory.swap.max
echo $$ > /sys/fs/cgroup/box/cgroup.procs
memhog 150M --every 0.5 &
memhog 150M --every 0.5 &
memhog 150M --every 0.5 &
sleep 3
grep oom /sys/fs/cgroup/box/memory.events
dmesg
",
        &[],
    );
    let t = &r.transcript;
    let ev = output_of(t, "grep oom /sys/fs/cgroup/box/memory.events");
    assert_eq!(keyed(&ev, "oom_kill"), 2, "{t}");
    assert!(
        keyed(&ev, "oom") > 2,
        "the retries while a victim exits count as oom events: {ev:?}"
    );
    let log = output_of(t, "dmesg").join("\n");
    let reports: Vec<&str> = log.split("invoked oom-killer").skip(1).collect();
    assert_eq!(reports.len(), 2, "{log}");
    let victim = |rep: &str| -> String {
        let l = rep
            .lines()
            .find(|l| l.contains("oom-kill:constraint"))
            .expect("summary line");
        l.split(",pid=")
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    let first = victim(reports[0]);
    let rows_second: Vec<&str> = reports[1]
        .lines()
        .filter(|l| l.contains("] ") && l.trim_end().ends_with("memhog"))
        .collect();
    assert_eq!(rows_second.len(), 2, "two jobs left: {rows_second:?}");
    assert!(
        !rows_second
            .iter()
            .any(|l| l.contains(&format!("[{first:>7}]"))),
        "the first victim had exited: {rows_second:?}"
    );
}

/// A v1 cgroup whose page cache is dirty: a limit below it, then a write at that limit.
const V1_DIRTY: &str = "mkdir /sys/fs/cgroup/memory/t
cgexec -g memory:t dd if=/dev/zero of=/root/f bs=4k count=280 status=none
echo 655360 > /sys/fs/cgroup/memory/t/memory.limit_in_bytes
cat /sys/fs/cgroup/memory/t/memory.usage_in_bytes
grep -E '^nr_throttled_written ' /proc/vmstat
cgexec -g memory:t dd if=/dev/zero of=/root/g bs=4k count=400 status=none
cat /sys/fs/cgroup/memory/t/memory.usage_in_bytes
cat /sys/fs/cgroup/memory/t/memory.failcnt
grep -E '^nr_throttled_written ' /proc/vmstat
";

#[test]
fn v1_reclaim_of_dirty_pages_waits_for_their_writeback_and_a_lower_limit_is_accepted() {
    // 6.1 with cgroup v1 (no writeback_throttling_sane): reclaim marks the dirty pages,
    // wakes the flushers and sleeps in reclaim_throttle until pages are written; it then
    // waits on the pages it marked (folio_wait_writeback) and frees them. So a limit below
    // 280 dirty pages is accepted (mem_cgroup_resize_max reclaims them), as a 6.18 host did.
    let t = script(V1_DIRTY, &["cgroup=v1"]).transcript;
    assert!(!t.contains("write error"), "{t}");
    let usage = outputs_of(&t, "cat /sys/fs/cgroup/memory/t/memory.usage_in_bytes");
    assert!(usage.len() == 2 && usage.iter().all(|u| u[0].parse::<u64>().unwrap() <= 655360), "{usage:?}");
    let throttled = outputs_of(&t, "grep -E '^nr_throttled_written ' /proc/vmstat");
    let written = |i: usize| -> u64 { throttled[i][0].split_whitespace().nth(1).unwrap().parse().unwrap() };
    assert!(written(0) > 0 && written(1) > written(0), "pages written while reclaim was throttled: {throttled:?}");
    // Every charge past the first batches failed its batch first (failcnt ~ pages charged
    // near the limit), yet the write went through.
    assert!(number(&t, "cat /sys/fs/cgroup/memory/t/memory.failcnt") > 200);
    // On cgroup v2 reclaim is "sane": the flushers' own throttling, no reclaim_throttle.
    let v2 = script(&V1_DIRTY.replace("cat /sys/fs/cgroup/memory/t/memory.failcnt\n", "").replace("/memory/t", "/t").replace("memory.limit_in_bytes", "memory.max").replace("memory.usage_in_bytes", "memory.current"), &[]).transcript;
    assert!(!v2.contains("write error"), "{v2}");
    let throttled = outputs_of(&v2, "grep -E '^nr_throttled_written ' /proc/vmstat");
    assert!(throttled.iter().all(|o| o[0] == "nr_throttled_written 0"), "{throttled:?}");
}
