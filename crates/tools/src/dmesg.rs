//! util-linux 2.38 dmesg over the kernel log: the default `[    T.TTTTTT] msg` layout,
//! `-T` (ctime), `-t` (no time), `-r` (raw `<L>`), `-x` (decoded facility and level),
//! `-l/--level`, `-k`, `-c` (read and clear), `-C` (clear). `-H` (a pager with relative
//! times and colours) is refused.

/// One record as dmesg reads it: time since boot (ns), syslog level, text (lines joined
/// by '\n' for a multi-line record).
#[derive(Clone, Debug)]
pub struct DmesgRecord<'a> {
    pub ts_ns: u64,
    pub level: u8,
    pub text: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmesgTime {
    /// `[%5lu.%06lu] `
    Mono,
    /// `-T`: `[Mon Nov 23 10:15:44 2026] `
    Ctime,
    /// `-t`
    None,
}

#[derive(Clone, Debug)]
pub struct DmesgOptions {
    pub time: DmesgTime,
    pub raw: bool,
    pub decode: bool,
    /// Levels to show (bit per level); all by default.
    pub levels: u8,
    pub clear_after: bool,
    pub clear_only: bool,
}

pub const LEVELS: [&str; 8] = ["emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"];

const USAGE: &str = "dmesg [-c|-C] [-T|-t|-r|-x] [-k] [-l|--level LIST]";

/// Parse dmesg's command line; `Err` is the message for a bad one.
pub fn parse_dmesg_args(args: &[String]) -> Result<DmesgOptions, String> {
    let mut o = DmesgOptions { time: DmesgTime::Mono, raw: false, decode: false, levels: 0xff, clear_after: false, clear_only: false };
    let mut it = args.iter();
    let parse_levels = |v: &str| -> Result<u8, String> {
        let mut m = 0u8;
        for name in v.split(',') {
            let i = LEVELS.iter().position(|l| *l == name).ok_or_else(|| format!("dmesg: unknown level '{name}' (levels: {})", LEVELS.join(",")))?;
            m |= 1 << i;
        }
        Ok(m)
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "-T" | "--ctime" => o.time = DmesgTime::Ctime,
            "-t" | "--notime" => o.time = DmesgTime::None,
            "-r" | "--raw" => o.raw = true,
            "-x" | "--decode" => o.decode = true,
            "-k" | "--kernel" => {}
            "-c" | "--read-clear" => o.clear_after = true,
            "-C" | "--clear" => o.clear_only = true,
            "-H" | "--human" => {
                return Err("dmesg: -H (a pager with relative times and colours) is not modelled; use the default layout, -T or -t".into())
            }
            "-w" | "--follow" | "-W" | "--follow-new" => {
                return Err("dmesg: --follow waits forever and is not modelled; run dmesg after the command instead".into())
            }
            "-l" | "--level" => o.levels = parse_levels(it.next().ok_or(format!("dmesg: option requires an argument -- 'l' ({USAGE})"))?)?,
            s if s.starts_with("--level=") => o.levels = parse_levels(&s["--level=".len()..])?,
            s if s.starts_with("-l") && s.len() > 2 => o.levels = parse_levels(&s[2..])?,
            s if s.starts_with("--") => return Err(format!("dmesg: unrecognized option '{s}' (supported: {USAGE})")),
            s if s.starts_with('-') => return Err(format!("dmesg: invalid option -- '{}' (supported: {USAGE})", &s[1..])),
            s => return Err(format!("dmesg: bad usage: unexpected argument '{s}' (supported: {USAGE})")),
        }
    }
    if o.clear_only && o.clear_after {
        return Err("dmesg: mutually exclusive arguments: --clear --read-clear".into());
    }
    Ok(o)
}

/// The weekday, month and day of the year for days since 1970-01-01 (civil_from_days).
fn ctime(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days.rem_euclid(7)) as usize];
    let mon = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][(m - 1) as usize];
    format!("{wd} {mon} {d:>2} {:02}:{:02}:{:02} {y}", rem / 3600, rem / 60 % 60, rem % 60)
}

/// dmesg's text for `records`; `boot_epoch_s` is the wall-clock time of boot (for -T).
pub fn dmesg(records: &[DmesgRecord], o: &DmesgOptions, boot_epoch_s: u64) -> String {
    let mut out = String::new();
    for r in records {
        if o.levels & (1 << r.level.min(7)) == 0 {
            continue;
        }
        let mut prefix = String::new();
        if o.decode {
            // "kern  :err   : " (facility and level names padded to 6, then ':').
            prefix.push_str(&format!("{:<6}:{:<6}: ", "kern", LEVELS[r.level.min(7) as usize]));
        } else if o.raw {
            prefix.push_str(&format!("<{}>", r.level));
        }
        let stamp = match o.time {
            DmesgTime::Mono => format!("[{:>5}.{:06}] ", r.ts_ns / 1_000_000_000, r.ts_ns % 1_000_000_000 / 1000),
            DmesgTime::Ctime => format!("[{}] ", ctime(boot_epoch_s + r.ts_ns / 1_000_000_000)),
            DmesgTime::None => String::new(),
        };
        // Continuation lines are indented by the width of the time stamp (print_record's
        // indent), the record's own leading space kept.
        let indent = " ".repeat(stamp.len());
        out.push_str(&prefix);
        out.push_str(&stamp);
        let mut first = true;
        for line in r.text.split('\n') {
            if !first {
                out.push('\n');
                out.push_str(&indent);
            }
            out.push_str(line);
            first = false;
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ctime_of_a_known_day() {
        // 2026-11-23 10:15:44 UTC was a Monday.
        assert_eq!(ctime(1795428944), "Mon Nov 23 10:15:44 2026");
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
    }
}
