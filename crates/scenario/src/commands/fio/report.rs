//! fio 3.33's reports (stat.c): the normal per-job block, the run status group summary and
//! disk stats, and the JSON document (json.c's layout). Formatters only read statistics.

use super::job::JobStats;
use super::stats::{IoStat, Plat, PERCENTILES};
use std::fmt::Write;

/// num2str (lib/num2str.c): at most `maxlen` digits, with a unit prefix and fio's rounding.
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: &str) -> String {
    let prefixes: [&str; 7] = if pow2 { ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] } else { ["", "k", "M", "G", "T", "P", "E"] };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = num;
    let mut post = 0;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefixes[post]);
    };
    let len = num.to_string().len();
    if maxlen as i64 - len as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit}", prefixes[post]);
    }
    let decimals = maxlen - len - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &frac[2..], prefixes[post])
}

/// display_lat: min/max/avg/stdev in the unit fio picks (nsec_to_msec / nsec_to_usec).
fn display_lat(out: &mut String, name: &str, s: &IoStat) {
    let Some((mut min, mut max, mut mean, mut dev)) = s.calc() else { return };
    let mut base = "(nsec)";
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1e6;
        dev /= 1e6;
        base = "(msec)";
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1e3;
        dev /= 1e3;
        base = "(usec)";
    }
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}",
        num2str(min, 6, false, ""),
        num2str(max, 6, false, "")
    );
}

/// show_clat_percentiles.
fn show_percentiles(out: &mut String, plat: &Plat, pre: &str) {
    let mut vals = plat.percentiles();
    if vals.is_empty() {
        return;
    }
    let minv = *vals.iter().min().unwrap_or(&0);
    let maxv = *vals.iter().max().unwrap_or(&0);
    let (scale, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000u64, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let time_width = 5.max(((maxv / divisor) as f64).log10() as usize + 1);
    let precision = 2;
    let per_line = (80 - 7) / (precision + 10 + time_width);
    let len = vals.len();
    for j in 0..len {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let last = j == len - 1;
        for _ in 0..scale {
            vals[j] = vals[j].div_ceil(1000);
        }
        let _ = write!(out, " {:5.2}th=[{:>w$}]{}", PERCENTILES[j], vals[j], if last { '\n' } else { ',' }, w = time_width);
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// show_lat: one line per five non-empty buckets.
fn show_lat(out: &mut String, pcts: &[f64], ranges: &[&str], msg: &str) {
    let mut line = 0;
    let mut new_line = true;
    let mut shown = false;
    for (i, &p) in pcts.iter().enumerate() {
        if p <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({msg})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{}{:3.2}%", ranges[i], p);
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

/// stat_calc_lat: percentages of all I/Os, a non-empty bucket shows at least 0.01%.
fn lat_pcts(counts: &[u64], total: u64) -> Vec<f64> {
    counts
        .iter()
        .map(|&c| {
            if total == 0 {
                return 0.0;
            }
            let p = c as f64 / total as f64 * 100.0;
            if p < 0.01 && c > 0 { 0.01 } else { p }
        })
        .collect()
}

const RANGES: [&str; 12] = ["2=", "4=", "10=", "20=", "50=", "100=", "250=", "500=", "750=", "1000=", "2000=", ">=2000="];

/// The group's totals for the Run status lines and per= (struct group_run_stats).
pub struct Group {
    pub iobytes: [u64; 2],
    /// Aggregate bandwidth, bytes/s.
    pub agg: [u64; 2],
    pub min_bw: [u64; 2],
    pub max_bw: [u64; 2],
    pub min_run: [u64; 2],
    pub max_run: [u64; 2],
}

pub fn runtime_ms(ts: &JobStats) -> u64 {
    ts.runtime / 1_000_000
}

impl Group {
    pub fn of(stats: &[JobStats]) -> Group {
        let mut g = Group { iobytes: [0; 2], agg: [0; 2], min_bw: [u64::MAX; 2], max_bw: [0; 2], min_run: [u64::MAX; 2], max_run: [0; 2] };
        for ts in stats {
            let rt = runtime_ms(ts);
            for d in 0..2 {
                if ts.dirs[d].total_ios == 0 || rt == 0 {
                    continue;
                }
                let bw = ts.dirs[d].io_bytes * 1000 / rt;
                g.min_bw[d] = g.min_bw[d].min(bw);
                g.max_bw[d] = g.max_bw[d].max(bw);
                g.min_run[d] = g.min_run[d].min(rt);
                g.max_run[d] = g.max_run[d].max(rt);
                g.iobytes[d] += ts.dirs[d].io_bytes;
            }
        }
        for d in 0..2 {
            if g.max_run[d] > 0 {
                g.agg[d] = g.iobytes[d] * 1000 / g.max_run[d];
            }
        }
        g
    }
}

/// show_ddir_status.
fn ddir_status(out: &mut String, g: &Group, ts: &JobStats, d: usize, show_slat: bool) {
    let rt = runtime_ms(ts);
    let s = &ts.dirs[d];
    if rt == 0 {
        return;
    }
    let bw = s.io_bytes * 1000 / rt;
    let iops = s.total_ios * 1000 / rt;
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={} ({})({}/{}msec){}",
        if d == 0 { "read" } else { "write" },
        num2str(iops, 4, false, ""),
        num2str(bw, 4, true, "B/s"),
        num2str(bw, 4, false, "B/s"),
        num2str(s.io_bytes, 4, true, "B"),
        rt,
        if d == 1 { "; 0 zone resets" } else { "" }
    );
    if show_slat {
        display_lat(out, "slat", &s.slat);
    }
    display_lat(out, "clat", &s.clat);
    display_lat(out, " lat", &s.lat);
    show_percentiles(out, &s.clat_plat, "clat");
    if let Some((min, max, mean, dev)) = s.bw.calc() {
        let mut p_of_agg = 100.0;
        if g.agg[d] > 1024 {
            p_of_agg = (mean * 100.0 / (g.agg[d] as f64 / 1024.0)).min(100.0);
        }
        let (mut min, mut max, mut mean, mut dev, mut unit) = (min, max, mean, dev, "KiB");
        if mean > 1024.0 * 1024.0 {
            min /= 1024;
            max /= 1024;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={p_of_agg:3.2}%, avg={mean:5.02}, stdev={dev:5.02}, samples={}",
            s.bw.samples
        );
    }
    if let Some((min, max, mean, dev)) = s.iops.calc() {
        let _ = writeln!(out, "   iops        : min={min:5}, max={max:5}, avg={mean:5.02}, stdev={dev:5.02}, samples={}", s.iops.samples);
    }
}

/// ctime(3) of a wall-clock second (days since the epoch by the civil calendar).
pub fn ctime(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let sod = secs % 86400;
    let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let (y, m, d) = memtwin_engine::civil_from_days(days);
    let mon = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][(m - 1) as usize];
    format!("{wd} {mon} {d:2} {:02}:{:02}:{:02} {y}", sod / 3600, sod / 60 % 60, sod % 60)
}

/// show_thread_status_normal for one (possibly merged) job.
pub fn normal(out: &mut String, g: &Group, ts: &JobStats, show_slat: bool, when: &str) {
    if ts.dirs[0].total_ios + ts.dirs[1].total_ios == 0 && ts.error == 0 {
        return;
    }
    if ts.error == 0 {
        let _ = writeln!(out, "{}: (groupid=0, jobs={}): err={:2}: pid={}: {}", ts.name, ts.members, ts.error, ts.pid, when);
    } else {
        // show_thread_status_normal: the error's td->verror in parentheses.
        let _ = writeln!(out, "{}: (groupid=0, jobs={}): err={:2} ({}): pid={}: {}", ts.name, ts.members, ts.error, ts.verror, ts.pid, when);
    }
    for d in 0..2 {
        if ts.dirs[d].io_bytes > 0 {
            ddir_status(out, g, ts, d, show_slat);
        }
    }
    let total = ts.dirs[0].total_ios + ts.dirs[1].total_ios + ts.trim_ios;
    let ld = &ts.lat_dist;
    show_lat(out, &lat_pcts(&ld.n, total), &RANGES[..10], "nsec");
    show_lat(out, &lat_pcts(&ld.u, total), &RANGES[..10], "usec");
    show_lat(out, &lat_pcts(&ld.m, total), &RANGES, "msec");
    if ts.sync.samples > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        display_lat(out, "sync", &ts.sync);
        show_percentiles(out, &ts.sync_plat, "sync");
    }
    // total_run_time is in whole milliseconds: a job shorter than one shows 0 % of each.
    let rt = if ts.runtime >= 1_000_000 { ts.runtime as f64 } else { 0.0 };
    let (usr, sys) = if rt > 0.0 { (ts.usr_ns as f64 * 100.0 / rt, ts.sys_ns as f64 * 100.0 / rt) } else { (0.0, 0.0) };
    let _ = writeln!(out, "  cpu          : usr={usr:3.2}%, sys={sys:3.2}%, ctx={}, majf={}, minf={}", ts.ctx, ts.majf, ts.minf);
    let dd = ts.depth.dist(total);
    let _ = writeln!(
        out,
        "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
        dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6]
    );
    for (label, map, n) in [("submit  ", &ts.submit, ts.total_submit), ("complete", &ts.complete, ts.total_complete)] {
        let dd = map.dist(n);
        let _ = writeln!(
            out,
            "     {label}  : 0={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, 64={:3.1}%, >=64={:3.1}%",
            dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6]
        );
    }
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},{},0 short=0,0,0,0 dropped=0,0,0,0",
        ts.dirs[0].total_ios, ts.dirs[1].total_ios, ts.trim_ios
    );
    let _ = writeln!(out, "     latency   : target=0, window=0, percentile=100.00%, depth={}", ts.iodepth);
}

/// show_group_stats.
pub fn group_status(out: &mut String, g: &Group) {
    out.push_str("\nRun status group 0 (all jobs):\n");
    for d in 0..2 {
        if g.max_run[d] == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
            if d == 0 { "   READ" } else { "  WRITE" },
            num2str(g.agg[d], 4, true, "B/s"),
            num2str(g.agg[d], 4, false, "B/s"),
            num2str(g.min_bw[d], 4, true, "B/s"),
            num2str(g.max_bw[d], 4, true, "B/s"),
            num2str(g.min_bw[d], 4, false, "B/s"),
            num2str(g.max_bw[d], 4, false, "B/s"),
            num2str(g.iobytes[d], 4, true, "B"),
            num2str(g.iobytes[d], 4, false, "B"),
            g.min_run[d],
            g.max_run[d]
        );
    }
}

/// A disk's counters over the run (struct disk_util_stat): ios, busy time, ticks per
/// direction and the utilisation.
pub struct DiskUtil {
    pub name: String,
    pub ios: [u64; 2],
    pub ticks: [u64; 2],
    pub util: f64,
}

pub fn disk_stats(out: &mut String, disks: &[DiskUtil]) {
    if disks.is_empty() {
        return;
    }
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        let _ = writeln!(
            out,
            "  {}: ios={}/{}, merge=0/0, ticks={}/{}, in_queue={}, util={:3.2}%",
            d.name,
            d.ios[0],
            d.ios[1],
            d.ticks[0],
            d.ticks[1],
            d.ticks[0] + d.ticks[1],
            d.util
        );
    }
}

// ---- Terse ------------------------------------------------------------------------------

/// show_ddir_status_terse (version 3): KiB moved, KiB/s, IOPS, runtime; slat, clat (with
/// its 17 percentiles and three empty slots), lat, all in usec; the bandwidth samples.
fn ddir_terse(out: &mut String, g: &Group, ts: &JobStats, d: usize) {
    let s = &ts.dirs[d];
    let rt = if s.total_ios > 0 { runtime_ms(ts) } else { 0 };
    let (bw, iops) = if rt > 0 { (s.io_bytes * 1000 / rt / 1024, s.total_ios * 1000 / rt) } else { (0, 0) };
    let _ = write!(out, ";{};{bw};{iops};{rt}", s.io_bytes >> 10);
    let lat = |out: &mut String, st: &IoStat| {
        let (min, max, mean, dev) = st.calc().unwrap_or((0, 0, 0.0, 0.0));
        let _ = write!(out, ";{};{};{:.6};{:.6}", min / 1000, max / 1000, mean / 1000.0, dev / 1000.0);
    };
    lat(out, &s.slat);
    lat(out, &s.clat);
    let vals = if s.clat.samples > 0 { s.clat_plat.percentiles() } else { vec![0; PERCENTILES.len()] };
    for (pc, v) in PERCENTILES.iter().zip(vals) {
        let _ = write!(out, ";{pc:.6}%={}", v / 1000);
    }
    for _ in PERCENTILES.len()..20 {
        out.push_str(";0%=0");
    }
    lat(out, &s.lat);
    match s.bw.calc() {
        Some((min, max, mean, dev)) => {
            let p_of_agg = if g.agg[d] > 1024 { (mean * 100.0 / (g.agg[d] as f64 / 1024.0)).min(100.0) } else { 100.0 };
            let _ = write!(out, ";{min};{max};{p_of_agg:.6}%;{mean:.6};{dev:.6}");
        }
        None => out.push_str(";0;0;0.000000%;0.000000;0.000000"),
    }
}

/// show_thread_status_terse_all, terse version 3: a job's line, with the disks' counters
/// at its end (show_disk_util in terse form, on every job's line).
pub fn terse(out: &mut String, g: &Group, ts: &JobStats, disks: &[DiskUtil]) {
    let _ = write!(out, "3;fio-3.33;{};0;{}", ts.name, ts.error);
    ddir_terse(out, g, ts, 0);
    ddir_terse(out, g, ts, 1);
    // total_run_time is in whole milliseconds: a job shorter than one shows 0 % of each.
    let rt = if ts.runtime >= 1_000_000 { ts.runtime as f64 } else { 0.0 };
    let (usr, sys) = if rt > 0.0 { (ts.usr_ns as f64 * 100.0 / rt, ts.sys_ns as f64 * 100.0 / rt) } else { (0.0, 0.0) };
    let _ = write!(out, ";{usr:.6}%;{sys:.6}%;{};{};{}", ts.ctx, ts.majf, ts.minf);
    let total = ts.dirs[0].total_ios + ts.dirs[1].total_ios + ts.trim_ios;
    for v in ts.depth.dist(total) {
        let _ = write!(out, ";{v:3.1}%");
    }
    // stat_calc_lat_nu: the terse format has no nsec buckets; they are added to the first
    // usec one.
    let ld = &ts.lat_dist;
    let mut u = lat_pcts(&ld.u, total);
    if total > 0 {
        u[0] += 100.0 * ld.n.iter().sum::<u64>() as f64 / total as f64;
    }
    for v in u.iter().chain(lat_pcts(&ld.m, total).iter()) {
        let _ = write!(out, ";{v:3.2}%");
    }
    for d in disks {
        let _ = write!(
            out,
            ";{};{};{};0;0;{};{};{};{:3.2}%",
            d.name,
            d.ios[0],
            d.ios[1],
            d.ticks[0],
            d.ticks[1],
            d.ticks[0] + d.ticks[1],
            d.util
        );
    }
    out.push('\n');
}

// ---- JSON ------------------------------------------------------------------------------

/// A JSON value printed as fio's json.c prints it ("key" : value, floats with %f).
pub enum J {
    Int(i64),
    Float(f64),
    Str(String),
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

impl J {
    fn print(&self, out: &mut String, level: usize) {
        match self {
            J::Int(i) => {
                let _ = write!(out, "{i}");
            }
            J::Float(f) => {
                let _ = write!(out, "{f:.6}");
            }
            J::Str(s) => {
                let _ = write!(out, "\"{}\"", esc(s));
            }
            J::Obj(items) => {
                out.push_str("{\n");
                for (i, (k, v)) in items.iter().enumerate() {
                    let _ = write!(out, "{}\"{}\" : ", "  ".repeat(level + 1), esc(k));
                    v.print(out, level + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}}}", "  ".repeat(level));
            }
            J::Arr(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    out.push_str(&"  ".repeat(level + 1));
                    v.print(out, level + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                let _ = write!(out, "{}]", "  ".repeat(level));
            }
        }
    }
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.print(&mut s, 0);
        s.push('\n');
        s
    }
}

fn kv(k: &str, v: J) -> (String, J) {
    (k.to_string(), v)
}

fn stat_json(s: &IoStat, plat: Option<&Plat>) -> J {
    let (min, max, mean, dev) = s.calc().unwrap_or((0, 0, 0.0, 0.0));
    let mut o = vec![
        kv("min", J::Int(min as i64)),
        kv("max", J::Int(max as i64)),
        kv("mean", J::Float(mean)),
        kv("stddev", J::Float(dev)),
        kv("N", J::Int(s.samples as i64)),
    ];
    if let Some(p) = plat {
        if s.samples > 0 {
            let vals = p.percentiles();
            let items = PERCENTILES.iter().zip(vals).map(|(pc, v)| (format!("{pc:.6}"), J::Int(v as i64))).collect();
            o.push(kv("percentile", J::Obj(items)));
        }
    }
    J::Obj(o)
}

fn ddir_json(g: &Group, ts: &JobStats, d: usize) -> J {
    let s = &ts.dirs[d];
    let rt = if s.total_ios > 0 { runtime_ms(ts) } else { 0 };
    let bw_bytes = if rt > 0 { s.io_bytes * 1000 / rt } else { 0 };
    let iops = if rt > 0 { s.total_ios as f64 * 1000.0 / rt as f64 } else { 0.0 };
    let (bmin, bmax, bmean, bdev) = s.bw.calc().unwrap_or((0, 0, 0.0, 0.0));
    let (imin, imax, imean, idev) = s.iops.calc().unwrap_or((0, 0, 0.0, 0.0));
    let agg = if s.bw.samples > 0 && g.agg[d] > 1024 { (bmean * 100.0 / (g.agg[d] as f64 / 1024.0)).min(100.0) } else if s.bw.samples > 0 { 100.0 } else { 0.0 };
    J::Obj(vec![
        kv("io_bytes", J::Int(s.io_bytes as i64)),
        kv("io_kbytes", J::Int((s.io_bytes / 1024) as i64)),
        kv("bw_bytes", J::Int(bw_bytes as i64)),
        kv("bw", J::Int((bw_bytes / 1024) as i64)),
        kv("iops", J::Float(iops)),
        kv("runtime", J::Int(rt as i64)),
        kv("total_ios", J::Int(s.total_ios as i64)),
        kv("short_ios", J::Int(0)),
        kv("drop_ios", J::Int(0)),
        kv("slat_ns", stat_json(&s.slat, None)),
        kv("clat_ns", stat_json(&s.clat, Some(&s.clat_plat))),
        kv("lat_ns", stat_json(&s.lat, None)),
        kv("bw_min", J::Int(bmin as i64)),
        kv("bw_max", J::Int(bmax as i64)),
        kv("bw_agg", J::Float(agg)),
        kv("bw_mean", J::Float(bmean)),
        kv("bw_dev", J::Float(bdev)),
        kv("bw_samples", J::Int(s.bw.samples as i64)),
        kv("iops_min", J::Int(imin as i64)),
        kv("iops_max", J::Int(imax as i64)),
        kv("iops_mean", J::Float(imean)),
        kv("iops_stddev", J::Float(idev)),
        kv("iops_samples", J::Int(s.iops.samples as i64)),
    ])
}

/// The trim section: only what trims were issued (a trim ends its job at once: no bytes,
/// no latencies).
fn trim_ddir_json(issued: u64) -> J {
    let mut t = JobStats::default();
    t.dirs[0].total_ios = issued;
    ddir_json(&Group::of(&[]), &t, 0)
}

fn dist_json(labels: &[&str], vals: &[f64]) -> J {
    J::Obj(labels.iter().zip(vals).map(|(l, v)| (l.to_string(), J::Float(*v))).collect())
}

/// show_thread_status_json for one (possibly merged) job.
pub fn job_json(g: &Group, ts: &JobStats, options: &[(String, String)], elapsed_s: u64) -> J {
    let total = ts.dirs[0].total_ios + ts.dirs[1].total_ios + ts.trim_ios;
    // total_run_time is in whole milliseconds: a job shorter than one shows 0 % of each.
    let rt = if ts.runtime >= 1_000_000 { ts.runtime as f64 } else { 0.0 };
    let (usr, sys) = if rt > 0.0 { (ts.usr_ns as f64 * 100.0 / rt, ts.sys_ns as f64 * 100.0 / rt) } else { (0.0, 0.0) };
    let ld = &ts.lat_dist;
    let lat_labels = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];
    J::Obj(vec![
        kv("jobname", J::Str(ts.name.clone())),
        kv("groupid", J::Int(0)),
        kv("error", J::Int(ts.error as i64)),
        kv("eta", J::Int(0)),
        kv("elapsed", J::Int(elapsed_s as i64)),
        kv("job options", J::Obj(options.iter().map(|(k, v)| (k.clone(), J::Str(v.clone()))).collect())),
        kv("read", ddir_json(g, ts, 0)),
        kv("write", ddir_json(g, ts, 1)),
        kv("trim", trim_ddir_json(ts.trim_ios)),
        kv("sync", J::Obj(vec![kv("total_ios", J::Int(ts.sync.samples as i64)), kv("lat_ns", stat_json(&ts.sync, Some(&ts.sync_plat)))])),
        kv("job_runtime", J::Int(runtime_ms(ts) as i64)),
        kv("usr_cpu", J::Float(usr)),
        kv("sys_cpu", J::Float(sys)),
        kv("ctx", J::Int(ts.ctx as i64)),
        kv("majf", J::Int(ts.majf as i64)),
        kv("minf", J::Int(ts.minf as i64)),
        kv("iodepth_level", dist_json(&["1", "2", "4", "8", "16", "32", ">=64"], &ts.depth.dist(total))),
        kv("iodepth_submit", dist_json(&["0", "4", "8", "16", "32", "64", ">=64"], &ts.submit.dist(ts.total_submit))),
        kv("iodepth_complete", dist_json(&["0", "4", "8", "16", "32", "64", ">=64"], &ts.complete.dist(ts.total_complete))),
        kv("latency_ns", dist_json(&lat_labels[..10], &lat_pcts(&ld.n, total))),
        kv("latency_us", dist_json(&lat_labels[..10], &lat_pcts(&ld.u, total))),
        kv("latency_ms", dist_json(&lat_labels, &lat_pcts(&ld.m, total))),
        kv("latency_depth", J::Int(ts.iodepth as i64)),
        kv("latency_target", J::Int(0)),
        kv("latency_percentile", J::Float(100.0)),
        kv("latency_window", J::Int(0)),
    ])
}

pub fn disk_json(d: &DiskUtil) -> J {
    J::Obj(vec![
        kv("name", J::Str(d.name.clone())),
        kv("read_ios", J::Int(d.ios[0] as i64)),
        kv("write_ios", J::Int(d.ios[1] as i64)),
        kv("read_merges", J::Int(0)),
        kv("write_merges", J::Int(0)),
        kv("read_ticks", J::Int(d.ticks[0] as i64)),
        kv("write_ticks", J::Int(d.ticks[1] as i64)),
        kv("in_queue", J::Int((d.ticks[0] + d.ticks[1]) as i64)),
        kv("util", J::Float(d.util)),
    ])
}

pub fn top_json(when: &str, epoch_s: u64, jobs: Vec<J>, disks: Vec<J>, global: &[(String, String)]) -> J {
    let mut o = vec![
        kv("fio version", J::Str("fio-3.33".into())),
        kv("timestamp", J::Int(epoch_s as i64)),
        kv("timestamp_ms", J::Int((epoch_s * 1000) as i64)),
        kv("time", J::Str(when.to_string())),
    ];
    if !global.is_empty() {
        o.push(kv("global options", J::Obj(global.iter().map(|(k, v)| (k.clone(), J::Str(v.clone()))).collect())));
    }
    o.push(kv("jobs", J::Arr(jobs)));
    if !disks.is_empty() {
        o.push(kv("disk_util", J::Arr(disks)));
    }
    J::Obj(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fio() {
        // Figures from recorded fio 3.33 runs.
        assert_eq!(num2str(10_204, 4, false, ""), "10.2k");
        assert_eq!(num2str(8422, 4, false, ""), "8422");
        assert_eq!(num2str(41_943_040, 4, true, "B/s"), "40.0MiB/s");
        assert_eq!(num2str(41_943_040, 4, false, "B/s"), "41.9MB/s");
        assert_eq!(num2str(4096, 4, true, "B"), "4096B");
        assert_eq!(num2str(65536, 4, true, "B"), "64.0KiB");
        assert_eq!(num2str(12_269_000, 6, false, ""), "12269k");
        assert_eq!(num2str(168_843, 6, false, ""), "168843");
    }

    #[test]
    fn ctime_of_the_epoch() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_795_429_571), "Mon Nov 23 10:26:11 2026");
    }
}
