//! nice, renice and ionice's process forms: a niceness is a CPU weight (CFS's
//! sched_prio_to_weight, 2.4's timeslice ticks), shown by ps, top and /proc; an I/O
//! priority is read back as util-linux's ionice prints it.

mod common;
use common::run_on;

/// Two CPU-bound copies of /dev/zero to /dev/null on a one-CPU machine, the second at
/// `nice` (reniced to `renice` after 10 s, then 10 s more); the CPU time (utime + stime,
/// ticks of /proc/PID/stat) of each, and the transcript.
fn two_spinners(kernel: &str, nice: i32, renice: Option<i32>) -> (u64, u64, String) {
    let renice = renice.map_or(String::new(), |n| format!("renice -n {n} -p $B\nsleep 10\n"));
    let script = format!(
        "dd if=/dev/zero of=/dev/null bs=64k count=100000000 &\nA=$!\nnice -n {nice} dd if=/dev/zero of=/dev/null bs=64k count=100000000 &\nB=$!\nsleep 10\n{renice}ps -eo pid,ni,pri,comm\ncat /proc/$A/stat\ncat /proc/$B/stat\n"
    );
    let r = run_on(&script, "default", &["cpus=1", &format!("kernel={kernel}")]);
    let t = r.transcript.clone();
    let cpu = |l: &str| -> u64 {
        let f: Vec<&str> = l.split_whitespace().collect();
        f[13].parse::<u64>().unwrap() + f[14].parse::<u64>().unwrap()
    };
    let stats: Vec<&str> = t.lines().filter(|l| l.contains(" (dd) ")).collect();
    assert_eq!(stats.len(), 2, "{t}");
    (cpu(stats[0]), cpu(stats[1]), t)
}

#[test]
fn nice_19_beside_nice_0_gets_the_weight_ratio_of_one_cpu() {
    let (a, b, t) = two_spinners("linux-6.x", 19, None);
    assert!(t.contains(" 19   0 dd\n"), "ps: NI 19, PRI 0\n{t}");
    // Fields 18 and 19 of /proc/PID/stat: priority 39, nice 19.
    assert!(t.lines().any(|l| l.contains(" (dd) ") && l.split_whitespace().nth(17) == Some("39") && l.split_whitespace().nth(18) == Some("19")), "{t}");
    // 1024 : 15 (68:1) of the 10 s (1000 ticks) both ran.
    assert!(a + b > 900, "{a} + {b}\n{t}");
    let ratio = a as f64 / b.max(1) as f64;
    assert!((50.0..90.0).contains(&ratio), "nice 0: {a} ticks, nice 19: {b}: ratio {ratio:.1}\n{t}");
}

#[test]
fn renice_mid_run_changes_the_split() {
    // nice 5 (335) beside nice 0 for 10 s, then renice to 10 (110).
    let (a, b, t) = two_spinners("linux-6.x", 5, None);
    let r1 = a as f64 / b as f64;
    assert!((2.6..3.6).contains(&r1), "nice 5: {r1:.2} (1024/335 = 3.06)\n{t}");
    let (a2, b2, t2) = two_spinners("linux-6.x", 5, Some(10));
    assert!(t2.contains("old priority 5, new priority 10\n"), "{t2}");
    // The second 10 s are shared 1024 : 110 (9.3).
    let (da, db) = (a2 - a, b2 - b);
    let r2 = da as f64 / db.max(1) as f64;
    assert!((7.5..11.5).contains(&r2) && da + db > 900, "after renice: {da} and {db} ticks ({r2:.1})\n{t2}");
}

#[test]
fn linux_2_4_weighs_nice_levels_by_timeslice_ticks() {
    // NICE_TO_TICKS at HZ=100: nice 0 has 6 ticks, nice 19 one: 6:1, not CFS's 68:1.
    let (a, b, t) = two_spinners("linux-2.4", 19, None);
    let ratio = a as f64 / b as f64;
    assert!((4.5..8.0).contains(&ratio), "{ratio:.2}\n{t}");
}

#[test]
fn nice_alone_prints_the_niceness_and_ps_top_show_ni() {
    let r = run_on(
        "nice\nnice -n 7 sleep 30 &\nps -o pid,ni,pri,comm -p $!\ntop -b -n 1 | grep sleep\nionice -p $!\n",
        "default",
        &[],
    );
    let t = &r.transcript;
    assert!(t.contains("# nice\n0\n"), "{t}");
    let ps = t.split("comm -p").nth(1).unwrap();
    assert!(ps.lines().nth(2).unwrap().contains("  7  12 sleep"), "ni 7, pri 19-7\n{t}");
    // 6.x reads back the effective priority: best effort at (7 + 20) / 5 = 5.
    assert!(t.contains("best-effort: prio 5\n"), "{t}");
}

#[test]
fn ionice_sets_and_reads_running_processes() {
    // seed-000: no elevator, so classes are accepted (and change nothing).
    let r = run_on("sleep 30 &\nionice -p $!\nionice -c3 -p $!\nionice -p $!\nionice -c1 -n2 -p $!\nionice -p $!\nionice -p 9999\necho $?\n", "seed-000", &[]);
    let t = &r.transcript;
    assert!(t.contains("best-effort: prio 4\n"), "{t}");
    assert!(t.contains("idle\n"), "{t}");
    assert!(t.contains("realtime: prio 2\n"), "{t}");
    assert!(t.contains("ionice: ioprio_get failed: No such process\n# echo $?\n1\n"), "{t}");
    // Before 6.0 an unset priority reads as class none.
    let r = run_on("sleep 30 &\nionice -p $!\n", "seed-003", &[]);
    assert!(r.transcript.contains("none: prio 4\n"), "{}", r.transcript);
}

#[test]
fn renice_reports_like_util_linux_and_fails_on_missing_pids() {
    let r = run_on("sleep 30 &\nrenice -n 10 -p $!\nrenice 25 $!\nrenice 3 9999\necho $?\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains(" (process ID) old priority 0, new priority 10\n"), "{t}");
    assert!(t.contains(" (process ID) old priority 10, new priority 19\n"), "clamped\n{t}");
    assert!(t.contains("renice: failed to get priority for 9999 (process ID): No such process\n# echo $?\n1\n"), "{t}");
    // A renice before the niced command first runs sticks (nice sets it at creation).
    let r = run_on("dd if=/dev/zero of=/dev/null bs=64k count=100000000 &\nnice -n 5 sleep 30 &\nrenice 12 $!\nps -o ni= -p $!\n", "default", &["cpus=1"]);
    assert!(r.transcript.contains("old priority 5, new priority 12\n") && r.transcript.contains("# ps -o ni= -p $!\n 12\n"), "{}", r.transcript);
}

#[test]
fn renice_by_user_renices_every_task_of_root() {
    // Every task runs as root: PRIO_USER 0 renices them all, kernel threads included.
    let r = run_on("sleep 30 &\nrenice -n 5 -u root\nps -eo ni,comm\nrenice 3 -u nobody\necho $?\nrenice 3 -u 1000\necho $?\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("0 (user ID) old priority 0, new priority 5\n"), "{t}");
    assert!(t.contains("  5 sleep\n") && t.contains("  5 kswapd0\n"), "{t}");
    assert!(t.contains("renice: unknown user nobody\n# echo $?\n1\n"), "{t}");
    assert!(t.contains("renice: failed to get priority for 1000 (user ID): No such process\n# echo $?\n1\n"), "{t}");
}

#[test]
fn ionice_by_user_sets_every_task_of_root() {
    let r = run_on("sleep 30 &\nionice -c3 -u 0\nionice -p $!\nionice -u 0\nionice -c2 -n1 -u 0\nionice -p $! 2\nionice -u 1000\necho $?\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("# ionice -p $!\nidle\n"), "{t}");
    // Reading by user takes the best priority among the user's tasks (ioprio_best), the
    // reading ionice itself included, which runs at the default.
    assert!(t.contains("# ionice -u 0\nbest-effort: prio 4\n"), "{t}");
    assert!(t.contains("2: best-effort: prio 1\n"), "several IDs are prefixed: {t}");
    assert!(t.contains("ionice: ioprio_get failed: No such process\n# echo $?\n1\n"), "{t}");
}
