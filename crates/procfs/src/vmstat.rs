//! /proc/vmstat (mm/vmstat.c, vmstat_text): node/zone gauges followed by event counters,
//! in the kernel's order. Only the items the model maintains are listed.

macro_rules! vm_items {
    ($($variant:ident => $name:literal,)*) => {
        /// One line of /proc/vmstat.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(usize)]
        pub enum VmItem { $($variant,)* }

        /// Every item, in /proc/vmstat order.
        pub const VM_ITEMS: &[VmItem] = &[$(VmItem::$variant,)*];

        impl VmItem {
            pub const COUNT: usize = [$($name,)*].len();
            /// The kernel's name for the item.
            pub fn name(self) -> &'static str {
                const NAMES: &[&str] = &[$($name,)*];
                NAMES[self as usize]
            }
            pub fn from_name(name: &str) -> Option<VmItem> {
                VM_ITEMS.iter().copied().find(|i| i.name() == name)
            }
        }
    };
}

vm_items! {
    NrFreePages => "nr_free_pages",
    NrZoneInactiveAnon => "nr_zone_inactive_anon",
    NrZoneActiveAnon => "nr_zone_active_anon",
    NrZoneInactiveFile => "nr_zone_inactive_file",
    NrZoneActiveFile => "nr_zone_active_file",
    NrZoneUnevictable => "nr_zone_unevictable",
    NrZoneWritePending => "nr_zone_write_pending",
    NrMlock => "nr_mlock",
    NrInactiveAnon => "nr_inactive_anon",
    NrActiveAnon => "nr_active_anon",
    NrInactiveFile => "nr_inactive_file",
    NrActiveFile => "nr_active_file",
    NrUnevictable => "nr_unevictable",
    NrSlabReclaimable => "nr_slab_reclaimable",
    NrSlabUnreclaimable => "nr_slab_unreclaimable",
    NrIsolatedAnon => "nr_isolated_anon",
    NrIsolatedFile => "nr_isolated_file",
    WorkingsetNodes => "workingset_nodes",
    WorkingsetRefaultAnon => "workingset_refault_anon",
    WorkingsetRefaultFile => "workingset_refault_file",
    WorkingsetActivateAnon => "workingset_activate_anon",
    WorkingsetActivateFile => "workingset_activate_file",
    WorkingsetRestoreAnon => "workingset_restore_anon",
    WorkingsetRestoreFile => "workingset_restore_file",
    WorkingsetNodereclaim => "workingset_nodereclaim",
    NrAnonPages => "nr_anon_pages",
    NrMapped => "nr_mapped",
    NrFilePages => "nr_file_pages",
    NrDirty => "nr_dirty",
    NrWriteback => "nr_writeback",
    NrShmem => "nr_shmem",
    NrVmscanWrite => "nr_vmscan_write",
    NrVmscanImmediateReclaim => "nr_vmscan_immediate_reclaim",
    NrDirtied => "nr_dirtied",
    NrWritten => "nr_written",
    NrThrottledWritten => "nr_throttled_written",
    NrKernelStack => "nr_kernel_stack",
    NrPageTablePages => "nr_page_table_pages",
    NrSwapcached => "nr_swapcached",
    NrDirtyThreshold => "nr_dirty_threshold",
    NrDirtyBackgroundThreshold => "nr_dirty_background_threshold",
    Pgpgin => "pgpgin",
    Pgpgout => "pgpgout",
    Pswpin => "pswpin",
    Pswpout => "pswpout",
    PgallocNormal => "pgalloc_normal",
    AllocstallNormal => "allocstall_normal",
    Pgfree => "pgfree",
    Pgactivate => "pgactivate",
    Pgdeactivate => "pgdeactivate",
    Pgfault => "pgfault",
    Pgmajfault => "pgmajfault",
    Pgrefill => "pgrefill",
    PgstealKswapd => "pgsteal_kswapd",
    PgstealDirect => "pgsteal_direct",
    PgscanKswapd => "pgscan_kswapd",
    PgscanDirect => "pgscan_direct",
    PgscanDirectThrottle => "pgscan_direct_throttle",
    PgscanAnon => "pgscan_anon",
    PgscanFile => "pgscan_file",
    PgstealAnon => "pgsteal_anon",
    PgstealFile => "pgsteal_file",
    Pginodesteal => "pginodesteal",
    SlabsScanned => "slabs_scanned",
    KswapdInodesteal => "kswapd_inodesteal",
    KswapdLowWmarkHitQuickly => "kswapd_low_wmark_hit_quickly",
    KswapdHighWmarkHitQuickly => "kswapd_high_wmark_hit_quickly",
    KswapdSkipCongestionWait => "kswapd_skip_congestion_wait",
    Pageoutrun => "pageoutrun",
    Pgrotated => "pgrotated",
    CompactBlocksMoved => "compact_blocks_moved",
    CompactPagesMoved => "compact_pages_moved",
    CompactPagemigrateFailed => "compact_pagemigrate_failed",
    DropPagecache => "drop_pagecache",
    DropSlab => "drop_slab",
    OomKill => "oom_kill",
    PgmigrateSuccess => "pgmigrate_success",
    PgmigrateFail => "pgmigrate_fail",
    CompactMigrateScanned => "compact_migrate_scanned",
    CompactFreeScanned => "compact_free_scanned",
    CompactIsolated => "compact_isolated",
    SwapRa => "swap_ra",
    SwapRaHit => "swap_ra_hit",
    SwpinZero => "swpin_zero",
    SwpoutZero => "swpout_zero",
}

/// Which era's compaction counters /proc/vmstat lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmCompaction {
    /// 2.6.35 .. 3.7: compact_blocks_moved, compact_pages_moved, compact_pagemigrate_failed.
    Moved,
    /// 3.8+: pgmigrate_success/fail, compact_migrate_scanned, compact_free_scanned,
    /// compact_isolated.
    Migrate,
}

impl VmItem {
    /// The era whose /proc/vmstat lists this compaction counter; None: not a compaction
    /// counter.
    pub fn compaction_era(self) -> Option<VmCompaction> {
        use VmItem::*;
        match self {
            CompactBlocksMoved | CompactPagesMoved | CompactPagemigrateFailed => Some(VmCompaction::Moved),
            PgmigrateSuccess | PgmigrateFail | CompactMigrateScanned | CompactFreeScanned | CompactIsolated => Some(VmCompaction::Migrate),
            _ => None,
        }
    }
    /// Counters that 2.6.39's vmstat_text lists and 5.4's no longer does (nor the 6.x
    /// list that `render` prints): KSWAPD_SKIP_CONGESTION_WAIT went with balance_pgdat's
    /// congestion_wait.
    pub fn only_2_6(self) -> bool {
        matches!(self, VmItem::KswapdSkipCongestionWait)
    }
}

/// The values of every item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VmStat {
    pub values: [u64; VmItem::COUNT],
}

impl Default for VmStat {
    fn default() -> Self {
        VmStat { values: [0; VmItem::COUNT] }
    }
}

impl VmStat {
    #[inline]
    pub fn get(&self, item: VmItem) -> u64 {
        self.values[item as usize]
    }
    #[inline]
    pub fn set(&mut self, item: VmItem, v: u64) {
        self.values[item as usize] = v;
    }
    #[inline]
    pub fn add(&mut self, item: VmItem, v: u64) {
        self.values[item as usize] += v;
    }
    #[inline]
    pub fn inc(&mut self, item: VmItem) {
        self.values[item as usize] += 1;
    }
    /// The text of /proc/vmstat in the 6.x layout, with the model's item names: "name
    /// value" per line.
    pub fn render(&self) -> String {
        self.render_era(VmCompaction::Migrate)
    }
    /// The text of /proc/vmstat with the compaction counters of one era (vmstat_text):
    /// 2.6.35 .. 3.7 count compact_blocks_moved, compact_pages_moved and
    /// compact_pagemigrate_failed after pgrotated; 3.8+ ("mm: compaction: add migrated and
    /// freed page accounting", "mm: migrate: add pgmigrate_success/fail") count
    /// pgmigrate_* and compact_*_scanned, compact_isolated after oom_kill.
    pub fn render_era(&self, era: VmCompaction) -> String {
        let mut out = String::with_capacity(VmItem::COUNT * 28);
        for &item in VM_ITEMS.iter().filter(|i| i.compaction_era().is_none_or(|e| e == era) && !i.only_2_6()) {
            out.push_str(item.name());
            out.push(' ');
            out.push_str(&self.get(item).to_string());
            out.push('\n');
        }
        out
    }

    /// The text of /proc/vmstat as the era's kernel prints it (vmstat_text of that
    /// version): its names, its order, only the items it has. Per-zone events
    /// (TEXTS_FOR_ZONES) are printed for every zone of an x86_64 kernel (dma, dma32,
    /// normal, movable); the model's one zone is `zone` ("DMA32" or "Normal").
    pub fn render_layout(&self, layout: VmstatLayout, zone: &str) -> String {
        if layout == VmstatLayout::V6 {
            // The model's item list is the 6.x vmstat_text (less what it does not keep),
            // except the per-zone events.
            let mut out = String::with_capacity(VmItem::COUNT * 40);
            for &item in VM_ITEMS {
                match item {
                    VmItem::PgallocNormal => self.zoned(&mut out, "pgalloc", zone_idx(zone), self.get(item)),
                    VmItem::AllocstallNormal => self.zoned(&mut out, "allocstall", ZONE_MOVABLE, self.get(item)),
                    // 2.6.35 .. 3.7's compaction counters are not in 6.x's vmstat_text.
                    _ if item.compaction_era() == Some(VmCompaction::Moved) || item.only_2_6() => {}
                    _ => line(&mut out, item.name(), self.get(item)),
                }
            }
            return out;
        }
        let z = zone_idx(zone);
        let mut out = String::with_capacity(VmItem::COUNT * 40);
        for &(name, src) in layout.lines() {
            let v = match src {
                Src::I(i) => self.get(i),
                Src::Sum(a, b) => self.get(a) + self.get(b),
                Src::Div(i, d) => self.get(i) / d,
            };
            match name.strip_suffix("_*") {
                // TEXTS_FOR_ZONES: counted in the zone of the pages (page_zonenum, the
                // zone scanned), or, for allocstall, in sc->reclaim_idx = gfp_zone() of the
                // allocation, ZONE_MOVABLE for GFP_HIGHUSER_MOVABLE (user and page-cache
                // pages).
                Some("allocstall") => self.zoned(&mut out, "allocstall", ZONE_MOVABLE, v),
                Some(stem) => self.zoned(&mut out, stem, z, v),
                None => line(&mut out, name, v),
            }
        }
        out
    }

    /// The (name, value) lines of `render_layout`, in order: what that era's /proc/vmstat
    /// shows, for the per-second series.
    pub fn layout_values(&self, layout: VmstatLayout, zone: &str) -> Vec<(String, u64)> {
        self.render_layout(layout, zone)
            .lines()
            .filter_map(|l| {
                let (name, v) = l.split_once(' ')?;
                Some((name.to_string(), v.parse().ok()?))
            })
            .collect()
    }

    fn zoned(&self, out: &mut String, stem: &str, zone: usize, v: u64) {
        for (i, z) in ZONES.iter().enumerate() {
            line(out, &format!("{stem}_{z}"), if i == zone { v } else { 0 });
        }
    }
}

fn line(out: &mut String, name: &str, v: u64) {
    out.push_str(name);
    out.push(' ');
    out.push_str(&v.to_string());
    out.push('\n');
}

/// The zones of an x86_64 kernel, in TEXTS_FOR_ZONES order.
const ZONES: [&str; 4] = ["dma", "dma32", "normal", "movable"];
const ZONE_MOVABLE: usize = 3;

fn zone_idx(zone: &str) -> usize {
    ZONES.iter().position(|z| z.eq_ignore_ascii_case(zone)).unwrap_or(2)
}

/// Which kernel's vmstat_text /proc/vmstat follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmstatLayout {
    /// 2.6.39: zone counters only, per-zone pgrefill/pgsteal/pgscan, kswapd_steal, one
    /// allocstall, nr_kernel_stack in stacks (THREAD_SIZE 8 KiB on x86_64).
    V2_6_39,
    /// 5.4: node and zone counters, workingset_* not split by type, allocstall per zone,
    /// no pgscan_anon/file.
    V5_4,
    /// 5.8: as 5.4 plus pgscan_anon/file and pgsteal_anon/file.
    V5_8,
    /// 6.x (5.9+ anon/file workingset counters; nr_throttled_written, nr_swapcached).
    V6,
}

/// Where one line's value comes from.
#[derive(Clone, Copy, Debug)]
enum Src {
    I(VmItem),
    Sum(VmItem, VmItem),
    Div(VmItem, u64),
}

use Src::*;
use VmItem as V;

/// 2.6.39's vmstat_text (mm/vmstat.c), less what the model does not keep. Per-zone
/// stems are expanded by `render_layout`.
const L2_6_39: &[(&str, Src)] = &[
    ("nr_free_pages", I(V::NrFreePages)),
    ("nr_inactive_anon", I(V::NrInactiveAnon)),
    ("nr_active_anon", I(V::NrActiveAnon)),
    ("nr_inactive_file", I(V::NrInactiveFile)),
    ("nr_active_file", I(V::NrActiveFile)),
    ("nr_unevictable", I(V::NrUnevictable)),
    ("nr_mlock", I(V::NrMlock)),
    ("nr_anon_pages", I(V::NrAnonPages)),
    ("nr_mapped", I(V::NrMapped)),
    ("nr_file_pages", I(V::NrFilePages)),
    ("nr_dirty", I(V::NrDirty)),
    ("nr_writeback", I(V::NrWriteback)),
    ("nr_slab_reclaimable", I(V::NrSlabReclaimable)),
    ("nr_slab_unreclaimable", I(V::NrSlabUnreclaimable)),
    ("nr_page_table_pages", I(V::NrPageTablePages)),
    // NR_KERNEL_STACK counts stacks (account_kernel_stack); the item holds KiB.
    ("nr_kernel_stack", Div(V::NrKernelStack, 8)),
    ("nr_vmscan_write", I(V::NrVmscanWrite)),
    ("nr_isolated_anon", I(V::NrIsolatedAnon)),
    ("nr_isolated_file", I(V::NrIsolatedFile)),
    ("nr_shmem", I(V::NrShmem)),
    ("nr_dirtied", I(V::NrDirtied)),
    ("nr_written", I(V::NrWritten)),
    ("nr_dirty_threshold", I(V::NrDirtyThreshold)),
    ("nr_dirty_background_threshold", I(V::NrDirtyBackgroundThreshold)),
    ("pgpgin", I(V::Pgpgin)),
    ("pgpgout", I(V::Pgpgout)),
    ("pswpin", I(V::Pswpin)),
    ("pswpout", I(V::Pswpout)),
    ("pgalloc_*", I(V::PgallocNormal)),
    ("pgfree", I(V::Pgfree)),
    ("pgactivate", I(V::Pgactivate)),
    ("pgdeactivate", I(V::Pgdeactivate)),
    ("pgfault", I(V::Pgfault)),
    ("pgmajfault", I(V::Pgmajfault)),
    ("pgrefill_*", I(V::Pgrefill)),
    // shrink_inactive_list: __count_zone_vm_events(PGSTEAL, ...) for every reclaimer,
    // KSWAPD_STEAL for kswapd.
    ("pgsteal_*", Sum(V::PgstealKswapd, V::PgstealDirect)),
    ("pgscan_kswapd_*", I(V::PgscanKswapd)),
    ("pgscan_direct_*", I(V::PgscanDirect)),
    ("pginodesteal", I(V::Pginodesteal)),
    ("slabs_scanned", I(V::SlabsScanned)),
    ("kswapd_steal", I(V::PgstealKswapd)),
    ("kswapd_inodesteal", I(V::KswapdInodesteal)),
    ("kswapd_low_wmark_hit_quickly", I(V::KswapdLowWmarkHitQuickly)),
    ("kswapd_high_wmark_hit_quickly", I(V::KswapdHighWmarkHitQuickly)),
    ("kswapd_skip_congestion_wait", I(V::KswapdSkipCongestionWait)),
    ("pageoutrun", I(V::Pageoutrun)),
    ("allocstall", I(V::AllocstallNormal)),
    ("pgrotated", I(V::Pgrotated)),
    ("compact_blocks_moved", I(V::CompactBlocksMoved)),
    ("compact_pages_moved", I(V::CompactPagesMoved)),
    ("compact_pagemigrate_failed", I(V::CompactPagemigrateFailed)),
];

/// 5.8's vmstat_text; 5.4's is the same without pgscan_anon .. pgsteal_file.
const L5_8: &[(&str, Src)] = &[
    ("nr_free_pages", I(V::NrFreePages)),
    ("nr_zone_inactive_anon", I(V::NrZoneInactiveAnon)),
    ("nr_zone_active_anon", I(V::NrZoneActiveAnon)),
    ("nr_zone_inactive_file", I(V::NrZoneInactiveFile)),
    ("nr_zone_active_file", I(V::NrZoneActiveFile)),
    ("nr_zone_unevictable", I(V::NrZoneUnevictable)),
    ("nr_zone_write_pending", I(V::NrZoneWritePending)),
    ("nr_mlock", I(V::NrMlock)),
    // Zone counters until 5.9 / 5.11 moved them to the node.
    ("nr_page_table_pages", I(V::NrPageTablePages)),
    ("nr_kernel_stack", I(V::NrKernelStack)),
    ("nr_inactive_anon", I(V::NrInactiveAnon)),
    ("nr_active_anon", I(V::NrActiveAnon)),
    ("nr_inactive_file", I(V::NrInactiveFile)),
    ("nr_active_file", I(V::NrActiveFile)),
    ("nr_unevictable", I(V::NrUnevictable)),
    ("nr_slab_reclaimable", I(V::NrSlabReclaimable)),
    ("nr_slab_unreclaimable", I(V::NrSlabUnreclaimable)),
    ("nr_isolated_anon", I(V::NrIsolatedAnon)),
    ("nr_isolated_file", I(V::NrIsolatedFile)),
    ("workingset_nodes", I(V::WorkingsetNodes)),
    // One WORKINGSET_REFAULT/ACTIVATE/RESTORE before the 5.9 anon/file split (page
    // cache refaults only: anon pages have no shadow entries before 5.9).
    ("workingset_refault", Sum(V::WorkingsetRefaultFile, V::WorkingsetRefaultAnon)),
    ("workingset_activate", Sum(V::WorkingsetActivateFile, V::WorkingsetActivateAnon)),
    ("workingset_restore", Sum(V::WorkingsetRestoreFile, V::WorkingsetRestoreAnon)),
    ("workingset_nodereclaim", I(V::WorkingsetNodereclaim)),
    ("nr_anon_pages", I(V::NrAnonPages)),
    ("nr_mapped", I(V::NrMapped)),
    ("nr_file_pages", I(V::NrFilePages)),
    ("nr_dirty", I(V::NrDirty)),
    ("nr_writeback", I(V::NrWriteback)),
    ("nr_shmem", I(V::NrShmem)),
    ("nr_vmscan_write", I(V::NrVmscanWrite)),
    ("nr_vmscan_immediate_reclaim", I(V::NrVmscanImmediateReclaim)),
    ("nr_dirtied", I(V::NrDirtied)),
    ("nr_written", I(V::NrWritten)),
    ("nr_dirty_threshold", I(V::NrDirtyThreshold)),
    ("nr_dirty_background_threshold", I(V::NrDirtyBackgroundThreshold)),
    ("pgpgin", I(V::Pgpgin)),
    ("pgpgout", I(V::Pgpgout)),
    ("pswpin", I(V::Pswpin)),
    ("pswpout", I(V::Pswpout)),
    ("pgalloc_*", I(V::PgallocNormal)),
    ("allocstall_*", I(V::AllocstallNormal)),
    ("pgfree", I(V::Pgfree)),
    ("pgactivate", I(V::Pgactivate)),
    ("pgdeactivate", I(V::Pgdeactivate)),
    ("pgfault", I(V::Pgfault)),
    ("pgmajfault", I(V::Pgmajfault)),
    ("pgrefill", I(V::Pgrefill)),
    ("pgsteal_kswapd", I(V::PgstealKswapd)),
    ("pgsteal_direct", I(V::PgstealDirect)),
    ("pgscan_kswapd", I(V::PgscanKswapd)),
    ("pgscan_direct", I(V::PgscanDirect)),
    ("pgscan_direct_throttle", I(V::PgscanDirectThrottle)),
    ("pgscan_anon", I(V::PgscanAnon)),
    ("pgscan_file", I(V::PgscanFile)),
    ("pgsteal_anon", I(V::PgstealAnon)),
    ("pgsteal_file", I(V::PgstealFile)),
    ("pginodesteal", I(V::Pginodesteal)),
    ("slabs_scanned", I(V::SlabsScanned)),
    ("kswapd_inodesteal", I(V::KswapdInodesteal)),
    ("kswapd_low_wmark_hit_quickly", I(V::KswapdLowWmarkHitQuickly)),
    ("kswapd_high_wmark_hit_quickly", I(V::KswapdHighWmarkHitQuickly)),
    ("pageoutrun", I(V::Pageoutrun)),
    ("pgrotated", I(V::Pgrotated)),
    ("drop_pagecache", I(V::DropPagecache)),
    ("drop_slab", I(V::DropSlab)),
    ("oom_kill", I(V::OomKill)),
    ("pgmigrate_success", I(V::PgmigrateSuccess)),
    ("pgmigrate_fail", I(V::PgmigrateFail)),
    ("compact_migrate_scanned", I(V::CompactMigrateScanned)),
    ("compact_free_scanned", I(V::CompactFreeScanned)),
    ("compact_isolated", I(V::CompactIsolated)),
    ("swap_ra", I(V::SwapRa)),
    ("swap_ra_hit", I(V::SwapRaHit)),
];

const SPLIT_5_8: [&str; 4] = ["pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file"];

impl VmstatLayout {
    fn lines(self) -> Box<dyn Iterator<Item = &'static (&'static str, Src)>> {
        match self {
            VmstatLayout::V2_6_39 => Box::new(L2_6_39.iter()),
            VmstatLayout::V5_8 => Box::new(L5_8.iter()),
            VmstatLayout::V5_4 => Box::new(L5_8.iter().filter(|(n, _)| !SPLIT_5_8.contains(n))),
            VmstatLayout::V6 => Box::new(std::iter::empty()),
        }
    }
    /// The names this layout prints (per-zone stems expanded), in order.
    pub fn names(self, zone: &str) -> Vec<String> {
        VmStat::default().render_layout(self, zone).lines().map(|l| l.split(' ').next().unwrap_or("").to_string()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &i in VM_ITEMS {
            assert!(seen.insert(i.name()), "duplicate {}", i.name());
            assert_eq!(VmItem::from_name(i.name()), Some(i));
        }
        assert_eq!(VM_ITEMS.len(), VmItem::COUNT);
    }

    /// vmstat_text of each version, x86_64 zones expanded (every name under any config).
    fn kernel_names(layout: VmstatLayout) -> Vec<&'static str> {
        let text = match layout {
            VmstatLayout::V2_6_39 => include_str!("vmstat_text/2.6.39.txt"),
            VmstatLayout::V5_4 => include_str!("vmstat_text/5.4.txt"),
            VmstatLayout::V5_8 => include_str!("vmstat_text/5.8.txt"),
            VmstatLayout::V6 => include_str!("vmstat_text/6.18.txt"),
        };
        text.lines().filter(|l| !l.is_empty()).collect()
    }

    #[test]
    fn every_layout_prints_its_kernels_names_in_its_kernels_order() {
        for layout in [VmstatLayout::V2_6_39, VmstatLayout::V5_4, VmstatLayout::V5_8, VmstatLayout::V6] {
            for zone in ["DMA32", "Normal"] {
                let kernel = kernel_names(layout);
                let ours = layout.names(zone);
                // A subsequence: every name exists in that kernel, in its order.
                let mut at = 0;
                for n in &ours {
                    match kernel[at..].iter().position(|k| k == n) {
                        Some(i) => at += i + 1,
                        None => panic!("{layout:?}: {n} is not in that kernel's vmstat_text after {}", kernel[at.saturating_sub(1)]),
                    }
                }
                let unique: std::collections::HashSet<_> = ours.iter().collect();
                assert_eq!(unique.len(), ours.len(), "{layout:?}: a name printed twice");
            }
        }
    }

    #[test]
    fn era_names_differ_where_the_kernels_do() {
        let mut v = VmStat::default();
        v.set(VmItem::PgstealKswapd, 5);
        v.set(VmItem::PgstealDirect, 2);
        v.set(VmItem::AllocstallNormal, 3);
        v.set(VmItem::PgallocNormal, 9);
        v.set(VmItem::WorkingsetRefaultFile, 4);
        let t = v.render_layout(VmstatLayout::V2_6_39, "DMA32");
        assert!(t.contains("\npgsteal_dma32 7\n") && t.contains("\nkswapd_steal 5\n") && t.contains("\nallocstall 3\n"), "{t}");
        assert!(t.contains("\npgalloc_dma32 9\n") && t.contains("\npgalloc_normal 0\n"));
        assert!(!t.contains("workingset") && !t.contains("pgsteal_anon") && !t.contains("drop_pagecache"));
        let t = v.render_layout(VmstatLayout::V5_4, "Normal");
        assert!(t.contains("\nworkingset_refault 4\n") && t.contains("\nallocstall_movable 3\n") && t.contains("\npgalloc_normal 9\n"), "{t}");
        assert!(!t.contains("pgsteal_anon") && !t.contains("workingset_refault_file"));
        let t = v.render_layout(VmstatLayout::V5_8, "Normal");
        assert!(t.contains("\npgsteal_anon 0\n") && t.contains("\nworkingset_refault 4\n"));
        let t = v.render_layout(VmstatLayout::V6, "DMA32");
        assert!(t.contains("\nworkingset_refault_file 4\n") && t.contains("\nallocstall_movable 3\n") && t.contains("\nallocstall_normal 0\n") && t.contains("\npgalloc_dma32 9\n"), "{t}");
    }

    #[test]
    fn render_is_name_space_value() {
        let mut v = VmStat::default();
        v.set(VmItem::Pgpgin, 42);
        let text = v.render();
        assert!(text.lines().any(|l| l == "pgpgin 42"));
        assert_eq!(text.lines().count(), VmItem::COUNT - 4, "one era's compaction counters, no 2.6-only counter");
        assert!(text.contains("\npgmigrate_success 0\n") && !text.contains("compact_pages_moved"));
        let old = v.render_era(VmCompaction::Moved);
        assert!(old.contains("\ncompact_pages_moved 0\n") && !old.contains("pgmigrate"));
    }
}
