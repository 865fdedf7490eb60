//! slabtop (procps-ng 4.0.2) in its one-shot form, `slabtop -o`, and `vmstat -m`'s table,
//! from the caches of /proc/slabinfo.

use crate::getopt::{lo, GetoptLong, HasArg, LongOpt};
use memtwin_procfs::SlabInfo;

/// slabtop's sort criteria (`-s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlabSort {
    /// a: active objects
    Active,
    /// b: objects per slab
    ObjPerSlab,
    /// c: cache size
    CacheSize,
    /// l: number of slabs
    Slabs,
    /// v: number of active slabs
    ActiveSlabs,
    /// n: name
    Name,
    /// o: number of objects (the default)
    Objs,
    /// p: pages per slab
    PagesPerSlab,
    /// s: object size
    ObjSize,
    /// u: cache utilization
    Use,
}

/// What `slabtop`'s command line asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct SlabtopOptions {
    pub sort: SlabSort,
    /// `-h` / `-V`: print this on stdout and exit 0.
    pub print_and_exit: Option<String>,
}

const SLABTOP_USAGE: &str = "
Usage:
 slabtop [options]

Options:
 -d, --delay <secs>  delay updates
 -o, --once          only display once, then exit
 -s, --sort <char>   specify sort criteria by character (see below)

 -h, --help     display this help and exit
 -V, --version  output version information and exit

The following are valid sort criteria:
 a: sort by number of active objects
 b: sort by objects per slab
 c: sort by cache size
 l: sort by number of slabs
 v: sort by (non display) number of active slabs
 n: sort by name
 o: sort by number of objects (the default)
 p: sort by (non display) pages per slab
 s: sort by object size
 u: sort by cache utilization

For more details see slabtop(1).
";

const SLABTOP_LONGOPTS: &[LongOpt] = &[
    lo("delay", HasArg::Required, 'd' as i32),
    lo("sort", HasArg::Required, 's' as i32),
    lo("once", HasArg::No, 'o' as i32),
    lo("help", HasArg::No, 'h' as i32),
    lo("version", HasArg::No, 'V' as i32),
];

/// Parse slabtop's arguments. Only the one-shot `-o` form is supported: the interactive
/// screen needs a terminal.
pub fn parse_slabtop_args(args: &[String]) -> Result<SlabtopOptions, String> {
    let mut o = SlabtopOptions { sort: SlabSort::Objs, print_and_exit: None };
    let mut once = false;
    let mut g = GetoptLong::new("slabtop", args, "d:s:ohV", SLABTOP_LONGOPTS);
    for r in g.by_ref() {
        let opt = r.map_err(|e| format!("{e}{SLABTOP_USAGE}").trim_end().to_string())?;
        match opt.ch() {
            'V' => {
                o.print_and_exit = Some("slabtop from procps-ng 4.0.2\n".to_string());
                return Ok(o);
            }
            'h' => {
                o.print_and_exit = Some(SLABTOP_USAGE.trim_start_matches('\n').to_string());
                return Ok(o);
            }
            'o' => once = true,
            'd' => {
                let a = opt.arg.unwrap_or_default();
                if a.parse::<i64>().map_or(true, |v| v < 0) {
                    return Err("slabtop: illegal delay".to_string());
                }
            }
            's' => {
                let a = opt.arg.unwrap_or_default();
                o.sort = match a.chars().next() {
                    Some('a') => SlabSort::Active,
                    Some('b') => SlabSort::ObjPerSlab,
                    Some('c') => SlabSort::CacheSize,
                    Some('l') => SlabSort::Slabs,
                    Some('v') => SlabSort::ActiveSlabs,
                    Some('n') => SlabSort::Name,
                    Some('o') => SlabSort::Objs,
                    Some('p') => SlabSort::PagesPerSlab,
                    Some('s') => SlabSort::ObjSize,
                    Some('u') => SlabSort::Use,
                    _ => SlabSort::Objs,
                };
            }
            _ => return Err(SLABTOP_USAGE.trim().to_string()),
        }
    }
    if !g.operands().is_empty() {
        return Err(SLABTOP_USAGE.trim().to_string());
    }
    if !once {
        return Err("slabtop: only `slabtop -o` (print once and exit) is supported by memtwin: the interactive screen needs a terminal".to_string());
    }
    Ok(o)
}

fn use_pct(c: &SlabInfo) -> u64 {
    if c.num_objs == 0 { 0 } else { c.active_objs * 100 / c.num_objs }
}

fn cache_kb(c: &SlabInfo) -> u64 {
    c.num_slabs * c.pagesperslab as u64 * 4
}

/// `slabtop -o`: the summary block and every cache, sorted (ties keep /proc/slabinfo's
/// order).
pub fn slabtop_once(caches: &[SlabInfo], o: &SlabtopOptions) -> String {
    let (mut act, mut objs, mut aslabs, mut slabs, mut acaches) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut asize, mut tsize) = (0u64, 0u64);
    let mut min = u32::MAX;
    let mut max = 0u32;
    for c in caches {
        act += c.active_objs;
        objs += c.num_objs;
        aslabs += c.active_slabs;
        slabs += c.num_slabs;
        if c.num_objs > 0 {
            acaches += 1;
        }
        asize += c.active_objs * c.objsize as u64;
        tsize += c.num_objs * c.objsize as u64;
        min = min.min(c.objsize);
        max = max.max(c.objsize);
    }
    if caches.is_empty() {
        min = 0;
    }
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 * 100.0 / b as f64 };
    let avg = if objs == 0 { 0.0 } else { tsize as f64 / objs as f64 };
    let mut out = String::new();
    out.push_str(&format!(" Active / Total Objects (% used)    : {act} / {objs} ({:.1}%)\n", pct(act, objs)));
    out.push_str(&format!(" Active / Total Slabs (% used)      : {aslabs} / {slabs} ({:.1}%)\n", pct(aslabs, slabs)));
    out.push_str(&format!(" Active / Total Caches (% used)     : {acaches} / {} ({:.1}%)\n", caches.len(), pct(acaches, caches.len() as u64)));
    out.push_str(&format!(
        " Active / Total Size (% used)       : {:.2}K / {:.2}K ({:.1}%)\n",
        asize as f64 / 1024.0,
        tsize as f64 / 1024.0,
        pct(asize, tsize)
    ));
    out.push_str(&format!(
        " Minimum / Average / Maximum Object : {:.2}K / {:.2}K / {:.2}K\n\n",
        min as f64 / 1024.0,
        avg / 1024.0,
        max as f64 / 1024.0
    ));
    out.push_str("  OBJS ACTIVE  USE OBJ SIZE  SLABS OBJ/SLAB CACHE SIZE NAME                   \n");
    let mut rows: Vec<&SlabInfo> = caches.iter().collect();
    match o.sort {
        SlabSort::Name => rows.sort_by(|a, b| a.name.cmp(&b.name)),
        s => rows.sort_by_key(|c| {
            std::cmp::Reverse(match s {
                SlabSort::Active => c.active_objs,
                SlabSort::ObjPerSlab => c.objperslab as u64,
                SlabSort::CacheSize => cache_kb(c),
                SlabSort::Slabs => c.num_slabs,
                SlabSort::ActiveSlabs => c.active_slabs,
                SlabSort::PagesPerSlab => c.pagesperslab as u64,
                SlabSort::ObjSize => c.objsize as u64,
                SlabSort::Use => use_pct(c),
                SlabSort::Objs | SlabSort::Name => c.num_objs,
            })
        }),
    }
    for c in rows {
        let name: String = c.name.chars().take(23).collect();
        out.push_str(&format!(
            "{:>6} {:>6} {:>3}% {:>7.2}K {:>6} {:>8} {:>9}K {:<23}\n",
            c.num_objs,
            c.active_objs,
            use_pct(c),
            c.objsize as f64 / 1024.0,
            c.num_slabs,
            c.objperslab,
            cache_kb(c),
            name
        ));
    }
    out
}

/// `vmstat -m` (procps-ng 4.0.2 slabformat): caches by name, the header again every
/// `height` rows; the "Pages" column is the objects per slab, as procps prints it.
pub fn vmstat_slabs(caches: &[SlabInfo], height: u32, one_header: bool) -> String {
    let header = format!("{:<24} {:>6} {:>6} {:>6} {:>6}\n", "Cache", "Num", "Total", "Size", "Pages");
    let mut rows: Vec<&SlabInfo> = caches.iter().collect();
    rows.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = header.clone();
    for (i, c) in rows.iter().enumerate() {
        if !one_header && i > 0 && height > 0 && i as u64 % height as u64 == 0 {
            out.push_str(&header);
        }
        out.push_str(&format!("{:<24} {:>6} {:>6} {:>6} {:>6}\n", c.name, c.active_objs, c.num_objs, c.objsize, c.objperslab));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memtwin_procfs::parse_slabinfo;

    const SLABINFO: &str = include_str!("../../../tests/data/real-tools/proc-slabinfo-6.18.txt");
    const SLABTOP: &str = include_str!("../../../tests/data/real-tools/slabtop-o-6.18.txt");
    const VMSTAT_M: &str = include_str!("../../../tests/data/real-tools/vmstat-m-6.18.txt");

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    /// The samples were taken a moment apart on a live host: compare the layout line by
    /// line (widths, order of columns, header text) and the summary's formulas on the
    /// slabinfo sample.
    #[test]
    fn slabtop_o_matches_procps_layout() {
        let caches = parse_slabinfo(SLABINFO);
        let o = parse_slabtop_args(&args(&["-o"])).unwrap();
        let ours = slabtop_once(&caches, &o);
        let real: Vec<&str> = SLABTOP.lines().collect();
        let mine: Vec<&str> = ours.lines().collect();
        assert_eq!(mine.len(), real.len());
        assert_eq!(mine[5..7], real[5..7], "blank line and table header");
        for (a, b) in mine.iter().zip(&real) {
            assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        }
        for i in 0..5 {
            assert_eq!(mine[i].split(':').next(), real[i].split(':').next());
        }
        // The caches counts and the total size were the same at both moments.
        assert_eq!(mine[2], real[2]);
        assert!(mine[3].ends_with("347975.28K (98.5%)") || mine[3].contains("/ 347975.28K"), "{}", mine[3]);
        // Rows: sorted by objects, descending; a cache with no objects shows 0%.
        let objs: Vec<u64> = mine[7..].iter().map(|l| l.split_whitespace().next().unwrap().parse().unwrap()).collect();
        assert!(objs.windows(2).all(|w| w[0] >= w[1]));
        let dentry = mine.iter().find(|l| l.contains(" dentry ")).unwrap();
        assert_eq!(&dentry[14..], "100%    0.19K   7075       21     28300K dentry                 ");
        assert!(parse_slabtop_args(&args(&[])).unwrap_err().contains("-o"));
        assert_eq!(parse_slabtop_args(&args(&["-o", "-s", "n"])).unwrap().sort, SlabSort::Name);
    }

    #[test]
    fn vmstat_m_matches_procps_layout() {
        let caches = parse_slabinfo(SLABINFO);
        let ours = vmstat_slabs(&caches, 21, false);
        let real: Vec<&str> = VMSTAT_M.lines().collect();
        let mine: Vec<&str> = ours.lines().collect();
        assert_eq!(mine[0], real[0]);
        // Same caches, names in the same (byte) order, headers at the same lines.
        let heads = |v: &[&str]| v.iter().enumerate().filter(|(_, l)| l.starts_with("Cache ")).map(|(i, _)| i).collect::<Vec<_>>();
        assert_eq!(heads(&mine)[..5], heads(&real)[..5]);
        let names = |v: &[&str]| v.iter().map(|l| l[..24].trim_end().to_string()).collect::<Vec<_>>();
        assert_eq!(names(&mine)[..40], names(&real)[..40]);
        let d = mine.iter().find(|l| l.starts_with("dentry ")).unwrap();
        assert_eq!(*d, "dentry                   148575 148575    192     21");
    }
}
