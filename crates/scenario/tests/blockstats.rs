//! The block layer's accounting (/proc/diskstats) and the tools that read it: iostat,
//! vmstat -d/-D. Layouts are compared with the real tools' recordings
//! (tests/data/real-tools/); values follow from the simulated requests.

mod common;
use common::run_on;

fn real(name: &str) -> String {
    let p = format!("{}/../../tests/data/real-tools/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn section<'a>(t: &'a str, cmd: &str) -> &'a str {
    let start = t.find(&format!("# {cmd}\n")).unwrap_or_else(|| panic!("no '{cmd}' in:\n{t}")) + cmd.len() + 3;
    let rest = &t[start..];
    &rest[..rest.find("\n# ").map(|i| i + 1).unwrap_or(rest.len())]
}

/// 256 MiB written with O_DIRECT: exactly 524288 sectors in write requests, no reads, and
/// the device busy (io_ticks) for no longer than the run.
#[test]
fn diskstats_count_the_requests_per_direction() {
    let r = run_on("dd if=/dev/zero of=f bs=1M count=256 oflag=direct\ncat /proc/diskstats\ncat /proc/uptime\n", "default", &[]);
    let ds = section(&r.transcript, "cat /proc/diskstats");
    let sda: Vec<u64> = ds.lines().find(|l| l.contains(" sda ")).unwrap().split_whitespace().skip(3).map(|v| v.parse().unwrap()).collect();
    assert_eq!(sda.len(), 17, "6.x: 11 counters, 4 discard, 2 flush: {ds}");
    assert_eq!(&sda[0..4], &[0, 0, 0, 0], "no reads: {ds}");
    assert_eq!(sda[6], 256 * 1024 * 1024 / 512, "sectors written: {ds}");
    assert!(sda[4] >= 256, "at least one request per 1 MiB block: {ds}");
    let up: f64 = section(&r.transcript, "cat /proc/uptime").split_whitespace().next().unwrap().parse().unwrap();
    let io_ticks = sda[9] as f64 / 1000.0;
    assert!(io_ticks > 0.0 && io_ticks <= up + 0.01, "io_ticks {io_ticks} s within uptime {up} s");
    // time_in_queue is the sum of the requests' times: at least the time busy.
    assert!(sda[10] >= sda[9] && sda[10] == sda[3] + sda[7] + sda[14] + sda[16], "{ds}");
    assert!(ds.lines().any(|l| l.starts_with("   8      16 sdb 0 0 0 0")), "the idle swap disk: {ds}");
}

#[test]
fn diskstats_fields_follow_the_era() {
    let n = |machine: &str, sets: &[&str]| -> usize {
        let r = run_on("cat /proc/diskstats\n", machine, sets);
        section(&r.transcript, "cat /proc/diskstats").lines().next().unwrap().split_whitespace().count()
    };
    assert_eq!(n("ml110-g6", &[]), 14, "2.6.39: 11 counters");
    assert_eq!(n("default", &["kernel=linux-5.4"]), 18, "5.4: discard counters");
    assert_eq!(n("seed-003", &[]), 20, "5.8: flush counters");
    let r = run_on("cat /proc/diskstats\niostat\n", "optiplex-gx115", &[]);
    assert!(r.transcript.contains("cat: /proc/diskstats: No such file or directory"), "{}", r.transcript);
    assert!(r.transcript.contains("iostat: not modelled on Linux 2.4"), "{}", r.transcript);
}

/// iostat -x over a direct read: the header is sysstat 12.6's, the rates add up to what dd
/// read, the device is fully busy while dd reads and idle after.
#[test]
fn iostat_x_reports_the_interval_rates() {
    let r = run_on(
        "dd if=/dev/zero of=f bs=1M count=256 oflag=direct\nsleep 1\niostat -x -d -y 1 4 &\ndd if=f of=/dev/null bs=1M iflag=direct\nwait\n",
        "default",
        &[],
    );
    let t = &r.transcript;
    let rec = real("iostat-x-1-2-sysstat12.6.txt");
    let header = rec.lines().find(|l| l.starts_with("Device")).unwrap();
    assert!(t.contains("Linux 6.1.0-13-amd64 (memtwin) \t11/23/26 \t_x86_64_\t(4 CPU)\n\n"), "{t}");
    assert_eq!(t.matches(header).count(), 4, "{t}");
    let rows: Vec<Vec<f64>> = t.lines().filter(|l| l.starts_with("sda ")).map(|l| l.split_whitespace().skip(1).map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), 4, "{t}");
    // Columns: r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s wkB/s ... aqu-sz %util.
    let read_kb: f64 = rows.iter().map(|r| r[1]).sum();
    assert!((read_kb - 262144.0).abs() < 1.0, "rkB/s over 1 s intervals sum to the 256 MiB read: {read_kb}");
    for r in &rows {
        assert!((r[0] * r[5] - r[1]).abs() <= r[1] * 0.01 + 1.0, "r/s x rareq-sz = rkB/s: {r:?}");
        assert!(r[21] <= 100.0);
    }
    // dd keeps a request in flight from start to end: the first second's %util is the
    // share of it dd ran.
    let dd = section(t, "dd if=f of=/dev/null bs=1M iflag=direct");
    let secs: f64 = dd.split(" copied, ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(secs < 1.0, "{dd}");
    assert!((rows[0][21] - secs * 100.0).abs() < 2.0, "util {} vs dd's {secs} s: {t}", rows[0][21]);
    assert!(rows[0][4] > 0.0, "each read waits the device's latency: {:?}", rows[0]);
    assert_eq!(rows[3][21], 0.0, "idle after dd: {:?}", rows[3]);
}

#[test]
fn iostat_layouts_per_userland() {
    let rec = real("iostat-default-sysstat12.6.txt");
    let header = rec.lines().find(|l| l.starts_with("Device")).unwrap();
    let cpu = rec.lines().find(|l| l.starts_with("avg-cpu")).unwrap();
    let r = run_on("dd if=/dev/zero of=f bs=1M count=16 oflag=direct\niostat\n", "default", &[]);
    let out = section(&r.transcript, "iostat");
    assert!(out.contains(header) && out.contains(cpu), "{out}");
    let sda = out.lines().find(|l| l.starts_with("sda")).unwrap();
    assert!(sda.ends_with("          0      16384          0"), "kB_read kB_wrtn kB_dscd: {sda}");
    assert!(!out.contains("sdb"), "devices without I/O are left out: {out}");
    let r = run_on("dd if=/dev/zero of=f bs=1M count=16 oflag=direct\niostat -x\n", "ml110-g6", &[]);
    assert!(r.transcript.contains("Device:         rrqm/s   wrqm/s     r/s     w/s   rsec/s   wsec/s avgrq-sz avgqu-sz   await  svctm  %util\n"), "{}", r.transcript);
    assert!(r.transcript.contains("Linux 2.6.32-71.el6.x86_64 (memtwin) \t11/23/2026"), "{}", r.transcript);
    let r = run_on("iostat -x -d\n", "seed-003", &[]);
    assert!(r.transcript.contains(" dareq-sz  aqu-sz  %util\n"), "sysstat 12.2 has no flush columns: {}", r.transcript);
    let e = memtwin_scenario::run(&memtwin_scenario::RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("iostat -p ALL\n".into()),
        machine: "default".into(),
        ..Default::default()
    })
    .err()
    .expect("-p is refused");
    assert!(e.to_string().contains("t.sh:1: iostat: option -p is not modelled"), "{e}");
}

#[test]
fn vmstat_disk_reports() {
    let r = run_on("dd if=/dev/zero of=f bs=1M count=16 oflag=direct\nvmstat -d\nvmstat -D\n", "default", &[]);
    let d = section(&r.transcript, "vmstat -d");
    let rec = real("vmstat-d-4.0.2.txt");
    assert_eq!(d.lines().take(2).collect::<Vec<_>>(), rec.lines().take(2).collect::<Vec<_>>());
    assert_eq!(d.lines().nth(2).unwrap().split_whitespace().collect::<Vec<_>>()[..8], ["sda", "0", "0", "0", "0", "32", "0", "32768"], "{d}");
    let sum = section(&r.transcript, "vmstat -D");
    let rec = real("vmstat-D-4.0.2.txt");
    let labels = |s: &str| s.lines().map(|l| l[13..].to_string()).collect::<Vec<_>>();
    assert_eq!(labels(sum), labels(&rec));
    assert!(sum.starts_with("            2 disks\n"), "{sum}");
    assert!(sum.contains("        32768 written sectors\n"), "{sum}");
}

/// stat's default layout (coreutils 9.1) with the file's times from the simulated clock:
/// the write sets mtime and ctime, a later read moves atime (relatime: atime was not newer
/// than mtime), and ls -l shows the mtime.
#[test]
fn stat_default_layout_and_file_times() {
    let r = run_on("sleep 5\ndd if=/dev/zero of=f bs=4k count=1\nsleep 65\ncat f > /dev/null\nstat f\nls -l f\n", "default", &[]);
    let st = section(&r.transcript, "stat f");
    let rec = real("stat-file-9.1.txt");
    let shape = |s: &str| s.lines().map(|l| l.chars().map(|c| if c.is_ascii_digit() { '9' } else { c }).collect::<String>()).collect::<Vec<_>>();
    let (got, want) = (shape(st), shape(&rec));
    assert_eq!(got.len(), want.len(), "{st}");
    for (g, w) in got.iter().zip(&want).skip(1) {
        // The recording's file had 3 bytes; "4096" has one digit more.
        if !g.starts_with("  Size") {
            assert_eq!(g.split_whitespace().next(), w.split_whitespace().next(), "{st}");
        }
    }
    assert!(st.contains("  Size: 4096      \tBlocks: 8          IO Block: 4096   regular file\n"), "{st}");
    assert!(st.contains("\nDevice: 8,0\tInode: "), "{st}");
    assert!(st.contains("Access: (0644/-rw-r--r--)  Uid: (    0/    root)   Gid: (    0/    root)\n"), "{st}");
    let time = |label: &str| st.lines().find(|l| l.starts_with(label) && !l.contains("Uid")).unwrap()[8..].to_string();
    assert!(time("Modify:").starts_with("2026-11-23 10:00:05."), "{st}");
    assert!(time(" Birth:").starts_with("2026-11-23 10:00:05."), "{st}");
    assert_eq!(time("Modify:"), time("Change:"));
    assert!(time("Access:").starts_with("2026-11-23 10:01:10."), "read after 65 s moves atime: {st}");
    assert!(time("Access:").ends_with(" +0000"));
    assert!(section(&r.transcript, "ls -l f").contains(" 4096 Nov 23 10:00 f\n"), "{}", r.transcript);
}

/// /proc/buddyinfo: the free frames as buddy blocks; they add up to MemFree, and an idle
/// machine's free memory is mostly in the largest blocks.
#[test]
fn buddyinfo_adds_up_to_the_free_pages() {
    let r = run_on("cat /proc/buddyinfo\ncat /proc/zoneinfo\n", "default", &[]);
    let b = section(&r.transcript, "cat /proc/buddyinfo");
    assert!(b.starts_with("Node 0, zone   Normal "), "{b}");
    assert!(b.ends_with(" \n"), "frag_show_print leaves a space after each count: {b:?}");
    let counts: Vec<u64> = b.split_whitespace().skip(4).map(|v| v.parse().unwrap()).collect();
    assert_eq!(counts.len(), 11, "orders 0..10: {b}");
    let pages: u64 = counts.iter().enumerate().map(|(k, n)| n << k).sum();
    let z = section(&r.transcript, "cat /proc/zoneinfo");
    let free: u64 = z.lines().find(|l| l.trim_start().starts_with("pages free")).unwrap().split_whitespace().last().unwrap().parse().unwrap();
    assert_eq!(pages, free, "{b}");
    assert!(counts[10] << 10 > free / 2, "an idle machine's free memory is in order-10 blocks: {b}");
    let r = run_on("cat /proc/buddyinfo\n", "optiplex-gx115", &[]);
    assert!(r.transcript.contains("cat: /proc/buddyinfo: No such file or directory"), "{}", r.transcript);
}

/// The writeback thread's name per era, as ps lists it.
#[test]
fn writeback_threads_are_named_as_each_era_named_them() {
    let comms = |machine: &str| {
        let r = run_on("dd if=/dev/zero of=f bs=1M count=64\nps -e -o comm\n", machine, &[]);
        section(&r.transcript, "ps -e -o comm").to_string()
    };
    let c = comms("default");
    assert!(c.contains("\nkworker/u8:1-flush-8:0\n") || c.contains("\nkworker/u8:1+flush-8:0\n"), "6.x, 4 CPUs: {c}");
    assert!(c.contains("\nkswapd0\n"), "{c}");
    let c = comms("ml110-g6");
    assert!(c.lines().any(|l| l.starts_with("flush-8:")), "2.6.39: flush-MAJ:MIN: {c}");
    let c = comms("optiplex-gx115");
    assert!(c.contains("\nbdflush\n") && c.contains("\nkswapd\n"), "2.4: {c}");
}

/// sysctl with a value the kernel rejects: procps's message at run time, status 1, and
/// the script goes on.
#[test]
fn sysctl_bad_value_is_einval_at_run_time() {
    let r = run_on("sysctl -w vm.swappiness=-5\necho status $?\nsysctl vm.swappiness\n", "default", &[]);
    let t = &r.transcript;
    assert!(t.contains("sysctl: setting key \"vm.swappiness\": Invalid argument\n"), "{t}");
    assert!(t.contains("status 1\n"), "{t}");
    assert!(t.contains("vm.swappiness = 60\n"), "unchanged: {t}");
}

/// top's summary line carries the load average the scheduler computes (calc_global_load).
#[test]
fn top_shows_the_load_average() {
    let r = run_on("stress-ng --vm 2 --vm-bytes 64M --timeout 30s\ntop -b -n 1\n", "default", &[]);
    let top = section(&r.transcript, "top -b -n 1");
    let la = top.lines().next().unwrap().split("load average: ").nth(1).expect("load average").to_string();
    let one: f64 = la.split(',').next().unwrap().trim().parse().unwrap();
    // Two busy workers for 30 s: the 1-minute average rises towards 2 (1 - e^-0.5 of it).
    assert!(one > 0.5 && one < 2.0, "{la}");
}

/// `timeout 2 sleep 10` ends the sleep after 2 s with status 124.
#[test]
fn timeout_ends_a_sleep() {
    let r = run_on("timeout 2 sleep 10\necho status $?\ncat /proc/uptime\n", "default", &[]);
    assert!(r.transcript.contains("status 124\n"), "{}", r.transcript);
    let up: f64 = section(&r.transcript, "cat /proc/uptime").split_whitespace().next().unwrap().parse().unwrap();
    assert!((2.0..3.0).contains(&up), "{up}");
}

/// echo 1 > /proc/sys/vm/compact_memory: the free frames left between another file's
/// pages merge into larger blocks once the pages around them have moved (compact_zone);
/// each era counts it in its own /proc/vmstat items, and 2.4 has no such file.
#[test]
fn compact_memory_merges_free_frames_into_higher_orders() {
    // Two files written at once by tasks on two CPUs take alternate batches of frames (each
    // CPU refills its list with `batch` pages, 63 here: rmqueue_bulk); removing one leaves
    // holes of 63 frames between the other's pages, a free block of each order 0 to 5.
    let script = "dd if=/dev/zero of=a bs=16k count=4096 &\ndd if=/dev/zero of=b bs=16k count=4096 &\nwait\nsync\nrm a\ncat /proc/buddyinfo\necho 1 > /proc/sys/vm/compact_memory\ncat /proc/buddyinfo\ngrep -E 'compact|pgmigrate' /proc/vmstat\n";
    let orders = |b: &str| -> Vec<u64> { b.split_whitespace().skip(4).map(|v| v.parse().unwrap()).collect() };
    let r = run_on(script, "default", &[]);
    let t = &r.transcript;
    assert_eq!(r.exit_status, 0, "{t}");
    let parts: Vec<&str> = t.split("# cat /proc/buddyinfo\n").collect();
    let before = orders(parts[1].lines().next().unwrap());
    let after = orders(parts[2].lines().next().unwrap());
    let pages = |c: &[u64]| -> u64 { c.iter().enumerate().map(|(k, n)| n << k).sum() };
    assert_eq!(pages(&before), pages(&after), "migration frees a frame for each it takes: {before:?} {after:?}");
    // The holes: 16,384 pages of the removed file in runs of 63 frames.
    let small = |c: &[u64]| -> u64 { (0..6).map(|k| c[k] << k).sum() };
    assert!(before[..6].iter().all(|&n| n >= 150) && small(&before) >= 12000, "{before:?}");
    assert!(small(&after) < small(&before) / 2, "the holes have merged: {before:?} -> {after:?}");
    assert!(after[10] > before[10], "{before:?} -> {after:?}");
    let v = section(t, "grep -E 'compact|pgmigrate' /proc/vmstat");
    let get = |name: &str| -> u64 { v.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok()).unwrap_or_else(|| panic!("{name}: {v}")) };
    // The scanners meet where the file's pages below match the holes above: about half of
    // its 16384 pages move.
    let moved = get("pgmigrate_success");
    assert!((4096..=12288).contains(&moved), "{v}");
    assert_eq!(get("pgmigrate_fail"), 0);
    assert!(get("compact_isolated") >= 2 * moved, "both scanners count their isolations: {v}");
    assert!(get("compact_migrate_scanned") > moved && get("compact_free_scanned") > moved, "{v}");
    assert!(!v.contains("compact_pages_moved"), "{v}");
    // 2.6.39 counts the same work as compact_blocks_moved / compact_pages_moved.
    let r = run_on(script, "ml110-g6", &[]);
    let v = section(&r.transcript, "grep -E 'compact|pgmigrate' /proc/vmstat");
    assert!(!v.contains("pgmigrate") && v.contains("compact_pagemigrate_failed 0\n"), "{v}");
    let moved = v.lines().find_map(|l| l.strip_prefix("compact_pages_moved ")).unwrap().parse::<u64>().unwrap();
    assert!(moved > 1000, "{v}");
    // 2.4: no compaction, no file.
    let r = run_on("echo 1 > /proc/sys/vm/compact_memory\n", "optiplex-gx115", &[]);
    assert!(r.transcript.contains("bash: /proc/sys/vm/compact_memory: No such file or directory\n"), "{}", r.transcript);
}

/// /proc/pagetypeinfo: the era's layout; free blocks per type add up to buddyinfo's per
/// order; every pageblock has one type; kernel allocations claim blocks for themselves.
#[test]
fn pagetypeinfo_counts_free_blocks_by_migrate_type() {
    let nums = |l: &str, skip: usize| -> Vec<u64> { l.split_whitespace().skip(skip).map(|v| v.parse().unwrap()).collect() };
    let r = run_on("cat /proc/pagetypeinfo\ncat /proc/buddyinfo\n", "default", &[]);
    let p = section(&r.transcript, "cat /proc/pagetypeinfo");
    let lines: Vec<&str> = p.lines().collect();
    assert_eq!(&lines[..3], &["Page block order: 9", "Pages per block:  512", ""], "{p}");
    assert_eq!(lines[3], "Free pages count per migrate type at order       0      1      2      3      4      5      6      7      8      9     10 ");
    let types: Vec<&str> = lines[4..10].iter().map(|l| l.split_whitespace().nth(5).unwrap()).collect();
    assert_eq!(types, ["Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate"], "{p}");
    assert!(lines[4].starts_with("Node    0, zone   Normal, type    Unmovable "), "{p}");
    let mut per_order = vec![0u64; 11];
    for l in &lines[4..10] {
        for (o, n) in nums(l, 6).into_iter().enumerate() {
            per_order[o] += n;
        }
    }
    let b = section(&r.transcript, "cat /proc/buddyinfo");
    assert_eq!(per_order, nums(b.lines().next().unwrap(), 4), "the types split buddyinfo's counts: {p}");
    assert_eq!(lines[10], "");
    assert_eq!(lines[11], "Number of blocks type     Unmovable      Movable  Reclaimable   HighAtomic          CMA      Isolate ");
    let blocks = nums(lines[12], 4);
    assert_eq!(blocks.iter().sum::<u64>(), 2048000 / 512, "every pageblock of the zone has one type: {p}");
    // The boot slab (reclaimable dentries and inodes, unreclaimable caches) claimed blocks;
    // movable blocks are the rest.
    assert!(blocks[0] > 0 && blocks[2] > 0 && blocks[1] > 3900, "{p}");
    // 2.6.39: its own order of types, MIGRATE_RESERVE blocks, no 100000 cap.
    let r = run_on("cat /proc/pagetypeinfo\n", "ml110-g6", &[]);
    let p = section(&r.transcript, "cat /proc/pagetypeinfo");
    let lines: Vec<&str> = p.lines().collect();
    let types: Vec<&str> = lines[4..9].iter().map(|l| l.split_whitespace().nth(5).unwrap()).collect();
    assert_eq!(types, ["Unmovable", "Reclaimable", "Movable", "Reserve", "Isolate"], "{p}");
    assert_eq!(lines[10], "Number of blocks type     Unmovable  Reclaimable      Movable      Reserve      Isolate ");
    let blocks = nums(lines[11], 4);
    assert!((1..=2).contains(&blocks[3]), "setup_zone_migrate_reserve keeps one or two blocks: {p}");
    let r = run_on("cat /proc/pagetypeinfo\n", "optiplex-gx115", &[]);
    assert!(r.transcript.contains("cat: /proc/pagetypeinfo: No such file or directory"), "{}", r.transcript);
}
