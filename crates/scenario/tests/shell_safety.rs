//! A run ends as Linux would, with bash's statuses: programs that end on their own end,
//! writes fail the way the kernel fails them, the script's status follows bash.

mod common;

use common::*;

fn run_ok(name: &str, text: &str) -> memtwin_scenario::RunResult {
    run_text(name, text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn with_sets(name: &str, text: &str, sets: &[&str]) -> memtwin_scenario::RunResult {
    memtwin_scenario::run(&memtwin_scenario::RunOptions {
        script_path: Some(name.to_string()),
        script_text: Some(text.to_string()),
        machine: "seed-000".into(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn exit_status_is_taken_modulo_256() {
    assert_eq!(run_ok("e.sh", "exit 300\n").exit_status, 44);
    assert_eq!(run_ok("e.sh", "exit -1\n").exit_status, 255);
    assert_eq!(run_ok("e.sh", "exit 256\n").exit_status, 0);
    let r = run_ok("e.sh", "exit abc\n");
    assert_eq!(r.exit_status, 2);
    assert!(r.transcript.contains("bash: exit: abc: numeric argument required"), "{}", r.transcript);
}

#[test]
fn statuses_of_commands_follow_bash() {
    // ls gives 2 for a missing file; a job the OOM killer ends is 137; timeout's is 124.
    let r = run_ok("s.sh", "ls missing\necho ls $?\n");
    assert!(r.transcript.contains("ls 2\n"), "{}", r.transcript);
    let r = with_sets("s.sh", "memhog 1500M --active 0.5\necho oom $?\n", &["swap=0", "ram=1G", "vm.overcommit_memory=1"]);
    assert!(r.transcript.contains("Out of memory: Killed process"), "{}", r.transcript);
    assert!(r.transcript.contains("Killed\n# echo oom $?\noom 137\n"), "{}", r.transcript);
    let r = run_ok("s.sh", "timeout 2 memhog 64M --every 1\necho t $?\n");
    assert!(r.transcript.contains("t 124\n"), "{}", r.transcript);
}

#[test]
fn memhog_fills_its_memory_and_exits() {
    // numactl memhog: a '.' per 10 MiB memset, a newline per pass, status 0.
    let r = run_ok("m.sh", "memhog 64M\necho status $?\nmemhog -r2 32M &\nwait\necho waited\n");
    assert!(r.transcript.contains("# memhog 64M\n.......\n# echo status $?\nstatus 0\n"), "{}", r.transcript);
    assert!(r.transcript.contains("# wait\n....\n....\n# echo waited\n"), "{}", r.transcript);
    assert!(r.sim_seconds < 60.0, "{}", r.sim_seconds);
    // Larger than RAM: it swaps, and still ends.
    let r = run_ok("m.sh", "memhog 2G\necho status $?\n");
    assert!(r.transcript.ends_with("status 0\n"), "{}", r.transcript);
    assert!(*col(&r.series, "vm.pswpout").last().unwrap() > 0);
}

#[test]
fn overcommit_memory_decides_whether_mmap_succeeds() {
    // 512 MB of RAM and 1 GB of swap: 1.7 GB is more than both (refused by the heuristic
    // of mode 0); mode 1 lets it through to the OOM killer; mode 2 refuses 1.3 GB, which
    // is above CommitLimit (256 MB + 1 GB) though mode 0 would allow it.
    let sets = ["ram=512M", "swap=1G"];
    let text = "memhog 1700M\necho status $?\n";
    let r = with_sets("c.sh", text, &sets);
    assert!(r.transcript.contains("mmap: Cannot allocate memory\n# echo status $?\nstatus 1\n"), "{}", r.transcript);
    let r = with_sets("c.sh", text, &["ram=512M", "swap=1G", "vm.overcommit_memory=1"]);
    assert!(r.transcript.contains("Out of memory: Killed process"), "{}", r.transcript);
    let text = "memhog 1300M\necho status $?\n";
    let r = with_sets("c.sh", text, &sets);
    assert!(r.transcript.ends_with("status 0\n"), "{}", r.transcript);
    let r = with_sets("c.sh", text, &["ram=512M", "swap=1G", "vm.overcommit_memory=2"]);
    assert!(r.transcript.ends_with("mmap: Cannot allocate memory\n# echo status $?\nstatus 1\n"), "{}", r.transcript);
}

#[test]
fn oom_kill_allocating_task_kills_the_allocator() {
    let text = "memhog 300M --active 0.5 --comm holder &\nsleep 2\nmemhog 400M\necho status $?\n";
    let r = with_sets("o.sh", text, &["ram=512M", "swap=0"]);
    assert!(r.transcript.contains("Out of memory: Killed process") && r.transcript.contains("(holder)"), "{}", r.transcript);
    let r = with_sets("o.sh", text, &["ram=512M", "swap=0", "vm.oom_kill_allocating_task=1"]);
    assert!(r.transcript.contains("Out of memory (oom_kill_allocating_task): Killed process") && r.transcript.contains("(memhog)"), "{}", r.transcript);
    assert!(r.transcript.ends_with("status 137\n"), "{}", r.transcript);
}

#[test]
fn writing_urandom_to_a_file_fills_the_filesystem() {
    let r = run_ok("u.sh", "cat /dev/urandom > out\necho status $?\nls -l out\n");
    assert!(r.transcript.contains("cat: write error: No space left on device\n# echo status $?\nstatus 1\n"), "{}", r.transcript);
}

#[test]
fn writing_to_proc_vmstat_fails_with_eio() {
    // As on Linux (coreutils 9.1, checked with bs=1 count=1): root may open the file, the
    // write fails.
    let r = run_ok("v.sh", "dd if=/dev/urandom of=/proc/vmstat\necho status $?\n");
    assert!(
        r.transcript.starts_with("# dd if=/dev/urandom of=/proc/vmstat\ndd: error writing '/proc/vmstat': Input/output error\n1+0 records in\n0+0 records out\n0 bytes copied, "),
        "{}",
        r.transcript
    );
    assert!(r.transcript.contains(" s, 0.0 kB/s\n# echo status $?\nstatus 1\n"), "{}", r.transcript);
}

#[test]
fn urandom_to_the_terminal_advances_simulated_time() {
    // An endless writer makes progress in simulated time, so a limit can stop it.
    let r = run_ok("t.sh", "timeout 0.01 cat /dev/urandom\necho status $?\n");
    assert!(r.transcript.ends_with("status 124\n"));
    assert!(r.sim_seconds >= 0.01, "{}", r.sim_seconds);
    assert!(r.transcript.len() > 1000, "the terminal shows the bytes");
}

#[test]
fn time_counts_the_cpu_of_exited_children() {
    let r = run_ok("c.sh", "time dd if=/dev/zero of=/dev/null bs=1M count=2000\ntime echo hi\n");
    let sys: Vec<&str> = r.transcript.lines().filter(|l| l.starts_with("sys\t")).collect();
    assert_eq!(sys.len(), 2, "{}", r.transcript);
    assert_ne!(sys[0], "sys\t0m0.000s", "{}", r.transcript);
    assert_eq!(sys[1], "sys\t0m0.000s", "the second `time` counts only its own child:\n{}", r.transcript);
}
