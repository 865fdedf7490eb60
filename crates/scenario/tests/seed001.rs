//! Seed 001 ("Linux Tips: the RAM disk /dev/shm for I/O tuning"): DIGEST.md items 11, 12
//! and 14, through scenarios/seed-001-ramdisk.sh and seed-001-pagecache-vs-ramdisk.sh.
//!
//! Each scenario runs once per test binary (a OnceLock cache). Expectations come from the
//! kernel's rules (tmpfs default size, ENOSPC, Shmem accounting, drop_caches, dirty expiry,
//! the journal) and the machine's physics (copy bandwidth vs disk bandwidth), not from the
//! article's figures.

use memtwin_scenario::{RunOptions, RunResult};
use std::sync::OnceLock;

fn scenario(name: &str) -> String {
    format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run_file(name: &str) -> RunResult {
    let opts = RunOptions { script_path: Some(scenario(name)), ..Default::default() };
    memtwin_scenario::run(&opts).unwrap_or_else(|e| panic!("{name} failed to run: {e}"))
}

fn run_text(text: &str) -> Result<RunResult, memtwin_scenario::RunError> {
    memtwin_scenario::run(&RunOptions {
        script_path: Some("test.sh".into()),
        script_text: Some(text.to_string()),
        machine: "default".into(),
        ..Default::default()
    })
}

/// The transcript as (command, its output) in order.
struct Blocks(Vec<(String, String)>);

impl Blocks {
    fn new(t: &str) -> Blocks {
        let mut v: Vec<(String, String)> = Vec::new();
        for line in t.lines() {
            if let Some(cmd) = line.strip_prefix("# ") {
                v.push((cmd.to_string(), String::new()));
            } else if let Some(last) = v.last_mut() {
                last.1.push_str(line);
                last.1.push('\n');
            }
        }
        Blocks(v)
    }
    /// Outputs of every run of `cmd`, in order.
    fn all(&self, cmd: &str) -> Vec<&str> {
        self.0.iter().filter(|(c, _)| c == cmd).map(|(_, o)| o.as_str()).collect()
    }
    fn one(&self, cmd: &str) -> &str {
        let a = self.all(cmd);
        assert_eq!(a.len(), 1, "expected '{cmd}' once in the transcript");
        a[0]
    }
    /// Index of the first block of `cmd`.
    fn pos(&self, cmd: &str) -> usize {
        self.0.iter().position(|(c, _)| c == cmd).unwrap_or_else(|| panic!("'{cmd}' not in the transcript"))
    }
}

/// free's Mem: row as (total, used, free, shared, buff/cache, available), KiB.
fn free_mem(out: &str) -> [u64; 6] {
    let line = out.lines().find(|l| l.starts_with("Mem:")).unwrap_or_else(|| panic!("no Mem: row in\n{out}"));
    let v: Vec<u64> = line.split_whitespace().skip(1).map(|x| x.parse().unwrap()).collect();
    [v[0], v[1], v[2], v[3], v[4], v[5]]
}

/// A df row for a mount point: its fields.
fn df_row<'a>(out: &'a str, mounted_on: &str) -> Vec<&'a str> {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.last() == Some(&mounted_on) && f.len() >= 6)
        .unwrap_or_else(|| panic!("no df row for {mounted_on} in\n{out}"))
}

/// Seconds dd reports in its summary ("..., 0.211895 s, 5.1 GB/s").
fn dd_seconds(out: &str) -> f64 {
    let line = out.lines().find(|l| l.contains(" copied, ")).unwrap_or_else(|| panic!("no dd summary in\n{out}"));
    let after = line.split(" copied, ").nth(1).unwrap();
    after.split(" s,").next().unwrap().trim().parse().unwrap()
}

/// ls -l rows inside one listing: name -> size.
fn ls_sizes(out: &str) -> Vec<(String, u64)> {
    out.lines()
        .filter(|l| l.starts_with('-'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[8].to_string(), f[4].parse().unwrap())
        })
        .collect()
}

/// The part of an `ls -l A B` output under the header `dir:`.
fn ls_section<'a>(out: &'a str, dir: &str) -> &'a str {
    let head = format!("{dir}:\n");
    let start = out.find(&head).unwrap_or_else(|| panic!("no section {dir} in\n{out}")) + head.len();
    let rest = &out[start..];
    match rest.find("\n\n") {
        Some(e) => &rest[..e + 1],
        None => rest,
    }
}

fn ramdisk() -> &'static (RunResult, Blocks) {
    static R: OnceLock<(RunResult, Blocks)> = OnceLock::new();
    R.get_or_init(|| {
        let r = run_file("seed-001-ramdisk.sh");
        let b = Blocks::new(&r.transcript);
        (r, b)
    })
}

fn pagecache() -> &'static (RunResult, Blocks) {
    static R: OnceLock<(RunResult, Blocks)> = OnceLock::new();
    R.get_or_init(|| {
        let r = run_file("seed-001-pagecache-vs-ramdisk.sh");
        let b = Blocks::new(&r.transcript);
        (r, b)
    })
}

// ---- 11: tmpfs is a RAM disk with a size limit ----------------------------------------------

#[test]
fn default_dev_shm_is_half_of_memtotal() {
    let r = run_text("df /dev/shm\ncat /proc/meminfo\n").unwrap();
    let b = Blocks::new(&r.transcript);
    let row = df_row(b.one("df /dev/shm"), "/dev/shm");
    assert_eq!(row[0], "tmpfs");
    let size_kb: u64 = row[1].parse().unwrap();
    let mi = b.one("cat /proc/meminfo");
    let total_kb: u64 = mi.lines().find(|l| l.starts_with("MemTotal:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    // shmem_default_max_blocks = totalram_pages / 2: half of MemTotal, within a page.
    assert!(size_kb <= total_kb / 2 && total_kb / 2 - size_kb < 4, "df {size_kb} KiB vs MemTotal/2 {}", total_kb / 2);
    assert_eq!(row[2], "0");
}

#[test]
fn the_articles_resize_and_second_mount_work() {
    let (_, b) = ramdisk();
    let first = b.all("df -h")[0];
    assert_eq!(df_row(first, "/dev/shm")[1], "4.0G", "8 GiB machine: half of MemTotal");
    let after = b.all("df -h")[1];
    let shm = df_row(after, "/dev/shm");
    assert_eq!((shm[0], shm[1], shm[2]), ("tmpfs", "384M", "0"));
    let ram = df_row(after, "/mnt/ram");
    assert_eq!((ram[0], ram[1], ram[4]), ("/dev/shm", "384M", "0%"));
    for cmd in ["umount /dev/shm", "mount -t tmpfs -o size=384m tmpfs /dev/shm", "mkdir /mnt/ram", "mount -o remount,size=384m /dev/shm"] {
        assert_eq!(b.one(cmd), "", "{cmd} prints nothing on success");
    }
}

#[test]
fn shared_and_buff_cache_grow_by_what_is_written_to_tmpfs() {
    let (r, b) = ramdisk();
    let frees = b.all("free");
    let before = free_mem(frees[0]);
    let after = free_mem(frees[1]);
    assert_eq!(after[3] - before[3], 256 * 1024, "shared grows by the 256 MiB written");
    let cache = after[4] as i64 - before[4] as i64;
    assert!((cache - 256 * 1024).abs() < 8 * 1024, "buff/cache grows by ~256 MiB, got {cache} KiB");
    // No disk I/O for tmpfs writes: pgpgout stays flat up to the first disk write.
    let col = |n: &str| &r.series.columns.iter().find(|(c, _)| c == n).unwrap().1;
    let shmem = col("mi.Shmem");
    assert_eq!(shmem.iter().copied().max().unwrap(), 384 * 1024, "the RAM disk fills up to its 384 MiB");
}

#[test]
fn writing_past_the_size_fails_with_enospc_and_keeps_what_was_written() {
    let (_, b) = ramdisk();
    let out = b.one("dd if=/dev/zero of=/mnt/ram/big bs=1M count=256");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "dd: error writing '/mnt/ram/big': No space left on device");
    assert_eq!(lines[1], "129+0 records in");
    assert_eq!(lines[2], "128+0 records out");
    assert!(lines[3].starts_with("134217728 bytes (134 MB, 128 MiB) copied"), "{}", lines[3]);
    assert_eq!(b.one("cp /mnt/ram/work1 /mnt/ram/copy"), "cp: error writing '/mnt/ram/copy': No space left on device\n");
    let ls = ls_sizes(b.one("ls -l /mnt/ram"));
    assert!(ls.contains(&("big".into(), 128 << 20)) && ls.contains(&("work1".into(), 128 << 20)) && ls.contains(&("work2".into(), 128 << 20)), "{ls:?}");
    let df = b.all("df -h /mnt/ram");
    assert_eq!(df_row(df[1], "/mnt/ram")[4], "100%");
}

#[test]
fn drop_caches_leaves_tmpfs_pages() {
    let (_, b) = ramdisk();
    let i = b.pos("echo 3 > /proc/sys/vm/drop_caches");
    let (cmd, out) = &b.0[i + 1];
    assert_eq!(cmd, "free");
    let m = free_mem(out);
    assert_eq!(m[3], 384 * 1024, "Shmem stays after drop_caches");
    assert!(m[4] >= 384 * 1024, "and stays in buff/cache");
}

// ---- 12: a crash loses the RAM disk and unwritten data -----------------------------------

#[test]
fn crash_loses_tmpfs_and_unsynced_data_keeps_synced_data() {
    let (r, b) = ramdisk();
    let crash = b.one("crash");
    assert!(crash.starts_with("--- crash: power lost at ") && crash.ends_with(" s, the machine boots again ---\n"), "{crash}");
    // Before: the RAM disk held its files.
    let before = b.one("ls -l /root /mnt/ram");
    assert_eq!(ls_sizes(ls_section(before, "/mnt/ram")).len(), 4);
    // After: /mnt/ram is the empty directory on /, /dev/shm is back at its default and empty.
    let after = b.one("ls -l /mnt/ram /root");
    assert_eq!(ls_section(after, "/mnt/ram"), "total 0\n");
    let df = b.one("df -h /dev/shm /mnt/ram");
    assert_eq!(df_row(df, "/dev/shm")[1..3], ["4.0G", "0"]);
    assert_eq!(df_row(df, "/")[0], "/dev/sda", "/mnt/ram is not mounted after the boot");
    let stat = b.one("stat -c '%n %s' /root/result-synced /root/result-old /root/result-recent /root/notes");
    let size = |name: &str| -> u64 {
        stat.lines().find(|l| l.starts_with(name)).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    assert_eq!(size("/root/result-synced"), 256 << 20, "synced: whole");
    assert_eq!(size("/root/result-old"), 256 << 20, "dirty for > 30 s: the flusher wrote it");
    let recent = size("/root/result-recent");
    assert!(recent > 0 && recent < 1 << 30, "1 GiB written 10 s before: only what background writeback wrote ({recent})");
    assert_eq!(size("/root/notes"), 0, "written 10 s before, never written back: empty");
    // Memory is as after a boot: no shared memory.
    let frees = b.all("free");
    assert_eq!(free_mem(frees.last().unwrap())[3], 0);
    assert_eq!(free_mem(frees.last().unwrap()), free_mem(frees[0]), "a fresh boot looks like the first one");
    // The clock continues through the crash.
    assert!(r.series.t_s.windows(2).all(|w| w[1] > w[0]));
}

#[test]
fn reboot_syncs_and_keeps_everything_on_disk() {
    let (_, b) = ramdisk();
    let rb = b.one("reboot");
    assert!(rb.starts_with("--- reboot: synced and restarted at "), "{rb}");
    let out = b.one("ls -l /root /dev/shm");
    assert_eq!(ls_section(out, "/dev/shm"), "total 0\n");
    assert!(ls_sizes(ls_section(out, "/root")).contains(&("rerun".into(), 128 << 20)));
    // Unsynced data survives a clean reboot, not a crash within the journal's 5 s.
    let r = run_text("dd if=/dev/zero of=/root/x bs=1M count=64\nreboot\nstat -c %s /root/x\n").unwrap();
    assert_eq!(Blocks::new(&r.transcript).one("stat -c %s /root/x"), format!("{}\n", 64 << 20));
    let r = run_text("dd if=/dev/zero of=/root/x bs=1M count=64\ncrash\nstat -c %s /root/x\n").unwrap();
    assert_eq!(Blocks::new(&r.transcript).one("stat -c %s /root/x"), "stat: cannot statx '/root/x': No such file or directory\n");
}

// ---- 14: the page cache already caches files --------------------------------------------

#[test]
fn cached_rereads_are_as_fast_as_tmpfs_and_cold_reads_are_slower() {
    let (_, b) = pagecache();
    let disk = b.all("time dd if=/root/data of=/dev/null bs=1M");
    let (cold, warm) = (dd_seconds(disk[0]), dd_seconds(disk[1]));
    let shm = dd_seconds(b.one("time dd if=/dev/shm/data of=/dev/null bs=1M"));
    assert!(warm / shm < 1.5 && shm / warm < 1.5, "page-cache re-read {warm} s vs tmpfs {shm} s");
    assert!(cold > 3.0 * warm, "cold read {cold} s vs cached {warm} s");
    // Buffered writes: both at memory speed; fsync'd writes wait for the disk.
    let w_disk = dd_seconds(b.one("time dd if=/dev/zero of=/root/tmpfile bs=1M count=256"));
    let w_shm = dd_seconds(b.one("time dd if=/dev/zero of=/dev/shm/tmpfile bs=1M count=256"));
    assert!(w_disk / w_shm < 1.5, "buffered write {w_disk} s vs tmpfs {w_shm} s");
    let f_disk = dd_seconds(b.one("time dd if=/dev/zero of=/root/tmpfile bs=1M count=256 conv=fsync"));
    let f_shm = dd_seconds(b.one("time dd if=/dev/zero of=/dev/shm/tmpfile bs=1M count=256 conv=fsync"));
    assert!(f_disk > 3.0 * f_shm, "fsync'd write {f_disk} s vs tmpfs {f_shm} s");
    // The RAM disk copy survived drop_caches: shared stays 1 GiB.
    let i = b.pos("echo 3 > /proc/sys/vm/drop_caches");
    assert_eq!(free_mem(&b.0[i + 1].1)[3], 1 << 20);
}

// ---- Errors --------------------------------------------------------------------------------

#[test]
fn unsupported_mounts_are_run_errors_naming_what_is_supported() {
    let e = run_text("true\nmount -t ext4 /dev/sdb /mnt\n").err().unwrap().message;
    assert!(e.starts_with("test.sh:2: ") && e.contains("tmpfs"), "{e}");
    let e = run_text("mount -t tmpfs -o huge=always tmpfs /mnt\n").err().unwrap().message;
    assert!(e.starts_with("test.sh:1: ") && e.contains("size="), "{e}");
    let e = run_text("crash now\n").err().unwrap().message;
    assert!(e.contains("crash"), "{e}");
    let e = run_text("df -x\n").err().unwrap().message;
    assert!(e.contains("-h"), "{e}");
    // Failures at run time print what mount(8) and umount(8) print.
    let r = run_text("umount /mnt\numount /nonexistent\nmount -t tmpfs tmpfs /nonexistent\nmount -o remount,size=1k /dev/shm\n").unwrap();
    assert_eq!(
        r.transcript,
        "# umount /mnt\numount: /mnt: not mounted.\n# umount /nonexistent\numount: /nonexistent: no mount point specified.\n\
         # mount -t tmpfs tmpfs /nonexistent\nmount: /nonexistent: mount point does not exist.\n\
         # mount -o remount,size=1k /dev/shm\n"
    );
}

#[test]
fn odd_arguments_never_panic() {
    let cmds = [
        "mount", "mount -t tmpfs", "mount -t tmpfs a", "mount -t tmpfs -o size=0 tmpfs /mnt", "mount -t tmpfs -o nr_inodes=0 t /tmp",
        "mount -o remount /", "mount -o remount,size=1g /", "mount -t tmpfs -o size=100% t /mnt", "mount -o", "mount -t",
        "umount /", "umount /dev/shm", "umount /dev/shm", "umount .", "df", "df -hiT", "df -i /dev/shm /", "df /dev/sda",
        "df /nope", "ls", "ls -la /", "ls -l /dev /dev/shm /nope", "ls -ld /tmp", "ls -1 /mnt", "stat -c %s%n%F%A /",
        "stat -c %s /nope", "stat --printf=%s\\n /", "mkdir", "mkdir -p /a/b/c", "mkdir /a", "mkdir /a/b/c/d/e",
        "dd if=/dev/zero of=/mnt/x bs=1M count=1 seek=2000000", "dd if=/dev/zero of=/dev/shm/x bs=1M count=3 seek=1099511627775",
        "cat /mnt", "rm /mnt", "cp /mnt /tmp/x", "crash", "reboot", "ls -l /tmp",
    ];
    let mut runnable = Vec::new();
    for c in cmds {
        // Either a run error or a transcript; never a panic.
        if run_text(&format!("{c}\n")).is_ok() {
            runnable.push(c);
        }
    }
    // And all of them in one session, each on what the previous ones left.
    let r = run_text(&format!("{}\n", runnable.join("\n"))).unwrap();
    assert!(r.transcript.contains("# ls -l /tmp"));
}
