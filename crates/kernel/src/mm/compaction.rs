//! Memory compaction (mm/compaction.c) and the page migration it drives (mm/migrate.c), as
//! `echo 1 > /proc/sys/vm/compact_memory` runs it (sysctl_compaction_handler ->
//! compact_nodes -> compact_node -> compact_zone, for the model's one zone).
//!
//! Two scanners walk the zone towards each other. The migrate scanner goes up from the
//! zone's first frame one pageblock at a time, isolating the movable pages it finds on the
//! LRU lists (page cache, shmem and anonymous pages; never kernel or slab pages, which are
//! on no LRU list), at most COMPACT_CLUSTER_MAX at a time. The free scanner goes down from
//! the zone's last pageblock (upwards within each block) isolating free frames, as many as
//! there are pages to move. Each isolated page is then migrated to a free frame: the new
//! frame takes the page's owner, index and flags, replaces it in its page index (which is
//! also what an anonymous page's "page table" is here: the owner's address space), takes
//! over its memory-cgroup charge and its lruvec, goes back on the LRU list the page was on,
//! and the old frame is freed. The run ends when the scanners meet in one pageblock
//! (compact_finished -> compact_scanners_met). Movable pages gather at the top of the zone
//! and the free frames below them merge into the higher orders /proc/buddyinfo shows.
//!
//! What moves, by era (`profile::Compaction`): 2.6.39 isolates any page on an evictable
//! list, including one under writeback, which then fails to migrate (compaction there is
//! asynchronous); 3.8+ runs MIGRATE_SYNC and also isolates unevictable pages. A page under
//! I/O (locked for a read, or under writeback on 3.8+) is not isolated here: MIGRATE_SYNC
//! would wait for the I/O and then move it; the model leaves it where it is rather than
//! wait (docs/tools.md).

use super::page::{Lru, Pfn};
use super::{encode_page, Mm, Slot};
use crate::profile::Compaction;
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

/// Pages isolated for one round of migration (COMPACT_CLUSTER_MAX = SWAP_CLUSTER_MAX).
pub const COMPACT_CLUSTER_MAX: usize = super::SWAP_CLUSTER_MAX as usize;
/// pageblock_order on x86-64 with 4 KiB pages: HUGETLB_PAGE_ORDER (2 MiB huge pages) in
/// 2.6.39, HPAGE_PMD_ORDER in 6.x: 512 frames, 2 MiB.
pub const PAGEBLOCK_ORDER: u32 = 9;
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;

/// What one compaction run did (the counters compact_zone and migrate_pages add).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactStats {
    /// Pages (free buddy blocks count once) the migrate scanner looked at.
    pub migrate_scanned: u64,
    /// Pages (free buddy blocks count once) the free scanner looked at.
    pub free_scanned: u64,
    /// Pages isolated by either scanner (compact_isolated).
    pub isolated: u64,
    /// Pages migrated (pgmigrate_success; compact_pages_moved).
    pub migrated: u64,
    /// Pages that could not be migrated (pgmigrate_fail; compact_pagemigrate_failed).
    pub failed: u64,
    /// Rounds of isolate-and-migrate (compact_blocks_moved in 2.6.35 .. 3.7).
    pub rounds: u64,
}

/// struct compact_control, cut to the two scanners' positions and the isolated pages.
struct CompactControl {
    rule: Compaction,
    /// Where the migrate scanner goes on (cc->migrate_pfn).
    migrate_pfn: i64,
    /// Where the free scanner goes on (cc->free_pfn; may be below 0 when it is done).
    free_pfn: i64,
    /// Isolated pages with the list each came from (cc->migratepages).
    migratepages: Vec<(Pfn, Lru)>,
    /// Isolated free frames (cc->freepages), taken from the front.
    freepages: Vec<Pfn>,
    next_free: usize,
    stats: CompactStats,
}

impl CompactControl {
    /// compact_scanners_met: the free scanner has come down to the migrate scanner's block.
    fn scanners_met(&self) -> bool {
        (self.free_pfn >> PAGEBLOCK_ORDER) <= (self.migrate_pfn >> PAGEBLOCK_ORDER)
    }
}

impl Mm {
    /// Whether frame `p` is free (on the free list, or free since boot and unlisted).
    #[inline]
    pub(crate) fn frame_is_free(&self, p: u64) -> bool {
        self.free.is_free(&self.pages, p as Pfn)
    }

    /// The order of the free buddy block headed by `p` (buddy_order of a PageBuddy page);
    /// 0 for a frame inside a free block (the scanners step over those one at a time).
    pub fn free_block_order(&self, p: u64) -> u32 {
        self.free.head_order(&self.pages, p as Pfn).unwrap_or(0)
    }

    /// compact_zone over the whole zone (cc->whole_zone, order -1: run until the scanners
    /// meet). `migrated(old, new)` is told of each page that moved (the memory cgroup's
    /// record follows it).
    pub fn compact_zone(&mut self, rule: Compaction, mut migrated: impl FnMut(Pfn, Pfn)) -> CompactStats {
        let nr = self.pages.nr() as i64;
        if rule == Compaction::None || nr == 0 {
            return CompactStats::default();
        }
        let mut cc = CompactControl {
            rule,
            migrate_pfn: 0,
            // The start of the zone's last pageblock (pageblock_start_pfn(zone_end_pfn - 1)).
            free_pfn: (nr - 1) & !(PAGEBLOCK_NR_PAGES as i64 - 1),
            migratepages: Vec::with_capacity(COMPACT_CLUSTER_MAX),
            freepages: Vec::with_capacity(COMPACT_CLUSTER_MAX),
            next_free: 0,
            stats: CompactStats::default(),
        };
        // compact_finished: COMPACT_COMPLETE when the scanners meet.
        while !cc.scanners_met() {
            self.isolate_migratepages(&mut cc);
            if cc.migratepages.is_empty() {
                continue;
            }
            cc.stats.rounds += 1;
            let out_of_frames = self.migrate_pages(&mut cc, &mut migrated);
            if out_of_frames {
                // migrate_pages returned -ENOMEM before the scanners met: compact_zone
                // puts the rest back and stops (COMPACT_CONTENDED).
                break;
            }
        }
        // release_freepages: frames isolated and not used go back to the free list.
        for &p in &cc.freepages[cc.next_free..] {
            self.put_free(p);
        }
        cc.stats
    }

    /// isolate_migratepages -> isolate_migratepages_block over one pageblock from
    /// cc->migrate_pfn: free buddy blocks are stepped over whole, pages on no LRU list
    /// (kernel, slab, page-table pages, pages isolated by reclaim) are skipped, and at most
    /// COMPACT_CLUSTER_MAX movable pages are taken off their lists.
    fn isolate_migratepages(&mut self, cc: &mut CompactControl) {
        let nr = self.pages.nr() as u64;
        let low = cc.migrate_pfn as u64;
        // The block's end, never past the free scanner (block_end_pfn <= cc->free_pfn).
        let end = ((low | (PAGEBLOCK_NR_PAGES - 1)) + 1).min(nr);
        let mut pfn = low;
        while pfn < end {
            cc.stats.migrate_scanned += 1;
            if self.frame_is_free(pfn) {
                pfn += 1 << self.free_block_order(pfn);
                continue;
            }
            let p = pfn as Pfn;
            pfn += 1;
            let l = self.pages.lru(p);
            let movable = match l {
                Lru::InactiveAnon | Lru::ActiveAnon | Lru::InactiveFile | Lru::ActiveFile => true,
                // ISOLATE_UNEVICTABLE with vm.compact_unevictable_allowed (4.1+); 2.6.39's
                // __isolate_lru_page refuses PageUnevictable.
                Lru::Unevictable => cc.rule == Compaction::Sync,
                Lru::None | Lru::Free | Lru::Isolated => false,
            };
            if !movable || self.pages.mapping(p) == 0 || self.pages.locked(p) {
                continue;
            }
            if self.pages.writeback(p) && cc.rule == Compaction::Sync {
                // MIGRATE_SYNC would wait for the write and then move the page; the model
                // does not wait (see the module comment).
                continue;
            }
            let id = self.page_lruvec(p);
            self.lruvecs[id as usize].del(&mut self.pages, p);
            self.pages.set_lru(p, Lru::Isolated);
            if self.mappings[self.pages.mapping(p) as usize].swap_backed() {
                self.stat.isolated_anon += 1;
            } else {
                self.stat.isolated_file += 1;
            }
            cc.migratepages.push((p, l));
            cc.stats.isolated += 1;
            if cc.migratepages.len() == COMPACT_CLUSTER_MAX {
                break;
            }
        }
        cc.migrate_pfn = pfn as i64;
    }

    /// isolate_freepages (6.x shape): pageblocks from cc->free_pfn downwards, each scanned
    /// upwards by isolate_freepages_block, until as many free frames are isolated as there
    /// are pages to move; never into the migrate scanner's block. A free buddy block is
    /// isolated whole (split into order-0 frames).
    fn isolate_freepages(&mut self, cc: &mut CompactControl) {
        let nr = self.pages.nr() as i64;
        let pb = PAGEBLOCK_NR_PAGES as i64;
        let want = cc.migratepages.len();
        cc.freepages.clear();
        cc.next_free = 0;
        let low_pfn = (cc.migrate_pfn | (pb - 1)) + 1; // pageblock_end_pfn(cc->migrate_pfn)
        let mut block_start = cc.free_pfn & !(pb - 1);
        let mut isolate_start = cc.free_pfn;
        while block_start >= low_pfn {
            let block_end = (block_start + pb).min(nr);
            if !self.suitable_migration_target(block_start as u64) {
                block_start -= pb;
                isolate_start = block_start;
                continue;
            }
            let mut pfn = isolate_start.max(block_start);
            while pfn < block_end && cc.freepages.len() < want {
                cc.stats.free_scanned += 1;
                let q = pfn as u64;
                if !self.frame_is_free(q) {
                    pfn += 1;
                    continue;
                }
                let head = self.free.head_order(&self.pages, q as Pfn);
                let len = 1i64 << head.unwrap_or(0);
                // Never-used frames are not reached: they lie below every page ever used,
                // so below the migrate scanner whenever it has pages to move.
                let written = !self.free.never_used(q as Pfn);
                if head.is_some() && written && self.nr_free() >= len as u64 {
                    self.free.isolate_block(&mut self.pages, q as Pfn);
                    cc.freepages.extend(q as Pfn..(q + len as u64) as Pfn);
                    cc.stats.isolated += len as u64;
                }
                pfn += len;
            }
            isolate_start = pfn;
            if cc.freepages.len() >= want {
                if isolate_start >= block_end {
                    // Restart at the previous pageblock next time.
                    isolate_start = block_start - pb;
                }
                break;
            }
            block_start -= pb;
            isolate_start = block_start;
        }
        cc.free_pfn = isolate_start;
    }

    /// suitable_migration_target: free frames are taken from movable pageblocks only (and
    /// from a block that is one free buddy block of pageblock order or more); never from a
    /// MIGRATE_RESERVE block (2.6.39).
    fn suitable_migration_target(&self, block_start: u64) -> bool {
        use super::pageblock::MigrateType;
        match self.pageblocks.of(block_start) {
            MigrateType::Movable => true,
            MigrateType::Reserve => false,
            _ => self.free.head_order(&self.pages, block_start as Pfn) >= Some(PAGEBLOCK_ORDER),
        }
    }

    /// migrate_pages with compaction_alloc as the allocator: each isolated page moves to an
    /// isolated free frame (isolating more when none is left). Pages that cannot move go
    /// back to their lists. Returns true when free frames ran out (-ENOMEM).
    fn migrate_pages(&mut self, cc: &mut CompactControl, migrated: &mut impl FnMut(Pfn, Pfn)) -> bool {
        let pages = std::mem::take(&mut cc.migratepages);
        let mut out_of_frames = false;
        for (i, &(p, l)) in pages.iter().enumerate() {
            if self.pages.writeback(p) {
                // unmap_and_move without sync gives up on a page under writeback
                // (-EAGAIN for every pass of migrate_pages, then a failure).
                self.putback_isolated(p, l);
                cc.stats.failed += 1;
                continue;
            }
            if cc.next_free == cc.freepages.len() {
                // compaction_alloc: isolate more free frames for what is left.
                cc.migratepages = pages[i..].to_vec();
                self.isolate_freepages(cc);
                cc.migratepages.clear();
            }
            if cc.next_free == cc.freepages.len() {
                for &(p, l) in &pages[i..] {
                    self.putback_isolated(p, l);
                }
                out_of_frames = true;
                break;
            }
            let q = cc.freepages[cc.next_free];
            cc.next_free += 1;
            self.migrate_page(p, q, l);
            migrated(p, q);
            cc.stats.migrated += 1;
        }
        cc.migratepages = pages;
        cc.migratepages.clear();
        out_of_frames
    }

    /// Undo an isolation (putback_movable_pages -> folio_putback_lru): the page goes to
    /// the head of the list it came from.
    fn putback_isolated(&mut self, p: Pfn, l: Lru) {
        self.unaccount_isolated(p);
        self.pages.set_lru(p, Lru::None);
        let id = self.page_lruvec(p);
        self.lruvecs[id as usize].add_head(&mut self.pages, p, l);
    }

    fn unaccount_isolated(&mut self, p: Pfn) {
        if self.mappings[self.pages.mapping(p) as usize].swap_backed() {
            self.stat.isolated_anon -= 1;
        } else {
            self.stat.isolated_file -= 1;
        }
    }

    /// Move isolated page `p` (from list `l`) to free frame `q`: folio_migrate_mapping
    /// (the page index entry now names `q`), folio_migrate_flags (dirty, referenced, young,
    /// workingset follow; PG_reclaim does not), the lruvec and memcg charge follow
    /// (mem_cgroup_migrate), the new page goes on the old one's list (folio_putback_lru:
    /// at the head), and the old frame is freed.
    fn migrate_page(&mut self, p: Pfn, q: Pfn, l: Lru) {
        let (m, index) = (self.pages.mapping(p), self.pages.index(p));
        debug_assert_eq!(self.slot(m, index), Slot::Page(p), "an isolated page is in its index");
        self.pages.set_owner(q, m, index);
        let pg = &mut self.pages;
        if pg.dirty(p) {
            pg.set_dirty(q);
        }
        if pg.referenced(p) {
            pg.set_referenced(q);
        }
        if pg.young(p) {
            pg.set_young(q);
        }
        if pg.workingset(p) {
            pg.set_workingset(q);
        }
        let lruvec = pg.lruvec_of(p);
        pg.set_lruvec_of(q, lruvec);
        self.set_slot(m, index, encode_page(q));
        self.lruvecs[lruvec as usize].add_head(&mut self.pages, q, l);
        self.unaccount_isolated(p);
        self.pages.set_lru(p, Lru::None);
        self.put_free(p);
    }
}

impl Kernel {
    /// compact_nodes (echo 1 > /proc/sys/vm/compact_memory) run by task `tid`: compacts
    /// the zone, counts the era's events and charges the writer the scanning and copying.
    pub fn compact_nodes(&mut self, tid: TaskId) -> CompactStats {
        let rule = self.profile.compaction;
        let memcg = &mut self.memcg;
        let bh = &mut self.bh;
        let s = self.mm.compact_zone(rule, |old, new| {
            memcg.migrate(old, new);
            Kernel::migrate_page_buffers(bh, old, new);
        });
        match rule {
            Compaction::None => {}
            Compaction::Async2635 => {
                self.vm.add(VmItem::CompactBlocksMoved, s.rounds);
                self.vm.add(VmItem::CompactPagesMoved, s.migrated);
                self.vm.add(VmItem::CompactPagemigrateFailed, s.failed);
            }
            Compaction::Sync => {
                self.vm.add(VmItem::CompactMigrateScanned, s.migrate_scanned);
                self.vm.add(VmItem::CompactFreeScanned, s.free_scanned);
                self.vm.add(VmItem::CompactIsolated, s.isolated);
                self.vm.add(VmItem::PgmigrateSuccess, s.migrated);
                self.vm.add(VmItem::PgmigrateFail, s.failed);
            }
        }
        // Each old frame goes back to the allocator (free_unref_page after the move).
        self.vm.add(VmItem::Pgfree, s.migrated);
        // Looking at a frame costs what reclaim's look at one does; a move copies the page
        // (folio_copy), allocates and frees a frame and updates its index entry.
        let cpu = &self.machine.cpu_model;
        let scan = (s.migrate_scanned + s.free_scanned) * cpu.reclaim_scan_ns;
        let copy = (super::PAGE_SIZE as f64 / cpu.copy_bw * 1e9) as u64;
        let moves = s.migrated * (copy + cpu.page_alloc_ns + cpu.page_cache_ns);
        self.charge_sys_for(tid, scan + moves, crate::delayacct::SysWork::Compaction);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::{KernelOwner, MappingKind, Watermarks};
    use proptest::prelude::*;

    fn mm(frames: u64) -> Mm {
        Mm::try_new(frames, Watermarks { min_free_kbytes: 0, min: 0, low: 0, high: 0 }).unwrap()
    }

    /// Put frame `p` at (`m`, `index`) on list `l`, as filemap_add_page does.
    fn add(mm: &mut Mm, m: u32, index: u64, p: Pfn, l: Lru, dirty: bool) {
        mm.set_slot(m, index, encode_page(p));
        mm.pages.set_owner(p, m, index);
        mm.mappings[m as usize].nrpages += 1;
        if dirty {
            mm.pages.set_dirty(p);
            mm.mappings[m as usize].nr_dirty += 1;
            mm.stat.dirty += 1;
        }
        mm.lru_add(p, l);
    }

    /// Every resident page: (mapping, index) -> (list, dirty, referenced).
    fn resident(mm: &Mm) -> Vec<((u32, u64), (Lru, bool, bool))> {
        let mut out = Vec::new();
        for (id, m) in mm.mappings.iter().enumerate().filter(|(_, m)| m.live) {
            let mut at = 0;
            while let Some((i, s)) = mm.next_slot(id as u32, at, u64::MAX) {
                if let Slot::Page(p) = s {
                    out.push(((id as u32, i), (mm.pages.lru(p), mm.pages.dirty(p), mm.pages.referenced(p))));
                }
                at = i + 1;
            }
            let _ = m;
        }
        out
    }

    /// Free pages in blocks of at least `order` (what an allocation of that order could use).
    fn free_at_or_above(mm: &Mm, order: usize) -> u64 {
        mm.free_blocks_per_order().iter().enumerate().skip(order).map(|(k, n)| n << k).sum()
    }

    /// A zone of 8 pageblocks, every frame taken once; then every other frame of the file
    /// freed: the free memory is scattered in single frames (no order-1 block at all).
    fn checkerboard() -> (Mm, u32, u32) {
        let mut mm = mm(8 * PAGEBLOCK_NR_PAGES);
        let file = mm.new_mapping(MappingKind::File, None, 0);
        let anon = mm.new_mapping(MappingKind::Anon, None, 0);
        let mut frames = Vec::new();
        while let Some(p) = mm.take_free() {
            frames.push(p);
        }
        frames.sort();
        for (i, &p) in frames.iter().enumerate() {
            match i % 8 {
                0 | 2 | 4 | 6 => mm.put_free(p),
                1 => add(&mut mm, file, i as u64, p, Lru::InactiveFile, i % 16 == 1),
                3 => add(&mut mm, anon, i as u64, p, Lru::ActiveAnon, true),
                5 => add(&mut mm, file, i as u64, p, Lru::ActiveFile, false),
                _ => {
                    // A kernel page (slab): never moved.
                    let c = 4; // KernelOwner::Slab(0)'s list
                    mm.pages.set_owner(p, 0, c);
                    let h = mm.kernel.base + c as u32;
                    crate::mm::lru::link_after(&mut mm.pages, h, p);
                    mm.kernel.nr[c as usize] += 1;
                }
            }
        }
        mm.check_invariants().unwrap();
        (mm, file, anon)
    }

    #[test]
    fn compaction_moves_movable_pages_up_and_frees_higher_orders_below() {
        let (mut mm, _, _) = checkerboard();
        let before = resident(&mm);
        let free_before = mm.nr_free();
        assert_eq!(free_at_or_above(&mm, 1), 0, "all free memory is in single frames");
        let mut moved = Vec::new();
        let s = mm.compact_zone(Compaction::Sync, |o, n| moved.push((o, n)));
        mm.check_invariants().unwrap();
        mm.check_index().unwrap();
        assert_eq!(resident(&mm), before, "the same pages, with their lists and flags, are resident");
        assert_eq!(mm.nr_free(), free_before, "migration frees one frame for each it takes");
        assert!(s.migrated > 500, "{s:?}");
        assert_eq!(s.failed, 0);
        assert_eq!(moved.len() as u64, s.migrated);
        assert!(moved.iter().all(|&(o, n)| n > o), "pages move towards the free scanner's end");
        assert!(s.isolated >= 2 * s.migrated, "both scanners count what they isolate: {s:?}");
        assert!(s.migrate_scanned > 0 && s.free_scanned > 0);
        // Kernel pages stay: a block holding one cannot be whole, but the lower half of the
        // zone now has pairs of free frames around each kernel page.
        assert!(free_at_or_above(&mm, 1) > free_before / 4, "{:?}", mm.free_blocks_per_order());
        assert_eq!(mm.kernel.count(KernelOwner::Slab(0)), 8 * PAGEBLOCK_NR_PAGES / 8);
    }

    #[test]
    fn the_2_6_39_rules_leave_unevictable_pages_and_fail_pages_under_writeback() {
        for rule in [Compaction::Async2635, Compaction::Sync] {
            let (mut mm, file, _) = checkerboard();
            // Two pages low in the zone: one unevictable, one under writeback.
            let low: Vec<Pfn> = (0..64).filter(|&p| mm.pages.mapping(p) == file).take(2).collect();
            let (u, w) = (low[0], low[1]);
            mm.lru_del(u);
            mm.lru_add(u, Lru::Unevictable);
            mm.pages.set_writeback(w);
            mm.mappings[file as usize].nr_writeback += 1;
            mm.stat.writeback += 1;
            let s = mm.compact_zone(rule, |_, _| {});
            mm.check_invariants().unwrap();
            let (at_u, at_w) = (mm.page(file, mm.pages.index(u)), mm.page(file, mm.pages.index(w)));
            match rule {
                Compaction::Async2635 => {
                    assert_eq!(at_u, Some(u), "2.6.39 does not isolate unevictable pages");
                    assert_eq!(at_w, Some(w));
                    assert_eq!(s.failed, 1, "the page under writeback was isolated and failed");
                }
                _ => {
                    assert_ne!(mm.pages.mapping(u), file, "unevictable pages move on 3.8+ (frame {u} was freed)");
                    assert_eq!(at_w, Some(w), "a page under writeback is left where it is");
                    assert_eq!(s.failed, 0);
                }
            }
        }
    }

    #[test]
    fn the_free_scanner_takes_frames_from_movable_blocks_only() {
        let (mut mm, _, _) = checkerboard();
        // The top block holds unmovable allocations: its free frames are no targets.
        let top = 7 * PAGEBLOCK_NR_PAGES;
        mm.pageblocks.set(top, crate::mm::pageblock::MigrateType::Unmovable);
        let mut targets = Vec::new();
        mm.compact_zone(Compaction::Sync, |_, n| targets.push(n));
        assert!(targets.len() > 100, "{}", targets.len());
        assert!(targets.iter().all(|&n| (n as u64) < top), "no page moved into the unmovable block");
        mm.check_invariants().unwrap();
    }

    #[test]
    fn no_compaction_before_2_6_35() {
        let (mut mm, _, _) = checkerboard();
        let before = resident(&mm);
        assert_eq!(mm.compact_zone(Compaction::None, |_, _| {}), CompactStats::default());
        assert_eq!(resident(&mm), before);
    }

    #[test]
    fn a_zone_with_nothing_to_move_is_scanned_and_left_alone() {
        let mut mm = mm(4 * PAGEBLOCK_NR_PAGES);
        let s = mm.compact_zone(Compaction::Sync, |_, _| {});
        assert_eq!((s.migrated, s.isolated, s.free_scanned), (0, 0, 0));
        assert!(s.migrate_scanned > 0 && s.migrate_scanned <= 4, "free order-10 blocks count once: {s:?}");
        assert_eq!(mm.free_blocks_per_order()[10], 2);
        mm.check_invariants().unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Any mix of page-cache, anon, kernel and free frames: after compaction every frame is
        /// accounted once, the page indexes are well formed, and the same (mapping, index)
        /// pages are resident with the same lists and flags.
        #[test]
        fn compaction_keeps_every_page_and_its_identity(kinds in proptest::collection::vec(0u8..6, 64..1600), sync in any::<bool>()) {
            let mut mm = mm(kinds.len() as u64);
            let file = mm.new_mapping(MappingKind::File, None, 0);
            let anon = mm.new_mapping(MappingKind::Anon, None, 0);
            let mut frames = Vec::new();
            while let Some(p) = mm.take_free() {
                frames.push(p);
            }
            frames.sort();
            for (i, (&p, &k)) in frames.iter().zip(&kinds).enumerate() {
                match k {
                    0 | 1 => mm.put_free(p),
                    2 => add(&mut mm, file, i as u64, p, Lru::InactiveFile, i % 3 == 0),
                    3 => add(&mut mm, anon, i as u64 * 7, p, Lru::ActiveAnon, true),
                    4 => add(&mut mm, file, i as u64, p, if i % 5 == 0 { Lru::Unevictable } else { Lru::ActiveFile }, false),
                    _ => {
                        mm.pages.set_owner(p, 0, 0);
                        let h = mm.kernel.base;
                        crate::mm::lru::link_after(&mut mm.pages, h, p);
                        mm.kernel.nr[0] += 1;
                    }
                }
            }
            mm.check_invariants().unwrap();
            let before = resident(&mm);
            let free = mm.nr_free();
            let rule = if sync { Compaction::Sync } else { Compaction::Async2635 };
            let s = mm.compact_zone(rule, |_, _| {});
            prop_assert!(mm.check_invariants().is_ok(), "{:?}", mm.check_invariants());
            prop_assert!(mm.check_index().is_ok(), "{:?}", mm.check_index());
            prop_assert_eq!(resident(&mm), before);
            prop_assert_eq!(mm.nr_free(), free);
            prop_assert_eq!(mm.isolated(), 0);
            prop_assert!(s.migrated <= s.isolated);
        }
    }
}
