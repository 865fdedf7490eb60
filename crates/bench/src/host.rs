//! The host the figures were measured on (so that they can be interpreted), and the
//! process's own memory use from /proc/self/status.

use crate::figures::Figures;
use std::process::Command;

/// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"); 0 where unreadable.
pub fn status_bytes(field: &str) -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else { return 0 };
    for line in s.lines() {
        if let Some(rest) = line.strip_prefix(field).and_then(|r| r.strip_prefix(':')) {
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            return kb * 1024;
        }
    }
    0
}

/// Time the calling thread has spent on a CPU, seconds (clock_gettime(CLOCK_THREAD_CPUTIME_ID)),
/// so that a wall time stretched by other load on the host shows. (/proc/thread-self/schedstat
/// is not read for it: the kernel adds the running slice to it only at a tick or a switch,
/// so a thread that never sleeps reads it in steps of a tick, 4 ms at HZ=250;
/// clock_gettime brings the running slice up to date first.)
pub fn thread_cpu_s() -> f64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec (64-bit time_t on the 64-bit Linux targets
    // this builds for) and the clock id is Linux's.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return f64::NAN;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_default()
}

fn cpuinfo() -> (String, usize) {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = text
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string()))
        .unwrap_or_else(|| "unknown".into());
    let processors = text.lines().filter(|l| l.starts_with("processor")).count();
    (model, processors)
}

fn mem_total_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|r| r.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn one_line(cmd: &str, args: &[&str], dir: Option<&str>) -> Option<String> {
    let mut c = Command::new(cmd);
    c.args(args);
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let out = c.output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The source revision the binary was run from, "-dirty" when the tree has changes.
/// MEMTWIN_BENCH_REVISION overrides it (a tree exported without .git).
fn revision() -> String {
    if let Ok(r) = std::env::var("MEMTWIN_BENCH_REVISION") {
        return r;
    }
    let dir = env!("CARGO_MANIFEST_DIR");
    let Some(rev) = one_line("git", &["rev-parse", "--short", "HEAD"], Some(dir)) else { return "unknown".into() };
    let dirty = one_line("git", &["status", "--porcelain", "--untracked-files=no"], Some(dir)).map(|s| !s.is_empty()).unwrap_or(false);
    if dirty {
        format!("{rev}-dirty")
    } else {
        rev
    }
}

/// UTC date and time, "YYYY-MM-DD HH:MM:SS UTC".
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let (y, m, d) = memtwin_engine::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC", rem / 3600, rem / 60 % 60, rem % 60)
}

pub fn describe() -> Figures {
    let (model, processors) = cpuinfo();
    let usable = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let mut f = Figures::default();
    f.str("date", utc_now());
    f.str("cpu", model);
    f.int("cpus_online", processors as u64);
    f.int("cpus_usable", usable as u64);
    f.int("memory_bytes", mem_total_bytes());
    f.str("kernel", std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string());
    f.str("loadavg", loadavg());
    f.str("rustc", one_line("rustc", &["-V"], None).unwrap_or_else(|| "unknown".into()));
    f.str("revision", revision());
    f
}
