//! No formatter or argument parser panics, whatever the counters hold: zero uptime, zero
//! memory, values near u64::MAX, counters that went backwards between two snapshots (they
//! saturate at 0), odd strings, and any argument vector. Runs with overflow checks on.

use memtwin_procfs::{CpuStat, MemInfo, Snapshot, TaskInfo, TaskState, VmItem, VM_ITEMS};
use memtwin_tools::*;
use proptest::prelude::*;

fn big() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..100,
        0u64..(1 << 32),
        any::<u64>(),
        Just(u64::MAX)
    ]
}

fn meminfo() -> impl Strategy<Value = MemInfo> {
    proptest::collection::vec(big(), 31).prop_map(|v| MemInfo {
        mem_total: v[0],
        mem_free: v[1],
        mem_available: v[2],
        buffers: v[3],
        cached: v[4],
        swap_cached: v[5],
        active: v[6],
        inactive: v[7],
        active_anon: v[8],
        inactive_anon: v[9],
        active_file: v[10],
        inactive_file: v[11],
        unevictable: v[12],
        mlocked: v[13],
        swap_total: v[14],
        swap_free: v[15],
        zswap: v[16],
        zswapped: v[17],
        dirty: v[18],
        writeback: v[19],
        anon_pages: v[20],
        mapped: v[21],
        shmem: v[22],
        kreclaimable: v[23],
        slab: v[24],
        sreclaimable: v[25],
        sunreclaim: v[26],
        kernel_stack: v[27],
        page_tables: v[28],
        commit_limit: v[29],
        committed_as: v[30],
    })
}

fn cpu() -> impl Strategy<Value = CpuStat> {
    proptest::collection::vec(big(), 8).prop_map(|v| CpuStat {
        user: v[0],
        nice: v[1],
        system: v[2],
        idle: v[3],
        iowait: v[4],
        irq: v[5],
        softirq: v[6],
        steal: v[7],
    })
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z/ ]{0,12}",
        "\\PC{0,40}",
        "[a-z]{20,80}"
    ]
}

fn task() -> impl Strategy<Value = TaskInfo> {
    (
        (
            0u32..50,
            text(),
            text(),
            any::<bool>(),
            text(),
            0usize..5,
            any::<i32>(),
            any::<i32>(),
        ),
        proptest::collection::vec(big(), 11),
    )
        .prop_map(
            |((pid, comm, cmdline, kthread, user, st, prio, nice), v)| TaskInfo {
                pid,
                comm,
                cmdline,
                kthread,
                user,
                state: [
                    TaskState::Running,
                    TaskState::Sleeping,
                    TaskState::DiskSleep,
                    TaskState::Zombie,
                    TaskState::Idle,
                ][st],
                prio,
                nice,
                virt_kb: v[0],
                res_kb: v[1],
                shr_kb: v[2],
                swap_kb: v[3],
                utime_ns: v[4],
                stime_ns: v[5],
                read_bytes: v[6],
                write_bytes: v[7],
                swapin_delay_ns: v[8],
                blkio_delay_ns: v[9],
                start_ns: v[10] % 3, wchan: "", cpu: 0,
            },
        )
}

fn snapshot() -> impl Strategy<Value = Snapshot> {
    (
        (big(), 0u32..300, meminfo(), cpu()),
        proptest::collection::vec(big(), 10),
        proptest::collection::vec(task(), 0..8),
        proptest::array::uniform3(prop_oneof![Just(0.0f64), 0.0f64..1e6, any::<f64>()]),
        proptest::collection::vec(big(), VM_ITEMS.len()),
    )
        .prop_map(|((uptime_ns, ncpus, mem, cpu), c, tasks, loadavg, vm)| {
            let mut s = Snapshot {
                uptime_ns,
                ncpus,
                mem,
                cpu,
                intr: c[0],
                ctxt: c[1],
                processes: c[2],
                procs_running: c[3] as u32,
                procs_blocked: c[4] as u32,
                tasks,
                loadavg,
                ..Default::default()
            };
            for (i, item) in VM_ITEMS.iter().enumerate() {
                s.vm.set(*item, vm[i]);
            }
            let _ = VmItem::Pgpgin;
            s
        })
}

fn free_args() -> impl Strategy<Value = Vec<String>> {
    proptest::sample::subsequence(
        vec![
            "-b", "-k", "-m", "-g", "-h", "-w", "-t", "-l", "-v", "--si", "--tebi", "--pebi",
            "--kilo", "--old", "-o",
        ],
        0..5,
    )
    .prop_map(|v| v.into_iter().map(str::to_string).collect())
}

fn vmstat_args() -> impl Strategy<Value = Vec<String>> {
    proptest::sample::subsequence(
        vec![
            "-w", "-a", "-t", "-n", "-y", "-SM", "-Sk", "-Sb", "-s", "1", "5",
        ],
        0..5,
    )
    .prop_map(|v| v.into_iter().map(str::to_string).collect())
}

fn top_args() -> impl Strategy<Value = Vec<String>> {
    proptest::sample::subsequence(
        vec![
            "-b",
            "-c",
            "-i",
            "-H",
            "-o%MEM",
            "-o-PID",
            "-oCOMMAND",
            "-oUSER",
            "-w3",
            "-w200",
            "-Ek",
            "-Ee",
            "-eg",
            "-p1,2,3",
            "-uroot",
        ],
        0..6,
    )
    .prop_map(|v| v.into_iter().map(str::to_string).collect())
}

fn iotop_args() -> impl Strategy<Value = Vec<String>> {
    proptest::sample::subsequence(
        vec![
            "-b", "-o", "-P", "-a", "-k", "-t", "-q", "-qq", "-qqq", "-p1", "-uroot",
        ],
        0..6,
    )
    .prop_map(|v| v.into_iter().map(str::to_string).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn formatters_never_panic(prev in snapshot(), cur in snapshot(),
                              fa in free_args(), va in vmstat_args(), ta in top_args(), ia in iotop_args(),
                              pid_max in big(), users in any::<u32>(), wall in big(),
                              ar in big(), aw in big(), delayacct in any::<bool>()) {
        if let Ok(o) = parse_free_args(&fa) {
            let t = free(&cur, &o);
            prop_assert!(t.ends_with('\n'));
            let _ = free_repeated(&[prev.clone(), cur.clone()], &o);
        }
        if let Ok(mut o) = parse_vmstat_args(&va) {
            o.boot_epoch_s = wall as i64;
            prop_assert!(vmstat_row(None, &cur, &o).ends_with('\n'));
            prop_assert!(vmstat_row(Some(&prev), &cur, &o).ends_with('\n'));
            let _ = vmstat_header(&o);
            let _ = vmstat_stats(&cur, &o);
            let _ = vmstat_report(&[prev.clone(), cur.clone(), prev.clone()], &o);
        }
        if let Ok(mut o) = parse_top_args(&ta) {
            o.pid_max = pid_max;
            o.users = users;
            let _ = top_frame(None, &cur, &o, wall);
            let f = top_frame(Some(&prev), &cur, &o, wall);
            prop_assert!(f.ends_with('\n'));
            let _ = top_batch(None, &[prev.clone(), cur.clone(), prev.clone()], &o, &[wall]);
            let _ = top_batch(Some(&cur), &[prev.clone(), cur.clone()], &o, &[]);
        }
        if let Ok(mut o) = parse_iotop_args(&ia) {
            o.pid_max = pid_max;
            o.delayacct = delayacct;
            for style in [IotopStyle::V06, IotopStyle::Debian12] {
                o.style = style;
                let _ = iotop_frame(&prev, &cur, ar, aw, &o);
                let ctx = IotopFrameContext { first: false, wall_clock_s: wall, start: Some(&prev) };
                let _ = iotop_frame_ext(&prev, &cur, ar, aw, &o, &ctx);
            }
            let _ = iotop_actual_from_vmstat(&prev, &cur);
        }
    }

    #[test]
    fn counters_going_backwards_saturate(cur in snapshot()) {
        // The same snapshot as "previous" and "current" in reverse order: rates are 0, never
        // a wrapped-around huge number.
        let mut later = cur.clone();
        later.uptime_ns = cur.uptime_ns.saturating_add(1_000_000_000);
        let o = parse_vmstat_args(&["1".to_string()]).unwrap();
        let row = vmstat_row(Some(&later), &cur, &o);
        let f: Vec<&str> = row.split_whitespace().collect();
        // si so bi bo in cs
        for v in &f[6..12] {
            prop_assert_eq!(*v, "0", "row {}", row);
        }
    }

    #[test]
    fn parsers_never_panic(args in proptest::collection::vec(
        prop_oneof![
            "-[a-zA-Z0-9%+]{0,4}", "--[a-z-]{0,12}(=[a-z0-9]{0,3})?", "[0-9]{0,12}", "\\PC{0,6}", Just("--".to_string()),
            Just("-".to_string()), Just(String::new())
        ], 0..6)) {
        let _ = parse_free_args(&args);
        let _ = parse_vmstat_args(&args);
        let _ = parse_top_args(&args);
        let _ = parse_iotop_args(&args);
    }
}
