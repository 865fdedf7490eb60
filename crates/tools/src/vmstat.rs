//! `vmstat`, as procps-ng 4.0.2 prints it (`vmstat from procps-ng 4.0.2`, Debian 12):
//! src/vmstat.c `new_format`, `sum_format` and `fork_format`, with library/stat.c,
//! library/meminfo.c and library/vmstat.c.
//!
//! What the real tool does and this module reproduces:
//! * Header: `procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----`
//!   and ` r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st`
//!   (`-w`: the wide header with a `gu` column; `-a`: `inact`/`active` instead of
//!   `buff`/`cache`; `-t`: ` -----timestamp-----` and the time-zone name).
//! * Rows: printf `"%2lu %2lu %6lu %6lu %6lu %6lu %4u %4u %5u %5u %4u %4u %2u %2u %2u %2u %2u"`
//!   (wide: `%4lu %4lu %12lu ... %3u`), so columns grow for big numbers and misalign as on
//!   a real host.
//! * Memory columns go through `unitConvert`, which computes in C `float`: values above 2^24
//!   KiB lose their low bits exactly as the real vmstat shows them. `swpd` = SwapTotal -
//!   SwapFree, `buff` = Buffers, `cache` = Cached + SReclaimable.
//! * The first row is "since boot", and is divided by the *sum of all CPU ticks* (over all
//!   CPUs) times HZ, not by the uptime: `(x * hz + Div/2) / Div` with Div = user + nice +
//!   system + irq + softirq + idle + iowait + steal ticks. On an N-CPU machine si/so/bi/bo/in/cs
//!   of the first row are therefore 1/N of the real per-second average: a real vmstat quirk.
//! * Later rows divide deltas by the *nominal* delay (integer seconds) with `+delay/2`
//!   rounding; si/so are pswpin/pswpout pages * 4 KiB; bi/bo are pgpgin/pgpgout (already KiB);
//!   in/cs use 32-bit arithmetic like the C code; CPU percentages are `(100*x + Div/2) / Div`
//!   over tick deltas, with the library's rule that if any CPU sum went backwards all deltas
//!   are 0 (then `id` shows 100).
//! * `r` and `b` are /proc/stat `procs_running`/`procs_blocked` as they are (the real tool
//!   subtracts nothing; on a real host `r` counts vmstat itself, which is the kernel model's
//!   business).
//! * The header is repeated every `height` rows unless `-n` is given. On a terminal height
//!   is the window height - 3; when stdout is *not* a terminal (a pipe, a file, a scenario
//!   transcript) procps falls back to 24 rows, so the header is repeated after every 21 rows.
//!   [`VmstatOptions::height`] defaults to that non-tty value.
//!
//! Units: the kernel's /proc/stat ticks are USER_HZ = 100 per second, derived from the
//! snapshot's nanoseconds as the kernel does (`ns / 10^7` per field, after summing CPUs);
//! pages are 4 KiB.

use memtwin_procfs::{CpuStat, Snapshot, VmItem};

use crate::free::{procps_mem_used_kb, strtol_full};
use crate::getopt::{lo, GetoptLong, HasArg, LongOpt};

/// USER_HZ: /proc/stat and /proc/PID/stat count clock ticks of 1/100 s.
pub const USER_HZ: u64 = 100;
const NS_PER_TICK: u64 = 1_000_000_000 / USER_HZ;
const KB_PER_PAGE: u64 = 4;

/// `-S`: the unit of memory columns (and of `-s` memory lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmstatUnit {
    /// `-S b` / `-S B`: bytes.
    Bytes(char),
    /// `-S k`: 1000 bytes.
    Kilo,
    /// default, `-S K`: 1024 bytes.
    Kibi,
    /// `-S m`: 10^6 bytes.
    Mega,
    /// `-S M`: 2^20 bytes.
    Mebi,
}

impl VmstatUnit {
    fn divisor(self) -> u64 {
        match self {
            VmstatUnit::Bytes(_) => 1,
            VmstatUnit::Kilo => 1000,
            VmstatUnit::Kibi => 1024,
            VmstatUnit::Mega => 1_000_000,
            VmstatUnit::Mebi => 1_048_576,
        }
    }
    /// vmstat's `szDataUnit` (the letter given to -S).
    fn letter(self) -> char {
        match self {
            VmstatUnit::Bytes(c) => c,
            VmstatUnit::Kilo => 'k',
            VmstatUnit::Kibi => 'K',
            VmstatUnit::Mega => 'm',
            VmstatUnit::Mebi => 'M',
        }
    }
}

/// What vmstat does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmstatMode {
    /// The usual table of rows.
    Rows,
    /// `-s`: the event counter listing.
    Stats,
    /// `-f`: forks since boot.
    Forks,
    /// `-m`: the slab caches (`slabtop::vmstat_slabs`).
    Slabs,
    /// `-d`: per-disk statistics (repeated with a delay, absolute counters).
    Disks,
    /// `-D`: the disks' totals.
    DiskSum,
}

/// What `vmstat`'s command line asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct VmstatOptions {
    pub mode: VmstatMode,
    /// `-w`
    pub wide: bool,
    /// The `delay` operand, seconds. procps-ng 4.0.2 accepts only whole seconds >= 1; rows
    /// are divided by this nominal delay, not by the time that really elapsed.
    pub delay_s: f64,
    /// Whether a delay operand was given (without one vmstat prints one row and exits).
    pub has_delay: bool,
    /// Rows to print in all (the `count` operand). `None` = until interrupted.
    pub count: Option<u64>,
    /// `-S`
    pub unit: VmstatUnit,
    /// `-t`: a timestamp column.
    pub timestamp: bool,
    /// `-a`: inact/active instead of buff/cache.
    pub active: bool,
    /// `-n`: print the header once.
    pub one_header: bool,
    /// `-y`: skip the since-boot row.
    pub no_first: bool,
    /// Data rows between headers (vmstat.c `height`): 21 when stdout is not a terminal.
    pub height: u32,
    /// Wall-clock time at boot, seconds since the Unix epoch (for `-t` and `-s` boot time).
    pub boot_epoch_s: i64,
    /// Time-zone offset from UTC in seconds and its name (`%Z`), for `-t`.
    pub tz_offset_s: i64,
    pub tz_name: String,
    /// `-h` / `-V`: print this on stdout and exit 0 instead of running.
    pub print_and_exit: Option<String>,
    /// Whose vmstat prints the rows (the machine's userland).
    pub layout: VmstatLayout,
}

/// The vmstat of a userland.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VmstatLayout {
    /// procps-ng 3.3 / 4.0: `-system-- ------cpu-----`, cache = Cached + SReclaimable.
    #[default]
    ProcpsNg,
    /// procps 3.2.8 (CentOS 6): the header `--system-- -----cpu-----` (as seed 000's
    /// article prints it), cache = Cached.
    Procps3,
    /// procps 2.0.x (Linux 2.4 distributions): `r b w` and `us sy id` only, no wa/st
    /// (/proc/stat had no iowait before 2.5.41).
    Procps2,
}

impl Default for VmstatOptions {
    fn default() -> Self {
        VmstatOptions {
            mode: VmstatMode::Rows,
            wide: false,
            delay_s: 1.0,
            has_delay: false,
            count: Some(1),
            unit: VmstatUnit::Kibi,
            timestamp: false,
            active: false,
            one_header: false,
            no_first: false,
            height: 21,
            boot_epoch_s: 0,
            tz_offset_s: 0,
            tz_name: "UTC".to_string(),
            print_and_exit: None,
            layout: VmstatLayout::ProcpsNg,
        }
    }
}

impl VmstatOptions {
    fn sleep_time(&self) -> u32 {
        if self.delay_s >= 1.0 && self.delay_s < u32::MAX as f64 {
            self.delay_s as u32
        } else {
            1
        }
    }
}

/// procps-ng 4.0.2 `vmstat --help`.
pub const VMSTAT_USAGE: &str = "
Usage:
 vmstat [options] [delay [count]]

Options:
 -a, --active           active/inactive memory
 -f, --forks            number of forks since boot
 -m, --slabs            slabinfo
 -n, --one-header       do not redisplay header
 -s, --stats            event counter statistics
 -d, --disk             disk statistics
 -D, --disk-sum         summarize disk statistics
 -p, --partition <dev>  partition specific statistics
 -S, --unit <char>      define display unit
 -w, --wide             wide output
 -t, --timestamp        show timestamp
 -y, --no-first         skips first line of output

 -h, --help     display this help and exit
 -V, --version  output version information and exit

For more details see vmstat(8).
";

const VMSTAT_LONGOPTS: &[LongOpt] = &[
    lo("active", HasArg::No, 'a' as i32),
    lo("forks", HasArg::No, 'f' as i32),
    lo("slabs", HasArg::No, 'm' as i32),
    lo("one-header", HasArg::No, 'n' as i32),
    lo("stats", HasArg::No, 's' as i32),
    lo("disk", HasArg::No, 'd' as i32),
    lo("disk-sum", HasArg::No, 'D' as i32),
    lo("partition", HasArg::Required, 'p' as i32),
    lo("unit", HasArg::Required, 'S' as i32),
    lo("wide", HasArg::No, 'w' as i32),
    lo("timestamp", HasArg::No, 't' as i32),
    lo("help", HasArg::No, 'h' as i32),
    lo("version", HasArg::No, 'V' as i32),
    lo("no-first", HasArg::No, 'y' as i32),
];

/// The usage text as vmstat prints it on stderr (it starts with an empty line).
fn usage_text() -> &'static str {
    VMSTAT_USAGE.trim_end_matches('\n')
}

/// Parse `vmstat`'s arguments (without the program name) as procps-ng 4.0.2 does. Errors
/// carry vmstat's stderr text (without the final newline). Disk and slab statistics
/// (`-d -D -p -m`) are not modelled and are rejected with a message saying so.
pub fn parse_vmstat_args(args: &[String]) -> Result<VmstatOptions, String> {
    let mut o = VmstatOptions::default();
    let mut stats = false;
    let mut forks = false;
    let mut slabs = false;
    let mut unmodelled: Option<&str> = None;
    let mut g = GetoptLong::new("vmstat", args, "afmnsdDp:S:wthVy", VMSTAT_LONGOPTS);
    for r in g.by_ref() {
        let opt = r.map_err(|e| format!("{e}\n{}", usage_text()))?;
        match opt.ch() {
            'V' => {
                o.print_and_exit = Some("vmstat from procps-ng 4.0.2\n".to_string());
                return Ok(o);
            }
            'h' => {
                o.print_and_exit = Some(VMSTAT_USAGE.to_string());
                return Ok(o);
            }
            'd' => o.mode = VmstatMode::Disks,
            'D' => o.mode = VmstatMode::DiskSum,
            'p' => unmodelled = unmodelled.or(Some("-p (partition statistics)")),
            'm' => slabs = true,
            'a' => o.active = true,
            // vmstat.c runs fork_format() and exits as soon as it sees -f.
            'f' => {
                forks = true;
                break;
            }
            'n' => o.one_header = true,
            'S' => {
                let a = opt.arg.unwrap_or_default();
                o.unit = match a.chars().next() {
                    Some(c @ ('b' | 'B')) => VmstatUnit::Bytes(c),
                    Some('k') => VmstatUnit::Kilo,
                    Some('K') => VmstatUnit::Kibi,
                    Some('m') => VmstatUnit::Mega,
                    Some('M') => VmstatUnit::Mebi,
                    _ => {
                        return Err("vmstat: -S requires k, K, m or M (default is KiB)".to_string())
                    }
                };
            }
            's' => stats = true,
            'w' => o.wide = true,
            't' => o.timestamp = true,
            'y' => o.no_first = true,
            _ => return Err(usage_text().to_string()),
        }
    }
    if forks {
        o.mode = VmstatMode::Forks;
        return Ok(o);
    }
    let ops: Vec<String> = g.operands().to_vec();
    let mut it = ops.iter();
    if let Some(d) = it.next() {
        let v = strtol_full(d).ok_or_else(|| format!("vmstat: failed to parse argument: '{d}'"))?;
        if v < 1 {
            return Err("vmstat: delay must be positive integer".to_string());
        }
        if v > u32::MAX as i64 {
            return Err("vmstat: too large delay value".to_string());
        }
        o.delay_s = v as f64;
        o.has_delay = true;
        o.count = None;
    }
    if let Some(c) = it.next() {
        let v = strtol_full(c).ok_or_else(|| format!("vmstat: failed to parse argument: '{c}'"))?;
        // num_updates is unsigned long: a negative count wraps to "practically forever".
        o.count = if v < 0 { None } else { Some(v as u64) };
    }
    if it.next().is_some() {
        return Err(usage_text().to_string());
    }
    if slabs && unmodelled.is_none() && !stats {
        if o.has_delay {
            return Err("vmstat: -m with a delay is not supported by memtwin; supported: vmstat -m (one table)".to_string());
        }
        o.mode = VmstatMode::Slabs;
        return Ok(o);
    }
    let disk_mode = matches!(o.mode, VmstatMode::Disks | VmstatMode::DiskSum);
    if let Some(what) = unmodelled {
        if stats || disk_mode {
            return Err(usage_text().to_string());
        }
        return Err(format!(
            "vmstat: {what} is not supported by memtwin (the model's disks have no partitions); \
             supported: vmstat [-a] [-n] [-S k|K|m|M] [-t] [-w] [-y] [delay [count]], vmstat -s, vmstat -f, vmstat -m, vmstat -d [delay [count]], vmstat -D"
        ));
    }
    if stats && disk_mode {
        return Err(usage_text().to_string());
    }
    if stats {
        o.mode = VmstatMode::Stats;
    }
    Ok(o)
}

/// vmstat.c `unitConvert`: `(unsigned long)((float)size / dataUnit * 1024)`, in C float.
fn unit_convert(size_kb: u64, unit: VmstatUnit) -> u64 {
    let cv: f32 = (size_kb as f32) / (unit.divisor() as f32) * 1024.0f32;
    cv as u64
}

/// The /proc/stat tick counts of a snapshot.
#[derive(Clone, Copy, Debug, Default)]
struct Ticks {
    user: u64,
    nice: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    irq: u64,
    softirq: u64,
    steal: u64,
}

fn ticks(c: &CpuStat) -> Ticks {
    let t = |ns: u64| ns / NS_PER_TICK;
    Ticks {
        user: t(c.user),
        nice: t(c.nice),
        system: t(c.system),
        idle: t(c.idle),
        iowait: t(c.iowait),
        irq: t(c.irq),
        softirq: t(c.softirq),
        steal: t(c.steal),
    }
}

impl Ticks {
    /// library/stat.c `stat_derive_unique` sums: (xusr, xsys, xidl, xbsy, xtot).
    fn sums(&self) -> [u64; 5] {
        let xusr = self.user.wrapping_add(self.nice);
        let xsys = self
            .system
            .wrapping_add(self.irq)
            .wrapping_add(self.softirq);
        let xidl = self.idle.wrapping_add(self.iowait);
        let xtot = xusr
            .wrapping_add(xsys)
            .wrapping_add(xidl)
            .wrapping_add(self.steal);
        [xusr, xsys, xidl, xtot.wrapping_sub(xidl), xtot]
    }

    /// The library's TIC_DELTA values: per-field `new - old` clamped at 0, and all zero when
    /// any derived sum went backwards (CPUs going offline).
    fn delta(&self, old: &Ticks) -> Ticks {
        let (n, o) = (self.sums(), old.sums());
        if n.iter().zip(o.iter()).any(|(a, b)| a < b) {
            return Ticks::default();
        }
        Ticks {
            user: self.user.saturating_sub(old.user),
            nice: self.nice.saturating_sub(old.nice),
            system: self.system.saturating_sub(old.system),
            idle: self.idle.saturating_sub(old.idle),
            iowait: self.iowait.saturating_sub(old.iowait),
            irq: self.irq.saturating_sub(old.irq),
            softirq: self.softirq.saturating_sub(old.softirq),
            steal: self.steal.saturating_sub(old.steal),
        }
    }
}

/// The two header lines (each ending in a newline).
pub fn vmstat_header(o: &VmstatOptions) -> String {
    if o.layout == VmstatLayout::Procps2 {
        // procps 2.0.x vmstat.c showheader().
        let (b, c) = if o.active { ("inact", "active") } else { ("buff", "cache") };
        return format!(
            "{:>8}{:>28}{:>10}{:>12}{:>11}{:>9}\n{:>2} {:>2} {:>2} {:>6} {:>6} {:>6} {:>6} {:>4} {:>4} {:>5} {:>5} {:>4} {:>5} {:>2} {:>2} {:>2}\n",
            "procs", "memory", "swap", "io", "system", "cpu",
            "r", "b", "w", "swpd", "free", b, c, "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id"
        );
    }
    let mut out = String::with_capacity(260);
    out.push_str(if o.wide {
        "--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu----------"
    } else if o.layout == VmstatLayout::Procps3 {
        "procs -----------memory---------- ---swap-- -----io---- --system-- -----cpu-----"
    } else {
        "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----"
    });
    let ts_header = " -----timestamp-----";
    if o.timestamp {
        out.push_str(ts_header);
    }
    out.push('\n');
    let (b, c) = if o.active {
        ("inact", "active")
    } else {
        ("buff", "cache")
    };
    if o.wide {
        out.push_str(&format!(
            "{:>4} {:>4} {:>12} {:>12} {:>12} {:>12} {:>4} {:>4} {:>5} {:>5} {:>4} {:>4} {:>3} {:>3} {:>3} {:>3} {:>3} {:>3}",
            "r", "b", "swpd", "free", b, c, "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id", "wa", "st", "gu"
        ));
    } else {
        out.push_str(&format!(
            "{:>2} {:>2} {:>6} {:>6} {:>6} {:>6} {:>4} {:>4} {:>5} {:>5} {:>4} {:>4} {:>2} {:>2} {:>2} {:>2} {:>2}",
            "r", "b", "swpd", "free", b, c, "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id", "wa", "st"
        ));
    }
    if o.timestamp {
        let w = ts_header.len() - 1;
        let tz: String = o.tz_name.chars().take(w).collect();
        out.push_str(&format!(" {tz:>w$}"));
    }
    out.push('\n');
    out
}

/// `YYYY-MM-DD HH:MM:SS` for seconds since the epoch (proleptic Gregorian, no leap seconds).
pub(crate) fn format_datetime(epoch_s: i64) -> String {
    let days = epoch_s.div_euclid(86_400);
    let secs = epoch_s.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

fn row_time(cur: &Snapshot, o: &VmstatOptions) -> String {
    let up = (cur.uptime_ns / 1_000_000_000) as i64;
    format_datetime(
        o.boot_epoch_s
            .saturating_add(up)
            .saturating_add(o.tz_offset_s),
    )
}

/// One data row (ending in a newline). `prev = None` gives the first, since-boot row;
/// otherwise the rates over the interval from `prev` to `cur`, divided by the nominal delay
/// as vmstat does.
pub fn vmstat_row(prev: Option<&Snapshot>, cur: &Snapshot, o: &VmstatOptions) -> String {
    let m = &cur.mem;
    let swpd = unit_convert(m.swap_total.saturating_sub(m.swap_free), o.unit);
    let free = unit_convert(m.mem_free, o.unit);
    let (b_kb, c_kb) = if o.active {
        (m.inactive, m.active)
    } else if o.layout == VmstatLayout::ProcpsNg {
        (m.buffers, m.cached.wrapping_add(m.sreclaimable))
    } else {
        (m.buffers, m.cached)
    };
    let buff = unit_convert(b_kb, o.unit);
    let cache = unit_convert(c_kb, o.unit);
    let r = cur.procs_running as u64;
    let b = cur.procs_blocked as u64;
    let vm = |s: &Snapshot, i: VmItem| s.vm.get(i);

    let (si, so, bi, bo, inr, cs, pct): (u32, u32, u32, u32, u32, u32, [u32; 6]) = match prev {
        None => {
            let t = ticks(&cur.cpu);
            let cpu_use = t.user.wrapping_add(t.nice) as i64;
            let cpu_sys = t.system.wrapping_add(t.irq).wrapping_add(t.softirq) as i64;
            let mut cpu_idl = t.idle as i64;
            let cpu_iow = t.iowait as i64;
            let cpu_sto = t.steal as i64;
            let cpu_gue: i64 = 0;
            let mut div = cpu_use
                .wrapping_add(cpu_sys)
                .wrapping_add(cpu_idl)
                .wrapping_add(cpu_iow)
                .wrapping_add(cpu_sto);
            if div == 0 {
                div = 1;
                cpu_idl = 1;
            }
            let divo2 = div / 2;
            // (x * hz + divo2) / Div in unsigned 64-bit, then truncated to unsigned int.
            let rate = |x: u64| -> u32 {
                (x.wrapping_mul(USER_HZ).wrapping_add(divo2 as u64) / (div as u64)) as u32
            };
            let pct =
                |x: i64| -> u32 { ((100i64.wrapping_mul(x)).wrapping_add(divo2) / div) as u32 };
            (
                rate(unit_convert(
                    vm(cur, VmItem::Pswpin).wrapping_mul(KB_PER_PAGE),
                    o.unit,
                )),
                rate(unit_convert(
                    vm(cur, VmItem::Pswpout).wrapping_mul(KB_PER_PAGE),
                    o.unit,
                )),
                rate(vm(cur, VmItem::Pgpgin)),
                rate(vm(cur, VmItem::Pgpgout)),
                rate(cur.intr),
                rate(cur.ctxt),
                [
                    pct(cpu_use.max(cpu_gue) - cpu_gue),
                    pct(cpu_sys),
                    pct(cpu_idl),
                    pct(cpu_iow),
                    pct(cpu_sto),
                    pct(cpu_gue),
                ],
            )
        }
        Some(p) => {
            let sleep_time = o.sleep_time();
            let half = sleep_time / 2;
            let d = |i: VmItem| vm(cur, i).saturating_sub(vm(p, i));
            let rate64 =
                |x: u64| -> u32 { (x.wrapping_add(half as u64) / sleep_time as u64) as u32 };
            // DSYSv: the delta is stored in an int, then added to an unsigned int.
            let rate32 = |x: u64| -> u32 { (x as u32).wrapping_add(half) / sleep_time };
            let t = ticks(&cur.cpu).delta(&ticks(&p.cpu));
            let cpu_use = t.user.wrapping_add(t.nice) as i64;
            let cpu_sys = t.system.wrapping_add(t.irq).wrapping_add(t.softirq) as i64;
            let mut cpu_idl = t.idle as i64;
            let cpu_iow = t.iowait as i64;
            let cpu_sto = t.steal as i64;
            let mut div = cpu_use
                .wrapping_add(cpu_sys)
                .wrapping_add(cpu_idl)
                .wrapping_add(cpu_iow)
                .wrapping_add(cpu_sto);
            if div == 0 {
                div = 1;
                cpu_idl = 1;
            }
            let divo2 = div / 2;
            let pct =
                |x: i64| -> u32 { ((100i64.wrapping_mul(x)).wrapping_add(divo2) / div) as u32 };
            (
                rate64(unit_convert(
                    d(VmItem::Pswpin).wrapping_mul(KB_PER_PAGE),
                    o.unit,
                )),
                rate64(unit_convert(
                    d(VmItem::Pswpout).wrapping_mul(KB_PER_PAGE),
                    o.unit,
                )),
                rate64(d(VmItem::Pgpgin)),
                rate64(d(VmItem::Pgpgout)),
                rate32(cur.intr.saturating_sub(p.intr)),
                rate32(cur.ctxt.saturating_sub(p.ctxt)),
                [
                    pct(cpu_use),
                    pct(cpu_sys),
                    pct(cpu_idl),
                    pct(cpu_iow),
                    pct(cpu_sto),
                    pct(0),
                ],
            )
        }
    };
    if o.layout == VmstatLayout::Procps2 {
        // procps 2.0.x: getrunners() reads each /proc/PID/stat; an R or D task with no
        // resident pages (a kernel thread) counts as swapped out (`w`), and vmstat takes
        // itself out of `r`. us = user + nice, sy = system, id = idle (+ iowait, which 2.4
        // did not have).
        let (mut run, mut blk, mut swapped) = (0u32, 0u32, 0u32);
        for t in &cur.tasks {
            let active = matches!(t.state, memtwin_procfs::TaskState::Running | memtwin_procfs::TaskState::DiskSleep);
            if active && t.kthread {
                swapped += 1;
            } else if t.state == memtwin_procfs::TaskState::Running {
                run += 1;
            } else if t.state == memtwin_procfs::TaskState::DiskSleep {
                blk += 1;
            }
        }
        let run = run.saturating_sub(1);
        // 2.4's /proc/stat cpu line is user nice system idle: interrupt time was system
        // time and I/O wait was idle.
        let t = match prev {
            None => ticks(&cur.cpu),
            Some(p) => ticks(&cur.cpu).delta(&ticks(&p.cpu)),
        };
        let duse = t.user.wrapping_add(t.nice);
        let dsys = t.system.wrapping_add(t.irq).wrapping_add(t.softirq);
        let didl = t.idle.wrapping_add(t.iowait).wrapping_add(t.steal);
        let div = (duse + dsys + didl).max(1);
        let p2 = |x: u64| (100 * x + div / 2) / div;
        let (us, sy, id) = (p2(duse), p2(dsys), if duse + dsys + didl == 0 { 100 } else { p2(didl) });
        return format!(
            "{run:>2} {blk:>2} {swapped:>2} {swpd:>6} {free:>6} {buff:>6} {cache:>6} {si:>4} {so:>4} {bi:>5} {bo:>5} {inr:>4} {cs:>5} {us:>2} {sy:>2} {id:>2}\n"
        );
    }
    let mut out = if o.wide {
        format!(
            "{r:>4} {b:>4} {swpd:>12} {free:>12} {buff:>12} {cache:>12} {si:>4} {so:>4} {bi:>5} {bo:>5} {inr:>4} {cs:>4} {:>3} {:>3} {:>3} {:>3} {:>3} {:>3}",
            pct[0], pct[1], pct[2], pct[3], pct[4], pct[5]
        )
    } else {
        format!(
            "{r:>2} {b:>2} {swpd:>6} {free:>6} {buff:>6} {cache:>6} {si:>4} {so:>4} {bi:>5} {bo:>5} {inr:>4} {cs:>4} {:>2} {:>2} {:>2} {:>2} {:>2}",
            pct[0], pct[1], pct[2], pct[3], pct[4]
        )
    };
    if o.timestamp {
        out.push(' ');
        out.push_str(&row_time(cur, o));
    }
    out.push('\n');
    out
}

/// Whether vmstat prints the header again before loop row `i` (1 = the first row after
/// the initial one): `moreheaders && i % height == 0`.
pub fn vmstat_header_due(o: &VmstatOptions, i: u64) -> bool {
    !o.one_header && i.checked_rem(u64::from(o.height)) == Some(0)
}

/// How many snapshots a run of vmstat reads in all (the initial one plus one per loop row),
/// or `None` when it runs until interrupted.
pub fn vmstat_samples(o: &VmstatOptions) -> Option<u64> {
    if o.mode != VmstatMode::Rows {
        return Some(1);
    }
    // vmstat.c: `num_updates` rows in all, the first from the initial reading; with -y the
    // initial reading only primes the deltas and num_updates is incremented.
    let n = o.count?;
    Some(if o.no_first { n + 1 } else { n.max(1) })
}

/// The whole output of a vmstat run given its readings: `snaps[0]` is the reading taken at
/// start (the since-boot row, or with `-y` only the baseline), `snaps[k]` the reading `k`
/// delays later. Extra snapshots beyond the count are ignored. `-s` and `-f` use `snaps[0]`.
pub fn vmstat_report(snaps: &[Snapshot], o: &VmstatOptions) -> String {
    let Some(first) = snaps.first() else {
        return String::new();
    };
    match o.mode {
        VmstatMode::Stats => return vmstat_stats(first, o),
        VmstatMode::Forks => return vmstat_forks(first),
        // The caches are not part of a snapshot: see slabtop::vmstat_slabs.
        VmstatMode::Slabs => return String::new(),
        VmstatMode::Disks => return crate::iostat::vmstat_disks(first),
        VmstatMode::DiskSum => return crate::iostat::vmstat_disk_sum(first),
        VmstatMode::Rows => {}
    }
    let mut out = vmstat_header(o);
    if !o.no_first {
        out.push_str(&vmstat_row(None, first, o));
    }
    let total = vmstat_samples(o).unwrap_or(u64::MAX);
    for i in 1..total {
        let Some(cur) = snaps.get(i as usize) else {
            break;
        };
        if vmstat_header_due(o, i) {
            out.push_str(&vmstat_header(o));
        }
        out.push_str(&vmstat_row(Some(&snaps[i as usize - 1]), cur, o));
    }
    out
}

/// `vmstat -s`: the event counter listing (vmstat.c `sum_format`). Memory lines use the
/// `-S` unit; "swap cache" is, as in procps-ng 4.0.2, Cached + SReclaimable; "boot time" is
/// [`VmstatOptions::boot_epoch_s`].
pub fn vmstat_stats(s: &Snapshot, o: &VmstatOptions) -> String {
    let m = &s.mem;
    let u = o.unit.letter();
    let mc = |kb: u64| unit_convert(kb, o.unit);
    let t = ticks(&s.cpu);
    let mut out = String::with_capacity(1400);
    let mut line = |v: u64, what: &str| out.push_str(&format!("{v:>13} {what}\n"));
    line(mc(m.mem_total), &format!("{u} total memory"));
    line(mc(procps_mem_used_kb(m)), &format!("{u} used memory"));
    line(mc(m.active), &format!("{u} active memory"));
    line(mc(m.inactive), &format!("{u} inactive memory"));
    line(mc(m.mem_free), &format!("{u} free memory"));
    line(mc(m.buffers), &format!("{u} buffer memory"));
    line(
        mc(m.cached.wrapping_add(m.sreclaimable)),
        &format!("{u} swap cache"),
    );
    line(mc(m.swap_total), &format!("{u} total swap"));
    line(
        mc(m.swap_total.saturating_sub(m.swap_free)),
        &format!("{u} used swap"),
    );
    line(mc(m.swap_free), &format!("{u} free swap"));
    line(t.user, "non-nice user cpu ticks");
    line(t.nice, "nice user cpu ticks");
    line(t.system, "system cpu ticks");
    line(t.idle, "idle cpu ticks");
    line(t.iowait, "IO-wait cpu ticks");
    line(t.irq, "IRQ cpu ticks");
    line(t.softirq, "softirq cpu ticks");
    line(t.steal, "stolen cpu ticks");
    line(0, "non-nice guest cpu ticks");
    line(0, "nice guest cpu ticks");
    line(s.vm.get(VmItem::Pgpgin), "K paged in");
    line(s.vm.get(VmItem::Pgpgout), "K paged out");
    line(s.vm.get(VmItem::Pswpin), "pages swapped in");
    line(s.vm.get(VmItem::Pswpout), "pages swapped out");
    line(s.intr, "interrupts");
    line(s.ctxt, "CPU context switches");
    line(o.boot_epoch_s.max(0) as u64, "boot time");
    line(s.processes, "forks");
    out
}

/// `vmstat -f`.
pub fn vmstat_forks(s: &Snapshot) -> String {
    format!("{:>13} forks\n", s.processes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn unit_convert_is_float() {
        assert_eq!(unit_convert(23640537, VmstatUnit::Kibi), 23640536);
        assert_eq!(unit_convert(184, VmstatUnit::Kibi), 184);
        assert_eq!(unit_convert(1024, VmstatUnit::Mebi), 1);
    }

    #[test]
    fn dates() {
        assert_eq!(format_datetime(0), "1970-01-01 00:00:00");
        assert_eq!(format_datetime(1_795_328_195), "2026-11-22 06:16:35");
        assert_eq!(format_datetime(951_782_400), "2000-02-29 00:00:00");
    }

    #[test]
    fn parse() {
        let o = parse_vmstat_args(&args(&["1", "-w", "5"])).unwrap();
        assert!(o.wide && o.has_delay && o.delay_s == 1.0 && o.count == Some(5));
        let o = parse_vmstat_args(&args(&["-an", "-S", "M", "2"])).unwrap();
        assert!(o.active && o.one_header && o.unit == VmstatUnit::Mebi && o.count.is_none());
        assert!(parse_vmstat_args(&args(&["-z"]))
            .unwrap_err()
            .starts_with("vmstat: invalid option -- 'z'\n\nUsage:\n"));
        assert_eq!(
            parse_vmstat_args(&args(&["0"])).unwrap_err(),
            "vmstat: delay must be positive integer"
        );
        assert_eq!(
            parse_vmstat_args(&args(&["0.5"])).unwrap_err(),
            "vmstat: failed to parse argument: '0.5'"
        );
        assert_eq!(
            parse_vmstat_args(&args(&["-S", "q"])).unwrap_err(),
            "vmstat: -S requires k, K, m or M (default is KiB)"
        );
        assert!(parse_vmstat_args(&args(&["-p", "vda1"]))
            .unwrap_err()
            .contains("not supported by memtwin"));
        assert_eq!(parse_vmstat_args(&args(&["-d"])).unwrap().mode, VmstatMode::Disks);
        assert_eq!(parse_vmstat_args(&args(&["-D"])).unwrap().mode, VmstatMode::DiskSum);
        assert!(parse_vmstat_args(&args(&["-d", "-s"])).is_err());
        assert_eq!(
            parse_vmstat_args(&args(&["-s"])).unwrap().mode,
            VmstatMode::Stats
        );
        assert_eq!(
            parse_vmstat_args(&args(&["-f", "-z"])).unwrap().mode,
            VmstatMode::Forks
        );
    }
}
