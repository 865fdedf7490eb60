//! The memory and process tools of tutorials: dmesg and the kernel messages the model
//! logs, ps, uptime, nproc, kill, /proc files, fallocate/truncate/chmod/du, swapon
//! --show/-s, dd oflag=dsync, stress-ng and stress. Formats are compared with output
//! recorded from the real tools (tests/data/real-tools/).

mod common;
use common::{parse_dd_copied, run_on};

fn real(name: &str) -> String {
    let p = format!("{}/../../tests/data/real-tools/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A line's shape: digit runs become 'N', parenthesised names '(X)'.
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

fn find<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines().find(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line with '{needle}' in:\n{text}"))
}

/// The OOM tutorial without pipes: the report is in the log, the console has one line.
fn oom_run() -> String {
    let r = run_on(
        "swapoff -a\nstress-ng --vm 2 --vm-bytes 5G --vm-keep --timeout 20s\ndmesg\n",
        "default",
        &[],
    );
    r.transcript
}

#[test]
fn oom_report_is_logged_in_the_6x_layout() {
    let t = oom_run();
    let dm = t.split("# dmesg\n").nth(1).expect("dmesg ran");
    assert!(dm.contains("stress-ng-vm invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0"), "{dm}");
    assert!(dm.contains("] Mem-Info:\n"), "{dm}");
    assert!(dm.contains("] Tasks state (memory values in pages):\n"));
    assert!(dm.contains("] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n"));
    let row = dm.lines().find(|l| l.contains("] [") && l.ends_with(" stress-ng-vm")).expect("task row");
    // "[%7d] %5d %5d %8lu %8lu %8ld %8lu         %5hd %s"
    let body = &row[row.find("] [").unwrap() + 2..];
    assert_eq!(body.find(']'), Some(8), "{body}");
    assert!(dm.contains("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=stress-ng-vm,pid="));
    // 6.x: the reaper waits 2 s (OOM_REAPER_DELAY) and finds the victim gone: no line.
    assert!(!dm.contains("oom_reaper"), "{dm}");
    // The console (before dmesg) shows only the pr_err line; the report is not on it.
    let console = t.split("# dmesg\n").next().unwrap();
    assert!(console.contains("Out of memory: Killed process"));
    assert!(!console.contains("Mem-Info"));
    // stress-ng restarts a worker the OOM killer took and completes the run.
    assert!(console.contains("stress-ng-vm: assuming killed by OOM killer, restarting again (instance"), "{console}");
    // At the timeout the workers are signalled and the parent waits for them: each tears
    // down its 5 GiB (1,310,720 pages at page_cache_ns, 120 ns: 0.157 s) first.
    assert!(console.contains("successful run completed in 20.16s"), "{console}");
    // Mem-Info's continuation lines are indented under the text, after the time stamp.
    let cont = dm.lines().find(|l| l.trim_start().starts_with("active_file:")).expect("continuation");
    assert!(cont.starts_with(&" ".repeat(16)) && !cont.starts_with(&" ".repeat(17)), "{cont:?}");
}

#[test]
fn oom_lines_have_the_shape_of_a_real_6x_report() {
    let t = oom_run();
    let rl = real("dmesg-oom-6.18.txt");
    let strip = |l: &str| l[l.find("] ").unwrap() + 2..].to_string();
    for key in ["Out of memory: Killed process", "Free swap  =", "Total swap =", "pages RAM", "pages reserved", "pages HighMem/MovableOnly", "total pagecache pages", "pages in swap cache", "Tasks state", "Mem-Info:"] {
        let ours = strip(find(&t, key));
        let theirs = strip(find(&rl, key));
        // Process names differ; compare the rest.
        let norm = |s: &str| shape(s).replace("(run)", "(X)").replace("(stress-ng-vm)", "(X)");
        assert_eq!(norm(&ours), norm(&theirs), "{key}");
    }
    let oc = |l: &str| {
        let l = strip(l);
        l[..l.find("task_memcg=").unwrap()].to_string()
    };
    assert_eq!(oc(find(&t, "oom-kill:")), oc(find(&rl, "oom-kill:")));
    // The invoked line: 6.18 adds __GFP_COMP to the mask (large folios); the rest agrees.
    let inv = |l: &str| shape(&strip(l)[strip(l).find(" invoked").unwrap()..]).replace("|__GFP_COMP", "").replace("NxNcca", "Nx100cca");
    let ours = inv(find(&t, "invoked oom-killer"));
    assert!(ours.starts_with(" invoked oom-killer: gfp_mask=Nx"), "{ours}");
    assert!(ours.ends_with("(GFP_HIGHUSER_MOVABLE), order=N, oom_score_adj=N"), "{ours}");
}

#[test]
fn swapon_and_drop_caches_are_logged_as_the_kernel_logs_them() {
    let r = run_on(
        "fallocate -l 1G /swapfile\nchmod 600 /swapfile\nmkswap /swapfile\nswapon /swapfile\nswapon --show\nswapon -s\necho 3 > /proc/sys/vm/drop_caches\ndmesg\nfree -h\n",
        "default",
        &[],
    );
    let t = &r.transcript;
    let rl = real("dmesg-oom-6.18.txt");
    let add = find(t, "swap on /swapfile");
    // The default machine's disk is an SSD: SWP_SOLIDSTATE, "SS".
    assert!(add.ends_with("Adding 1048572k swap on /swapfile.  Priority:-3 extents:1 across:1048572k SS"), "{add:?}");
    assert_eq!(shape(&add[15..]).trim_end_matches("SS"), shape(&find(&rl, "Adding ")[15..]));
    let dc = find(t, "drop_caches: 3");
    assert_eq!(shape(&dc[15..]), shape(&find(&rl, "drop_caches")[15..]));
    // util-linux --show: widths from the cells.
    assert!(t.contains("# swapon --show\nNAME      TYPE       SIZE USED PRIO\n/dev/sdb  partition    2G   0B   -2\n/swapfile file      1024M   0B   -3\n"), "{t}");
    let hdr = real("proc-swaps-empty-6.18.txt");
    assert!(t.contains(&format!("# swapon -s\n{hdr}")), "{t}");
    assert!(t.contains("\n/swapfile                               file\t\t1048572\t\t0\t\t-3\n"), "{t}");
    assert!(find(t, "Swap:").contains("3.0Gi"), "{t}");
}

#[test]
fn ps_and_uptime_match_procps_layouts() {
    let r = run_on("memhog --active 0.1 100M &\nsleep 2\nps aux\nps -eo pid,ppid,comm,args,rss,vsz,%mem,%cpu,stat,etime,time --sort=-rss\nuptime\nnproc\nps -p 1 -o pid=,comm=\n", "default", &[]);
    let t = &r.transcript;
    let aux_hdr = real("ps-aux-header.txt");
    assert!(t.contains(&format!("# ps aux\n{aux_hdr}")), "{t}");
    let eo_hdr = real("ps-eo-header.txt");
    assert!(t.contains(&eo_hdr), "{t}");
    // The memhog row: RSS about 100 MiB, on pts/0, not the foreground job.
    let row = t.lines().find(|l| l.contains("pts/0") && l.contains("memhog")).expect("memhog row");
    let cols: Vec<&str> = row.split_whitespace().collect();
    let rss: u64 = cols[5].parse().unwrap();
    assert!((100_000..110_000).contains(&rss), "{row}");
    assert_eq!(cols[6], "pts/0");
    // --sort=-rss: init (the idle system) first, then memhog.
    let sorted: Vec<&str> = t.split("--sort=-rss\n").nth(1).unwrap().lines().skip(1).take(2).collect();
    assert!(sorted[0].contains("systemd") && sorted[1].contains("memhog"), "{sorted:?}");
    let up = find(t, " up ");
    assert_eq!(shape(up), " N:N:N up N min,  N user,  load average: N.N, N.N, N.N", "{up}");
    assert!(t.contains("# nproc\n4\n") || t.contains("# nproc\n"), "{t}");
    assert!(t.contains("# ps -p 1 -o pid=,comm=\n    1 systemd\n"), "{t}");
}

#[test]
fn kill_by_job_ends_the_task_and_frees_its_memory() {
    let r = run_on("memhog --active 0.1 200M &\nsleep 2\nkill -9 %1\nsleep 1\nps -C memhog\ncat /proc/meminfo\n", "default", &[]);
    let t = &r.transcript;
    assert!(!t.lines().any(|l| l.contains("pts/0") && l.contains("memhog")), "{t}");
    let r2 = run_on("memhog --active 0.1 200M &\nsleep 2\ncat /proc/meminfo\n", "default", &[]);
    let anon = |s: &str| -> u64 { find(s, "AnonPages:").split_whitespace().nth(1).unwrap().parse().unwrap() };
    assert!(anon(&r2.transcript) > anon(t) + 150_000, "killing freed its 200 MiB");
}

#[test]
fn proc_files_have_the_fields_of_the_era() {
    let r = run_on("memhog --active 0.1 50M &\nsleep 1\ncat /proc/meminfo\ncat /proc/5/status\ncat /proc/5/smaps_rollup\ncat /proc/5/io\ncat /proc/loadavg\n", "default", &[]);
    let t = &r.transcript;
    let keys = |s: &str| s.lines().filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string())).collect::<Vec<_>>();
    // Every meminfo field we print is in the real 6.x file, in the same order.
    let real_keys = keys(&real("proc-meminfo-6.18.txt"));
    // HardwareCorrupted needs CONFIG_MEMORY_FAILURE (Debian has it; the recording host not).
    let ours: Vec<String> = keys(t.split("# cat /proc/meminfo\n").nth(1).unwrap().split("# ").next().unwrap()).into_iter().filter(|k| k != "HardwareCorrupted").collect();
    let mut pos = 0;
    for k in &ours {
        let i = real_keys[pos..].iter().position(|r| r == k).unwrap_or_else(|| panic!("{k} not in the real meminfo after {:?}", real_keys.get(pos)));
        pos += i + 1;
    }
    assert!(ours.len() >= 50, "{ours:?}");
    // smaps_rollup and io: the real key lists.
    let sr = t.split("smaps_rollup\n").nth(1).unwrap().split("# ").next().unwrap();
    assert_eq!(keys(sr)[1..], keys(&real("proc-pid-smaps_rollup-6.18.txt"))[1..]);
    let io = t.split("/io\n").nth(1).unwrap().split("# ").next().unwrap();
    assert_eq!(keys(io), keys(&real("proc-pid-io-6.18.txt")));
    // status: VmRSS = RssAnon + RssFile + RssShmem, about 50 MiB anonymous.
    let st = t.split("/status\n").nth(1).unwrap();
    let kb = |k: &str| -> u64 { find(st, &format!("{k}:")).split_whitespace().nth(1).unwrap().parse().unwrap() };
    assert_eq!(kb("VmRSS"), kb("RssAnon") + kb("RssFile") + kb("RssShmem"));
    assert!((50_000..52_000).contains(&kb("RssAnon")), "{st}");
    let la = t.split("# cat /proc/loadavg\n").nth(1).unwrap().lines().next().unwrap();
    assert_eq!(shape(la), "N.N N.N N.N N/N N", "{la}");
}

#[test]
fn older_eras_print_their_own_files() {
    let r = run_on("cat /proc/meminfo\ncat /proc/swaps\n", "seed-002", &[]);
    assert!(r.transcript.contains("        total:    used:    free:  shared: buffers:  cached:\n"));
    assert!(!r.transcript.contains("MemAvailable"));
    let r = run_on("cat /proc/meminfo\n", "ml110-g6", &[]);
    assert!(!r.transcript.contains("MemAvailable") && r.transcript.contains("AnonHugePages:"));
    // 2.6.39's OOM report.
    let r = run_on("swapoff -a\nmemhog 1900M\ndmesg\n", "ml110-g6", &[]);
    let t = &r.transcript;
    assert!(t.contains("memhog invoked oom-killer: gfp_mask=0x200da, order=0, oom_adj=0, oom_score_adj=0"), "{t}");
    assert!(t.contains("] [ pid ]   uid  tgid total_vm      rss cpu oom_adj oom_score_adj name\n"));
    assert!(t.contains("Out of memory: Kill process ") && t.contains(" or sacrifice child"));
    assert!(find(t, "] Killed process").contains("total-vm:"));
    assert!(!t.contains("oom-kill:constraint"));
}

#[test]
fn dsync_writes_wait_for_the_device_per_block() {
    let r = run_on(
        "dd if=/dev/zero of=/root/a bs=4k count=2000 oflag=dsync\ndd if=/dev/zero of=/root/b bs=4k count=2000\n",
        "default",
        &[],
    );
    let rates: Vec<f64> = r.transcript.lines().filter_map(parse_dd_copied).map(|(b, s, ..)| b as f64 / s).collect();
    assert_eq!(rates.len(), 2);
    // Each dsync block pays at least the device's write latency; the buffered copy pays a
    // memory copy per block.
    assert!(rates[1] > rates[0] * 5.0, "{rates:?}");
}

#[test]
fn files_get_their_sizes_without_touching_the_page_cache() {
    let r = run_on("fallocate -l 64M /root/f\ntruncate -s 32M /root/g\ndu -s /root/f /root/g\nls -l /root/f /root/g\ncat /proc/meminfo\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("65536\t/root/f\n0\t/root/g\n"), "{t}");
    assert!(t.contains("67108864") && t.contains("33554432"), "{t}");
}

#[test]
fn bad_options_name_the_line_and_what_is_accepted() {
    for (script, want) in [
        ("dmesg -H\n", "t.sh:1: dmesg: -H"),
        ("true\nps -o foo\n", "t.sh:2: ps: error: unknown user-defined format specifier \"foo\""),
        ("stress-ng --vm 1 --vm-method prime-incdec\n", "is not modelled"),
        ("stress --cpu 2\n", "only --vm workers are modelled"),
        ("fallocate /x\n", "fallocate: no length argument specified"),
        ("dmesg --level=loud\n", "unknown level 'loud'"),
        ("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled\n", "are not modelled"),
    ] {
        let e = common::run_text("t.sh", script).err().unwrap_or_else(|| panic!("{script} was accepted")).to_string();
        assert!(e.contains(want), "{script}: {e}");
    }
    // Reads that exist: THP state and compaction are accepted.
    let r = run_on("cat /sys/kernel/mm/transparent_hugepage/enabled\necho 1 > /proc/sys/vm/compact_memory\n", "default", &[]);
    assert!(r.transcript.contains("always madvise [never]\n"));
    assert_eq!(r.exit_status, 0);
}

#[test]
fn dmesg_clear_and_levels() {
    let r = run_on("echo 1 > /proc/sys/vm/drop_caches\ndmesg -c\ndmesg\necho 1 > /proc/sys/vm/drop_caches\ndmesg -x\ndmesg -t --level=err\ndmesg -C\ndmesg\n", "default", &[]);
    let t = &r.transcript;
    let after_c = t.split("# dmesg -c\n").nth(1).unwrap();
    assert!(after_c.starts_with("[") && after_c.contains("# dmesg\n# echo"), "{t}");
    assert!(t.contains("kern  :info  : ["), "{t}");
    assert!(t.contains("# dmesg -t --level=err\n# dmesg -C\n# dmesg\n"), "{t}");
}

#[test]
fn stress_fails_when_a_worker_is_killed() {
    let r = run_on("swapoff -a\nstress --vm 2 --vm-bytes 4G --timeout 20s\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("stress: info: [") && t.contains("] dispatching hogs: 0 cpu, 0 io, 2 vm, 0 hdd"), "{t}");
    assert!(t.contains("<-- worker") && t.contains("got signal 9"), "{t}");
    assert!(t.contains("failed run completed in"), "{t}");
}

#[test]
fn tutorials_run_up_to_their_pipes() {
    // The tutorials use pipes (dmesg | tail); run the same commands without them.
    for name in ["tutorial-swapfile.sh", "tutorial-oom.sh", "tutorial-dsync.sh"] {
        let p = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&p).unwrap();
        let unpiped: String = text.lines().map(|l| l.split(" | ").next().unwrap().to_string() + "\n").collect();
        let r = run_on(&unpiped, "default", &[]);
        assert_eq!(r.exit_status, 0, "{name}:\n{}", r.transcript);
    }
}

#[test]
fn fincore_vmtouch_and_pmap_read_the_page_cache_and_the_task() {
    let r = run_on(
        "dd if=/dev/zero of=/root/f bs=1M count=8 status=none\nfincore /root/f\nvmtouch -v /root/f\ndd if=/root/f of=/dev/null bs=1M iflag=nocache status=none\nsync\ndd if=/root/f of=/dev/null bs=1M iflag=nocache status=none\nfincore /root/f\nmemhog --active 0.1 40M &\nsleep 1\npmap -x 12\n",
        "default",
        &[],
    );
    let t = &r.transcript;
    // util-linux's table, as recorded: "RES PAGES SIZE FILE" / " 8M  2048   8M /tmp/fc.bin".
    assert!(t.contains("# fincore /root/f\nRES PAGES SIZE FILE\n 8M  2048   8M /root/f\n"), "{t}");
    assert!(t.contains(&format!("/root/f\n[{}] 2048/2048\n\n           Files: 1\n     Directories: 0\n  Resident Pages: 2048/2048  8M/8M  100%\n", "O".repeat(60))), "{t}");
    // Once clean, iflag=nocache drops the file: nothing resident.
    assert!(t.contains("RES PAGES SIZE FILE\n 0B     0   8M /root/f\n"), "{t}");
    let pm = t.split("# pmap -x 12\n").nth(1).unwrap();
    assert!(pm.contains("Address           Kbytes     RSS   Dirty Mode  Mapping\n"), "{pm}");
    let anon = find(pm, "[ anon ]");
    let rss: u64 = anon.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((40_000..42_000).contains(&rss), "{pm}");
    assert!(pm.contains("---------------- ------- ------- ------- \ntotal kB "), "{pm}");
}

/// ionice runs its command on every era with ioprio_set; the elevators that serve by class
/// (6.x mq-deadline, 2.6.39 CFQ) accept classes, and CFQ refuses levels it would give
/// slices of their own length; 2.4 has no ioprio_set.
#[test]
fn ionice_follows_each_eras_elevator() {
    // seed-000: 6.x, two vCPUs: virtio-blk has two queues, so no elevator.
    let r = run_on("cat /sys/block/vda/queue/scheduler\nionice -c3 dd if=/dev/zero of=/root/f bs=1M count=8\necho $?\nionice -c 3 -n 2 true\n", "seed-000", &[]);
    let t = &r.transcript;
    assert!(t.contains("# cat /sys/block/vda/queue/scheduler\n[none] mq-deadline \n"), "{t}");
    assert!(t.contains("8388608 bytes (8.4 MB, 8.0 MiB) copied") && t.contains("# echo $?\n0\n"), "{t}");
    assert!(t.contains("ionice: ignoring given class data for idle class\n"), "{t}");
    // seed-003: 5.8 on NVMe.
    let r = run_on("ionice -c2 -n7 true\necho $?\ncat /sys/block/nvme0n1/queue/scheduler\n", "seed-003", &[]);
    assert!(r.transcript.contains("# echo $?\n0\n") && r.transcript.contains("[none] mq-deadline \n"), "{}", r.transcript);
    // The default machine: 6.x's mq-deadline on a SATA disk serves by class; levels alike.
    let r = run_on("cat /sys/block/sda/queue/scheduler\nionice -c3 true\nionice -c2 -n7 true\necho $?\n", "default", &[]);
    assert!(r.transcript.contains("none [mq-deadline] \n") && r.transcript.contains("# echo $?\n0\n"), "{}", r.transcript);
    // 2.6.39: CFQ serves by class; a level of its own is not modelled.
    let r = run_on("ionice -c3 true\necho $?\nionice -c1 true\ncat /sys/block/sda/queue/scheduler\n", "ml110-g6", &[]);
    assert!(r.transcript.contains("# echo $?\n0\n") && r.transcript.contains("noop deadline [cfq] \n"), "{}", r.transcript);
    let o = memtwin_scenario::RunOptions { script_path: Some("t.sh".into()), script_text: Some("ionice -c2 -n7 true\n".into()), machine: "ml110-g6".into(), ..Default::default() };
    let e = memtwin_scenario::run(&o).err().expect("refused on CFQ").to_string();
    assert!(e.contains("t.sh:1:") && e.contains("/dev/sda uses CFQ (linux-2.6.39)") && e.contains("cfq_prio_slice"), "{e}");
    // 2.4: no such system call; the command does not run.
    let r = run_on("ionice -c3 dd if=/dev/zero of=/root/f bs=1M count=1\necho $?\n", "optiplex-gx115", &[]);
    assert!(r.transcript.contains("ionice: ioprio_set failed: Function not implemented\n# echo $?\n1\n"), "{}", r.transcript);
    // Bad options are script errors.
    for (script, want) in [("ionice -c 9 true\n", "unknown scheduling class: '9'"), ("ionice -c2 -n 8 true\n", "invalid class data argument: '8'"), ("ionice -P 1\n", "-P (process groups)"), ("ionice -c3\n", "give a command")] {
        let e = common::run_text("t.sh", script).err().expect("refused").to_string();
        assert!(e.contains("t.sh:1:") && e.contains(want), "{script}: {e}");
    }
}

#[test]
fn sysctl_a_lists_the_eras_keys_with_the_models_values() {
    let r = run_on("sysctl -w vm.swappiness=10\nsysctl -a\n", "default", &[]);
    let t = r.transcript.split("# sysctl -a\n").nth(1).unwrap();
    assert!(t.contains("vm.swappiness = 10\n") && t.contains("vm.dirty_ratio = 20\n"), "{t}");
    let names: Vec<&str> = t.lines().map(|l| l.split(" = ").next().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    // Every vm key is one a real 6.x kernel has (memory_failure_* need CONFIG_MEMORY_FAILURE,
    // which the recording host lacks).
    let real_vm = real("sysctl-a-vm-6.18.txt");
    let real_names: Vec<&str> = real_vm.lines().map(|l| l.split(" = ").next().unwrap()).collect();
    let vm: Vec<&&str> = names.iter().filter(|n| n.starts_with("vm.") && !n.starts_with("vm.memory_failure")).collect();
    for n in &vm {
        assert!(real_names.contains(n), "{n} is not a 6.x key");
    }
    assert!(vm.len() >= 44, "{vm:?}");
    // 2.4 has its own short list and no dirty_* keys.
    let r = run_on("sysctl -a\n", "seed-002", &[]);
    assert!(r.transcript.contains("vm.bdflush = ") && !r.transcript.contains("vm.dirty_ratio"), "{}", r.transcript);
}

#[test]
fn keys_an_era_did_not_have_are_missing_files() {
    let r = run_on("sysctl -w vm.dirty_ratio=5\necho 5 > /proc/sys/vm/dirty_ratio\ncat /proc/sys/vm/dirty_ratio\ncat /proc/sys/vm/bdflush\n", "seed-002", &[]);
    let t = &r.transcript;
    assert!(t.contains("sysctl: cannot stat /proc/sys/vm/dirty_ratio: No such file or directory\n"), "{t}");
    assert!(t.contains("bash: /proc/sys/vm/dirty_ratio: No such file or directory\n"), "{t}");
    assert!(t.contains("cat: /proc/sys/vm/dirty_ratio: No such file or directory\n"), "{t}");
    let r = run_on("sysctl -w vm.dirty_ratio=5\n", "default", &[]);
    assert!(r.transcript.contains("vm.dirty_ratio = 5\n"));
    // drop_caches came with 2.6.16: on 2.4 the page cache stays, the write fails.
    let r = run_on("dd if=/dev/zero of=f bs=1M count=8 status=none\nsync\necho 3 > /proc/sys/vm/drop_caches\necho $?\nsysctl -w vm.drop_caches=3\nfree\n", "seed-002", &[]);
    let t = &r.transcript;
    assert!(t.contains("bash: /proc/sys/vm/drop_caches: No such file or directory\n# echo $?\n1\n"), "{t}");
    assert!(t.contains("sysctl: cannot stat /proc/sys/vm/drop_caches: No such file or directory\n"), "{t}");
    let cached: u64 = t.lines().find(|l| l.starts_with("Mem:")).unwrap().split_whitespace().nth(6).unwrap().parse().unwrap();
    assert!(cached >= 8 * 1024, "the file is still cached: {t}");
    let r = run_on("echo 3 > /proc/sys/vm/drop_caches\necho $?\n", "ml110-g6", &[]);
    assert!(r.transcript.contains("# echo $?\n0\n"), "2.6.39 has it: {}", r.transcript);
}

#[test]
fn free_prints_the_procps_of_the_era() {
    let old = run_on("free\n", "ml110-g6", &[]).transcript;
    assert!(old.contains("             total       used       free     shared    buffers     cached\n"), "{old}");
    assert!(old.contains("-/+ buffers/cache:"), "{old}");
    let new = run_on("free\n", "default", &[]).transcript;
    assert!(new.contains("buff/cache   available"), "{new}");
}

#[test]
fn sar_reports_memory_paging_and_swap_per_interval() {
    let r = run_on("sar -r -S 1 2 &\nsleep 1.5\nmemhog --active 0.1 1G &\nsleep 2\nsar -B -W 1 1\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("Linux 6.1.0-13-amd64 (memtwin) \t11/23/2026 \t_x86_64_\t(4 CPU)\n\n"), "{t}");
    assert!(t.contains("10:00:00    kbmemfree   kbavail kbmemused  %memused kbbuffers  kbcached  kbcommit   %commit  kbactive   kbinact   kbdirty\n"), "{t}");
    assert!(t.contains("10:00:00    kbswpfree kbswpused  %swpused  kbswpcad   %swpcad\n"), "{t}");
    assert!(t.contains("Average:    kbmemfree"), "{t}");
    // memhog's 1 GiB shows as used memory between the first and the second row.
    let used: Vec<u64> = t.lines().filter(|l| l.starts_with("10:00:0") && !l.contains("kbmem") && l.split_whitespace().count() == 12).map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap()).collect();
    assert_eq!(used.len(), 2, "{t}");
    assert!(used[1] > used[0] + 900_000, "{used:?}");
    for (script, want) in [("sar -r\n", "sadc's daily data file"), ("sar -u 1 1\n", "not modelled"), ("sar -r 1\n", "interval and a count")] {
        let e = common::run_text("t.sh", script).err().expect("refused").to_string();
        assert!(e.contains("t.sh:1:") && e.contains(want), "{e}");
    }
}

#[test]
fn sync_of_a_file_writes_that_file_only() {
    let r = run_on(
        "dd if=/dev/zero of=/root/a bs=1M count=64 status=none\ndd if=/dev/zero of=/root/b bs=1M count=64 status=none\nsync /root/a\ncat /proc/meminfo\nsync -f /root/b\ncat /proc/meminfo\n",
        "default",
        &[],
    );
    let t = &r.transcript;
    let dirty: Vec<u64> = t.lines().filter(|l| l.starts_with("Dirty:")).map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    // After `sync /root/a` only b's 64 MiB stay dirty; syncfs writes the rest.
    assert!((60_000..=65_536).contains(&dirty[0]), "{dirty:?}");
    assert_eq!(dirty[1], 0, "{dirty:?}");
}

#[test]
fn cp_r_copies_a_tree_through_the_page_cache() {
    let r = run_on(
        "mkdir /root/d\nmkdir /root/d/sub\ndd if=/dev/zero of=/root/d/a bs=1M count=3 status=none\ndd if=/dev/zero of=/root/d/sub/b bs=1M count=5 status=none\ncp -r /root/d /root/e\ndu -s /root/e\ncp /root/d /root/x\nmkdir /root/t\ncp -r /root/d /root/t\ndu -s /root/t/d\n",
        "default",
        &[],
    );
    let t = &r.transcript;
    // 8 MiB of data and two 4 KiB directories.
    assert!(t.contains("8200\t/root/e\n"), "{t}");
    assert!(t.contains("cp: -r not specified; omitting directory '/root/d'\n"), "{t}");
    assert!(t.contains("8200\t/root/t/d\n"), "{t}");
}

#[test]
fn the_24_log_has_no_time_stamps() {
    let r = run_on("dd if=/dev/zero of=/swapfile bs=1M count=64 status=none\nmkswap /swapfile\nswapon /swapfile\ndmesg\ndmesg -T\n", "optiplex-gx115", &[]);
    let t = &r.transcript;
    assert!(t.contains("# dmesg\nAdding Swap: "), "{t}");
    assert!(t.contains("k swap-space (priority -2)\n"), "{t}");
    assert!(t.contains("dmesg: -T: the 2.4 kernel's log has no time stamps\n"), "{t}");
}

/// /proc/cpuinfo: one block per CPU from the machine's CPU identity, in each era's layout;
/// a machine file that names no CPU shows a generic virtual CPU.
#[test]
fn cpuinfo_shows_the_machines_cpu_in_the_eras_layout() {
    let r = run_on("grep -c ^processor /proc/cpuinfo\nnproc\ncat /proc/cpuinfo\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("# grep -c ^processor /proc/cpuinfo\n4\n# nproc\n4\n"), "{t}");
    let c = t.split("# cat /proc/cpuinfo\n").nth(1).unwrap();
    let first = c.split("\n\n").next().unwrap();
    let keys: Vec<&str> = first.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "processor", "vendor_id", "cpu family", "model", "model name", "stepping", "cpu MHz", "cache size", "physical id", "siblings", "core id", "cpu cores", "apicid",
            "initial apicid", "fpu", "fpu_exception", "cpuid level", "wp", "flags", "bugs", "bogomips", "clflush size", "cache_alignment", "address sizes", "power management:"
        ],
        "{first}"
    );
    assert!(first.contains("model name\t: Intel(R) Xeon(R) CPU E3-1220 v5 @ 3.00GHz\n"), "{first}");
    assert!(first.contains("cpu MHz\t\t: 3000.000\ncache size\t: 8192 KB\n") && first.contains("bogomips\t: 6000.00\n"), "{first}");
    assert!(c.contains("processor\t: 3\n") && c.contains("core id\t\t: 3\ncpu cores\t: 4\n"), "{c}");
    // Hyper-threads: siblings counts threads of the package, cpu cores its cores.
    let r = run_on("cat /proc/cpuinfo\n", "seed-003", &[]);
    assert_eq!(r.transcript.matches("siblings\t: 8\ncore id").count(), 8, "{}", r.transcript);
    assert!(r.transcript.contains("processor\t: 4\n") && r.transcript.contains("cpu cores\t: 4\napicid\t\t: 1\n"), "{}", r.transcript);
    // 2.6.39: no bugs line.
    let r = run_on("cat /proc/cpuinfo\n", "ml110-g6", &[]);
    assert!(r.transcript.contains("X3430  @ 2.40GHz") && !r.transcript.contains("bugs"), "{}", r.transcript);
    // 2.4: the i386 layout, no topology, a blank line after bogomips.
    let r = run_on("cat /proc/cpuinfo\n", "optiplex-gx115", &[]);
    assert!(r.transcript.contains("model name\t: Pentium III (Coppermine)\n"), "{}", r.transcript);
    assert!(r.transcript.contains("cache size\t: 256 KB\nfdiv_bug\t: no\nhlt_bug\t\t: no\n") && !r.transcript.contains("physical id"), "{}", r.transcript);
    assert!(r.transcript.contains("\nbogomips\t: 2000.00\n\n"), "{}", r.transcript);
    // A machine file without a CPU identity.
    let dir = std::env::temp_dir().join(format!("memtwin-cpuinfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bare.toml");
    std::fs::write(&path, "ram = \"1G\"\ncpus = 2\n[[disk]]\nname = \"vda\"\nsize = \"8G\"\npreset = \"virtio\"\n[[mount]]\nsource = \"/dev/vda\"\nat = \"/\"\nfstype = \"ext4\"\n").unwrap();
    let r = run_on("cat /proc/cpuinfo\n", path.to_str().unwrap(), &[]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(r.transcript.contains("model name\t: QEMU Virtual CPU version 2.5+\n") && r.transcript.contains("processor\t: 1\n"), "{}", r.transcript);
}

/// truncate's size modifiers (coreutils: + - < > / %), and a shrinking truncate that waits
/// for the direct I/O in flight on the file (inode_dio_wait). On this host's 6.18 (ext4), a
/// 4 KiB shrink of a 512 MiB file took 0.00 s alone and 0.34-0.44 s while a 500 MiB
/// O_DIRECT read of it, started 50 ms before, was in flight (the read took 0.41-0.54 s).
#[test]
fn truncate_takes_size_modifiers_and_waits_for_direct_io_on_the_file() {
    let r = run_on(
        "dd if=/dev/zero of=/root/f bs=1M count=10 status=none
truncate -s -4096 /root/f
stat -c %s /root/f
truncate -s +1M /root/f
stat -c %s /root/f
truncate -s %4M /root/f
stat -c %s /root/f
truncate -s /3M /root/f
stat -c %s /root/f
truncate -s '<1M' /root/f
stat -c %s /root/f
truncate -s '>2M' /root/f
stat -c %s /root/f
dd if=/dev/zero of=/root/g bs=64M count=8 oflag=direct status=none
time truncate -s -4096 /root/g
dd if=/root/g of=/dev/null bs=500M count=1 iflag=direct &
sleep 0.05
time truncate -s -4096 /root/g
wait
",
        "default",
        &[],
    );
    let t = &r.transcript;
    let size = |cmd_no: usize| -> u64 {
        let all: Vec<&str> = t
            .match_indices("# stat -c %s /root/f\n")
            .map(|(i, _)| &t[i..])
            .collect();
        all[cmd_no].lines().nth(1).unwrap().trim().parse().unwrap()
    };
    let mib = 1u64 << 20;
    assert_eq!(size(0), 10 * mib - 4096, "{t}");
    assert_eq!(size(1), 11 * mib - 4096);
    assert_eq!(size(2), 12 * mib, "rounded up to a multiple of 4M");
    assert_eq!(size(3), 12 * mib, "already a multiple of 3M");
    assert_eq!(size(4), mib, "at most 1M");
    assert_eq!(size(5), 2 * mib, "at least 2M");
    let secs = |lines: Vec<&str>| -> f64 {
        let l = lines
            .iter()
            .find(|l| l.starts_with("real"))
            .expect("real line");
        let (m, s) = l["real".len()..]
            .trim()
            .trim_end_matches('s')
            .split_once('m')
            .unwrap();
        m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
    };
    let all: Vec<&str> = t
        .match_indices("# time truncate -s -4096 /root/g\n")
        .map(|(i, _)| &t[i..])
        .collect();
    assert_eq!(all.len(), 2, "{t}");
    // A command's output: the lines after its "# CMD" line, up to the next command.
    fn output(at: &str) -> Vec<&str> {
        at.lines().skip(1).take_while(|l| !l.starts_with("# ")).collect()
    }
    let (alone, during) = (secs(output(all[0])), secs(output(all[1])));
    // dd's summary: "... copied, S s, R MB/s".
    let summary = t
        .lines()
        .find(|l| l.contains(" copied, ") && l.starts_with("524288000 bytes"))
        .expect("dd's summary");
    let read: f64 = summary
        .split(" copied, ")
        .nth(1)
        .unwrap()
        .split(" s,")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(alone < 0.01, "a shrink alone: {alone} s\n{t}");
    // The shrink waits for the rest of the read: the read's time less the 50 ms head start.
    assert!(
        during > 0.5 * (read - 0.05) && during <= read,
        "shrink during the read {during} s, the read {read} s\n{t}"
    );
}
