//! `iotop -b` (batch mode), the Python iotop by Guillaume Chazarain.
//!
//! Two variants of its layout exist in the wild and both are reproduced:
//! * [`IotopStyle::V06`] (default): the iotop 0.6 release (2013, iotop/ui.py): summary lines
//!   `Total DISK READ : ... | Total DISK WRITE : ...` and
//!   `Actual DISK READ: ... | Actual DISK WRITE: ...`.
//! * [`IotopStyle::Debian12`]: Debian 12's `0.6-42-ga14256a` git snapshot (`apt install
//!   iotop` today): `Total DISK READ:   ...` / `Current DISK READ: ...`, `?unavailable?`
//!   spacing of the newer code, and when delay accounting is off (kernel.task_delayacct=0,
//!   the default since Linux 5.14) the default sort falls back to DISK WRITE.
//!
//! Common to both (verified against the installed Debian 12 iotop's own functions):
//! * Header `  TID  PRIO  USER     DISK READ  DISK WRITE  SWAPIN      IO    COMMAND` — in
//!   batch mode the sort column carries no `>` marker (that `IO>` exists only in the
//!   interactive curses screen, which is what the 2016 article pasted). The PID column is as
//!   wide as pid_max has digits ([`IotopOptions::pid_max`], 32768 → 5).
//! * Rows: `%{w}d %4s %-8s %11s %11s %7s %7s ` + command, where sizes are `human_size`
//!   (`int(log2(size/2)/10)` picks B/K/M/G/T/P/E, `%.2f`) of bytes per second of the interval,
//!   `-k` gives `%.2f K`, `-a` totals since iotop started without `/s`; SWAPIN and IO are
//!   `min(99.99, delay_ns / (duration_s * 1e7))` with `%.2f %`; PRIO is `be/N` with
//!   N = (nice + 20) / 5 (`rt/N` for real-time tasks); COMMAND is the command line with the
//!   directory of `argv[0]` removed, or `[comm]` for kernel threads (and anything else with an
//!   empty command line).
//! * `Total` = sum over the monitored tasks of their read/write bytes in the interval;
//!   `Actual`/`Current` = /proc/vmstat pgpgin/pgpgout deltas * 1024 (device level), passed in
//!   explicitly (see [`iotop_actual_from_vmstat`]).
//! * Default order: by IO delay in the interval, high to low, tasks that did I/O without
//!   waiting counting as 1 ns; ties keep iotop's discovery order (PID order here). `-o`
//!   keeps only tasks whose counters moved. A task not present in the previous snapshot
//!   shows zeros (iotop's first reading of a thread is its baseline).
//! * The header line is printed every iteration (`-q` once, `-qq` never; `-qqq` also drops
//!   the two summary lines); `-t` prefixes every line with `HH:MM:SS `.
//!
//! Not modelled: `cancelled_write_bytes` (no such field in the snapshot: taken as 0),
//! threads grouped into processes for `-P` (each task is its own process), explicitly set
//! I/O priorities (`ionice`) and the idle class.

use memtwin_procfs::{Snapshot, TaskInfo, VmItem};

use crate::getopt::{OptParse, PyOpt};

/// Which iotop's text to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IotopStyle {
    /// iotop 0.6 release.
    V06,
    /// Debian 12's iotop 0.6-42-ga14256a.
    Debian12,
}

/// What `iotop`'s command line asked for, plus host facts a snapshot does not carry.
#[derive(Clone, Debug, PartialEq)]
pub struct IotopOptions {
    /// `-o, --only`
    pub only: bool,
    /// `-b, --batch` (also implied by `-t` and `-q`).
    pub batch: bool,
    /// `-n NUM, --iter=NUM`
    pub iterations: Option<u64>,
    /// `-d SEC, --delay=SEC` (default 1).
    pub delay_s: f64,
    /// `-p PID` (repeatable).
    pub pids: Vec<u32>,
    /// `-u USER` (repeatable).
    pub users: Vec<String>,
    /// `-P, --processes`
    pub processes: bool,
    /// `-a, --accumulated`
    pub accumulated: bool,
    /// `-k, --kilobytes`
    pub kilobytes: bool,
    /// `-t, --time`
    pub time: bool,
    /// `-q` count.
    pub quiet: u32,
    /// Host fact: /proc/sys/kernel/pid_max (PID column width). Default 32768.
    pub pid_max: u64,
    /// Host fact: whether taskstats delay accounting works (CONFIG_TASK_DELAY_ACCT and, since
    /// Linux 5.14, kernel.task_delayacct=1). When false SWAPIN/IO print `?unavailable?`.
    pub delayacct: bool,
    /// Which iotop's layout.
    pub style: IotopStyle,
    /// `-h` / `--version`: print this on stdout and exit 0 instead of running.
    pub print_and_exit: Option<String>,
}

impl Default for IotopOptions {
    fn default() -> Self {
        IotopOptions {
            only: false,
            batch: false,
            iterations: None,
            delay_s: 1.0,
            pids: Vec::new(),
            users: Vec::new(),
            processes: false,
            accumulated: false,
            kilobytes: false,
            time: false,
            quiet: 0,
            pid_max: 32_768,
            delayacct: true,
            style: IotopStyle::V06,
            print_and_exit: None,
        }
    }
}

const USAGE_06: &str = "/usr/sbin/iotop [OPTIONS]

DISK READ and DISK WRITE are the block I/O bandwidth used during the sampling
period. SWAPIN and IO are the percentages of time the thread spent respectively
while swapping in and waiting on I/O more generally. PRIO is the I/O priority at
which the thread is running (set using the ionice command).

Controls: left and right arrows to change the sorting column, r to invert the
sorting order, o to toggle the --only option, p to toggle the --processes
option, a to toggle the --accumulated option, i to change I/O priority, q to
quit, any other key to force a refresh.";

const HELP_OPTIONS_06: &str = "Options:
  --version             show program's version number and exit
  -h, --help            show this help message and exit
  -o, --only            only show processes or threads actually doing I/O
  -b, --batch           non-interactive mode
  -n NUM, --iter=NUM    number of iterations before ending [infinite]
  -d SEC, --delay=SEC   delay between iterations [1 second]
  -p PID, --pid=PID     processes/threads to monitor [all]
  -u USER, --user=USER  users to monitor [all]
  -P, --processes       only show processes, not all threads
  -a, --accumulated     show accumulated I/O instead of bandwidth
  -k, --kilobytes       use kilobytes instead of a human friendly unit
  -t, --time            add a timestamp on each line (implies --batch)
  -q, --quiet           suppress some lines of header (implies --batch)
";

const IOTOP_OPTS: &[PyOpt] = &[
    PyOpt {
        short: None,
        long: "version",
        takes_value: false,
        dest: "version",
    },
    PyOpt {
        short: Some('h'),
        long: "help",
        takes_value: false,
        dest: "help",
    },
    PyOpt {
        short: Some('o'),
        long: "only",
        takes_value: false,
        dest: "only",
    },
    PyOpt {
        short: Some('b'),
        long: "batch",
        takes_value: false,
        dest: "batch",
    },
    PyOpt {
        short: Some('n'),
        long: "iter",
        takes_value: true,
        dest: "iterations",
    },
    PyOpt {
        short: Some('d'),
        long: "delay",
        takes_value: true,
        dest: "delay_seconds",
    },
    PyOpt {
        short: Some('p'),
        long: "pid",
        takes_value: true,
        dest: "pids",
    },
    PyOpt {
        short: Some('u'),
        long: "user",
        takes_value: true,
        dest: "users",
    },
    PyOpt {
        short: Some('P'),
        long: "processes",
        takes_value: false,
        dest: "processes",
    },
    PyOpt {
        short: Some('a'),
        long: "accumulated",
        takes_value: false,
        dest: "accumulated",
    },
    PyOpt {
        short: Some('k'),
        long: "kilobytes",
        takes_value: false,
        dest: "kilobytes",
    },
    PyOpt {
        short: Some('t'),
        long: "time",
        takes_value: false,
        dest: "time",
    },
    PyOpt {
        short: Some('q'),
        long: "quiet",
        takes_value: false,
        dest: "quiet",
    },
    PyOpt {
        short: None,
        long: "profile",
        takes_value: false,
        dest: "profile",
    },
];

/// Python `int(val, radix)` as optparse's `_parse_num` calls it.
fn py_int(val: &str) -> Option<i64> {
    let lower = val.to_ascii_lowercase();
    let (radix, body) = if lower.starts_with("0x") {
        (16, val)
    } else if lower.starts_with("0b") {
        (2, &val[2..])
    } else if val.starts_with('0') {
        (8, val)
    } else {
        (10, val)
    };
    let t = body.trim();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let t = if radix == 16 {
        t.strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t)
    } else if radix == 8 {
        t.strip_prefix("0o")
            .or_else(|| t.strip_prefix("0O"))
            .unwrap_or(t)
    } else {
        t
    };
    let t = if t.is_empty() && radix == 2 { "0" } else { t };
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    let digits: String = t.chars().filter(|c| *c != '_').collect();
    let v = i64::from_str_radix(&digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// Python `float(val)`.
fn py_float(val: &str) -> Option<f64> {
    let t = val.trim();
    let l = t.to_ascii_lowercase();
    match l.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => {
            return Some(if l.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            })
        }
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if t.contains("__") || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    t.replace('_', "").parse::<f64>().ok()
}

/// Parse `iotop`'s arguments (without the program name) as iotop 0.6's optparse does. Errors
/// carry what it prints on stderr (usage, blank line, `iotop: error: ...`).
pub fn parse_iotop_args(args: &[String]) -> Result<IotopOptions, String> {
    let err = |m: String| format!("Usage: {USAGE_06}\n\niotop: error: {m}");
    let (opts, rest) = OptParse { opts: IOTOP_OPTS }.parse(args).map_err(err)?;
    let mut o = IotopOptions::default();
    for (dest, val, name) in opts {
        let v = val.unwrap_or_default();
        match dest {
            "version" => {
                o.print_and_exit = Some("iotop 0.6\n".to_string());
                return Ok(o);
            }
            "help" => {
                o.print_and_exit = Some(format!("Usage: {USAGE_06}\n\n{HELP_OPTIONS_06}"));
                return Ok(o);
            }
            "only" => o.only = true,
            "batch" => o.batch = true,
            "iterations" => {
                let n = py_int(&v)
                    .ok_or_else(|| err(format!("option {name}: invalid integer value: '{v}'")))?;
                o.iterations = Some(n.max(0) as u64);
            }
            "delay_seconds" => {
                let d = py_float(&v).ok_or_else(|| {
                    err(format!(
                        "option {name}: invalid floating-point value: '{v}'"
                    ))
                })?;
                if !d.is_finite() || d < 0.0 {
                    return Err(format!(
                        "iotop: memtwin needs a finite, non-negative delay, not '{v}'"
                    ));
                }
                o.delay_s = d;
            }
            "pids" => {
                let n = py_int(&v)
                    .ok_or_else(|| err(format!("option {name}: invalid integer value: '{v}'")))?;
                o.pids.push(n.clamp(0, u32::MAX as i64) as u32);
            }
            "users" => o.users.push(v),
            "processes" => o.processes = true,
            "accumulated" => o.accumulated = true,
            "kilobytes" => o.kilobytes = true,
            "time" => o.time = true,
            "quiet" => o.quiet += 1,
            _ => {}
        }
    }
    if !rest.is_empty() {
        return Err(err(format!("Unexpected arguments: {}", rest.join(" "))));
    }
    o.batch = o.batch || o.time || o.quiet > 0;
    Ok(o)
}

const UNITS: [&str; 7] = ["B", "K", "M", "G", "T", "P", "E"];

/// ui.py `human_size`.
fn human_size(size: f64) -> String {
    let (sign, size) = if size > 0.0 {
        ("", size)
    } else if size < 0.0 {
        ("-", -size)
    } else {
        return "0.00 B".to_string();
    };
    if !size.is_finite() {
        return format!("{sign}inf E");
    }
    let expo = ((size / 2.0).ln() / 2f64.ln() / 10.0).trunc();
    let expo = if expo.is_nan() {
        0
    } else {
        (expo as i64).clamp(0, 6) as usize
    };
    let v = size / (1u64 << (10 * expo)) as f64;
    format!("{sign}{v:.2} {}", UNITS[expo])
}

fn format_size(o: &IotopOptions, bytes: f64) -> String {
    if o.kilobytes {
        let v = bytes / 1024.0;
        return if v.is_finite() {
            format!("{v:.2} K")
        } else {
            "inf K".to_string()
        };
    }
    human_size(bytes)
}

fn format_bandwidth(o: &IotopOptions, size: u64, duration: f64) -> String {
    let v = if size == 0 {
        0.0
    } else {
        size as f64 / duration
    };
    format!("{}/s", format_size(o, v))
}

fn delay2percent(delay_ns: f64, duration: f64) -> String {
    let p = delay_ns / (duration * 10_000_000.0);
    let p = if p.is_nan() { 0.0 } else { p.min(99.99) };
    format!("{p:.2} %")
}

/// The counters iotop takes from taskstats, as deltas (or totals for `-a`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Stats {
    blkio_delay: u64,
    swapin_delay: u64,
    read_bytes: u64,
    write_bytes: u64,
}

impl Stats {
    fn of(t: &TaskInfo) -> Stats {
        Stats {
            blkio_delay: t.blkio_delay_ns,
            swapin_delay: t.swapin_delay_ns,
            read_bytes: t.read_bytes,
            write_bytes: t.write_bytes,
        }
    }
    fn since(&self, old: &Stats) -> Stats {
        Stats {
            blkio_delay: self.blkio_delay.saturating_sub(old.blkio_delay),
            swapin_delay: self.swapin_delay.saturating_sub(old.swapin_delay),
            read_bytes: self.read_bytes.saturating_sub(old.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(old.write_bytes),
        }
    }
    fn is_all_zero(&self) -> bool {
        *self == Stats::default()
    }
}

/// ui.py/data.py `get_cmdline`.
fn iotop_cmdline(t: &TaskInfo) -> String {
    if t.kthread || t.cmdline.is_empty() {
        return if t.comm.is_empty() {
            "{no name}".to_string()
        } else {
            format!("[{}]", t.comm)
        };
    }
    let mut parts: Vec<String> = if t.cmdline.contains('\0') {
        t.cmdline.split('\0').map(str::to_string).collect()
    } else {
        t.cmdline.splitn(2, ' ').map(str::to_string).collect()
    };
    if parts[0].starts_with('/') {
        let k = parts[0].rfind('/').map(|i| i + 1).unwrap_or(0);
        parts[0] = parts[0][k..].to_string();
    }
    parts.join(" ").trim().to_string()
}

/// ioprio.py: with no I/O priority set, the class follows the scheduler (SCHED_FIFO/RR →
/// `rt`, else `be`) and the level is (nice + 20) / 5. A negative `prio` is how /proc (and
/// so [`TaskInfo::prio`]) shows a real-time task.
fn ioprio(t: &TaskInfo) -> String {
    let n = ((t.nice as i64 + 20) as f64 / 5.0).trunc() as i64;
    if t.prio < 0 {
        format!("rt/{n}")
    } else {
        format!("be/{n}")
    }
}

fn user_of(t: &TaskInfo) -> String {
    if t.user.is_empty() {
        "{none}".to_string()
    } else {
        t.user.chars().take(8).collect()
    }
}

/// Device-level bytes read and written between two snapshots, as iotop computes its
/// `Actual` line: /proc/vmstat pgpgin/pgpgout (KiB) deltas times 1024.
pub fn iotop_actual_from_vmstat(prev: &Snapshot, cur: &Snapshot) -> (u64, u64) {
    let d = |i: VmItem| {
        cur.vm
            .get(i)
            .saturating_sub(prev.vm.get(i))
            .saturating_mul(1024)
    };
    (d(VmItem::Pgpgin), d(VmItem::Pgpgout))
}

/// Per-frame context beyond the two snapshots, for [`iotop_frame_ext`].
#[derive(Clone, Copy, Debug, Default)]
pub struct IotopFrameContext<'a> {
    /// Whether this is iotop's first display (the header is printed on it even with `-q`).
    pub first: bool,
    /// Wall-clock time of `cur`, seconds (only the time of day is used), for `-t`.
    pub wall_clock_s: u64,
    /// For `-a`: the snapshot taken when iotop started (accumulated totals and their
    /// duration are measured from it). Without it `-a` accumulates from `prev`.
    pub start: Option<&'a Snapshot>,
}

/// One batch display: the two summary lines, the header and one row per task, each ending
/// in a newline. `prev` and `cur` are iotop's two readings (the interval is the difference
/// of their uptimes); `actual_read` / `actual_write` are the device-level bytes over the same
/// interval ([`iotop_actual_from_vmstat`]). This is a first display (header printed even
/// with `-q`), `-t` stamps show the uptime as the time of day and `-a` accumulates from
/// `prev`; [`iotop_frame_ext`] takes the real values.
pub fn iotop_frame(
    prev: &Snapshot,
    cur: &Snapshot,
    actual_read: u64,
    actual_write: u64,
    o: &IotopOptions,
) -> String {
    let ctx = IotopFrameContext {
        first: true,
        wall_clock_s: cur.uptime_ns / 1_000_000_000,
        start: None,
    };
    iotop_frame_ext(prev, cur, actual_read, actual_write, o, &ctx)
}

/// [`iotop_frame`] with the details `-q`, `-t` and `-a` need.
pub fn iotop_frame_ext(
    prev: &Snapshot,
    cur: &Snapshot,
    actual_read: u64,
    actual_write: u64,
    o: &IotopOptions,
    ctx: &IotopFrameContext<'_>,
) -> String {
    let dur_ns = cur.uptime_ns.saturating_sub(prev.uptime_ns);
    // Python would divide by zero; a simulated zero interval is taken as 1 ns.
    let duration = dur_ns.max(1) as f64 / 1e9;
    let start = ctx.start.unwrap_or(prev);
    let accum_duration = cur.uptime_ns.saturating_sub(start.uptime_ns).max(1) as f64 / 1e9;
    let pid_w = o.pid_max.to_string().len();

    let monitored = |t: &TaskInfo| -> bool {
        if !o.pids.is_empty() && !o.pids.contains(&t.pid) {
            return false;
        }
        if !o.users.is_empty() && !o.users.contains(&t.user) {
            return false;
        }
        true
    };
    let find = |s: &Snapshot, t: &TaskInfo| -> Option<Stats> {
        s.tasks
            .iter()
            .find(|x| x.pid == t.pid && x.start_ns == t.start_ns)
            .map(Stats::of)
    };

    let mut tasks: Vec<&TaskInfo> = cur.tasks.iter().filter(|t| monitored(t)).collect();
    if o.pids.is_empty() {
        tasks.sort_by_key(|t| t.pid);
    } else {
        tasks.sort_by_key(|t| o.pids.iter().position(|p| *p == t.pid));
    }

    struct Entry<'a> {
        t: &'a TaskInfo,
        delta: Stats,
        accum: Stats,
    }
    let mut total_read = 0u64;
    let mut total_write = 0u64;
    let mut entries: Vec<Entry<'_>> = Vec::with_capacity(tasks.len());
    for t in tasks {
        let now = Stats::of(t);
        let delta = find(prev, t).map(|p| now.since(&p)).unwrap_or_default();
        let accum = match ctx.start {
            Some(s) => find(s, t).map(|p| now.since(&p)).unwrap_or(delta),
            None => delta,
        };
        total_read = total_read.saturating_add(delta.read_bytes);
        total_write = total_write.saturating_add(delta.write_bytes);
        entries.push(Entry { t, delta, accum });
    }

    // Stats.has_blkio_delay_total: true once any task's cumulative blkio delay was non-zero.
    let any_delay = cur
        .tasks
        .iter()
        .chain(prev.tasks.iter())
        .any(|t| t.blkio_delay_ns != 0);
    let has_swapin_io = o.delayacct && any_delay;

    let stats_of = |e: &Entry<'_>| if o.accumulated { e.accum } else { e.delta };
    if o.only {
        entries.retain(|e| !stats_of(e).is_all_zero());
    }
    // Default sort key (IO>), or DISK WRITE when the newer iotop knows delays are off.
    let by_write = o.style == IotopStyle::Debian12 && !has_swapin_io;
    let key = |e: &Entry<'_>| -> u64 {
        let s = stats_of(e);
        if by_write {
            s.write_bytes
        } else if s.blkio_delay != 0 {
            s.blkio_delay
        } else {
            u64::from(s.read_bytes != 0 || s.write_bytes != 0)
        }
    };
    // Python's sort(reverse=True) is stable, like sort_by_key.
    entries.sort_by_key(|e| std::cmp::Reverse(key(e)));

    let shown_duration = if o.accumulated {
        accum_duration
    } else {
        duration
    };
    let size_cell = |bytes: u64| -> String {
        if o.accumulated {
            format_size(o, bytes as f64)
        } else {
            format_bandwidth(o, bytes, duration)
        }
    };

    let mut lines: Vec<String> = Vec::with_capacity(entries.len());
    for e in &entries {
        let s = stats_of(e);
        let mut line = format!(
            "{:>pid_w$} {:>4} {:<8} {:>11} {:>11}",
            e.t.pid,
            ioprio(e.t),
            user_of(e.t),
            size_cell(s.read_bytes),
            size_cell(s.write_bytes)
        );
        if has_swapin_io {
            line.push_str(&format!(
                " {:>7} {:>7} ",
                delay2percent(s.swapin_delay as f64, shown_duration),
                delay2percent(s.blkio_delay as f64, shown_duration)
            ));
        } else if o.style == IotopStyle::V06 {
            line.push_str("  ?unavailable?  ");
        } else {
            line.push_str(" ?unavailable?  ");
        }
        line.push_str(&iotop_cmdline(e.t));
        lines.push(line);
    }

    let bw = |v: u64| format!("{:>14}", format_bandwidth(o, v, duration));
    let mut summary = match o.style {
        IotopStyle::V06 => vec![
            format!(
                "Total DISK READ : {} | Total DISK WRITE : {}",
                bw(total_read),
                bw(total_write)
            ),
            format!(
                "Actual DISK READ: {} | Actual DISK WRITE: {}",
                bw(actual_read),
                bw(actual_write)
            ),
        ],
        IotopStyle::Debian12 => vec![
            format!(
                "Total DISK READ:   {} | Total DISK WRITE:   {}",
                bw(total_read),
                bw(total_write)
            ),
            format!(
                "Current DISK READ: {} | Current DISK WRITE: {}",
                bw(actual_read),
                bw(actual_write)
            ),
        ],
    };
    let mut title = format!(
        "{}{}  PRIO  USER     DISK READ  DISK WRITE  SWAPIN      IO    COMMAND",
        " ".repeat(pid_w.saturating_sub(3)),
        if o.processes { "PID" } else { "TID" }
    );
    if o.time {
        let t = ctx.wall_clock_s % 86_400;
        let stamp = format!("{:02}:{:02}:{:02} ", t / 3600, (t / 60) % 60, t % 60);
        title = format!("    TIME{title}");
        for l in lines.iter_mut() {
            *l = format!("{stamp}{l}");
        }
        for s in summary.iter_mut() {
            *s = format!("{stamp}{s}");
        }
    }
    let mut out = String::new();
    if o.quiet <= 2 {
        for s in &summary {
            out.push_str(s);
            out.push('\n');
        }
        if o.quiet <= u32::from(ctx.first) {
            out.push_str(&title);
            out.push('\n');
        }
    }
    for l in &lines {
        out.push_str(l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn human_sizes_match_python() {
        assert_eq!(human_size(0.0), "0.00 B");
        assert_eq!(human_size(1.0), "1.00 B");
        assert_eq!(human_size(51.47 * 1024.0), "51.47 K");
        assert_eq!(human_size(2047.0), "2047.00 B");
        assert_eq!(human_size(2048.0), "2.00 K");
        assert_eq!(human_size(59.42 * 1024.0 * 1024.0), "59.42 M");
    }

    #[test]
    fn parse() {
        let o = parse_iotop_args(&args(&["-bon2", "-d", "0.5", "-P", "-k"])).unwrap();
        assert!(
            o.batch
                && o.only
                && o.iterations == Some(2)
                && o.delay_s == 0.5
                && o.processes
                && o.kilobytes
        );
        let e = parse_iotop_args(&args(&["-x"])).unwrap_err();
        assert!(e.starts_with("Usage: /usr/sbin/iotop [OPTIONS]\n\nDISK READ"));
        assert!(e.ends_with("\n\niotop: error: no such option: -x"));
        assert!(parse_iotop_args(&args(&["-n", "x"]))
            .unwrap_err()
            .ends_with("option -n: invalid integer value: 'x'"));
        assert!(parse_iotop_args(&args(&["extra"]))
            .unwrap_err()
            .ends_with("Unexpected arguments: extra"));
        assert!(parse_iotop_args(&args(&["--it=x"]))
            .unwrap_err()
            .ends_with("option --iter: invalid integer value: 'x'"));
        assert!(parse_iotop_args(&args(&["-q"])).unwrap().batch);
    }
}
