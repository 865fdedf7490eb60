//! procps-ng 4.0.2 `ps`: `aux` (BSD user format), `-e`/`-A`, `-f`, `-F`, `-l`, `-lf`, `-lF`, `-o`/`-eo`
//! with the common format specifiers, `-p PID,...`, `-C NAME,...`, `--sort=[+-]KEY`,
//! `--no-headers`. Column widths, alignment (a column that overflows pushes the next one
//! only as far as it must, as show_one_proc does) and the `%CPU` / `%MEM` / `TIME` /
//! `ELAPSED` arithmetic follow ps/output.c and ps/display.c.

use memtwin_procfs::{Snapshot, TaskInfo};

/// One format specifier: (names accepted, header, width, right-aligned).
const SPECS: &[(&[&str], &str, usize, bool)] = &[
    (&["pid"], "PID", 5, true),
    (&["ppid"], "PPID", 5, true),
    (&["user", "euser", "uname"], "USER", 8, false),
    (&["uid"], "UID", 5, true),
    (&["comm", "ucmd", "ucomm"], "COMMAND", 15, false),
    (&["args", "command"], "COMMAND", 27, false),
    (&["cmd"], "CMD", 27, false),
    (&["rss", "rssize"], "RSS", 5, true),
    (&["rsz"], "RSZ", 5, true),
    (&["vsz", "vsize"], "VSZ", 6, true),
    (&["sz"], "SZ", 5, true),
    (&["%mem", "pmem"], "%MEM", 4, true),
    (&["%cpu", "pcpu"], "%CPU", 4, true),
    (&["stat"], "STAT", 4, false),
    (&["s", "state"], "S", 1, false),
    (&["etime"], "ELAPSED", 11, true),
    (&["etimes"], "ELAPSED", 7, true),
    (&["time", "cputime"], "TIME", 8, true),
    (&["tty", "tt"], "TT", 8, false),
    (&["tname"], "TTY", 8, false),
    (&["bsdtime"], "TIME", 6, true),
    (&["ni", "nice"], "NI", 3, true),
    (&["pri"], "PRI", 3, true),
    (&["nlwp", "thcount"], "NLWP", 4, true),
    (&["start", "start_time"], "START", 5, true),
    (&["stime"], "STIME", 5, true),
    (&["f", "flag", "flags"], "F", 1, true),
    (&["c"], "C", 2, true),
    (&["opri"], "PRI", 3, true),
    (&["addr"], "ADDR", 1, true),
    (&["wchan"], "WCHAN", 6, false),
    (&["psr", "cpuid"], "PSR", 3, true),
];

pub fn ps_format_names() -> String {
    SPECS.iter().map(|s| s.0[0]).collect::<Vec<_>>().join(",")
}

/// Per-task facts ps reads that the snapshot does not carry.
#[derive(Clone, Debug, Default)]
pub struct PsTaskExtra {
    pub ppid: u32,
    /// Controlling terminal name ("pts/0") or None ("?").
    pub tty: Option<String>,
    /// Session leader ('s'), foreground process group ('+').
    pub session_leader: bool,
    pub foreground: bool,
}

#[derive(Clone, Debug)]
pub struct PsOptions {
    /// Columns by index into SPECS, with a header override (`pid=` empties it).
    pub cols: Vec<(usize, Option<String>)>,
    pub pids: Vec<u32>,
    pub names: Vec<String>,
    /// Only processes with a terminal (plain `ps`), or all.
    pub all: bool,
    /// Sort keys: (column index, descending).
    pub sort: Vec<(usize, bool)>,
    pub headers: bool,
}

fn spec_index(name: &str) -> Option<usize> {
    SPECS.iter().position(|s| s.0.contains(&name))
}

fn unknown(name: &str) -> String {
    format!("ps: error: unknown user-defined format specifier \"{name}\" (supported: {})", ps_format_names())
}

/// Parse ps's command line (the BSD `aux` form and the standard `-e -o ...` form).
pub fn parse_ps_args(args: &[String]) -> Result<PsOptions, String> {
    let mut o = PsOptions { cols: Vec::new(), pids: Vec::new(), names: Vec::new(), all: false, sort: Vec::new(), headers: true };
    let mut user_fmt = false;
    let (mut full, mut long, mut extra) = (false, false, false);
    let mut it = args.iter().peekable();
    let parse_cols = |o: &mut PsOptions, v: &str| -> Result<(), String> {
        for item in v.split([',', ' ']).filter(|s| !s.is_empty()) {
            let (name, hdr) = match item.split_once('=') {
                Some((n, h)) => (n, Some(h.to_string())),
                None => (item, None),
            };
            let i = spec_index(name).ok_or_else(|| unknown(name))?;
            o.cols.push((i, hdr));
        }
        Ok(())
    };
    let parse_sort = |o: &mut PsOptions, v: &str| -> Result<(), String> {
        for key in v.split(',') {
            let (desc, name) = match key.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, key.strip_prefix('+').unwrap_or(key)),
            };
            let i = spec_index(name).ok_or_else(|| format!("ps: error: unknown sort specifier \"{name}\""))?;
            o.sort.push((i, desc));
        }
        Ok(())
    };
    while let Some(a) = it.next() {
        let a = a.as_str();
        if let Some(v) = a.strip_prefix("--sort=") {
            parse_sort(&mut o, v)?;
            continue;
        }
        match a {
            "--sort" => parse_sort(&mut o, it.next().ok_or("ps: error: --sort needs a key list")?)?,
            "--no-headers" | "--no-heading" => o.headers = false,
            "-o" | "--format" => parse_cols(&mut o, it.next().ok_or("ps: error: -o needs a format list")?)?,
            "-p" | "--pid" => {
                for p in it.next().ok_or("ps: error: list of process IDs must follow -p")?.split(',') {
                    o.pids.push(p.parse().map_err(|_| "ps: error: process ID list syntax error".to_string())?);
                }
            }
            "-C" => o.names.extend(it.next().ok_or("ps: error: list of command names must follow -C")?.split(',').map(String::from)),
            _ if a.starts_with("--") => return Err(format!("ps: error: unknown gnu long option \"{a}\" (supported: --sort, --no-headers, --format, --pid)")),
            _ if a.starts_with('-') => {
                let cs: Vec<char> = a[1..].chars().collect();
                let mut i = 0;
                while i < cs.len() {
                    match cs[i] {
                        'e' | 'A' => o.all = true,
                        'f' => full = true,
                        'l' => long = true,
                        'F' => extra = true,
                        'o' | 'p' | 'C' => {
                            let rest: String = cs[i + 1..].iter().collect();
                            let v = if rest.is_empty() { it.next().cloned().ok_or("ps: error: option needs an argument")? } else { rest };
                            match cs[i] {
                                'o' => parse_cols(&mut o, &v)?,
                                'p' => {
                                    for p in v.split(',') {
                                        o.pids.push(p.parse().map_err(|_| "ps: error: process ID list syntax error".to_string())?);
                                    }
                                }
                                _ => o.names.extend(v.split(',').map(String::from)),
                            }
                            i = cs.len();
                            continue;
                        }
                        c => return Err(format!("ps: error: unsupported SysV option -{c} (supported: -e -A -f -F -l -o -p -C)")),
                    }
                    i += 1;
                }
            }
            _ => {
                // BSD options without a dash: a, u, x (and a pid list).
                if a.chars().all(|c| c.is_ascii_digit() || c == ',') {
                    for p in a.split(',').filter(|s| !s.is_empty()) {
                        o.pids.push(p.parse().map_err(|_| "ps: error: process ID list syntax error".to_string())?);
                    }
                    continue;
                }
                for c in a.chars() {
                    match c {
                        'a' | 'x' => o.all = true,
                        'u' => user_fmt = true,
                        'w' => {}
                        c => return Err(format!("ps: error: unsupported option (BSD syntax) '{c}' (supported: a, u, x, w)")),
                    }
                }
            }
        }
    }
    if o.cols.is_empty() {
        // ps/display.c's default formats: -f "UID PID PPID C STIME TTY TIME CMD", -l
        // "F S UID PID PPID C PRI NI ADDR SZ WCHAN TTY TIME CMD", both "F S UID PID PPID C
        // PRI NI ADDR SZ WCHAN STIME TTY TIME CMD" (-f shows the user name under UID).
        let names: &[(&str, Option<&str>)] = if user_fmt {
            &[("user", None), ("pid", None), ("%cpu", None), ("%mem", None), ("vsz", None), ("rss", None), ("tname", None), ("stat", None), ("start", None), ("bsdtime", None), ("args", None)]
        } else if extra && long {
            // -lF: the long format with -F's RSS and PSR before STIME (ps/display.c).
            &[("f", None), ("s", None), ("user", Some("UID")), ("pid", None), ("ppid", None), ("c", None), ("opri", None), ("ni", None), ("addr", None), ("sz", None), ("wchan", None), ("rss", None), ("psr", None), ("stime", None), ("tname", None), ("time", None), ("cmd", None)]
        } else if extra {
            // -F: "extra full", -f plus SZ, RSS and PSR between C and STIME.
            &[("user", Some("UID")), ("pid", None), ("ppid", None), ("c", None), ("sz", None), ("rss", None), ("psr", None), ("stime", None), ("tname", None), ("time", None), ("cmd", None)]
        } else if full && long {
            &[("f", None), ("s", None), ("user", Some("UID")), ("pid", None), ("ppid", None), ("c", None), ("opri", None), ("ni", None), ("addr", None), ("sz", None), ("wchan", None), ("stime", None), ("tname", None), ("time", None), ("cmd", None)]
        } else if long {
            &[("f", None), ("s", None), ("uid", None), ("pid", None), ("ppid", None), ("c", None), ("opri", None), ("ni", None), ("addr", None), ("sz", None), ("wchan", None), ("tname", None), ("time", None), ("comm", Some("CMD"))]
        } else if full {
            &[("user", Some("UID")), ("pid", None), ("ppid", None), ("c", None), ("stime", None), ("tname", None), ("time", None), ("cmd", None)]
        } else {
            // ps/common.h DFMT "pid,tname,time,ucmd": the command name, not its arguments.
            &[("pid", None), ("tname", None), ("time", None), ("comm", Some("CMD"))]
        };
        for (n, h) in names {
            o.cols.push((spec_index(n).expect("known"), h.map(String::from)));
        }
    }
    if !o.pids.is_empty() || !o.names.is_empty() {
        o.all = true;
    }
    Ok(o)
}

fn ticks(ns: u64) -> u64 {
    ns / 10_000_000
}

/// "[[DD-]hh:]mm:ss"
fn etime(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}-{h:02}:{m:02}:{s:02}")
    } else if h > 0 {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{m:02}:{s:02}")
    }
}

/// "[DD-]HH:MM:SS"
fn cputime(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 { format!("{d}-{h:02}:{m:02}:{s:02}") } else { format!("{h:02}:{m:02}:{s:02}") }
}

fn cell(i: usize, t: &TaskInfo, x: &PsTaskExtra, s: &Snapshot, boot_wall_s: u64) -> String {
    let up_s = s.uptime_ns as f64 / 1e9;
    let elapsed = (s.uptime_ns.saturating_sub(t.start_ns)) as f64 / 1e9;
    let total_ticks = ticks(t.utime_ns + t.stime_ns);
    let args = if t.kthread || t.cmdline.is_empty() { format!("[{}]", t.comm) } else { t.cmdline.clone() };
    let _ = up_s;
    match SPECS[i].0[0] {
        "pid" => t.pid.to_string(),
        "ppid" => x.ppid.to_string(),
        "user" => t.user.clone(),
        "uid" => "0".into(),
        "comm" => t.comm.clone(),
        "args" | "cmd" => args,
        "rss" | "rsz" => t.res_kb.to_string(),
        "vsz" => t.virt_kb.to_string(),
        "sz" => (t.virt_kb / 4).to_string(),
        "%mem" => {
            // pr_pmem: rss * 1000 / MemTotal, as "%2u.%u".
            let pmem = t.res_kb * 1000 / s.mem.mem_total.max(1);
            format!("{}.{}", pmem / 10, pmem % 10)
        }
        "%cpu" => {
            // pr_pcpu: CPU seconds * 1000 / seconds alive.
            let pcpu = if elapsed > 0.0 { ((total_ticks as f64 * 1000.0 / 100.0) / elapsed) as u64 } else { 0 };
            if pcpu > 999 { format!("{}", pcpu / 10) } else { format!("{}.{}", pcpu / 10, pcpu % 10) }
        }
        "stat" => {
            let mut st = t.state.letter().to_string();
            if x.session_leader {
                st.push('s');
            }
            if x.foreground {
                st.push('+');
            }
            st
        }
        "s" => t.state.letter().to_string(),
        "etime" => etime(elapsed as u64),
        "etimes" => (elapsed as u64).to_string(),
        "time" => cputime(total_ticks / 100),
        "tty" | "tname" => x.tty.clone().unwrap_or_else(|| "?".into()),
        "bsdtime" => {
            // "%3u:%02u": minutes and seconds of CPU time.
            let secs = total_ticks / 100;
            format!("{}:{:02}", secs / 60, secs % 60)
        }
        "ni" => t.nice.to_string(),
        "pri" => (19 - t.nice).to_string(),
        // pr_opri: 60 + task_prio (80 for nice 0).
        "opri" => (80 + t.nice).to_string(),
        // pr_flag: PF_FORKNOEXEC (1) for kernel threads, PF_SUPERPRIV (4) for init, which
        // used root's privileges; a command exec'd from the script has neither.
        "f" => (if t.kthread { 1 } else if t.pid == 1 { 4 } else { 0 }).to_string(),
        // pr_c: the integer %CPU, at most 99.
        "c" => {
            let pcpu = if elapsed > 0.0 { ((total_ticks as f64 * 1000.0 / 100.0) / elapsed) as u64 } else { 0 };
            (pcpu / 10).min(99).to_string()
        }
        "addr" => "-".into(),
        "wchan" => if t.wchan.is_empty() { "-".into() } else { t.wchan.to_string() },
        "psr" => t.cpu.to_string(),
        "nlwp" => "1".into(),
        "start" => {
            let w = boot_wall_s + t.start_ns / 1_000_000_000;
            format!("{:02}:{:02}", w / 3600 % 24, w / 60 % 60)
        }
        "stime" => {
            // pr_stime: HH:MM for a process started today, MonDD before (the boot day is
            // Nov 23).
            let w = boot_wall_s + t.start_ns / 1_000_000_000;
            let now = boot_wall_s + s.uptime_ns / 1_000_000_000;
            if w / 86400 == now / 86400 {
                format!("{:02}:{:02}", w / 3600 % 24, w / 60 % 60)
            } else {
                format!("Nov{}", 23 + w / 86400)
            }
        }
        _ => String::new(),
    }
}

/// The ps listing. `extra` is parallel to `s.tasks`. `boot_wall_s`: time of day at boot.
pub fn ps(s: &Snapshot, extra: &[PsTaskExtra], o: &PsOptions, boot_wall_s: u64) -> String {
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    for (ti, t) in s.tasks.iter().enumerate() {
        let x = &extra[ti];
        let selected = if !o.pids.is_empty() || !o.names.is_empty() {
            o.pids.contains(&t.pid) || o.names.iter().any(|n| *n == t.comm)
        } else {
            o.all || x.tty.is_some()
        };
        if !selected {
            continue;
        }
        rows.push((ti, o.cols.iter().map(|(i, _)| cell(*i, t, x, s, boot_wall_s)).collect()));
    }
    if !o.sort.is_empty() {
        let key = |ti: usize, ci: usize| -> (u64, String) {
            let t = &s.tasks[ti];
            let n = match SPECS[ci].0[0] {
                "pid" => t.pid as u64,
                "ppid" => extra[ti].ppid as u64,
                "rss" | "rsz" | "%mem" => t.res_kb,
                "vsz" | "sz" => t.virt_kb,
                "%cpu" | "time" | "bsdtime" => t.utime_ns + t.stime_ns,
                "etime" | "etimes" | "start" => u64::MAX - t.start_ns,
                _ => 0,
            };
            (n, cell(ci, t, &extra[ti], s, boot_wall_s))
        };
        rows.sort_by(|a, b| {
            for &(ci, desc) in &o.sort {
                let c = key(a.0, ci).cmp(&key(b.0, ci));
                let c = if desc { c.reverse() } else { c };
                if c != std::cmp::Ordering::Equal {
                    return c;
                }
            }
            std::cmp::Ordering::Equal
        });
    }
    let ncols = o.cols.len();
    let fmt_line = |cells: &[String]| {
        // show_one_proc: each column has a nominal place (widths plus one space each); a
        // right-aligned text ends at its column's end, a left-aligned one starts at its
        // start, and either is pushed right just enough to keep one space after the text
        // before it (an overflowing column borrows from the next, not from all the rest).
        let mut line = String::new();
        let (mut nominal, mut cur) = (0usize, 0usize);
        for (k, (ci, _)) in o.cols.iter().enumerate() {
            let (_, _, w, right) = SPECS[*ci];
            let c = &cells[k];
            let last = k + 1 == ncols;
            let text: String = if right || last { c.clone() } else { c.chars().take(w).collect() };
            let n = text.chars().count();
            let min_start = if k == 0 { 0 } else { cur + 1 };
            let start = if right { (nominal + w).saturating_sub(n).max(min_start) } else { nominal.max(min_start) };
            line.push_str(&" ".repeat(start - cur));
            line.push_str(&text);
            cur = start + n;
            nominal += w + 1;
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
        line
    };
    let mut out = String::new();
    let all_empty = o.cols.iter().all(|(_, h)| h.as_deref() == Some(""));
    if o.headers && !all_empty {
        let hdrs: Vec<String> = o.cols.iter().map(|(ci, h)| h.clone().unwrap_or_else(|| SPECS[*ci].1.to_string())).collect();
        out.push_str(&fmt_line(&hdrs));
    }
    for (_, r) in rows {
        out.push_str(&fmt_line(&r));
    }
    out
}

/// procps `uptime`: " HH:MM:SS up D days, H:MM,  N user,  load average: a, b, c".
pub fn uptime_line(s: &Snapshot, wall_s: u64, users: u32) -> String {
    let up = s.uptime_ns / 1_000_000_000;
    let (days, h, m) = (up / 86400, up / 3600 % 24, up / 60 % 60);
    let mut t = format!(" {:02}:{:02}:{:02} up ", wall_s / 3600 % 24, wall_s / 60 % 60, wall_s % 60);
    if days > 0 {
        t.push_str(&format!("{days} day{}, ", if days == 1 { "" } else { "s" }));
    }
    if h > 0 {
        t.push_str(&format!("{h:2}:{m:02}, "));
    } else {
        t.push_str(&format!("{m} min, "));
    }
    let [a, b, c] = s.loadavg;
    // procps-ng 4.0.2 prints "user" for 0 and 1.
    t.push_str(&format!("{users:2} user{},  load average: {a:.2}, {b:.2}, {c:.2}\n", if users > 1 { "s" } else { "" }));
    t
}
