//! sysstat 12.6 `sar -r`, `-B`, `-W`, `-S` over /proc snapshots taken at the interval's ends
//! (C locale: 24-hour times, MM/DD/YYYY). Columns are `%9`-wide after an 11-wide time
//! field, as sysstat's cprintf_* print them; rates are per second over the interval.

use memtwin_procfs::{Snapshot, VmItem};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SarReport {
    /// -r: memory utilisation
    Memory,
    /// -B: paging
    Paging,
    /// -W: swapping
    Swapping,
    /// -S: swap space
    SwapSpace,
}

impl SarReport {
    pub fn header(self) -> &'static [&'static str] {
        match self {
            SarReport::Memory => &["kbmemfree", "kbavail", "kbmemused", "%memused", "kbbuffers", "kbcached", "kbcommit", "%commit", "kbactive", "kbinact", "kbdirty"],
            SarReport::Paging => &["pgpgin/s", "pgpgout/s", "fault/s", "majflt/s", "pgfree/s", "pgscank/s", "pgscand/s", "pgsteal/s", "%vmeff"],
            SarReport::Swapping => &["pswpin/s", "pswpout/s"],
            SarReport::SwapSpace => &["kbswpfree", "kbswpused", "%swpused", "kbswpcad", "%swpcad"],
        }
    }
}

/// One value as sar prints it: integers `%9llu`, rates and percentages `%9.2f`.
#[derive(Clone, Copy, Debug)]
enum V {
    I(u64),
    F(f64),
}

fn values(r: SarReport, prev: &Snapshot, cur: &Snapshot) -> Vec<V> {
    let m = &cur.mem;
    let dt = (cur.uptime_ns.saturating_sub(prev.uptime_ns)) as f64 / 1e9;
    let rate = |i: VmItem| if dt > 0.0 { cur.vm.get(i).saturating_sub(prev.vm.get(i)) as f64 / dt } else { 0.0 };
    let pct = |a: u64, b: u64| if b > 0 { a as f64 * 100.0 / b as f64 } else { 0.0 };
    match r {
        SarReport::Memory => {
            // sysstat 12: kbmemused = total - free - buffers - cached - slab.
            let used = m.mem_total.saturating_sub(m.mem_free + m.buffers + m.cached + m.slab);
            vec![
                V::I(m.mem_free),
                V::I(m.mem_available),
                V::I(used),
                V::F(pct(used, m.mem_total)),
                V::I(m.buffers),
                V::I(m.cached),
                V::I(m.committed_as),
                V::F(pct(m.committed_as, m.mem_total + m.swap_total)),
                V::I(m.active),
                V::I(m.inactive),
                V::I(m.dirty),
            ]
        }
        SarReport::Paging => {
            let scank = rate(VmItem::PgscanKswapd);
            let scand = rate(VmItem::PgscanDirect);
            let steal = rate(VmItem::PgstealKswapd) + rate(VmItem::PgstealDirect);
            let vmeff = if scank + scand > 0.0 { steal / (scank + scand) * 100.0 } else { 0.0 };
            vec![
                V::F(rate(VmItem::Pgpgin)),
                V::F(rate(VmItem::Pgpgout)),
                V::F(rate(VmItem::Pgfault)),
                V::F(rate(VmItem::Pgmajfault)),
                V::F(rate(VmItem::Pgfree)),
                V::F(scank),
                V::F(scand),
                V::F(steal),
                V::F(vmeff),
            ]
        }
        SarReport::Swapping => vec![V::F(rate(VmItem::Pswpin)), V::F(rate(VmItem::Pswpout))],
        SarReport::SwapSpace => {
            let used = m.swap_total - m.swap_free;
            vec![V::I(m.swap_free), V::I(used), V::F(pct(used, m.swap_total)), V::I(m.swap_cached), V::F(pct(m.swap_cached, used))]
        }
    }
}

fn row(label: &str, vals: &[V]) -> String {
    let mut s = format!("{label:<11}");
    for v in vals {
        match v {
            V::I(x) => s.push_str(&format!(" {x:>9}")),
            V::F(x) => s.push_str(&format!(" {x:>9.2}")),
        }
    }
    s.push('\n');
    s
}

/// "Linux 6.1.0-13-amd64 (memtwin) \t11/23/2026 \t_x86_64_\t(8 CPU)" and a blank line.
pub fn sar_banner(release: &str, date_mdy: &str, cpus: u32) -> String {
    format!("Linux {release} (memtwin) \t{date_mdy} \t_x86_64_\t({cpus} CPU)\n\n")
}

pub fn sar_header(r: SarReport, time: &str) -> String {
    let mut s = format!("{time:<11}");
    for h in r.header() {
        s.push_str(&format!(" {h:>9}"));
    }
    s.push('\n');
    s
}

pub fn sar_row(r: SarReport, prev: &Snapshot, cur: &Snapshot, time: &str) -> String {
    row(time, &values(r, prev, cur))
}

/// The `Average:` line: rates over the whole run; levels averaged over the rows.
pub fn sar_average(r: SarReport, samples: &[Snapshot]) -> String {
    let n = samples.len().saturating_sub(1);
    if n == 0 {
        return String::new();
    }
    let vals = match r {
        SarReport::Paging | SarReport::Swapping => values(r, &samples[0], &samples[n]),
        _ => {
            let rows: Vec<Vec<V>> = (1..=n).map(|i| values(r, &samples[i - 1], &samples[i])).collect();
            (0..rows[0].len())
                .map(|c| match rows[0][c] {
                    V::I(_) => V::I(rows.iter().map(|r| if let V::I(x) = r[c] { x } else { 0 }).sum::<u64>() / n as u64),
                    V::F(_) => V::F(rows.iter().map(|r| if let V::F(x) = r[c] { x } else { 0.0 }).sum::<f64>() / n as f64),
                })
                .collect()
        }
    };
    row("Average:", &vals)
}
