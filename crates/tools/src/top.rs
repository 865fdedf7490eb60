//! `top -b` (batch mode), as procps-ng 4.0.2 prints it (`top -b`, Debian 12): src/top/top.c
//! (`summary_show`, `do_cpus`, `do_memory`, `task_show`, `calibrate_fields`), top_nls.c
//! and library/{uptime,stat,pids,meminfo}.c, with the default configuration (no toprc):
//!
//! ```text
//! top - 06:35:25 up 18 min,  1 user,  load average: 0.66, 0.69, 0.36
//! Tasks:  76 total,   1 running,  75 sleeping,   0 stopped,   0 zombie
//! %Cpu(s):  0.0 us,  0.0 sy,  0.0 ni,100.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st
//! MiB Mem :  24105.6 total,  23144.7 free,    310.1 used,    882.1 buff/cache
//! MiB Swap:      0.0 total,      0.0 free,      0.0 used.  23795.4 avail Mem
//!
//!     PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
//!       1 root      20   0   43408  13628   6376 S   0.0   0.1   0:04.28 systemd
//! ```
//!
//! (The summary lines end in spaces exactly as the real ones do; task lines do not.)
//!
//! Details reproduced from the source:
//! * The screen is 80 columns in batch mode (`-w N` changes it; a bare `-w` means 512, as
//!   there is no COLUMNS variable in a simulation). Summary lines are cut at the width; the
//!   COMMAND column gets what is left and long names end in `+`.
//! * The PID column is as wide as `pid_max` has digits (at least 5): 7 on hosts where
//!   systemd raised pid_max to 4194304, 5 with the kernel default 32768.
//! * %CPU of a task = tick delta * 100 / (HZ * elapsed), the elapsed time taken from the
//!   two /proc/uptime readings (centiseconds), in C float, capped at 100 per thread and at
//!   99.9 on one CPU. A task not present in `prev` counts all its ticks (library/pids.c
//!   saves "elapsed tics, which will include any tasks not previously seen").
//! * The %Cpu(s) line is tick deltas of /proc/stat's cpu line (idle alone as `id`; `wa`
//!   separate), all zero when any sum went backwards, 100.0 id when nothing ticked.
//! * Memory numbers: `used` = MemTotal - MemAvailable, `buff/cache` = Buffers + Cached +
//!   SReclaimable, `avail Mem` = MemAvailable; MiB by default (`-E`), each printed `%#.1f `
//!   in 9 characters, with a `+` when it does not fit.
//! * Tasks are listed in PID order, then stably sorted on the sort field (default %CPU,
//!   i.e. the tick delta, high to low), as glibc's merge-sort qsort leaves them.
//!
//! First frame: the real top reads /proc/stat at start-up, milliseconds before its first
//! frame, and reads the tasks twice 0.15 s apart (LIB_USLEEP), so its first frame shows the
//! CPU states and task %CPU of that tiny window. With nothing happening in between that is
//! `prev = Some(cur)` (100.0 id, 0.0 %CPU: what the golden tests capture from the real top);
//! a snapshot taken 0.15 s before `cur` gives the task %CPU the real top would show.
//! `prev = None` computes everything since boot instead (CPU states from boot, task %CPU =
//! ticks since start / uptime), which is what top's very first internal reading holds.
//!
//! Across frames ([`top_batch`]): memory is re-read only when 3 wall-clock seconds have
//! passed (`memory_refresh`), so with `-d 1` two frames out of three repeat older memory
//! figures; and with `-u/-U` the first frame fixes the index the list starts from
//! (`window_hlp` runs once, from the start-up `mkVIZrow1`), so later frames skip as many
//! rows of their new order — both real top behaviours.

use std::cmp::Ordering;

use memtwin_procfs::{MemInfo, Snapshot, TaskInfo, TaskState};

use crate::getopt::{lo, GetoptLong, HasArg, LongOpt};

const HZ: u64 = 100;
const NS_PER_TICK: u64 = 1_000_000_000 / HZ;
const SCREENMAX: usize = 512;
const W_MIN_COL: usize = 3;

/// Every field name top 4.0.2 knows (`top -O`), in its order.
pub const TOP_FIELD_NAMES: &[&str] = &[
    "PID", "PPID", "UID", "USER", "RUID", "RUSER", "SUID", "SUSER", "GID", "GROUP", "PGRP", "TTY",
    "TPGID", "SID", "PR", "NI", "nTH", "P", "%CPU", "TIME", "TIME+", "%MEM", "VIRT", "SWAP", "RES",
    "CODE", "DATA", "SHR", "nMaj", "nMin", "nDRT", "S", "COMMAND", "WCHAN", "Flags", "CGROUPS",
    "SUPGIDS", "SUPGRPS", "TGID", "OOMa", "OOMs", "ENVIRON", "vMj", "vMn", "USED", "nsIPC",
    "nsMNT", "nsNET", "nsPID", "nsUSER", "nsUTS", "LXC", "RSan", "RSfd", "RSlk", "RSsh", "CGNAME",
    "NU", "LOGID", "EXE", "RSS", "PSS", "PSan", "PSfd", "PSsh", "USS", "ioR", "ioRop", "ioW",
    "ioWop", "AGID", "AGNI", "STARTED", "ELAPSED", "%CUU", "%CUC", "nsCGROUP", "nsTIME",
];

/// The sort fields memtwin can compute (`-o NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopSortField {
    Pid,
    User,
    Pr,
    Ni,
    Cpu,
    Time,
    TimePlus,
    Mem,
    Virt,
    Swap,
    Res,
    Shr,
    State,
    Command,
}

impl TopSortField {
    fn from_name(n: &str) -> Option<TopSortField> {
        Some(match n {
            "PID" => TopSortField::Pid,
            "USER" => TopSortField::User,
            "PR" => TopSortField::Pr,
            "NI" => TopSortField::Ni,
            "%CPU" => TopSortField::Cpu,
            "TIME" => TopSortField::Time,
            "TIME+" => TopSortField::TimePlus,
            "%MEM" => TopSortField::Mem,
            "VIRT" => TopSortField::Virt,
            "SWAP" => TopSortField::Swap,
            "RES" => TopSortField::Res,
            "SHR" => TopSortField::Shr,
            "S" => TopSortField::State,
            "COMMAND" => TopSortField::Command,
            _ => return None,
        })
    }
}

/// Memory scaling (`-E` for the summary, `-e` for task columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TopScale {
    KiB = 0,
    MiB = 1,
    GiB = 2,
    TiB = 3,
    PiB = 4,
    EiB = 5,
}

impl TopScale {
    fn from_index(i: usize) -> TopScale {
        match i {
            0 => TopScale::KiB,
            1 => TopScale::MiB,
            2 => TopScale::GiB,
            3 => TopScale::TiB,
            4 => TopScale::PiB,
            _ => TopScale::EiB,
        }
    }
}

/// What `top`'s command line asked for, plus the few facts about the host top reads that a
/// [`Snapshot`] does not carry.
#[derive(Clone, Debug, PartialEq)]
pub struct TopOptions {
    /// `-b`. memtwin only renders batch output; without `-b` the frames are still batch-style.
    pub batch: bool,
    /// `-n N`: number of frames (None = until interrupted).
    pub iterations: Option<u64>,
    /// `-d S`: seconds between frames (top's default is 3.0).
    pub delay_s: f64,
    /// `-o FIELD` (default %CPU).
    pub sort: TopSortField,
    /// `-o -FIELD`: low to high (default high to low).
    pub sort_ascending: bool,
    /// `-w [N]`: screen width (None = 80, the terminfo width a non-tty batch run gets).
    pub width: Option<usize>,
    /// `-E`: summary memory scale (default MiB).
    pub summary_scale: TopScale,
    /// `-e`: task memory scale (default KiB).
    pub task_scale: TopScale,
    /// `-c`: COMMAND shows the command line (kernel threads as `[comm]`).
    pub cmdline: bool,
    /// `-i`: hide tasks that used no CPU in the interval.
    pub hide_idle: bool,
    /// `-H`: threads mode (each task is a thread; "Threads:" label).
    pub threads: bool,
    /// `-p PID,...`
    pub pids: Vec<u32>,
    /// `-u USER` / `-U USER`: only tasks of this user.
    pub user: Option<String>,
    /// `-s`: secure mode (only matters for `-d`).
    pub secure: bool,
    /// Host fact: /proc/sys/kernel/pid_max (sets the PID column width). Default 4194304.
    pub pid_max: u64,
    /// Host fact: logged-in users (utmp USER_PROCESS entries). Default 1.
    pub users: u32,
    /// `-h` / `-V` / `-O`: print this on stdout and exit 0 instead of running.
    pub print_and_exit: Option<String>,
}

impl Default for TopOptions {
    fn default() -> Self {
        TopOptions {
            batch: false,
            iterations: None,
            delay_s: 3.0,
            sort: TopSortField::Cpu,
            sort_ascending: false,
            width: None,
            summary_scale: TopScale::MiB,
            task_scale: TopScale::KiB,
            cmdline: false,
            hide_idle: false,
            threads: false,
            pids: Vec::new(),
            user: None,
            secure: false,
            pid_max: 4_194_304,
            users: 1,
            print_and_exit: None,
        }
    }
}

/// procps-ng 4.0.2 `top -h`.
pub const TOP_USAGE: &str = "
Usage:
 top [options]

Options:
 -b, --batch-mode                run in non-interactive batch mode
 -c, --cmdline-toggle            reverse last remembered 'c' state
 -d, --delay =SECS [.TENTHS]     iterative delay as SECS [.TENTHS]
 -E, --scale-summary-mem =SCALE  set mem as: k,m,g,t,p,e for SCALE
 -e, --scale-task-mem =SCALE     set mem with: k,m,g,t,p for SCALE
 -H, --threads-show              show tasks plus all their threads
 -i, --idle-toggle               reverse last remembered 'i' state
 -n, --iterations =NUMBER        exit on maximum iterations NUMBER
 -O, --list-fields               output all field names, then exit
 -o, --sort-override =FIELD      force sorting on this named FIELD
 -p, --pid =PIDLIST              monitor only the tasks in PIDLIST
 -S, --accum-time-toggle         reverse last remembered 'S' state
 -s, --secure-mode               run with secure mode restrictions
 -U, --filter-any-user =USER     show only processes owned by USER
 -u, --filter-only-euser =USER   show only processes owned by USER
 -w, --width [=COLUMNS]          change print width [,use COLUMNS]
 -1, --single-cpu-toggle         reverse last remembered '1' state

 -h, --help                      display this help text, then exit
 -V, --version                   output version information & exit

For more details see top(1).
";

const TOP_LONGOPTS: &[LongOpt] = &[
    lo("batch-mode", HasArg::No, 'b' as i32),
    lo("cmdline-toggle", HasArg::No, 'c' as i32),
    lo("delay", HasArg::Required, 'd' as i32),
    lo("scale-summary-mem", HasArg::Required, 'E' as i32),
    lo("scale-task-mem", HasArg::Required, 'e' as i32),
    lo("threads-show", HasArg::No, 'H' as i32),
    lo("help", HasArg::No, 'h' as i32),
    lo("idle-toggle", HasArg::No, 'i' as i32),
    lo("iterations", HasArg::Required, 'n' as i32),
    lo("list-fields", HasArg::No, 'O' as i32),
    lo("sort-override", HasArg::Required, 'o' as i32),
    lo("pid", HasArg::Required, 'p' as i32),
    lo("accum-time-toggle", HasArg::No, 'S' as i32),
    lo("secure-mode", HasArg::No, 's' as i32),
    lo("filter-any-user", HasArg::Required, 'U' as i32),
    lo("filter-only-euser", HasArg::Required, 'u' as i32),
    lo("version", HasArg::No, 'V' as i32),
    lo("width", HasArg::Optional, 'w' as i32),
    lo("single-cpu-toggle", HasArg::No, '1' as i32),
];

/// top.c `mkfloat(str, num, whole)`.
fn mkfloat(s: &str, whole: bool) -> Option<f32> {
    if whole {
        let v = strtol_base0(s)?;
        let f = v as f32;
        return if f < i32::MAX as f32 { Some(f) } else { None };
    }
    let parse = |t: &str| -> Option<f32> {
        let t2 = t.trim_start();
        if t2.is_empty() {
            return None;
        }
        t2.parse::<f32>().ok()
    };
    let v = parse(s).or_else(|| parse(&s.replace(',', ".")))?;
    if v.is_nan() || v >= i32::MAX as f32 {
        return None;
    }
    Some(v)
}

/// `strtol(s, &end, 0)` consuming the whole string (decimal, 0x hex, 0 octal).
fn strtol_base0(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) =
        if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, h)
        } else if body.len() > 1 && body.starts_with('0') {
            (8, &body[1..])
        } else {
            (10, body)
        };
    if digits.is_empty() {
        return None;
    }
    let v = i64::from_str_radix(digits, radix).ok()?;
    Some(if neg { -v } else { v })
}

/// Parse `top`'s arguments (without the program name) as procps-ng 4.0.2 does, including
/// its "GETOPTFIX" (an option without an attached argument may take the next word, and a
/// stray word after a flag is an error: `top -b 5` → `top: unknown option '5'`). Errors
/// carry top's stderr text (top itself exits 0 after getopt's complaints). `-1` (per-CPU lines) and `-S` (cumulative child times) are
/// rejected: the snapshot has neither per-CPU counters nor child times.
pub fn parse_top_args(args: &[String]) -> Result<TopOptions, String> {
    let mut o = TopOptions::default();
    let mut delay: Option<f32> = None;
    let mut g = GetoptLong::new("top", args, "bcd:E:e:Hhin:Oo:p:SsU:u:Vw::1", TOP_LONGOPTS);
    while let Some(r) = g.next() {
        // getopt prints its own message; top then exits (bye_bye) without usage.
        let opt = r?;
        let ch = opt.ch();
        let mut cp = opt.arg.clone();
        if cp.is_none() {
            cp = g.take_following_operand();
        }
        if let Some(c) = cp.as_mut() {
            if let Some(rest) = c.strip_prefix('=') {
                *c = rest.to_string();
            }
            if c.is_empty() {
                match g.take_next_arg() {
                    Some(n) => *c = n,
                    None => return Err(format!("top: -{ch} argument missing")),
                }
            }
        }
        let takes = matches!(ch, 'd' | 'E' | 'e' | 'n' | 'o' | 'p' | 'U' | 'u' | 'w');
        match ch {
            '1' => return Err("top: -1 (separate CPU states) is not supported by memtwin: snapshots carry only the summed cpu line".into()),
            'b' => o.batch = true,
            'c' => o.cmdline = !o.cmdline,
            'd' => {
                let a = cp.clone().unwrap_or_default();
                let v = mkfloat(&a, false).ok_or_else(|| format!("top: bad delay interval '{a}'"))?;
                if v < 0.0 {
                    return Err("top: -d requires positive argument".into());
                }
                delay = Some(v);
            }
            'E' | 'e' => {
                let a = cp.clone().unwrap_or_default();
                let get = if ch == 'E' { "kmgtpe" } else { "kmgtp" };
                let first = a.chars().next().map(|c| c.to_ascii_lowercase());
                let idx = match first {
                    Some(c) if a.chars().count() == 1 => get.find(c),
                    _ => None,
                };
                let Some(i) = idx else { return Err(format!("top: bad memory scaling arg '{a}'")) };
                if ch == 'E' {
                    o.summary_scale = TopScale::from_index(i);
                } else {
                    o.task_scale = TopScale::from_index(i);
                }
            }
            'H' => o.threads = true,
            'h' => {
                o.print_and_exit = Some(TOP_USAGE.to_string());
                return Ok(o);
            }
            'i' => o.hide_idle = !o.hide_idle,
            'n' => {
                let a = cp.clone().unwrap_or_default();
                let v = mkfloat(&a, true).filter(|v| *v >= 1.0).ok_or_else(|| format!("top: bad iterations argument '{a}'"))?;
                o.iterations = Some(v as u64);
            }
            'O' => {
                let mut s = String::new();
                for n in TOP_FIELD_NAMES {
                    s.push_str(n);
                    s.push('\n');
                }
                o.print_and_exit = Some(s);
                return Ok(o);
            }
            'o' => {
                let mut a = cp.clone().unwrap_or_default();
                if let Some(r) = a.strip_prefix('+') {
                    o.sort_ascending = false;
                    a = r.to_string();
                } else if let Some(r) = a.strip_prefix('-') {
                    o.sort_ascending = true;
                    a = r.to_string();
                }
                if !TOP_FIELD_NAMES.contains(&a.as_str()) {
                    return Err(format!("top: unrecognized field name '{a}'"));
                }
                o.sort = TopSortField::from_name(&a).ok_or_else(|| {
                    format!(
                        "top: sorting on '{a}' is not supported by memtwin (it does not model that field); \
                         supported: PID USER PR NI %CPU TIME TIME+ %MEM VIRT SWAP RES SHR S COMMAND"
                    )
                })?;
            }
            'p' => {
                if o.user.is_some() {
                    return Err("top: conflicting process selections (U/p/u)".into());
                }
                let a = cp.clone().unwrap_or_default();
                for part in a.split(',') {
                    if part.is_empty() {
                        continue;
                    }
                    let bad = || format!("top: bad pid '{part}'");
                    if part.contains(['+', '-', '.']) {
                        return Err(bad());
                    }
                    let digits: String = part.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
                    let pid: u32 = digits.parse().map_err(|_| bad())?;
                    if o.pids.len() >= 20 && !o.pids.contains(&pid) {
                        return Err("top: pid limit (20) exceeded".into());
                    }
                    // pid 0 means top itself, which does not exist in a simulation.
                    if !o.pids.contains(&pid) {
                        o.pids.push(pid);
                    }
                }
            }
            'S' => return Err("top: -S (cumulative time) is not supported by memtwin: snapshots carry no child CPU times".into()),
            's' => o.secure = true,
            'U' | 'u' => {
                if !o.pids.is_empty() || o.user.is_some() {
                    return Err("top: conflicting process selections (U/p/u)".into());
                }
                o.user = Some(cp.clone().unwrap_or_default());
            }
            'V' => {
                o.print_and_exit = Some("top from procps-ng 4.0.2\n".to_string());
                return Ok(o);
            }
            'w' => {
                match cp.as_deref() {
                    Some(a) => {
                        let v = mkfloat(a, true)
                            .filter(|v| *v >= W_MIN_COL as f32 && *v <= SCREENMAX as f32)
                            .ok_or_else(|| format!("top: bad width arg '{a}'"))?;
                        o.width = Some(v as usize);
                    }
                    None => o.width = Some(SCREENMAX),
                }
            }
            other => return Err(format!("top: invalid option -- '{other}'")),
        }
        if !takes {
            if let Some(c) = cp {
                return Err(format!("top: unknown option '{c}'"));
            }
        }
    }
    if let Some(first) = g.operands().first() {
        return Err(format!("top: unknown option '{first}'"));
    }
    if let Some(d) = delay {
        if o.secure {
            return Err("top: -d disallowed in \"secure\" mode".into());
        }
        o.delay_s = d as f64;
    }
    Ok(o)
}

// ---------------------------------------------------------------------------------------
// Formatting helpers (top.c "Basic Formatting support").

/// `justify_pad`: `%*.*s` (right) or `%-*.*s` (left), then the one-space column pad.
fn justify_pad(s: &str, width: usize, right: bool) -> String {
    let t: String = s.chars().take(width).collect();
    if right {
        format!("{t:>width$} ")
    } else {
        format!("{t:<width$} ")
    }
}

/// `make_num`: the number, or its first width-1 digits and '+' when too wide.
fn make_num(n: i64, width: usize) -> String {
    let mut s = n.to_string();
    if width < s.len() {
        let w = width.max(1);
        s.truncate(w - 1);
        s.push('+');
    }
    justify_pad(&s, width, true)
}

/// `make_str` / `make_str_utf8`: truncated with '+' when too wide.
fn make_str(s: &str, width: usize, right: bool) -> String {
    let n = s.chars().count();
    let t = if width < n {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('+');
        t
    } else {
        s.to_string()
    };
    justify_pad(&t, width, right)
}

/// C's printf of a float promoted to double with `%.Nf` (NaN prints as glibc's "-nan").
fn cfmt(v: f32, prec: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    format!("{:.prec$}", v as f64)
}

/// `scale_mem(target, num, width)`: KiB in, scaled to fit.
fn scale_mem(target: TopScale, num_kb: u64, width: usize) -> String {
    const SFX: [char; 6] = ['k', 'm', 'g', 't', 'p', 'e'];
    let mut num = num_kb as f32;
    for (i, sfx) in SFX.iter().enumerate().take(5) {
        if i >= target as usize {
            let s = if i == 0 {
                cfmt(num, 0)
            } else {
                format!("{}{}", cfmt(num, 1), sfx)
            };
            if s.len() <= width {
                return justify_pad(&s, width, true);
            }
        }
        num = (num as f64 / 1024.0) as f32;
    }
    justify_pad("?", width, true)
}

/// `scale_pcnt(num, width, justr, 0)`.
fn scale_pcnt(num: f32, width: usize) -> String {
    let s = cfmt(num, 1);
    if s.len() <= width {
        return justify_pad(&s, width, true);
    }
    let s = format!("{:>width$}", cfmt(num, 0));
    if s.len() <= width {
        return justify_pad(&s, width, true);
    }
    justify_pad("?", width, true)
}

/// `scale_tics(tics, width, justr, TICS_AS_SECS)` (TIME+) and `TICS_AS_MINS` (TIME).
fn scale_tics(tics: u64, width: usize, as_mins: bool) -> String {
    let nt = tics.wrapping_mul(100) / HZ;
    let cent = nt % 100;
    let secs = nt / 100;
    let mins = secs / 60;
    let hour = mins / 60;
    let days = hour / 24;
    let week = days / 7;
    let fits = |s: String| if s.len() <= width { Some(s) } else { None };
    let mut cands: Vec<String> = Vec::new();
    if mins < 361 {
        if !as_mins {
            cands.push(format!("{}:{:02}.{:02}", mins, secs % 60, cent));
        }
        cands.push(format!("{}:{:02}", mins, secs % 60));
    }
    if hour < 97 {
        cands.push(format!("{},{:02}", hour, mins % 60));
    }
    if days < 15 {
        cands.push(format!("{}d+{}h", days, hour % 24));
        cands.push(format!("{days}d"));
    }
    cands.push(format!("{}w+{}d", week, days % 7));
    cands.push(format!("{week}w"));
    for c in cands {
        if let Some(s) = fits(c) {
            return justify_pad(&s, width, true);
        }
    }
    // "well shoot, this outta' fit...": top leaves the last attempt in the buffer.
    justify_pad(&format!("{week}w"), width, true)
}

/// show_special's fit-to-screen: a summary line keeps at most `cols` characters.
fn fit(line: &str, cols: usize) -> String {
    line.chars().take(cols).collect()
}

// ---------------------------------------------------------------------------------------

fn task_ticks(t: &TaskInfo) -> u64 {
    t.utime_ns / NS_PER_TICK + t.stime_ns / NS_PER_TICK
}

/// /proc/uptime's value as top parses it: seconds with two decimals.
fn uptime_secs(s: &Snapshot) -> f64 {
    (s.uptime_ns / 10_000_000) as f64 / 100.0
}

struct Derived {
    total: u64,
    free: u64,
    used: u64,
    qued: u64,
    avail: u64,
    swap_total: u64,
    swap_free: u64,
    swap_used: u64,
}

fn mem_derived(m: &MemInfo) -> Derived {
    let mut avail = m.mem_available;
    if avail == 0 || avail > m.mem_total {
        avail = m.mem_free;
    }
    let mut used = (m.mem_total as i64).wrapping_sub(avail as i64);
    if used < 0 {
        used = (m.mem_total as i64).wrapping_sub(m.mem_free as i64);
    }
    Derived {
        total: m.mem_total,
        free: m.mem_free,
        used: used as u64,
        qued: m
            .buffers
            .wrapping_add(m.cached)
            .wrapping_add(m.sreclaimable),
        avail,
        swap_total: m.swap_total,
        swap_free: m.swap_free,
        swap_used: m.swap_total.saturating_sub(m.swap_free),
    }
}

/// The `top - HH:MM:SS up ...` part after "top -" (library/uptime.c `procps_uptime_sprint`).
fn uptime_line(cur: &Snapshot, wall_clock_s: u64, users: u32) -> String {
    let t = wall_clock_s % 86_400;
    let up = (uptime_secs(cur) as i64).clamp(0, i32::MAX as i64);
    let updays = up / 86_400;
    let uphours = (up / 3600) % 24;
    let upmin = (up / 60) % 60;
    let mut s = format!(" {:02}:{:02}:{:02} up ", t / 3600, (t / 60) % 60, t % 60);
    if updays != 0 {
        s.push_str(&format!(
            "{} {}, ",
            updays,
            if updays > 1 { "days" } else { "day" }
        ));
    }
    if uphours != 0 {
        s.push_str(&format!("{uphours:2}:{upmin:02}, "));
    } else {
        s.push_str(&format!("{upmin} min, "));
    }
    let la = |v: f64| {
        if v.is_finite() {
            format!("{v:.2}")
        } else {
            format!("{v}").to_lowercase()
        }
    };
    s.push_str(&format!(
        "{:2} {},  load average: {}, {}, {}",
        users,
        if users > 1 { "users" } else { "user" },
        la(cur.loadavg[0]),
        la(cur.loadavg[1]),
        la(cur.loadavg[2])
    ));
    s
}

fn cpu_line(prev: Option<&Snapshot>, cur: &Snapshot) -> String {
    let t = |c: &memtwin_procfs::CpuStat| {
        let f = |ns: u64| ns / NS_PER_TICK;
        [
            f(c.user),
            f(c.nice),
            f(c.system),
            f(c.idle),
            f(c.iowait),
            f(c.irq),
            f(c.softirq),
            f(c.steal),
        ]
    };
    let n = t(&cur.cpu);
    let o = prev.map(|p| t(&p.cpu)).unwrap_or([0; 8]);
    // library/stat.c: derived sums, and "don't distort deltas" when one went backwards.
    let sums = |v: &[u64; 8]| {
        let xusr = v[0].wrapping_add(v[1]);
        let xsys = v[2].wrapping_add(v[5]).wrapping_add(v[6]);
        let xidl = v[3].wrapping_add(v[4]);
        let xtot = xusr
            .wrapping_add(xsys)
            .wrapping_add(xidl)
            .wrapping_add(v[7]);
        [xusr, xsys, xidl, xtot.wrapping_sub(xidl), xtot]
    };
    let (sn, so) = (sums(&n), sums(&o));
    let reset = sn.iter().zip(so.iter()).any(|(a, b)| a < b);
    let d: Vec<i64> = (0..8)
        .map(|i| {
            if reset {
                0
            } else {
                n[i].saturating_sub(o[i]).min(i64::MAX as u64) as i64
            }
        })
        .collect();
    let tot: i64 = if reset {
        0
    } else {
        sn[4].saturating_sub(so[4]).min(i64::MAX as u64) as i64
    };
    let (mut idl, mut tot) = (d[3], tot);
    if tot < 1 {
        idl = 1;
        tot = 1;
    }
    let scale: f32 = (100.0f64 / (tot as f32) as f64) as f32;
    let f = |x: i64| format!("{:>5}", cfmt((x as f32) * scale, 1));
    format!(
        "%Cpu(s):{} us,{} sy,{} ni,{} id,{} wa,{} hi,{} si,{} st ",
        f(d[0]),
        f(d[2]),
        f(d[1]),
        f(idl),
        f(d[4]),
        f(d[5]),
        f(d[6]),
        f(d[7])
    )
}

/// `prT`: `%#.1f ` (or `%.0f ` for KiB) into a 10-byte buffer, '+' at [8] when cut.
fn pr_t(v_kb: u64, scale: TopScale) -> String {
    let div: f32 = match scale {
        TopScale::KiB => 1.0,
        TopScale::MiB => 1024.0,
        TopScale::GiB => 1024.0 * 1024.0,
        TopScale::TiB => 1024.0 * 1024.0 * 1024.0,
        TopScale::PiB => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        TopScale::EiB => 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0,
    };
    let v = (v_kb as f32) / div;
    let s = if scale == TopScale::KiB {
        format!("{} ", cfmt(v, 0))
    } else {
        format!("{} ", cfmt(v, 1))
    };
    if s.len() > 9 {
        let mut t: String = s.chars().take(8).collect();
        t.push('+');
        t
    } else {
        s
    }
}

fn mem_lines(m: &MemInfo, scale: TopScale) -> (String, String) {
    let d = mem_derived(m);
    let label = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"][scale as usize];
    let c = |v: u64| {
        let s = pr_t(v, scale);
        format!("{s:>9.9}")
    };
    let l1 = format!(
        "{label} Mem : {}total, {}free, {}used, {}buff/cache     ",
        c(d.total),
        c(d.free),
        c(d.used),
        c(d.qued)
    );
    let l2 = format!(
        "{label} Swap: {}total, {}free, {}used. {}avail Mem ",
        c(d.swap_total),
        c(d.swap_free),
        c(d.swap_used),
        c(d.avail)
    );
    (l1, l2)
}

/// The columns of the default field list and their widths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Col {
    Pid,
    User,
    Pr,
    Ni,
    Virt,
    Res,
    Shr,
    S,
    Cpu,
    Mem,
    TimePlus,
    Command,
}

const COLS: [Col; 12] = [
    Col::Pid,
    Col::User,
    Col::Pr,
    Col::Ni,
    Col::Virt,
    Col::Res,
    Col::Shr,
    Col::S,
    Col::Cpu,
    Col::Mem,
    Col::TimePlus,
    Col::Command,
];

fn col_name(c: Col) -> &'static str {
    match c {
        Col::Pid => "PID",
        Col::User => "USER",
        Col::Pr => "PR",
        Col::Ni => "NI",
        Col::Virt => "VIRT",
        Col::Res => "RES",
        Col::Shr => "SHR",
        Col::S => "S",
        Col::Cpu => "%CPU",
        Col::Mem => "%MEM",
        Col::TimePlus => "TIME+",
        Col::Command => "COMMAND",
    }
}

/// Field width (`None` = the variable-width COMMAND), and right-justification.
fn col_width(c: Col, pid_w: usize) -> (Option<usize>, bool) {
    match c {
        Col::Pid => (Some(pid_w), true),
        Col::User => (Some(8), false),
        Col::Pr | Col::Ni => (Some(3), true),
        Col::Virt => (Some(7), true),
        Col::Res | Col::Shr => (Some(6), true),
        Col::S => (Some(1), true),
        Col::Cpu | Col::Mem => (Some(5), true),
        Col::TimePlus => (Some(9), true),
        Col::Command => (None, false),
    }
}

/// calibrate_fields: the columns that fit and the COMMAND width.
fn layout(cols: usize, pid_w: usize) -> (Vec<Col>, usize) {
    let mut shown = Vec::new();
    let mut len_sum = 0usize;
    let mut var = 0usize;
    let mut nvar = 0usize;
    for c in COLS {
        let (w, _) = col_width(c, pid_w);
        let len = w.unwrap_or(col_name(c).len()) + 1;
        if cols < len_sum + len {
            break;
        }
        if w.is_none() {
            nvar += 1;
            var += col_name(c).len();
        }
        len_sum += len;
        shown.push(c);
    }
    // `varcolsz += Screen_cols - strlen(columnhdr)` (int arithmetic).
    let mut varcolsz = (var as i64 + cols as i64 - len_sum as i64).max(0) as usize;
    varcolsz = varcolsz.checked_div(nvar).unwrap_or(varcolsz);
    (shown, varcolsz)
}

fn trim_end_spaces(mut s: String) -> String {
    let n = s.trim_end_matches(' ').len();
    s.truncate(n);
    s
}

fn command_of(t: &TaskInfo, cmdline: bool) -> String {
    if !cmdline {
        return t.comm.clone();
    }
    let c = t.cmdline.replace('\0', " ");
    let c = c.trim_end().to_string();
    if c.is_empty() || t.kthread {
        // readproc.c fill_cmdline_cvt: escape_command(ESC_BRACKETS | ESC_DEFUNCT).
        let defunct = if t.state == TaskState::Zombie {
            " <defunct>"
        } else {
            ""
        };
        format!("[{}]{defunct}", t.comm)
    } else {
        c
    }
}

struct Row<'a> {
    t: &'a TaskInfo,
    /// PIDS_TICS_ALL_DELTA, a C `unsigned int`.
    pcpu: u32,
}

fn sort_rows(rows: &mut [Row<'_>], o: &TopOptions) {
    let key_cmp = |a: &Row<'_>, b: &Row<'_>| -> Ordering {
        match o.sort {
            TopSortField::Pid => a.t.pid.cmp(&b.t.pid),
            TopSortField::User => a.t.user.as_bytes().cmp(b.t.user.as_bytes()),
            TopSortField::Pr => a.t.prio.cmp(&b.t.prio),
            TopSortField::Ni => a.t.nice.cmp(&b.t.nice),
            TopSortField::Cpu => a.pcpu.cmp(&b.pcpu),
            TopSortField::Time | TopSortField::TimePlus => task_ticks(a.t).cmp(&task_ticks(b.t)),
            TopSortField::Mem | TopSortField::Res => a.t.res_kb.cmp(&b.t.res_kb),
            TopSortField::Virt => a.t.virt_kb.cmp(&b.t.virt_kb),
            TopSortField::Swap => a.t.swap_kb.cmp(&b.t.swap_kb),
            TopSortField::Shr => a.t.shr_kb.cmp(&b.t.shr_kb),
            TopSortField::State => a.t.state.letter().cmp(&b.t.state.letter()),
            TopSortField::Command => command_of(a.t, o.cmdline)
                .as_bytes()
                .cmp(command_of(b.t, o.cmdline).as_bytes()),
        }
    };
    // glibc's qsort is a merge sort (stable); descending is the comparator negated.
    if o.sort_ascending {
        rows.sort_by(key_cmp);
    } else {
        rows.sort_by(|a, b| key_cmp(b, a));
    }
}

/// The wall-clock time top would print for `cur`, given the wall-clock time at boot
/// (seconds since midnight, or since the epoch: only the time of day is used).
pub fn wall_clock_at(boot_wall_clock_s: u64, cur: &Snapshot) -> u64 {
    boot_wall_clock_s.wrapping_add(cur.uptime_ns / 1_000_000_000)
}

/// One batch frame, rendered as a first frame. `prev` is the previous reading (see the
/// module docs for the first frame's choices); `wall_clock_s` is the wall-clock time of `cur`
/// in seconds (only the time of day is used; see [`wall_clock_at`]). The text ends with a
/// newline; consecutive frames are separated by one blank line (what `top -b -n N` prints
/// between them). [`top_batch`] renders a series with the state top keeps between frames.
pub fn top_frame(
    prev: Option<&Snapshot>,
    cur: &Snapshot,
    o: &TopOptions,
    wall_clock_s: u64,
) -> String {
    let mut begtask = None;
    top_frame_with_mem(prev, cur, &cur.mem, o, wall_clock_s, &mut begtask)
}

/// One frame. `begtask` is top's scroll position: `None` before the first frame, when
/// top's `window_hlp` (run once, from the startup `mkVIZrow1`) moves it to the first task
/// the `-u/-U` filter lets through, in that frame's order; later frames list from that
/// same index whatever the new order is (a real top quirk, visible only with -u/-U).
fn top_frame_with_mem(
    prev: Option<&Snapshot>,
    cur: &Snapshot,
    mem: &MemInfo,
    o: &TopOptions,
    wall_clock_s: u64,
    begtask: &mut Option<usize>,
) -> String {
    let cols = o.width.unwrap_or(80).clamp(W_MIN_COL, SCREENMAX);
    let pid_w = o.pid_max.to_string().len().max(5);
    let ncpus = cur.ncpus.max(1);
    let mut out = String::with_capacity(4096);

    // Summary.
    out.push_str(&fit(
        &format!("top -{}", uptime_line(cur, wall_clock_s, o.users)),
        cols,
    ));
    out.push('\n');

    let mut tasks: Vec<&TaskInfo> = cur.tasks.iter().collect();
    tasks.sort_by_key(|t| t.pid);
    if !o.pids.is_empty() {
        // procps_pids_select reads the PIDs in the order given.
        tasks = o
            .pids
            .iter()
            .filter_map(|p| cur.tasks.iter().find(|t| t.pid == *p))
            .collect();
    }
    let (mut running, mut sleeping, mut zombie) = (0u32, 0u32, 0u32);
    for t in &tasks {
        match t.state {
            TaskState::Running => running += 1,
            TaskState::Zombie => zombie += 1,
            TaskState::Sleeping | TaskState::DiskSleep | TaskState::Idle => sleeping += 1,
        }
    }
    out.push_str(&fit(
        &format!(
            "{}: {:3} total, {:3} running, {:3} sleeping, {:3} stopped, {:3} zombie",
            if o.threads { "Threads" } else { "Tasks" },
            tasks.len(),
            running,
            sleeping,
            0,
            zombie
        ),
        cols,
    ));
    out.push('\n');
    out.push_str(&fit(&cpu_line(prev, cur), cols));
    out.push('\n');
    let (l1, l2) = mem_lines(mem, o.summary_scale);
    out.push_str(&fit(&l1, cols));
    out.push('\n');
    out.push_str(&fit(&l2, cols));
    out.push('\n');

    // Column header.
    let (shown, varcolsz) = layout(cols, pid_w);
    let mut hdr = String::new();
    for c in &shown {
        let (w, right) = col_width(*c, pid_w);
        hdr.push_str(&justify_pad(col_name(*c), w.unwrap_or(varcolsz), right));
    }
    out.push('\n');
    out.push_str(&trim_end_spaces(hdr));
    out.push('\n');

    // %CPU scaling (tasks_refresh): et from the two /proc/uptime readings.
    let up_cur = uptime_secs(cur);
    let up_sav = prev.map(uptime_secs).unwrap_or(0.0);
    let mut et: f32 = (up_cur - up_sav) as f32;
    if et < 0.01 {
        et = 0.005;
    }
    let etscale: f32 = 100.0f32 / ((HZ as f32) * et * 1.0f32);
    let cpu_pmax: f32 = if ncpus > 1 && !o.threads {
        let m = 100.0f32 * ncpus as f32;
        if ncpus > 1000 {
            m.min(9_999_999.0)
        } else if ncpus > 100 {
            m
        } else if ncpus > 10 {
            m.min(99_999.0)
        } else {
            m.min(999.9)
        }
    } else {
        99.9
    };

    let mut rows: Vec<Row<'_>> = tasks
        .iter()
        .map(|t| {
            let now = task_ticks(t);
            let before = prev
                .and_then(|p| p.tasks.iter().find(|x| x.pid == t.pid))
                .map(task_ticks);
            let d = match before {
                Some(b) => now.saturating_sub(b),
                None => now,
            };
            Row { t, pcpu: d as u32 }
        })
        .collect();
    sort_rows(&mut rows, o);

    let mem_total = mem.mem_total;
    let selected = |r: &Row<'_>| match &o.user {
        Some(u) => r.t.user == *u,
        None => true,
    };
    let beg = *begtask.get_or_insert_with(|| rows.iter().position(selected).unwrap_or(0));
    for r in rows.iter().skip(beg) {
        if o.hide_idle && r.pcpu == 0 {
            continue;
        }
        if !selected(r) {
            continue;
        }
        let t = r.t;
        let mut line = String::new();
        for c in &shown {
            let (w, right) = col_width(*c, pid_w);
            let w = w.unwrap_or(varcolsz);
            let cell = match c {
                Col::Pid => make_num(t.pid as i64, w),
                Col::User => make_str(&t.user, w, false),
                Col::Pr => {
                    if t.prio < -99 || t.prio > 999 {
                        make_str("rt", w, true)
                    } else {
                        make_num(t.prio as i64, w)
                    }
                }
                Col::Ni => make_num(t.nice as i64, w),
                Col::Virt => scale_mem(o.task_scale, t.virt_kb, w),
                Col::Res => scale_mem(o.task_scale, t.res_kb, w),
                Col::Shr => scale_mem(o.task_scale, t.shr_kb, w),
                Col::S => justify_pad(&t.state.letter().to_string(), w, true),
                Col::Cpu => {
                    let mut u = (r.pcpu as f32) * etscale;
                    if (u as f64) > 100.0 {
                        u = 100.0;
                    }
                    if u > cpu_pmax {
                        u = cpu_pmax;
                    }
                    scale_pcnt(u, w)
                }
                Col::Mem => {
                    let v = (t.res_kb as f32) * 100.0f32 / (mem_total as f32);
                    scale_pcnt(v, w)
                }
                Col::TimePlus => scale_tics(task_ticks(t), w, false),
                Col::Command => make_str(&command_of(t, o.cmdline), w, right),
            };
            line.push_str(&cell);
        }
        out.push_str(&trim_end_spaces(line));
        out.push('\n');
    }
    out
}

/// What `top -b -n N` prints for successive snapshots (one per frame, `-d` apart):
/// frames separated by a blank line. Frame `i` takes its %CPU figures from snapshot `i - 1`;
/// the first frame from `first_prev` (see the module docs: `Some(s)` with `s` taken 0.15 s
/// before `snaps[0]` is what the real top does, `Some(&snaps[0])` gives its all-idle look,
/// `None` averages since boot). `wall_clocks[i]` is the wall-clock time of frame `i` (see
/// [`wall_clock_at`]); missing entries continue from the last one by the uptime difference.
/// Like the real top, memory is re-read only when 3 or more wall-clock seconds have passed
/// since it last was, and the `-u/-U` scroll position is fixed by the first frame.
pub fn top_batch(
    first_prev: Option<&Snapshot>,
    snaps: &[Snapshot],
    o: &TopOptions,
    wall_clocks: &[u64],
) -> String {
    let mut out = String::new();
    let mut mem_sav: Option<(u64, &MemInfo)> = None;
    let mut begtask = None;
    let mut last_wall: Option<(u64, u64)> = None; // (wall, uptime_s)
    let limit = o.iterations.unwrap_or(u64::MAX);
    for (i, cur) in snaps.iter().enumerate() {
        if i as u64 >= limit {
            break;
        }
        let up_s = cur.uptime_ns / 1_000_000_000;
        let wall = match (wall_clocks.get(i), last_wall) {
            (Some(w), _) => *w,
            (None, Some((w, u))) => w.wrapping_add(up_s.saturating_sub(u)),
            (None, None) => up_s,
        };
        last_wall = Some((wall, up_s));
        let mem = match mem_sav {
            Some((t, m)) if wall.saturating_sub(t) < 3 => m,
            _ => {
                mem_sav = Some((wall, &cur.mem));
                &cur.mem
            }
        };
        if i > 0 {
            out.push('\n');
        }
        let prev = if i > 0 {
            Some(&snaps[i - 1])
        } else {
            first_prev
        };
        out.push_str(&top_frame_with_mem(prev, cur, mem, o, wall, &mut begtask));
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
    fn tics() {
        assert_eq!(scale_tics(428, 9, false), "  0:04.28 ");
        assert_eq!(scale_tics(360 * 60 * 100 + 100, 9, false), "360:01.00 ");
        assert_eq!(scale_tics(361 * 60 * 100, 9, false), "     6,01 ");
        assert_eq!(scale_tics(97 * 3600 * 100, 9, false), "    4d+1h ");
    }

    #[test]
    fn mem_scaling() {
        assert_eq!(scale_mem(TopScale::KiB, 43408, 7), "  43408 ");
        assert_eq!(scale_mem(TopScale::KiB, 12_345_678, 7), "  11.8g ");
        assert_eq!(scale_mem(TopScale::KiB, 1_000_000, 6), "976.6m ");
        assert_eq!(pr_t(24_684_096, TopScale::MiB), "24105.6 ");
    }

    #[test]
    fn batch_rereads_memory_every_three_seconds() {
        let snap = |up_s: u64, free_kb: u64| {
            let mut s = Snapshot {
                uptime_ns: up_s * 1_000_000_000,
                ncpus: 1,
                ..Default::default()
            };
            s.mem.mem_total = 1_048_576;
            s.mem.mem_free = free_kb;
            s.mem.mem_available = free_kb;
            s
        };
        let snaps: Vec<Snapshot> = (0..4).map(|i| snap(100 + i, 1024 * (100 + i))).collect();
        let o = TopOptions::default();
        let out = top_batch(None, &snaps, &o, &[36_000]);
        let frees: Vec<&str> = out.lines().filter(|l| l.starts_with("MiB Mem")).collect();
        assert_eq!(frees.len(), 4);
        // Frames at 10:00:00, :01 and :02 show the first reading; :03 re-reads.
        assert!(
            frees[0].contains("100.0 free") && frees[2].contains("100.0 free"),
            "{frees:?}"
        );
        assert!(frees[3].contains("103.0 free"), "{frees:?}");
        assert!(out.contains("top - 10:00:03 up 1 min,"));
    }

    #[test]
    fn layout_80_columns() {
        assert_eq!(layout(80, 5).1, 10);
        assert_eq!(layout(80, 7).1, 8);
    }

    #[test]
    fn parse() {
        let o = parse_top_args(&args(&["-bn1", "-d", "0.5", "-o", "%MEM", "-w", "120"])).unwrap();
        assert!(
            o.batch && o.iterations == Some(1) && o.delay_s == 0.5 && o.sort == TopSortField::Mem
        );
        assert_eq!(o.width, Some(120));
        assert_eq!(
            parse_top_args(&args(&["-z"])).unwrap_err(),
            "top: invalid option -- 'z'"
        );
        assert_eq!(
            parse_top_args(&args(&["-n"])).unwrap_err(),
            "top: option requires an argument -- 'n'"
        );
        assert_eq!(
            parse_top_args(&args(&["-b", "-n", "x"])).unwrap_err(),
            "top: bad iterations argument 'x'"
        );
        assert_eq!(
            parse_top_args(&args(&["-o", "FOO"])).unwrap_err(),
            "top: unrecognized field name 'FOO'"
        );
        assert_eq!(
            parse_top_args(&args(&["-d", "-1"])).unwrap_err(),
            "top: -d requires positive argument"
        );
        assert_eq!(
            parse_top_args(&args(&["-E", "q"])).unwrap_err(),
            "top: bad memory scaling arg 'q'"
        );
        assert_eq!(
            parse_top_args(&args(&["--foo"])).unwrap_err(),
            "top: unrecognized option '--foo'"
        );
        assert_eq!(
            parse_top_args(&args(&["-b", "extra"])).unwrap_err(),
            "top: unknown option 'extra'"
        );
        assert!(parse_top_args(&args(&["-o", "WCHAN"]))
            .unwrap_err()
            .contains("not supported by memtwin"));
        let o = parse_top_args(&args(&["-w"])).unwrap();
        assert_eq!(o.width, Some(512));
    }
}
