//! One value per kernel era holding every rule where eras differ, as named fields. Built
//! once at boot from the machine's `KernelProfile`; the mechanisms read fields, never the
//! era's name. docs/profiles.md lists the same rules as a table.

use memtwin_machine::KernelProfile;

/// How a read that misses the page cache chooses its readahead (mm/readahead.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaRule {
    /// ondemand_readahead (2.6.23 .. 6.9): a miss at the window's expected index ramps it
    /// up, an oversized or sequential miss starts one, and what the readit step finds it
    /// would mark at once is merged into the window. 2.4's generic_file_readahead is not
    /// modelled: its profile borrows this rule without the history lookup.
    Ondemand,
    /// page_cache_sync_ra since 6.10 ("readahead: disentangle async and sync readahead"):
    /// a miss never ramps the window up (the async path does), an initial window keeps
    /// half of itself as the async part when the request fills it, no readit merge.
    SyncRa,
}

/// How many cached pages before a miss the history lookup can count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaHistory {
    /// No history lookup (2.4).
    None,
    /// count_history_pages over radix_tree_prev_hole (2.6.31 .. 4.19): up to max pages.
    RadixPrevHole,
    /// page_cache_prev_miss over the XArray (4.20+): the first lookup reads index - 1
    /// itself (xas_prev on a fresh state), so up to max - 1 pages.
    XarrayPrevMiss,
}

/// How a major fault on a file mapping without madvise advice reads around the page
/// (do_sync_mmap_readahead, mm/filemap.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapReadaround {
    /// 2.6.31 .. 3.0: ra_pages centred on the fault with no async part (async_size = 0):
    /// no page gets PG_readahead. A fault just after the previous one (every fault sets
    /// ra->prev_pos) takes the VM_SEQ_READ path instead.
    Unmarked,
    /// 3.1+ ("readahead: trigger mmap sequential readahead on PG_readahead"): the window's
    /// last quarter is its async part, so the page at three quarters gets PG_readahead and
    /// a fault on it starts the next window (do_async_mmap_readahead).
    Marked,
    /// 6.16+: as `Marked`, but a VM_EXEC mapping reads forward from the fault, up to the
    /// end of the mapping, with no async part (exec memory is rarely sequential).
    MarkedExecForward,
}

/// Which swap-backed pages one young PTE activates in folio_check_references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstRefActivates {
    /// 5.9+ (b518154e59aa, "protect the workingset on anonymous LRU"): none; anon pages
    /// need a second reference like file pages.
    None,
    /// page_check_references 3.x .. 5.8: PageSwapBacked (anon and shmem).
    SwapBacked,
    /// page_check_references in 2.6.39: PageAnon only.
    AnonOnly,
}

/// When shrink_lruvec (shrink_zone) stops scanning once nr_to_reclaim is met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimStop {
    /// shrink_zone in 2.6.39: stop once enough is reclaimed below DEF_PRIORITY.
    BelowDefPriority,
    /// shrink_lruvec 3.11 .. 5.x: proportional cut of the larger type once (scan_adjusted).
    ScanAdjustedOnce,
    /// 6.0+ ("mm: vmscan: fix extreme overreclaim and swap floods"): the cut every round.
    EveryRound,
}

/// What folio_rotate_reclaimable does with a PG_reclaim page whose writeback ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RotateReclaimable {
    /// 2.4 has no PG_reclaim: a later scan finds the page.
    Never,
    /// rotate_reclaimable_page before 3.10: inactive pages only.
    InactiveOnly,
    /// lru_move_tail_fn 3.10+: active pages are deactivated to the inactive tail too.
    Deactivate,
}

/// How kswapd stalls on pages it marked for immediate reclaim that are still under
/// writeback (shrink_node, nr_immediate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WritebackThrottle {
    /// congestion_wait(BLK_RW_ASYNC, HZ/10): blk-mq devices never cut it short.
    CongestionWait,
    /// 5.16+ reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK): until writeback completes, at
    /// most HZ/10.
    ReclaimThrottle,
}

/// How kswapd's balance_pgdat walks the priorities while the node is below its high
/// watermark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KswapdBalance {
    /// 4.x+ (and the 2.4 profile here): one kswapd_shrink_node pass per priority, with
    /// nr_to_reclaim = the high watermark; the priority rises when a pass scanned less
    /// than that or reclaimed nothing (`if (raise_priority || !nr_reclaimed)`).
    RaisePriority,
    /// 2.6.39 (2.6.37 .. 3.10): `loop_again` from DEF_PRIORITY with
    /// nr_to_reclaim = ULONG_MAX (each shrink_zone scans its whole lru >> priority target);
    /// below DEF_PRIORITY - 2, after a pass that scanned pages, kswapd "takes a nap":
    /// congestion_wait(BLK_RW_ASYNC, HZ/10), or, with a zone under its min watermark,
    /// counts KSWAPD_SKIP_CONGESTION_WAIT instead; once the run has reclaimed
    /// SWAP_CLUSTER_MAX pages it starts over at DEF_PRIORITY (a new PAGEOUTRUN).
    LoopAgain,
}

/// Swap readahead of a swap fault (mm/swap_state.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapRaRule {
    /// swapin_readahead before 3.15: the 2^page-cluster aligned block of slots around the
    /// faulting one, as far as the allocated slots run contiguously (valid_swaphandles).
    Fixed,
    /// 4.14+: swap_cluster_readahead with the adaptive window (swapin_nr_pages, 3.15) for
    /// shmem and for anonymous memory while any swap device is rotational; otherwise
    /// swap_vma_readahead around the faulting address (swap_ra_info).
    Vma,
}

/// How a direct reclaimer waits while too many pages are isolated (shrink_inactive_list ->
/// too_many_isolated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolatedThrottle {
    /// congestion_wait(BLK_RW_ASYNC, HZ/10), in a loop until isolation drops (2.6.x .. 4.13).
    CongestionWaitLoop,
    /// msleep(100) once; a second hit returns 0 pages ("mm, vmscan: do not loop on
    /// too_many_isolated for ever", 4.14 .. 5.15).
    Msleep100Once,
    /// reclaim_throttle(pgdat, VMSCAN_THROTTLE_ISOLATED) once (5.16+): asleep at most HZ/50,
    /// woken early when a reclaimer finds isolation back under the limit
    /// (wake_throttle_isolated).
    ReclaimThrottleOnce,
}

/// Memory compaction (mm/compaction.c) as `echo 1 > /proc/sys/vm/compact_memory` runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compaction {
    /// 2.4: no compaction, no compact_memory file.
    None,
    /// 2.6.35 .. 3.7 (2.6.39 here): compact_node runs compact_zone with sync = false:
    /// isolate_migratepages takes any page on an LRU list but unevictable ones
    /// (__isolate_lru_page(ISOLATE_BOTH)); a page under writeback is isolated and then fails
    /// to migrate (unmap_and_move gives up on it when !sync). Counted per round as
    /// compact_blocks_moved, compact_pages_moved, compact_pagemigrate_failed.
    Async2635,
    /// 3.8+ (5.x and 6.x here): compact_node runs compact_zone with MIGRATE_SYNC; unevictable
    /// pages are isolated too (vm.compact_unevictable_allowed = 1, 4.1+); counted as
    /// compact_migrate_scanned, compact_free_scanned, compact_isolated, pgmigrate_success,
    /// pgmigrate_fail.
    Sync,
}

/// Every era-dependent rule of the kernel model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    pub kernel: KernelProfile,
    /// get_scan_count weighs anon against file by each type's reclaim cost (lru_note_cost:
    /// pages written out, workingset refaults), "mm: balance LRU lists based on relative
    /// thrashing" (5.8). Before: by recent_rotated / recent_scanned, which also counts pages
    /// added (__pagevec_lru_add_fn -> update_page_reclaim_stat) and activated.
    pub cost_balance: bool,
    /// workingset_refault compares the refault distance with the anon lists as well when
    /// swap is usable, "workingset: let cache workingset challenge anon" (5.8).
    pub refault_distance_includes_anon: bool,
    /// New anonymous pages start on the inactive list (lru_cache_add_inactive_or_unevictable,
    /// 5.9); before, on the active list (lru_cache_add_active_or_unevictable).
    pub new_anon_inactive: bool,
    /// Refault detection of anonymous pages, shadow entries in the swap cache (5.9,
    /// "mm: workingset: implement workingset detection for anonymous LRU").
    pub anon_workingset: bool,
    /// Refault detection of the page cache (mm/workingset.c, shadow entries, the
    /// shadow-node shrinker): 3.15+. Off before: evicted pages leave no trace.
    pub workingset: bool,
    /// shrink_active_list sets PG_workingset on deactivated pages (4.20+, "mm: workingset:
    /// tell cache transitions from workingset thrashing").
    pub deactivate_sets_workingset: bool,
    /// folio_check_references: whether one young PTE activates a swap-backed page.
    pub first_ref_activates: FirstRefActivates,
    /// A buffered write marks the page accessed: SetPageReferenced in 2.4's
    /// generic_file_write, mark_page_accessed in generic_perform_write (2.6 .. 3.15),
    /// FGP_ACCESSED (3.16 .. 4.6). Since 4.7 (bbddabe2e436) only reads do.
    pub write_marks_accessed: bool,
    /// inactive_list_is_low keeps the file lists at the anon lists' int_sqrt(10 * GB)
    /// ratio ("mm: vmscan: reduce size of inactive file list", 59dc76b0d4df, 2016). Before,
    /// inactive_file_is_low_global was `active > inactive`: the active file list never
    /// outgrows the inactive one.
    pub file_inactive_ratio: bool,
    /// How a swap fault chooses its readahead.
    pub swap_ra: SwapRaRule,
    /// Rounds without progress a memcg reclaim loop allows (memory.max, force_empty):
    /// MEM_CGROUP_RECLAIM_RETRIES (5) before 5.9, MAX_RECLAIM_RETRIES (16) since ("mm:
    /// memcontrol: unify reclaim retry limits with page allocator").
    pub memcg_reclaim_retries: u32,
    /// v1 memory.force_empty sleeps congestion_wait(BLK_RW_ASYNC, HZ/10) after a round
    /// without progress ("maybe some writeback is necessary"; gone with congestion_wait
    /// in 5.16).
    pub force_empty_congestion_wait: bool,
    /// 2.6.39's mem_cgroup_force_empty: EBUSY while the cgroup has tasks or children, and
    /// what reclaim leaves is moved to the parent (mem_cgroup_move_parent) until the
    /// cgroup's usage is 0. Later kernels only reclaim.
    pub force_empty_moves_to_parent: bool,
    /// v1 memory.use_hierarchy can be 0 (a cgroup whose counters, limits, reclaim and OOM
    /// stop at itself): every kernel before 5.11 ("mm: memcg: deprecate the non-hierarchical
    /// mode"); since then it is always 1 and writing 0 is EINVAL.
    pub memcg_flat_mode: bool,
    /// The v1 root's memory.use_hierarchy at boot, which new cgroups inherit
    /// (mem_cgroup_css_alloc). The kernel starts it at 0; on 5.x hosts systemd writes 1 at
    /// boot (manager_setup_cgroup: "Always enable hierarchical support if it exists"), which
    /// the era's init scripts of 2.6.39 did not.
    pub memcg_root_use_hierarchy: bool,
    /// Every page read in from swap counts as reclaim cost of anon (lru_note_cost_page in
    /// __read_swap_cache_async and do_swap_page's SWP_SYNCHRONOUS_IO path, 5.8 only: "mm:
    /// balance LRU lists based on relative thrashing"; 5.9 counts anon refaults instead).
    pub swapin_notes_anon_cost: bool,
    /// get_scan_count reclaims file pages only while the inactive file list is large
    /// enough and not thrashing ("mm,vmscan: only evict file pages when we have plenty",
    /// 3.8; sc->cache_trim_mode since 5.5). 2.6.39 balances by swappiness alone.
    pub file_is_plenty: bool,
    /// get_scan_count's anon/file weights: (swappiness + 1, 200 - swappiness + 1) in 2.6.39,
    /// (swappiness, 200 - swappiness) from 3.x on.
    pub scan_prio_plus_one: bool,
    /// When shrink_lruvec stops once enough is reclaimed.
    pub reclaim_stop: ReclaimStop,
    /// folio_end_writeback of a PG_reclaim page.
    pub rotate_reclaimable: RotateReclaimable,
    /// kswapd's stall on pages cycling faster than they are written.
    pub writeback_throttle: WritebackThrottle,
    /// too_many_isolated's wait in shrink_inactive_list.
    pub isolated_throttle: IsolatedThrottle,
    /// One lru_lock per lruvec ("mm/lru: replace pgdat lru_lock with lruvec lock", 5.11);
    /// before, one per node (pgdat->lru_lock, 4.8 .. 5.10) or per zone (zone->lru_lock,
    /// 2.6.x): with one zone per node here, the same single lock.
    pub lru_lock_per_lruvec: bool,
    /// Per-CPU pagesets: none in 2.4; batch and high by era (mm/pcp.rs).
    pub pcp: crate::mm::pcp::PcpRule,
    /// How new pages reach the LRU lists: per-CPU batches by era (mm/swap.rs).
    pub lru_add: crate::mm::swap::LruAddRule,
    /// Per-CPU batches that move listed pages (activate, rotate, deactivate) and their
    /// size, by era (mm/swap.rs).
    pub lru_move: crate::mm::swap::LruMoveRule,
    /// mark_page_accessed activates a page still in this CPU's LRU-add batch: it joins
    /// the active list when the batch drains (__lru_cache_activate_page, 059285a25f30 "mm:
    /// activate !PageLRU pages on mark_page_accessed if page is on local pagevec", 3.12).
    /// Before, a page not yet on the LRU (!PageLRU) is only marked referenced.
    pub activate_batched: bool,
    /// drop_caches drains every CPU's LRU-add batch first (lru_add_drain_all in
    /// drop_caches_sysctl_handler, "fs: drop_caches: draining pages before dropping
    /// caches", 6.6); before, pages still in a batch hold an extra reference and
    /// invalidate_mapping_pages leaves them cached.
    pub drop_caches_drains_lru: bool,
    /// POSIX_FADV_DONTNEED drains the LRU-add batches (this CPU's first, every CPU's
    /// when pages were still in one): 67d46b296a1b "mm/fadvise.c: drain all pagevecs if
    /// POSIX_FADV_DONTNEED fails to discard all pages" (3.8). 2.6.39 does not.
    pub fadvise_drains_lru: bool,
    /// Cgroup reclaim of a cgroup whose swappiness is 0 scans file pages only
    /// (get_scan_count: "cgroup_reclaim(sc) && !swappiness", 3.5+). 2.6.39 weighs anon by
    /// swappiness + 1 there too.
    pub memcg_swappiness_zero_file_only: bool,
    /// Limit reclaim takes one cgroup of the subtree at a time, round-robin by id
    /// (mem_cgroup_hierarchical_reclaim -> mem_cgroup_select_victim, each victim's own
    /// pages only, 2.6.x); from 3.3 on shrink_zone / shrink_node_memcgs walk the whole
    /// subtree in each pass (mem_cgroup_iter).
    pub memcg_reclaim_one_victim: bool,
    /// Transparent huge pages enabled by default (distributions of the 5.x and 6.x eras):
    /// khugepaged's set_recommended_min_free_kbytes raises min_free_kbytes.
    pub thp_enabled: bool,
    /// Write-back by 2.4's bdflush/kupdated (balance_dirty_state, the bdflush vector)
    /// instead of the per-bdi flushers and balance_dirty_pages.
    pub bdflush: bool,
    /// Receive-buffer autotuning (tcp_rcv_space_adjust, 2.6.7+).
    pub tcp_rcvbuf_autotune: bool,
    /// write_cache_pages' cyclic scan wraps to index 0 within one call and scans up to
    /// where it started (the `cycled` retry, before 4.20). Since "fix range_cyclic
    /// writeback vs writepages deadlock" (64081362e8ff, 4.20) a call stops at the end of
    /// the file and sets writeback_index to 0 for the next one.
    pub writeback_wraps_in_call: bool,
    /// A node where kswapd failed MAX_RECLAIM_RETRIES balance_pgdat runs in a row is left
    /// to direct reclaim (pgdat->kswapd_failures, "mm: fix 100% CPU kswapd busyloop on
    /// unreclaimable nodes", 4.12). Before, kswapd keeps trying (zone->all_unreclaimable
    /// only changed how it scanned).
    pub kswapd_hopeless: bool,
    /// shrink_page_list writes dirty file pages itself (2.6.39): pageout() -> ->writepage
    /// for a page not referenced since the last scan (PAGEREF_RECLAIM_CLEAN keeps a
    /// referenced one), kswapd always (PF_SWAPWRITE), a direct reclaimer unless the
    /// device's queue is congested (may_write_to_queue); a page under writeback is kept
    /// on the inactive list (keep_lumpy), not activated; a batch whose dirty pages all met
    /// congested queues flags the zone ZONE_CONGESTED, which makes do_try_to_free_pages'
    /// wait_iff_congested(HZ/10) below priority 10 sleep while a queue is congested.
    /// Since 3.2 ("mm: vmscan: do not writeback filesystem pages in direct reclaim") and
    /// the 3.x/4.x changes after it, only kswapd writes, and only pages it already marked
    /// PG_reclaim (the 6.x rule here: activated, left to the flushers).
    pub reclaim_writes_file: bool,
    /// shrink_zone ends with throttle_vm_writeout (2.6.x .. 4.x; gone by 5.4): while pages
    /// under writeback exceed the dirty threshold plus a tenth ("Boost the allowable dirty
    /// threshold a bit for page allocators"), the reclaimer sleeps in
    /// congestion_wait(BLK_RW_ASYNC, HZ/10) and checks again.
    pub throttle_vm_writeout: bool,
    /// What dirtyable memory counts (determine_dirtyable_memory, 2.6.31 .. 3.13): free
    /// pages plus global_reclaimable_pages, the file LRU and, while swap has free slots,
    /// the anon LRU too, with no reserve taken off (dirty_balance_reserve is 3.3+). Since
    /// 3.14 ("do not count anon pages as dirtyable memory") it is free pages above the
    /// reserve plus the file LRU only.
    pub dirtyable_counts_anon: bool,
    /// kswapd writes a dirty file page with ->writepage (pageout) when it meets it a second
    /// time, already marked PG_reclaim, on a node flagged PGDAT_DIRTY (shrink_folio_list:
    /// ZONE_DIRTY since 3.11, "only write dirty pages that the scanner has seen twice"
    /// 4.11). The 5.x profiles; 2.6.39's kswapd writes every dirty page it takes
    /// (`reclaim_writes_file`); the 6.x profile leaves dirty file pages to the flushers
    /// (6.1 with ext4 still writes as 5.x: not modelled there).
    pub kswapd_writes_dirty_seen_twice: bool,
    /// How direct reclaim asks the flushers for writeback. `Some(scanned)` (2.6.x .. 4.13):
    /// do_try_to_free_pages, after each priority whose running total of scanned pages
    /// exceeds one and a half times nr_to_reclaim, calls wakeup_flusher_threads(
    /// total_scanned): a work item of that many pages for every device with dirty data,
    /// written whatever the dirty thresholds. `None` (4.14+): shrink_inactive_list, on a
    /// batch whose file pages were all dirty and not queued, calls
    /// wakeup_flusher_threads(WB_REASON_VMSCAN): wb_start_writeback sets WB_start_all and
    /// the flusher writes every page dirty when it looks (get_nr_dirty_pages).
    pub flush_total_scanned: bool,
    /// balance_pgdat's priority loop.
    pub kswapd_balance: KswapdBalance,
    /// NAPI (2.6+): receive interrupts are batched; 2.4 takes one interrupt per frame.
    /// Frames per receive interrupt.
    pub rx_frames_per_irq: u32,
    /// The slab allocator the era's kernels are built with: SLAB (mm/slab.c) on 2.4 and
    /// 2.6.39, SLUB (mm/slub.c) on 5.x/6.x.
    pub slab_allocator: crate::mm::slab::SlabAllocator,
    /// Slab objects of SLAB_ACCOUNT caches are charged to the allocating task's memory
    /// cgroup one by one (obj_cgroup, 5.9+) and their shrinkable ones (dentries, inodes)
    /// sit on per-cgroup list_lru lists (memcg-aware list_lru, 4.0+). The 6.x profile.
    /// 2.6.39 has no kmem accounting (3.8+).
    pub kmem_accounting: bool,
    /// Page-table pages of a task are charged to its memory cgroup (GFP_PGTABLE_USER's
    /// __GFP_ACCOUNT, 4.6+): 5.x and 6.x.
    pub pgtables_accounted: bool,
    /// THREAD_SIZE in pages, a task's kernel stack: 16 KiB on x86-64 since 3.15
    /// ("x86_64: expand kernel stack to 16K"), 8 KiB before (2.6.39) and on 2.4's i386.
    pub thread_size_pages: u64,
    /// A fragmentation event (an allocation falling back to another migrate type's free
    /// pages) boosts the watermarks and wakes kswapd to reclaim the boost without writing
    /// or swapping (boost_watermark, balance_pgdat's nr_boost_reclaim: 5.0+).
    pub watermark_boost: bool,
    /// A cgroup's task allocates SLAB_ACCOUNT objects from the cgroup's own copy of the
    /// cache, whose slab pages are charged to the cgroup (memcg_kmem_get_cache,
    /// memcg_charge_slab: 3.8 to 5.8). The 5.4 and 5.8 profiles.
    pub memcg_kmem_caches: bool,
    /// Pages a charge takes from the cgroup's page counter at once, the rest kept in the
    /// charging CPU's stock (memcg_stock_pcp): MEMCG_CHARGE_BATCH, 64 since 6.1 ("memcg:
    /// increase MEMCG_CHARGE_BATCH to 64"), 32 before (2.6.39's CHARGE_SIZE, 32 pages).
    pub memcg_charge_batch: u64,
    /// v1 cgroup reclaim waits for the writeback of a page it already marked PG_reclaim
    /// (shrink_folio_list's case 3, for reclaim without writeback_throttling_sane: "memcg:
    /// prevent OOM with too many dirty pages", 3.6). 2.6.39 goes on past it.
    pub memcg_v1_waits_writeback: bool,
    /// v1 cgroup reclaim that woke the flushers (every page it took dirty and not queued)
    /// sleeps in reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK) ("mm/cgroup/reclaim: fix
    /// dirty pages throttling on cgroup v1", 6.1): the 6.x profile.
    pub memcg_v1_reclaim_throttle: bool,
    /// shrink_active_list counts PGREFILL in /proc/vmstat only for global reclaim
    /// (`if (!cgroup_reclaim(sc))`, 6.x); through 5.8 limit reclaim counted it too.
    pub pgrefill_global_only: bool,
    /// shrink_inactive_list counts PGSTEAL for every reclaimer, limit reclaim included
    /// (2.6.39: __count_zone_vm_events(PGSTEAL, ...) outside the scanning_global_lru
    /// test). From 3.x on pgsteal_kswapd/direct count global reclaim only.
    pub pgsteal_counts_cgroup_reclaim: bool,
    /// The names, order and items of /proc/vmstat (vmstat_text); None: no /proc/vmstat
    /// (2.4 shows its page and swap counters in /proc/stat).
    pub vmstat_layout: Option<memtwin_procfs::VmstatLayout>,
    /// Per-CPU swap slot caches (mm/swap_slots.c, 4.11 .. 6.13): folio_alloc_swap takes
    /// slots from this CPU's batch of SWAP_SLOTS_CACHE_SIZE, refilled from the global
    /// allocator; free_swap_slot parks freed slots in a per-CPU return batch that goes back
    /// to the swap map when full. Cached slots count as used (SwapFree, swpd).
    pub swap_slots_cache: bool,
    /// A write to an anonymous page that is mapped (read-only) with a swap-cache copy frees
    /// the copy: do_wp_page -> reuse_swap_page, which delete_from_swap_cache's a page only
    /// this mm uses (2.6.x .. 5.18). From 5.19 ("mm: remember exclusively mapped anonymous
    /// pages with PG_anon_exclusive") do_wp_page reuses an exclusive page at once and the
    /// slot stays: the dirty page is written to it again if reclaimed.
    pub wp_frees_swap_cache: bool,
    /// Zero-filled pages are not written to swap (6.12, "mm: store zero pages to be
    /// swapped out in a bitmap"): swap_writepage finds is_folio_zero_filled, sets the
    /// slot's bit in si->zeromap and counts SWPOUT_ZERO; swap_read_folio fills such a page
    /// with zeros without I/O (swap_read_folio_zeromap, SWPIN_ZERO). 6.18 here.
    pub swap_zeromap: bool,
    /// try_to_free_pages first calls throttle_direct_reclaim (3.6, "mm: throttle direct
    /// reclaimers if PF_MEMALLOC reserves are low and swap is backed by network storage"):
    /// below half the min watermarks (allow_direct_reclaim) the reclaimer counts
    /// PGSCAN_DIRECT_THROTTLE and sleeps on pgdat->pfmemalloc_wait until kswapd restores
    /// them.
    pub throttle_direct_reclaim: bool,
    /// shrink_lruvec holds a block plug around its loop (3.2, "vmscan: add block plug for
    /// page reclaim"): swap writes of successive batches merge before they reach the device.
    pub reclaim_plug: bool,
    /// What compact_memory does (mm/compaction.rs).
    pub compaction: Compaction,
    /// How a kernel allocation falling back to another type's pageblock takes it over
    /// (mm/pageblock.rs).
    pub steal_rule: crate::mm::pageblock::StealRule,
    /// MIGRATE_RESERVE blocks at the start of the zone (setup_zone_migrate_reserve,
    /// 2.6.24 .. 3.19).
    pub migrate_reserve: bool,
    /// The watermark test of a request above order 0 (__zone_watermark_ok): before 4.4 the
    /// free pages of each lower order are taken away with the mark halved per order; since
    /// 4.4 ("mm, page_alloc: only enforce watermarks for order-0 allocations") a free block
    /// of the order or above on a list the request may use is enough.
    pub watermark_lower_orders: bool,
    /// zram stores pages in zsmalloc's movable pages (4.8+: "zram: use __GFP_MOVABLE for
    /// memory allocation"); 2.6.39's xvmalloc took unmovable ones.
    pub zsmalloc_movable: bool,
    /// How a page-cache miss chooses its readahead window.
    pub ra_rule: RaRule,
    /// try_context_readahead (2.6.31+, folded into page_cache_sync_ra in 6.10): a miss that
    /// is neither at the start nor sequential looks for the cached pages a stream would
    /// have left before it.
    pub ra_history: RaHistory,
    /// filemap_read leaves ra->prev_pos at the byte after the read (iocb->ki_pos, 5.12+);
    /// before, generic_file_buffered_read left it in the last page read (prev_index,
    /// prev_offset), so a whole-page read's next page is prev + 1, not prev.
    pub ra_prev_pos_after_read: bool,
    /// How a major fault without madvise advice reads around the page.
    pub mmap_readaround: MmapReadaround,
    /// do_fault_around (3.15+, vm_ops->map_pages): a read fault on a file maps the cached
    /// pages of its fault_around_bytes block; before, each page is its own fault, which
    /// goes through filemap_fault.
    pub fault_around: bool,
}

impl Profile {
    /// The rules of one era.
    pub fn of(kernel: KernelProfile) -> Profile {
        use KernelProfile::*;
        let old = matches!(kernel, Linux2639 | Linux24);
        Profile {
            kernel,
            cost_balance: matches!(kernel, Linux6 | Linux58),
            refault_distance_includes_anon: matches!(kernel, Linux6 | Linux58),
            new_anon_inactive: kernel == Linux6,
            anon_workingset: kernel == Linux6,
            workingset: !old,
            deactivate_sets_workingset: !old,
            first_ref_activates: match kernel {
                Linux6 => FirstRefActivates::None,
                Linux58 | Linux5Pre59 => FirstRefActivates::SwapBacked,
                Linux2639 | Linux24 => FirstRefActivates::AnonOnly,
            },
            write_marks_accessed: old,
            file_inactive_ratio: !old,
            swap_ra: if old { SwapRaRule::Fixed } else { SwapRaRule::Vma },
            swapin_notes_anon_cost: kernel == Linux58,
            memcg_reclaim_retries: if kernel == Linux6 { crate::mm::page_alloc::MAX_RECLAIM_RETRIES } else { 5 },
            force_empty_congestion_wait: kernel != Linux6,
            force_empty_moves_to_parent: old,
            memcg_flat_mode: kernel != Linux6,
            memcg_root_use_hierarchy: !old,
            file_is_plenty: !old,
            scan_prio_plus_one: old,
            reclaim_stop: match kernel {
                Linux6 => ReclaimStop::EveryRound,
                Linux58 | Linux5Pre59 => ReclaimStop::ScanAdjustedOnce,
                Linux2639 | Linux24 => ReclaimStop::BelowDefPriority,
            },
            rotate_reclaimable: match kernel {
                Linux24 => RotateReclaimable::Never,
                Linux2639 => RotateReclaimable::InactiveOnly,
                _ => RotateReclaimable::Deactivate,
            },
            writeback_throttle: if kernel == Linux6 { WritebackThrottle::ReclaimThrottle } else { WritebackThrottle::CongestionWait },
            isolated_throttle: match kernel {
                Linux6 => IsolatedThrottle::ReclaimThrottleOnce,
                Linux58 | Linux5Pre59 => IsolatedThrottle::Msleep100Once,
                Linux2639 | Linux24 => IsolatedThrottle::CongestionWaitLoop,
            },
            lru_lock_per_lruvec: kernel == Linux6,
            pcp: match kernel {
                Linux24 => crate::mm::pcp::PcpRule::Off,
                Linux2639 => crate::mm::pcp::PcpRule::SixBatches { cap_kb: 512, cold: true },
                Linux58 | Linux5Pre59 => crate::mm::pcp::PcpRule::SixBatches { cap_kb: 1024, cold: false },
                Linux6 => crate::mm::pcp::PcpRule::LowWmarkShare,
            },
            lru_add: match kernel {
                Linux24 => crate::mm::swap::LruAddRule::Direct,
                // lru_add_pvecs[NR_LRU_LISTS], PAGEVEC_SIZE 14.
                Linux2639 => crate::mm::swap::LruAddRule::PerList { size: 14 },
                // lru_add_pvec (5.x) and cpu_fbatches.lru_add (6.x): PAGEVEC_SIZE 15 since
                // "pagevec: Use unsigned char for nr" (4.15).
                Linux58 | Linux5Pre59 | Linux6 => crate::mm::swap::LruAddRule::Single { size: 15 },
            },
            lru_move: match kernel {
                Linux24 => crate::mm::swap::LruMoveRule::NONE,
                Linux2639 => crate::mm::swap::LruMoveRule::V2_6_39,
                Linux58 | Linux5Pre59 | Linux6 => crate::mm::swap::LruMoveRule::V5,
            },
            activate_batched: !old,
            drop_caches_drains_lru: kernel == Linux6,
            fadvise_drains_lru: !old,
            memcg_swappiness_zero_file_only: !old,
            memcg_reclaim_one_victim: kernel == Linux2639,
            thp_enabled: matches!(kernel, Linux6 | Linux58 | Linux5Pre59),
            bdflush: kernel == Linux24,
            tcp_rcvbuf_autotune: kernel != Linux24,
            writeback_wraps_in_call: old,
            kswapd_hopeless: !old,
            reclaim_writes_file: kernel == Linux2639,
            throttle_vm_writeout: kernel == Linux2639,
            flush_total_scanned: kernel == Linux2639,
            dirtyable_counts_anon: kernel == Linux2639,
            kswapd_writes_dirty_seen_twice: matches!(kernel, Linux58 | Linux5Pre59),
            kswapd_balance: if kernel == Linux2639 { KswapdBalance::LoopAgain } else { KswapdBalance::RaisePriority },
            rx_frames_per_irq: if kernel == Linux24 { 1 } else { 8 },
            slab_allocator: if old { crate::mm::slab::SlabAllocator::Slab } else { crate::mm::slab::SlabAllocator::Slub },
            kmem_accounting: kernel == Linux6,
            pgtables_accounted: !matches!(kernel, Linux2639 | Linux24),
            thread_size_pages: if matches!(kernel, Linux2639 | Linux24) { 2 } else { 4 },
            watermark_boost: !old,
            memcg_kmem_caches: matches!(kernel, Linux58 | Linux5Pre59),
            memcg_charge_batch: if kernel == Linux6 { 64 } else { 32 },
            memcg_v1_waits_writeback: !old,
            memcg_v1_reclaim_throttle: kernel == Linux6,
            pgrefill_global_only: kernel == Linux6,
            pgsteal_counts_cgroup_reclaim: old,
            vmstat_layout: match kernel {
                Linux24 => None,
                Linux2639 => Some(memtwin_procfs::VmstatLayout::V2_6_39),
                Linux5Pre59 => Some(memtwin_procfs::VmstatLayout::V5_4),
                Linux58 => Some(memtwin_procfs::VmstatLayout::V5_8),
                Linux6 => Some(memtwin_procfs::VmstatLayout::V6),
            },
            swap_slots_cache: !old,
            wp_frees_swap_cache: kernel != Linux6,
            swap_zeromap: kernel == Linux6,
            throttle_direct_reclaim: !old,
            reclaim_plug: !old,
            compaction: match kernel {
                Linux24 => Compaction::None,
                Linux2639 => Compaction::Async2635,
                _ => Compaction::Sync,
            },
            steal_rule: if old { crate::mm::pageblock::StealRule::HalfFree } else { crate::mm::pageblock::StealRule::HalfFreeOrAlike },
            migrate_reserve: kernel == Linux2639,
            watermark_lower_orders: old,
            zsmalloc_movable: !old,
            ra_rule: if kernel == Linux6 { RaRule::SyncRa } else { RaRule::Ondemand },
            ra_history: match kernel {
                Linux24 => RaHistory::None,
                Linux2639 => RaHistory::RadixPrevHole,
                _ => RaHistory::XarrayPrevMiss,
            },
            ra_prev_pos_after_read: kernel == Linux6,
            mmap_readaround: match kernel {
                Linux24 | Linux2639 => MmapReadaround::Unmarked,
                Linux6 => MmapReadaround::MarkedExecForward,
                _ => MmapReadaround::Marked,
            },
            fault_around: !matches!(kernel, Linux24 | Linux2639),
        }
    }
    pub fn name(&self) -> &'static str {
        self.kernel.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn every_era_has_a_profile_and_refault_detection_starts_at_3_15() {
        for &(name, k) in KernelProfile::NAMES {
            let p = Profile::of(k);
            assert_eq!(p.name(), name);
            let pre_315 = matches!(k, KernelProfile::Linux2639 | KernelProfile::Linux24);
            assert_eq!(p.workingset, !pre_315, "{name}");
            // Anon refault detection needs refault detection.
            assert!(!p.anon_workingset || p.workingset);
            // The 5.9 anon LRU comes as one change set.
            assert_eq!(p.anon_workingset, p.new_anon_inactive, "{name}");
        }
    }
}
