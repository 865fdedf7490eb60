//! `free`, in two layouts.
//!
//! * The current one: procps-ng 4.0.2 (`free from procps-ng 4.0.2`, Debian 12), src/free.c
//!   with library/meminfo.c. `used` = MemTotal - MemAvailable (MemAvailable falls back to
//!   MemFree when it is 0 or larger than MemTotal), `buff/cache` = Buffers + Cached +
//!   SReclaimable (`-w` splits it into `buffers` = Buffers and `cache` = Cached +
//!   SReclaimable), `shared` = Shmem, `available` = MemAvailable. Numbers are right-aligned
//!   in 11 columns after a 9-column label; `-h` uses free.c's `scale_size` (at most 4 or 5
//!   characters, `Gi`-style suffixes, one decimal when it fits); `-b/-k/-m/-g/--tebi/--pebi`
//!   and the SI `--kilo ... --peta` divide and truncate like free.c (C integer and double
//!   arithmetic, including its wrap-around when `Comm:` available is negative).
//! * The old one: procps 3.2.8's free.c (what 2016-era CentOS 6 printed, as in the Qiita
//!   article), selected with memtwin's `--old`:
//!
//! ```text
//!              total       used       free     shared    buffers     cached
//! Mem:       1924020     206496    1717524          0        184       8280
//! -/+ buffers/cache:     198032    1725988
//! Swap:      4128760          0    4128760
//! ```
//!
//!   There `used` = MemTotal - MemFree, `cached` = Cached only (3.2.8 did not add
//!   SReclaimable), `shared` is always 0 (3.2.8 read the `MemShared:` line, which 2.6+
//!   kernels no longer print), and the `-/+ buffers/cache` line is used - buffers - cached
//!   and free + buffers + cached. Values are `%10Lu` of `(kB << 10) >> shift`.
//!
//! About `-o`: in procps 3.2.x `-o` meant "old format: no -/+ buffers/cache line"; procps-ng
//! 4.0.2 rejects it (`free: invalid option -- 'o'`). memtwin accepts `--old` for the 3.2.8
//! layout *with* the -/+ line (the article's table) and `-o` for the 3.2.8 layout *without*
//! it (what `free -o` printed on a 3.2.x host). In the old layout only the 3.2.8 options
//! -b -k -m -g -l -t -s -c apply.

use memtwin_procfs::{MemInfo, Snapshot};

use crate::getopt::{lo, GetoptLong, HasArg, LongOpt};

/// The unit of the numbers (ignored with `human`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeUnit {
    /// `-b, --bytes`
    Bytes,
    /// default, `-k, --kibi`
    Kibi,
    /// `-m, --mebi`
    Mebi,
    /// `-g, --gibi`
    Gibi,
    /// `--tebi`
    Tebi,
    /// `--pebi`
    Pebi,
    /// `--kilo` (SI)
    Kilo,
    /// `--mega`
    Mega,
    /// `--giga`
    Giga,
    /// `--tera`
    Tera,
    /// `--peta`
    Peta,
}

impl FreeUnit {
    /// free.c's `args.exponent` and whether the unit is SI.
    fn exponent_si(self) -> (u32, bool) {
        match self {
            FreeUnit::Bytes => (1, false),
            FreeUnit::Kibi => (2, false),
            FreeUnit::Mebi => (3, false),
            FreeUnit::Gibi => (4, false),
            FreeUnit::Tebi => (5, false),
            FreeUnit::Pebi => (6, false),
            FreeUnit::Kilo => (2, true),
            FreeUnit::Mega => (3, true),
            FreeUnit::Giga => (4, true),
            FreeUnit::Tera => (5, true),
            FreeUnit::Peta => (6, true),
        }
    }
}

/// What `free`'s command line asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FreeOptions {
    /// `None` = no unit option given (KiB, free.c's exponent 0, which `--si` turns into kB).
    pub unit: Option<FreeUnit>,
    /// `-h, --human`
    pub human: bool,
    /// `--si`: powers of 1000 (with `-h`, or with no unit).
    pub si: bool,
    /// `-w, --wide`: separate buffers and cache columns.
    pub wide: bool,
    /// `-t, --total`: a `Total:` line (RAM + swap).
    pub total: bool,
    /// `-l, --lohi`: `Low:` and `High:` lines.
    pub lohi: bool,
    /// `-v, --committed`: a `Comm:` line (CommitLimit, Committed_AS, difference).
    pub committed: bool,
    /// procps 3.2.8 layout (`--old`, or `-o`).
    pub old_layout: bool,
    /// With `old_layout`: leave out the `-/+ buffers/cache` line (3.2.x `-o`).
    pub old_no_buffers_line: bool,
    /// `-s N, --seconds N`: repeat every N seconds.
    pub seconds: Option<f64>,
    /// `-c N, --count N`: repeat N times.
    pub count: Option<u64>,
    /// `--help` / `-V`: print this on stdout and exit 0 instead of running.
    pub print_and_exit: Option<String>,
    /// `-V`: the version line (each userland's free prints its own).
    pub version: bool,
}

impl FreeOptions {
    /// Whether the tool repeats (`-s` or `-c`).
    pub fn repeats(&self) -> bool {
        self.seconds.is_some() || self.count.is_some()
    }
    /// Seconds between repeats (free.c's default is 1 s when only `-c` is given).
    pub fn interval_s(&self) -> f64 {
        self.seconds.unwrap_or(1.0)
    }
}

/// procps-ng 4.0.2 `free --help` (stdout); the same text follows errors on stderr.
pub const FREE_USAGE: &str = "
Usage:
 free [options]

Options:
 -b, --bytes         show output in bytes
     --kilo          show output in kilobytes
     --mega          show output in megabytes
     --giga          show output in gigabytes
     --tera          show output in terabytes
     --peta          show output in petabytes
 -k, --kibi          show output in kibibytes
 -m, --mebi          show output in mebibytes
 -g, --gibi          show output in gibibytes
     --tebi          show output in tebibytes
     --pebi          show output in pebibytes
 -h, --human         show human-readable output
     --si            use powers of 1000 not 1024
 -l, --lohi          show detailed low and high memory statistics
 -t, --total         show total for RAM + swap
 -v, --committed     show committed memory and commit limit
 -s N, --seconds N   repeat printing every N seconds
 -c N, --count N     repeat printing N times, then exit
 -w, --wide          wide output

     --help     display this help and exit
 -V, --version  output version information and exit

For more details see free(1).
";

/// procps 3.2.8 `free`'s help_message, printed on stderr after an option error.
pub const FREE_USAGE_PROCPS3: &str = "usage: free [-b|-k|-m|-g] [-l] [-o] [-t] [-s delay] [-c count] [-V]
  -b,-k,-m,-g show output in bytes, KB, MB, or GB
  -l show detailed low and high memory statistics
  -o use old format (no -/+buffers/cache line)
  -t display total for RAM + swap
  -s update every [delay] seconds
  -c update [count] times
  -V display version information and exit
";

/// procps 3.2.8 free's option parsing (`getopt(argc, argv, "bkmglotc:s:V")`, no long
/// options): the message glibc's getopt prints for the first option that free lacks, or
/// None when every option is one of 3.2.8's. A long option such as `--human` is an
/// invalid `-` to that getopt. `--old` is memtwin's documented name for the 3.2.8 layout and
/// passes.
pub fn procps3_free_rejects(args: &[String]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            break;
        }
        if a == "--old" {
            continue;
        }
        if !a.starts_with('-') || a.len() == 1 {
            continue;
        }
        let body: Vec<char> = a[1..].chars().collect();
        let mut j = 0;
        while j < body.len() {
            let c = body[j];
            j += 1;
            match c {
                'b' | 'k' | 'm' | 'g' | 'l' | 'o' | 't' | 'V' => {}
                'c' | 's' => {
                    if j == body.len() {
                        if i >= args.len() {
                            return Some(format!("free: option requires an argument -- '{c}'"));
                        }
                        i += 1;
                    }
                    break;
                }
                c => return Some(format!("free: invalid option -- '{c}'")),
            }
        }
    }
    None
}

const SI: i32 = 256;
const KILO: i32 = 257;
const MEGA: i32 = 258;
const GIGA: i32 = 259;
const TERA: i32 = 260;
const PETA: i32 = 261;
const TEBI: i32 = 262;
const PEBI: i32 = 263;
const HELP: i32 = 264;
const OLD: i32 = 265;

const FREE_LONGOPTS: &[LongOpt] = &[
    lo("bytes", HasArg::No, 'b' as i32),
    lo("kilo", HasArg::No, KILO),
    lo("mega", HasArg::No, MEGA),
    lo("giga", HasArg::No, GIGA),
    lo("tera", HasArg::No, TERA),
    lo("peta", HasArg::No, PETA),
    lo("kibi", HasArg::No, 'k' as i32),
    lo("mebi", HasArg::No, 'm' as i32),
    lo("gibi", HasArg::No, 'g' as i32),
    lo("tebi", HasArg::No, TEBI),
    lo("pebi", HasArg::No, PEBI),
    lo("human", HasArg::No, 'h' as i32),
    lo("si", HasArg::No, SI),
    lo("lohi", HasArg::No, 'l' as i32),
    lo("total", HasArg::No, 't' as i32),
    lo("committed", HasArg::No, 'v' as i32),
    lo("seconds", HasArg::Required, 's' as i32),
    lo("count", HasArg::Required, 'c' as i32),
    lo("wide", HasArg::No, 'w' as i32),
    lo("help", HasArg::No, HELP),
    lo("version", HasArg::No, 'V' as i32),
    // memtwin: the procps 3.2.8 layout.
    lo("old", HasArg::No, OLD),
];

/// glibc `strtod` prefix rules for free's `-s` (decimal, optional sign and exponent).
fn strtod_full(s: &str) -> Option<f64> {
    let t = s.trim_start();
    if t.is_empty() {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `strtol(s, &end, 10)` that must consume the whole (non-empty) string.
pub(crate) fn strtol_full(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut v: i64 = 0;
    for b in digits.bytes() {
        v = v.saturating_mul(10).saturating_add((b - b'0') as i64);
    }
    Some(if neg { -v } else { v })
}

/// Parse `free`'s arguments (without the program name) as procps-ng 4.0.2 does, plus
/// memtwin's `--old`/`-o`. Errors carry free's stderr text (without the final newline).
pub fn parse_free_args(args: &[String]) -> Result<FreeOptions, String> {
    let mut o = FreeOptions::default();
    let mut unit_set = false;
    let usage_err = |first: String| format!("{first}\n{}", FREE_USAGE.trim_end_matches('\n'));
    let mut g = GetoptLong::new("free", args, "bkmghltvc:ws:Vo", FREE_LONGOPTS);
    let mut set_unit = |o: &mut FreeOptions, u: FreeUnit, si: bool| -> Result<(), String> {
        if unit_set {
            return Err("free: Multiple unit options don't make sense.".to_string());
        }
        unit_set = true;
        o.unit = Some(u);
        if si {
            o.si = true;
        }
        Ok(())
    };
    for r in g.by_ref() {
        let opt = r.map_err(usage_err)?;
        match opt.val {
            v if v == 'b' as i32 => set_unit(&mut o, FreeUnit::Bytes, false)?,
            v if v == 'k' as i32 => set_unit(&mut o, FreeUnit::Kibi, false)?,
            v if v == 'm' as i32 => set_unit(&mut o, FreeUnit::Mebi, false)?,
            v if v == 'g' as i32 => set_unit(&mut o, FreeUnit::Gibi, false)?,
            TEBI => set_unit(&mut o, FreeUnit::Tebi, false)?,
            PEBI => set_unit(&mut o, FreeUnit::Pebi, false)?,
            KILO => set_unit(&mut o, FreeUnit::Kilo, true)?,
            MEGA => set_unit(&mut o, FreeUnit::Mega, true)?,
            GIGA => set_unit(&mut o, FreeUnit::Giga, true)?,
            TERA => set_unit(&mut o, FreeUnit::Tera, true)?,
            PETA => set_unit(&mut o, FreeUnit::Peta, true)?,
            v if v == 'h' as i32 => o.human = true,
            SI => o.si = true,
            v if v == 'l' as i32 => o.lohi = true,
            v if v == 't' as i32 => o.total = true,
            v if v == 'v' as i32 => o.committed = true,
            v if v == 'w' as i32 => o.wide = true,
            v if v == 's' as i32 => {
                let a = opt.arg.unwrap_or_default();
                let secs = strtod_full(&a).ok_or_else(|| {
                    format!("free: seconds argument failed: '{a}': Invalid argument")
                })?;
                if secs * 1_000_000.0 < 1.0 {
                    return Err(format!(
                        "free: seconds argument `{a}' is not positive number"
                    ));
                }
                o.seconds = Some(secs);
            }
            v if v == 'c' as i32 => {
                let a = opt.arg.unwrap_or_default();
                let n = strtol_full(&a)
                    .ok_or_else(|| format!("free: failed to parse count argument: '{a}'"))?;
                if n < 1 || n > i32::MAX as i64 {
                    return Err(format!("free: failed to parse count argument: '{a}': Numerical result out of range"));
                }
                o.count = Some(n as u64);
            }
            HELP => {
                o.print_and_exit = Some(FREE_USAGE.to_string());
                return Ok(o);
            }
            v if v == 'V' as i32 => {
                o.version = true;
                o.print_and_exit = Some("free from procps-ng 4.0.2\n".to_string());
                return Ok(o);
            }
            OLD => o.old_layout = true,
            v if v == 'o' as i32 => {
                o.old_layout = true;
                o.old_no_buffers_line = true;
            }
            _ => return Err(usage_err(String::from("free: invalid option"))),
        }
    }
    if !g.operands().is_empty() {
        // free.c: `if (optind != argc) usage(stderr);` (no message line)
        return Err(FREE_USAGE.trim_end_matches('\n').to_string());
    }
    if o.old_layout {
        let bad = if o.human {
            Some("-h")
        } else if o.wide {
            Some("-w")
        } else if o.committed {
            Some("-v")
        } else if o.si {
            Some("--si")
        } else if matches!(o.unit, Some(FreeUnit::Tebi | FreeUnit::Pebi)) {
            Some("--tebi/--pebi")
        } else {
            None
        };
        if let Some(b) = bad {
            return Err(format!(
                "free: {b} does not exist in the procps 3.2.8 layout (--old/-o); it accepts -b -k -m -g -l -t -s -c"
            ));
        }
    }
    Ok(o)
}

/// free.c's `power()`: base^expo as a double.
fn power(base: u32, expo: u32) -> f64 {
    let mut r = 1.0f64;
    for _ in 0..expo {
        r *= base as f64;
    }
    r
}

/// free.c's `scale_size()` (procps-ng 4.0.2), with C's integer semantics: `size` is an
/// `unsigned long` that may have wrapped, `bytes = size * 1024LL` wraps too.
fn scale_size(size: u64, o: &FreeOptions) -> String {
    const UP: [char; 6] = ['B', 'K', 'M', 'G', 'T', 'P'];
    let si = o.si;
    let base: u32 = if si { 1000 } else { 1024 };
    let bytes: i64 = size.wrapping_mul(1024) as i64;
    let exponent = o.unit.map(|u| u.exponent_si().0).unwrap_or(0);
    if !o.human {
        return match exponent {
            0 => (bytes / base as i64).to_string(),
            1 => bytes.to_string(),
            e => ((bytes as f64 / power(base, e - 1)) as i64).to_string(),
        };
    }
    let mut buf = format!("{bytes}{}", UP[0]);
    if buf.len() <= 4 {
        return buf;
    }
    for (i, up) in UP.iter().enumerate().skip(1) {
        let scaled = bytes as f64 / power(base, i as u32);
        if si {
            buf = format!("{:.1}{}", (scaled as f32) as f64, up);
            if buf.len() <= 4 {
                return buf;
            }
            buf = format!("{}{}", scaled as i64, up);
            if buf.len() <= 4 {
                return buf;
            }
        } else {
            buf = format!("{:.1}{}i", (scaled as f32) as f64, up);
            if buf.len() <= 5 {
                return buf;
            }
            buf = format!("{}{}i", scaled as i64, up);
            if buf.len() <= 5 {
                return buf;
            }
        }
    }
    buf
}

/// library/meminfo.c's derived values.
struct Derived {
    total: u64,
    free: u64,
    available: u64,
    used: u64,
    shared: u64,
    buffers: u64,
    cached_all: u64,
    swap_total: u64,
    swap_free: u64,
    swap_used: u64,
}

fn derive(m: &MemInfo) -> Derived {
    let mut available = m.mem_available;
    if available == 0 {
        available = m.mem_free;
    }
    if available > m.mem_total {
        available = m.mem_free;
    }
    // meminfo.c: `mem_used = total - available; if (mem_used < 0) mem_used = total - free;`
    // (signed long, then stored unsigned).
    let mut used = (m.mem_total as i64).wrapping_sub(available as i64);
    if used < 0 {
        used = (m.mem_total as i64).wrapping_sub(m.mem_free as i64);
    }
    Derived {
        total: m.mem_total,
        free: m.mem_free,
        available,
        used: used as u64,
        shared: m.shmem,
        buffers: m.buffers,
        cached_all: m.cached.wrapping_add(m.sreclaimable),
        swap_total: m.swap_total,
        swap_free: m.swap_free,
        swap_used: m.swap_total.saturating_sub(m.swap_free),
    }
}

/// The `used` value procps-ng 4.0.2 shows (MemTotal - MemAvailable, with its fallbacks), KiB.
pub fn procps_mem_used_kb(m: &MemInfo) -> u64 {
    derive(m).used
}

/// free.c's `print_head_col`: the label left-aligned in 9 columns.
fn head_col(label: &str) -> String {
    format!("{label:<9}")
}

fn row(out: &mut String, label: &str, vals: &[u64], o: &FreeOptions) {
    out.push_str(&head_col(label));
    for (i, v) in vals.iter().enumerate() {
        let s = scale_size(*v, o);
        if i == 0 {
            out.push_str(&format!("{s:>11}"));
        } else {
            out.push_str(&format!(" {s:>11}"));
        }
    }
    out.push('\n');
}

fn free_current(s: &Snapshot, o: &FreeOptions) -> String {
    let d = derive(&s.mem);
    let mut out = String::with_capacity(320);
    if o.wide {
        out.push_str("               total        used        free      shared     buffers       cache   available");
    } else {
        out.push_str(
            "               total        used        free      shared  buff/cache   available",
        );
    }
    out.push('\n');
    let mut mem = vec![d.total, d.used, d.free, d.shared];
    if o.wide {
        mem.push(d.buffers);
        mem.push(d.cached_all);
    } else {
        mem.push(d.buffers.wrapping_add(d.cached_all));
    }
    mem.push(d.available);
    row(&mut out, "Mem:", &mem, o);
    if o.lohi {
        // 64-bit kernels print no LowTotal/HighTotal: meminfo.c takes Low = Mem, High = 0.
        let lo_used = d.total.saturating_sub(d.free);
        row(&mut out, "Low:", &[d.total, lo_used, d.free], o);
        row(&mut out, "High:", &[0, 0, 0], o);
    }
    row(
        &mut out,
        "Swap:",
        &[d.swap_total, d.swap_used, d.swap_free],
        o,
    );
    if o.total {
        row(
            &mut out,
            "Total:",
            &[
                d.total.wrapping_add(d.swap_total),
                d.used.wrapping_add(d.swap_used),
                d.free.wrapping_add(d.swap_free),
            ],
            o,
        );
    }
    if o.committed {
        let m = &s.mem;
        row(
            &mut out,
            "Comm:",
            &[
                m.commit_limit,
                m.committed_as,
                m.commit_limit.wrapping_sub(m.committed_as),
            ],
            o,
        );
    }
    out
}

fn free_old(s: &Snapshot, o: &FreeOptions) -> String {
    let m = &s.mem;
    let shift = match o.unit {
        Some(FreeUnit::Bytes) => 0,
        Some(FreeUnit::Mebi) | Some(FreeUnit::Mega) => 20,
        Some(FreeUnit::Gibi) | Some(FreeUnit::Giga) => 30,
        _ => 10,
    };
    // `#define S(X) ( ((unsigned long long)(X) << 10) >> shift)`
    let sc = |x: u64| (x.wrapping_shl(10)) >> shift;
    let used = m.mem_total.wrapping_sub(m.mem_free);
    let swap_used = m.swap_total.wrapping_sub(m.swap_free);
    let mut out = String::with_capacity(320);
    out.push_str("             total       used       free     shared    buffers     cached\n");
    out.push_str(&format!(
        "{:<7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "Mem:",
        sc(m.mem_total),
        sc(used),
        sc(m.mem_free),
        sc(0),
        sc(m.buffers),
        sc(m.cached)
    ));
    if o.lohi {
        out.push_str(&format!(
            "{:<7} {:>10} {:>10} {:>10}\n",
            "Low:",
            sc(m.mem_total),
            sc(used),
            sc(m.mem_free)
        ));
        out.push_str(&format!(
            "{:<7} {:>10} {:>10} {:>10}\n",
            "High:",
            sc(0),
            sc(0),
            sc(0)
        ));
    }
    if !o.old_no_buffers_line {
        let bc = m.buffers.wrapping_add(m.cached);
        out.push_str(&format!(
            "-/+ buffers/cache: {:>10} {:>10}\n",
            sc(used.wrapping_sub(bc)),
            sc(m.mem_free.wrapping_add(bc))
        ));
    }
    out.push_str(&format!(
        "{:<7} {:>10} {:>10} {:>10}\n",
        "Swap:",
        sc(m.swap_total),
        sc(swap_used),
        sc(m.swap_free)
    ));
    if o.total {
        out.push_str(&format!(
            "{:<7} {:>10} {:>10} {:>10}\n",
            "Total:",
            sc(m.mem_total.wrapping_add(m.swap_total)),
            sc(used.wrapping_add(swap_used)),
            sc(m.mem_free.wrapping_add(m.swap_free))
        ));
    }
    out
}

/// One `free` table for the snapshot. With `-s`/`-c` the real tool prints several tables;
/// see [`free_repeated`].
pub fn free(s: &Snapshot, o: &FreeOptions) -> String {
    if o.old_layout {
        free_old(s, o)
    } else {
        free_current(s, o)
    }
}

/// What `free -s/-c` prints for successive snapshots (one per interval): one table per
/// snapshot, as many as the options ask for (extra snapshots are ignored).
///
/// procps-ng 4.0.2 separates tables with a blank line and prints none after the last table
/// of `-c N` (but one after every table of an unbounded `-s`). procps 3.2.8 (`--old`/`-o`)
/// repeated only when `-s` was given (`-c` alone printed one table) and then printed a
/// blank line after every table.
pub fn free_repeated(snaps: &[Snapshot], o: &FreeOptions) -> String {
    let tables = if o.old_layout {
        match (o.seconds, o.count) {
            (None, _) => 1,
            (Some(_), Some(c)) => c,
            (Some(_), None) => u64::MAX,
        }
    } else if o.repeats() {
        o.count.unwrap_or(u64::MAX)
    } else {
        1
    };
    let mut out = String::new();
    for (i, s) in snaps.iter().enumerate() {
        if i as u64 >= tables {
            break;
        }
        out.push_str(&free(s, o));
        let last_of_count = o.count.is_some_and(|c| i as u64 + 1 >= c);
        let blank = if o.old_layout {
            o.seconds.is_some()
        } else {
            o.repeats() && !last_of_count
        };
        if blank {
            out.push('\n');
        }
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
    fn human_scale() {
        let o = FreeOptions {
            human: true,
            ..Default::default()
        };
        assert_eq!(scale_size(0, &o), "0B");
        assert_eq!(scale_size(24684096, &o), "23Gi");
        assert_eq!(scale_size(8788, &o), "8.6Mi");
        assert_eq!(scale_size(948280, &o), "926Mi");
    }

    #[test]
    fn parse_errors_match_procps() {
        let e = parse_free_args(&args(&["-x"])).unwrap_err();
        assert!(
            e.starts_with("free: invalid option -- 'x'\n\nUsage:\n free [options]\n"),
            "{e}"
        );
        assert_eq!(
            parse_free_args(&args(&["-k", "-m"])).unwrap_err(),
            "free: Multiple unit options don't make sense."
        );
        assert_eq!(
            parse_free_args(&args(&["-c", "0"])).unwrap_err(),
            "free: failed to parse count argument: '0': Numerical result out of range"
        );
        assert_eq!(
            parse_free_args(&args(&["-s", "abc"])).unwrap_err(),
            "free: seconds argument failed: 'abc': Invalid argument"
        );
        let o = parse_free_args(&args(&["-wt", "--mebi", "--sec", "2", "-c3"])).unwrap();
        assert!(o.wide && o.total && o.unit == Some(FreeUnit::Mebi));
        assert_eq!((o.seconds, o.count), (Some(2.0), Some(3)));
        assert!(parse_free_args(&args(&["--old"])).unwrap().old_layout);
        let o = parse_free_args(&args(&["-o"])).unwrap();
        assert!(o.old_layout && o.old_no_buffers_line);
        assert!(parse_free_args(&args(&["--old", "-h"])).is_err());
    }
}
