//! /proc/diskstats (block/genhd.c diskstats_show): one line per block device with the
//! kernel's I/O accounting. The number of fields depends on the kernel: 11 counters up to
//! 4.17, four discard counters since 4.18, two flush counters since 5.5; 2.4 had no such
//! file (its disk counters were the `disk_io:` line of /proc/stat).

/// One device's counters, in the units diskstats_show prints (times in ms).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    /// Per direction: read, write, discard, flush.
    pub ios: [u64; 4],
    pub merges: [u64; 4],
    pub sectors: [u64; 4],
    pub ticks_ms: [u64; 4],
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

/// Which counters the kernel prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskstatsLayout {
    /// 2.6.x - 4.17: reads, writes, in flight, io_ticks, time_in_queue (11 counters).
    Classic,
    /// 4.18 - 5.4: plus discards (15 counters).
    Discard,
    /// 5.5+: plus flushes (17 counters).
    Flush,
}

/// The text of /proc/diskstats: `%4d %7d %s` then the counters separated by spaces.
pub fn render_diskstats(disks: &[DiskStat], layout: DiskstatsLayout) -> String {
    let mut out = String::new();
    for d in disks {
        out.push_str(&format!(
            "{:4} {:7} {} {} {} {} {} {} {} {} {} {} {} {}",
            d.major, d.minor, d.name, d.ios[0], d.merges[0], d.sectors[0], d.ticks_ms[0], d.ios[1], d.merges[1], d.sectors[1], d.ticks_ms[1], d.in_flight, d.io_ticks_ms, d.time_in_queue_ms
        ));
        if layout != DiskstatsLayout::Classic {
            out.push_str(&format!(" {} {} {} {}", d.ios[2], d.merges[2], d.sectors[2], d.ticks_ms[2]));
        }
        if layout == DiskstatsLayout::Flush {
            out.push_str(&format!(" {} {}", d.ios[3], d.ticks_ms[3]));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of a real 6.18 kernel's file (tests/data/real-tools/proc-diskstats-6.18.txt).
    #[test]
    fn matches_the_kernel_line() {
        let d = DiskStat {
            major: 254,
            minor: 0,
            name: "vda".into(),
            ios: [8056271, 556421, 441443, 15762],
            merges: [811318, 2757809, 19, 0],
            sectors: [1040667026, 675603440, 555207288, 0],
            ticks_ms: [19205245, 4627652, 140535, 5059],
            in_flight: 0,
            io_ticks_ms: 1073688,
            time_in_queue_ms: 23978493,
        };
        assert_eq!(
            render_diskstats(std::slice::from_ref(&d), DiskstatsLayout::Flush),
            " 254       0 vda 8056271 811318 1040667026 19205245 556421 2757809 675603440 4627652 0 1073688 23978493 441443 19 555207288 140535 15762 5059\n"
        );
        assert_eq!(render_diskstats(std::slice::from_ref(&d), DiskstatsLayout::Classic).split_whitespace().count(), 14);
        assert_eq!(render_diskstats(std::slice::from_ref(&d), DiskstatsLayout::Discard).split_whitespace().count(), 18);
    }
}
