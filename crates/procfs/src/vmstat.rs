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
    /// The text of /proc/vmstat: "name value" per line.
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
        for &item in VM_ITEMS.iter().filter(|i| i.compaction_era().is_none_or(|e| e == era)) {
            out.push_str(item.name());
            out.push(' ');
            out.push_str(&self.get(item).to_string());
            out.push('\n');
        }
        out
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

    #[test]
    fn render_is_name_space_value() {
        let mut v = VmStat::default();
        v.set(VmItem::Pgpgin, 42);
        let text = v.render();
        assert!(text.lines().any(|l| l == "pgpgin 42"));
        assert_eq!(text.lines().count(), VmItem::COUNT - 3, "one era's compaction counters");
        assert!(text.contains("\npgmigrate_success 0\n") && !text.contains("compact_pages_moved"));
        let old = v.render_era(VmCompaction::Moved);
        assert!(old.contains("\ncompact_pages_moved 0\n") && !old.contains("pgmigrate"));
    }
}
