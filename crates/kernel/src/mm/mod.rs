//! Memory management: frames, LRU lists, address spaces and the node's counters.
//! Mechanisms that need a task or the clock (allocation with reclaim, writeback) are
//! `impl Kernel` blocks in the submodules named after the kernel files they follow.

pub mod buddy;
pub mod cost;
pub mod compaction;
pub mod filemap;
pub mod list_lru;
pub mod lru;
pub mod memcontrol;
#[cfg(test)]
mod memcontrol_tests;
pub mod memory;
pub mod oom_kill;
pub mod page;
pub mod page_alloc;
pub mod pageblock;
pub mod page_writeback;
pub mod pcp;
pub mod radix_tree;
pub mod readahead;
pub mod shrinker;
pub mod slab;
#[cfg(test)]
mod slab_tests;
pub mod split_reclaim;
pub mod swap;
pub mod swap_state;
pub mod swapfile;
pub mod swapper_space;
pub mod util;
pub mod vmscan;
pub mod vmscan_memcg;
pub mod workingset;
pub mod xarray;

use buddy::FreeArea;
use lru::{Lruvec, LruvecId, MAX_LRUVECS, NR_LRU_LISTS, NR_SENTINELS, ROOT_LRUVEC};
use memtwin_engine::Ns;
use page::{Lru, Pages, Pfn};
use xarray::{XArray, XaNodes};

pub use page_alloc::Watermarks;

/// Bytes per page.
pub const PAGE_SIZE: u64 = 4096;
/// Pages reclaim works on at a time (include/linux/swap.h).
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// Reclaim priorities (mm/vmscan.c).
pub const DEF_PRIORITY: u32 = 12;

/// What an address_space holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingKind {
    /// A regular file's page cache.
    File,
    /// A block device's page cache (counted as Buffers).
    BlockDev,
    /// Anonymous memory of one process.
    Anon,
    /// shmem/tmpfs: swap-backed page cache.
    Shmem,
}

/// A slot of an address_space (u32): 0 is empty; bit 31 clear: a page (frame + 1); bits
/// 31..30 = 10: the shadow of an evicted page of the root lruvec; 11: bit 29 clear, a swap
/// entry (the page is in swap); bit 29 set, the shadow of a page evicted from a memory
/// cgroup's lruvec (its 29 low bits).
const SHADOW_BIT: u32 = 1 << 31;
const SWAP_BIT: u32 = 1 << 30;
const MEMCG_SHADOW_BIT: u32 = 1 << 29;
/// In a shadow value (`Slot::Shadow`, swap shadows): the shadow records a cgroup's lruvec
/// in its 29 low bits (`mm::workingset`).
pub const SHADOW_MEMCG: u32 = 1 << 30;
/// Swap slots a slot entry can name.
pub const MAX_SWAP_SLOTS: u64 = MEMCG_SHADOW_BIT as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Empty,
    Page(Pfn),
    /// The eviction clock when the page was evicted (workingset_eviction's shadow entry).
    Shadow(u32),
    /// The page was swapped out to this global swap slot.
    Swap(u32),
}

#[inline]
pub fn decode_slot(e: u32) -> Slot {
    if e == 0 {
        Slot::Empty
    } else if e & SHADOW_BIT == 0 {
        Slot::Page(e - 1)
    } else if e & SWAP_BIT != 0 {
        if e & MEMCG_SHADOW_BIT != 0 {
            Slot::Shadow(SHADOW_MEMCG | (e & (MEMCG_SHADOW_BIT - 1)))
        } else {
            Slot::Swap(e & !(SHADOW_BIT | SWAP_BIT))
        }
    } else {
        Slot::Shadow(e & !SHADOW_BIT)
    }
}
#[inline]
pub fn encode_page(p: Pfn) -> u32 {
    p + 1
}
/// `eviction` must fit in 30 bits (workingset keeps 29 bits of clock plus a flag).
#[inline]
pub fn encode_shadow(eviction: u32) -> u32 {
    if eviction & SHADOW_MEMCG != 0 {
        return SHADOW_BIT | SWAP_BIT | MEMCG_SHADOW_BIT | (eviction & (MEMCG_SHADOW_BIT - 1));
    }
    SHADOW_BIT | (eviction & !(SHADOW_BIT | SWAP_BIT))
}
#[inline]
pub fn encode_swap(slot: u32) -> u32 {
    debug_assert!(slot < MEMCG_SHADOW_BIT);
    SHADOW_BIT | SWAP_BIT | slot
}

/// struct address_space, reduced: the page index (`i_pages`, a sparse radix tree keyed by
/// the 64-bit page index: `mm::xarray`), counts, and the inode's writeback state. The
/// trees' nodes live in the machine's arena (`Mm::xa`): read and change entries through
/// `Mm::slot`, `Mm::set_slot`, `Mm::next_slot` and the swap-cache equivalents.
#[derive(Debug)]
pub struct AddressSpace {
    pub kind: MappingKind,
    /// The page index: `Slot` entries (page, shadow, swap entry) by page index.
    pub i_pages: XArray,
    /// One past the last index the index was grown to cover: at least the highest index
    /// ever stored + 1, grown by half again at a time (at least 64), never shrunk while the
    /// mapping lives. Writeback's cyclic scan wraps here (`writeback_mapping`).
    pub extent: u64,
    pub nrpages: u64,
    pub nrshadows: u64,
    pub nr_dirty: u64,
    pub nr_writeback: u64,
    /// When the inode went from clean to dirty (inode->dirtied_when); 0 when clean.
    pub dirtied_when: Ns,
    /// Where the next writeback of this inode starts (mapping->writeback_index).
    pub wb_index: u64,
    /// Block device holding the data, and the byte offset of index 0 on it.
    pub dev: Option<u32>,
    pub disk_base: u64,
    /// For swap-backed pages in the swap cache: the swap slot (+1) they also occupy, by
    /// index (the swap address space's xarray, kept per mapping here).
    pub swap_cache: XArray,
    /// Swap entries held (pages swapped out) and pages in the swap cache.
    pub nr_swapped: u64,
    pub nr_swapcache: u64,
    /// What the memory holds, for zram: how well it compresses.
    pub content: Content,
    /// Pages carrying buffer heads (`fs::buffer`).
    pub nr_buffers: u32,
    /// File pages mapped by page tables, per aligned block of FAULT_AROUND_PAGES (one bit
    /// each; empty until a process first maps a page; per page before 3.15): a fault maps
    /// every cached page of its block (do_fault_around -> filemap_map_pages), so the next access to any of them is
    /// no fault. Reclaim and truncation unmap a page (its block's bit goes: the next access
    /// there faults and maps the block's cached pages again); the last munmap unmaps all.
    /// One set of page tables per file: a second process mapping it finds the blocks the
    /// first one mapped.
    pub mapped_blocks: Vec<u64>,
    /// log2 of the pages one fault maps: FAULT_AROUND_SHIFT since 3.15, 0 before (each
    /// page its own fault: no ->map_pages).
    pub pte_block_shift: u8,
    /// vma->swap_readahead_info (anonymous memory, VMA-based swap readahead): the page of
    /// the last swap fault or swap-cache hit, the window it read and the readahead hits since.
    pub swap_ra: SwapRaInfo,
    /// The page index's lock (xa_lock_irq(&mapping->i_pages)).
    pub xa_lock: XaLock,
    /// The task whose anonymous memory this is.
    pub owner: Option<u32>,
    /// Pages that processes map (PTEs), counted as Mapped.
    pub mapped: bool,
    /// Mapped with execute permission (VM_EXEC): reclaim protects referenced pages.
    pub exec: bool,
    /// A file of a filesystem whose write_begin attaches buffer heads
    /// (`fs::buffer::fs_write_buffers` of its mount, set when the inode is made).
    pub fs_buffers: bool,
    pub live: bool,
}

/// The lock of a mapping's page index: xa_lock on mapping->i_pages (mapping->tree_lock
/// before 4.17), a spinlock taken with interrupts off to insert or remove a page, and to set
/// or clear the dirty and writeback tags. Lookups take none (RCU). An analytic FIFO as
/// `LockQueue` is, in two words per mapping: when the current holder lets it go, and who
/// that holder is (a holder taking it again in the same work follows its own hold).
#[derive(Clone, Copy, Debug, Default)]
pub struct XaLock {
    pub free_at: Ns,
    pub holder: u32,
}

/// All mappings' xa_lock acquisitions: how many, how many had to wait, the total and the
/// longest wait.
#[derive(Clone, Copy, Debug, Default)]
pub struct XaLockStats {
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
    pub max_wait_ns: u64,
}

/// What VMA-based swap readahead remembers per VMA (SWAP_RA_VAL: address, window, hits).
#[derive(Clone, Copy, Debug, Default)]
pub struct SwapRaInfo {
    pub index: u64,
    pub win: u32,
    pub hits: u32,
}

/// fault_around_bytes (64 KiB) in pages: the block a read fault on a file maps (3.15+,
/// do_fault_around); log2 of it.
pub const FAULT_AROUND_PAGES: u64 = 16;
pub const FAULT_AROUND_SHIFT: u8 = 4;

impl AddressSpace {
    /// Whether the block holding `index` is mapped (`mapped_blocks`).
    #[inline]
    pub fn block_mapped(&self, index: u64) -> bool {
        let b = index >> self.pte_block_shift;
        self.mapped_blocks.get((b / 64) as usize).is_some_and(|w| w & (1 << (b % 64)) != 0)
    }
    /// Mark (`on`) or clear the block holding `index` in `mapped_blocks`.
    pub fn set_block_mapped(&mut self, index: u64, on: bool) {
        let b = index >> self.pte_block_shift;
        let w = (b / 64) as usize;
        if on {
            if self.mapped_blocks.len() <= w {
                self.mapped_blocks.resize(w + 1, 0);
            }
            self.mapped_blocks[w] |= 1 << (b % 64);
        } else if let Some(x) = self.mapped_blocks.get_mut(w) {
            *x &= !(1 << (b % 64));
        }
    }

    /// A new, empty address_space whose id is `id`.
    pub fn new(id: u32, kind: MappingKind, dev: Option<u32>, disk_base: u64) -> AddressSpace {
        // mapping_set_update: the shadow-node list tracks page-cache trees of files and
        // block devices, not shmem's (nor anon memory's, which has no page cache).
        let track = matches!(kind, MappingKind::File | MappingKind::BlockDev);
        AddressSpace {
            kind,
            // The kernel's page-cache trees take their nodes from radix_tree_node (anon
            // memory's tree is the model's own index of it).
            i_pages: if kind == MappingKind::Anon { XArray::new(id, track) } else { XArray::new(id, track).accounted() },
            extent: 0,
            nrpages: 0,
            nrshadows: 0,
            nr_dirty: 0,
            nr_writeback: 0,
            dirtied_when: 0,
            wb_index: 0,
            dev,
            disk_base,
            swap_cache: XArray::new(id, false),
            nr_swapped: 0,
            nr_swapcache: 0,
            content: Content::Text,
            nr_buffers: 0,
            swap_ra: SwapRaInfo::default(),
            mapped_blocks: Vec::new(),
            pte_block_shift: FAULT_AROUND_SHIFT,
            xa_lock: XaLock::default(),
            owner: None,
            mapped: false,
            exec: false,
            fs_buffers: false,
            live: true,
        }
    }
/// Swap-backed memory is reclaimed by swapping, not by dropping.
    pub fn swap_backed(&self) -> bool {
        matches!(self.kind, MappingKind::Anon | MappingKind::Shmem)
    }
}

/// What a page holds, as far as compression cares (zram).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Every byte the same (memset): zram stores it as a marker.
    Zero,
    /// Program data and text: compresses about 3:1 with lzo/lz4.
    Text,
    /// Random bytes: incompressible.
    Random,
}

/// Node-wide page counts that are not list lengths (enum node_stat_item).
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeStat {
    pub file_pages: u64,
    pub buffers: u64,
    pub shmem: u64,
    pub anon: u64,
    pub mapped: u64,
    pub dirty: u64,
    pub writeback: u64,
    /// Pages isolated from the LRU by reclaim (NR_ISOLATED_ANON, NR_ISOLATED_FILE).
    pub isolated_anon: u64,
    pub isolated_file: u64,
}

/// Who holds a page the kernel uses outside the LRU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelOwner {
    /// Anything else (boot allocations, socket buffers, swap metadata): no Meminfo line.
    Other,
    /// Page-table pages (PageTables, NR_PAGETABLE).
    PageTables,
    /// Kernel stacks (KernelStack, NR_KERNEL_STACK_KB).
    KernelStack,
    /// zram's compressed pages (zsmalloc's zspages; xvmalloc's on 2.6.39).
    Zram,
    /// A slab page of cache `id` (`Mm::slab`).
    Slab(u16),
}

/// Kernel-page owners: Other, PageTables, KernelStack, Zram, then one per slab cache.
pub(crate) const MAX_SLAB_CACHES: usize = 61;
const NR_KERNEL_OWNERS: usize = 4 + MAX_SLAB_CACHES;
/// The owner code of zram's pages, which a kernel page's record keeps as its index.
pub(crate) const ZRAM_OWNER_CODE: u32 = 3;

impl KernelOwner {
    #[inline]
    fn code(self) -> usize {
        match self {
            KernelOwner::Other => 0,
            KernelOwner::PageTables => 1,
            KernelOwner::KernelStack => 2,
            KernelOwner::Zram => ZRAM_OWNER_CODE as usize,
            KernelOwner::Slab(id) => 4 + id as usize,
        }
    }
    #[inline]
    fn from_code(c: usize) -> KernelOwner {
        match c {
            0 => KernelOwner::Other,
            1 => KernelOwner::PageTables,
            2 => KernelOwner::KernelStack,
            3 => KernelOwner::Zram,
            c => KernelOwner::Slab((c - 4) as u16),
        }
    }
}

/// Pages the kernel holds outside the LRU, on one list per owner (as slab pages are on
/// their cache's lists). A kernel page has no mapping (mapping 0) and records its owner's
/// code as its index, so that one specific page can be freed (free_kernel_page).
pub struct KernelPages {
    pub(crate) base: Pfn,
    pub nr: [u64; NR_KERNEL_OWNERS],
}

impl KernelPages {
    fn new(pages: &mut Pages, base: Pfn) -> KernelPages {
        for i in 0..NR_KERNEL_OWNERS as u32 {
            lru::init_head(pages, base + i);
        }
        KernelPages { base, nr: [0; NR_KERNEL_OWNERS] }
    }
    /// Pages held by `o`.
    #[inline]
    pub fn count(&self, o: KernelOwner) -> u64 {
        self.nr[o.code()]
    }
    /// Every kernel page.
    pub fn total(&self) -> u64 {
        self.nr.iter().sum()
    }
}

/// Sentinel frames past the lruvecs' list heads: one per kernel-page owner.
pub const NR_ALL_SENTINELS: u32 = NR_SENTINELS + NR_KERNEL_OWNERS as u32;

/// Sums over the live mappings that /proc/meminfo needs (`Mm::mapping_sums`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MappingSums {
    pub swapcache: u64,
    pub shared_anon: u64,
    pub shmem_swapped: u64,
}

/// The read-ahead advice of a file mapping (madvise MADV_NORMAL, MADV_RANDOM,
/// MADV_SEQUENTIAL: VM_RAND_READ / VM_SEQ_READ on the VMA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Madvice {
    Normal,
    Random,
    Sequential,
}

/// A task's mapping of a file: its VMA's madvise advice, and the state of the open file
/// behind it (vm_file->f_ra) that the fault path reads and writes: the readahead window
/// and mmap_miss. Each mapper has its own (ld.so and fio open the file they map), so one
/// task's random faults do not turn off another's read-around.
#[derive(Clone, Copy, Debug)]
pub struct FileVma {
    pub m: u32,
    pub advice: Madvice,
    pub ra: crate::fs::RaState,
    /// Faults that missed the page cache since read-around last paid off (mmap_miss,
    /// MMAP_LOTSAMISS).
    pub mmap_miss: u32,
}

impl FileVma {
    pub fn new(m: u32) -> FileVma {
        // file_ra_state_init: prev_pos = -1.
        let ra = crate::fs::RaState { prev_index: u64::MAX, ..Default::default() };
        FileVma { m, advice: Madvice::Normal, ra, mmap_miss: 0 }
    }
}

/// The memory of the (single-node, single-zone) machine: frames, the zone's free list,
/// the node's lruvecs, the address spaces, the swap map and the node's counters. Usable
/// without a `Kernel` (rules that need only these pieces take `&mut Mm`).
pub struct Mm {
    pub pages: Pages,
    /// The zone's free frames: the buddy lists' and those on the per-CPU lists.
    pub free: FreeArea,
    /// How many of the free frames are on each CPU's list (`pcp`), and zone->lock.
    pub pcp: pcp::Pagesets,
    /// The mappings' page-index locks, all together.
    pub xa_lock_stats: XaLockStats,
    /// Pages added to the LRU that wait in their CPU's batch (`swap`).
    pub lru_add: swap::LruAddBatches,
    /// Pages on the LRU queued to be moved by their CPU's batches (`swap`: activate,
    /// rotate, deactivate).
    pub lru_move: swap::LruMoveBatches,
    /// The node's lruvecs; index 0 is the root (node) lruvec, the others belong to memory
    /// cgroups. Freed ones stay in place (not `live`) for reuse.
    pub lruvecs: Vec<Lruvec>,
    free_lruvec_ids: Vec<LruvecId>,
    /// Kernel pages by owner.
    pub kernel: KernelPages,
    /// Per-slot swap state (swap_map).
    pub swap_map: swapfile::SwapMap,
    /// The swap cache's trees, counted for their nodes (mm/swapper_space.rs).
    pub swapper: swapper_space::SwapperSpaces,
    /// Managed pages (MemTotal).
    pub managed: u64,
    pub wmark: Watermarks,
    pub mappings: Vec<AddressSpace>,
    free_mapping_ids: Vec<u32>,
    /// The live shmem address spaces (tmpfs files, shared anonymous objects), for the
    /// sums of /proc/meminfo, and the swap-cache pages of all live mappings (SwapCached).
    shmem_ids: Vec<u32>,
    nr_swapcache: u64,
    pub stat: NodeStat,
    /// Dirty inodes in dirtying order (the b_dirty list): (dirtied_when, mapping).
    pub dirty_inodes: std::collections::VecDeque<(Ns, u32)>,
    /// The nodes of every address space's page index and swap-cache index, with the
    /// workingset list of leaves that hold only shadow entries (`mm::xarray`).
    pub xa: XaNodes,
    /// PGDAT_WRITEBACK: kswapd found only pages under writeback at the inactive tail.
    pub pgdat_writeback: bool,
    /// PGDAT_DIRTY: kswapd's last pass took only dirty, unqueued file pages (or none); it
    /// may write dirty file pages it meets again (5.x). Cleared when the node is balanced.
    pub pgdat_dirty: bool,
    /// ZONE_CONGESTED (2.6.37 .. 3.x): reclaim met dirty pages only on congested queues;
    /// cleared when kswapd balances the zone.
    pub zone_congested: bool,
    /// The slab caches (`mm::slab`).
    pub slab: slab::Slabs,
    /// pgdat->kswapd_failures: balance_pgdat runs in a row that reclaimed nothing; at
    /// MAX_RECLAIM_RETRIES the node is "hopeless" (4.12+): kswapd sleeps and is not woken
    /// until some reclaim makes progress on the node.
    pub kswapd_failures: u32,
    /// The migrate type of each pageblock (`mm::pageblock`).
    pub pageblocks: pageblock::Pageblocks,
    /// How a kernel allocation falling back to another type's block takes it over.
    pub steal_rule: pageblock::StealRule,
    /// The watermark test of requests above order 0 before 4.4 (`watermark_ok_order`).
    pub watermark_lower_orders: bool,
    /// zram's pages are movable (zsmalloc, 4.8+).
    pub zsmalloc_movable: bool,
    /// log2 of the pages a file fault maps (`AddressSpace::pte_block_shift` of new
    /// mappings): FAULT_AROUND_SHIFT, or 0 for an era without fault-around.
    pub fault_around_shift: u8,
    /// zone->watermark_boost (5.0+): pages added to every watermark after allocations fell
    /// back to another migrate type's free pages (`boost_watermark`); kswapd reclaims it
    /// and takes it back (balance_pgdat).
    pub watermark_boost: u64,
    /// vm.watermark_boost_factor (0 before 5.0: no boosting).
    pub watermark_boost_factor: u64,
    /// ZONE_BOOSTED_WATERMARK: a boost since the last allocation woke kswapd for it.
    pub zone_boosted: bool,
}

impl Mm {
    pub fn new(managed: u64, wmark: Watermarks) -> Mm {
        Mm::try_new(managed, wmark).expect("frame table allocation")
    }
    /// As `new`; a frame table the model cannot index (frames are u32) or the host cannot
    /// hold is an error.
    pub fn try_new(managed: u64, wmark: Watermarks) -> Result<Mm, String> {
        let nr = u32::try_from(managed)
            .ok()
            .filter(|n| n.checked_add(NR_ALL_SENTINELS).is_some_and(|t| t < page::BATCH_LINK))
            .ok_or_else(|| format!("{managed} page frames are more than the model can index (at most {})", page::BATCH_LINK - 1 - NR_ALL_SENTINELS))?;
        let mut pages = Pages::try_new(nr, NR_ALL_SENTINELS).map_err(|e| {
            format!("cannot allocate the frame table for {managed} pages ({} bytes of host memory): {e}", crate::host::frame_table_bytes(managed))
        })?;
        let mut free = FreeArea::new();
        // Every frame is free at boot, in blocks of the largest order not written until
        // first taken (FreeArea::add_boot_frames): booting costs neither time nor host
        // memory in proportion to the RAM.
        free.add_boot_frames(&mut pages, nr);
        let root = Lruvec::new(&mut pages, Self::lruvec_base(nr, ROOT_LRUVEC));
        let kernel = KernelPages::new(&mut pages, nr + NR_SENTINELS);
        let mut mappings = Vec::with_capacity(1024);
        // Mapping 0 is "no mapping".
        let mut none = AddressSpace::new(0, MappingKind::File, None, 0);
        none.live = false;
        mappings.push(none);
        Ok(Mm {
            pages,
            free,
            // No per-CPU lists until the kernel sets them up for its era and CPUs.
            pcp: pcp::Pagesets::new(pcp::PcpRule::Off, 1, managed, wmark.low),
            xa_lock_stats: XaLockStats::default(),
            // New pages go straight to their lists until the kernel sets up its era's
            // batches (after the boot memory is in place).
            lru_add: swap::LruAddBatches::unlocked(),
            lru_move: swap::LruMoveBatches::new(swap::LruMoveRule::NONE, 1),
            lruvecs: vec![root],
            free_lruvec_ids: Vec::new(),
            kernel,
            swap_map: Default::default(),
            swapper: Default::default(),
            managed,
            wmark,
            mappings,
            free_mapping_ids: Vec::new(),
            shmem_ids: Vec::new(),
            nr_swapcache: 0,
            stat: NodeStat::default(),
            dirty_inodes: std::collections::VecDeque::new(),
            xa: XaNodes::default(),
            pgdat_writeback: false,
            pgdat_dirty: false,
            zone_congested: false,
            slab: slab::Slabs::new(slab::SlabAllocator::Slub, 1),
            kswapd_failures: 0,
            pageblocks: pageblock::Pageblocks::new(managed, 0),
            steal_rule: pageblock::StealRule::HalfFreeOrAlike,
            watermark_lower_orders: false,
            zsmalloc_movable: false,
            fault_around_shift: FAULT_AROUND_SHIFT,
            watermark_boost: 0,
            watermark_boost_factor: 0,
            zone_boosted: false,
        })
    }

    /// First list-head frame of lruvec `id`.
    fn lruvec_base(nr: u32, id: LruvecId) -> Pfn {
        nr + id as u32 * NR_LRU_LISTS as u32
    }

    /// A new, empty lruvec (mem_cgroup_alloc -> init_memcg_lruvec); None when MAX_LRUVECS
    /// are in use (the caller reports it).
    pub fn new_lruvec(&mut self) -> Option<LruvecId> {
        let nr = self.pages.nr();
        if let Some(id) = self.free_lruvec_ids.pop() {
            self.lruvecs[id as usize] = Lruvec::new(&mut self.pages, Self::lruvec_base(nr, id));
            return Some(id);
        }
        if self.lruvecs.len() >= MAX_LRUVECS {
            return None;
        }
        let id = self.lruvecs.len() as LruvecId;
        self.lruvecs.push(Lruvec::new(&mut self.pages, Self::lruvec_base(nr, id)));
        Some(id)
    }
    /// Release an empty lruvec (its pages must have been moved or freed first).
    pub fn free_lruvec(&mut self, id: LruvecId) {
        assert!(id != ROOT_LRUVEC, "the root lruvec lives as long as the node");
        let lv = &mut self.lruvecs[id as usize];
        assert!(lv.live && lv.nr_pages() == 0, "lruvec {id} freed while in use or holding pages");
        lv.live = false;
        self.free_lruvec_ids.push(id);
    }

    /// folio_lruvec: the lruvec of the memory cgroup a page is charged to (the root
    /// lruvec until a cgroup charges it), kept per frame.
    #[inline]
    pub fn page_lruvec(&self, p: Pfn) -> LruvecId {
        self.pages.lruvec_of(p)
    }

    /// The page is now charged to the cgroup of lruvec `id` (commit_charge,
    /// mem_cgroup_move_account): a page on an LRU list moves to the same list of `id`, at
    /// the head; an isolated page goes back to `id`'s lists when reclaim puts it back.
    pub fn set_page_lruvec(&mut self, p: Pfn, id: LruvecId) {
        let old = self.pages.lruvec_of(p);
        if old == id {
            return;
        }
        let l = self.pages.lru(p);
        let listed = !matches!(l, Lru::None | Lru::Isolated | Lru::Free);
        if listed {
            self.lruvecs[old as usize].del(&mut self.pages, p);
        }
        self.pages.set_lruvec_of(p, id);
        if listed {
            self.lruvecs[id as usize].add_head(&mut self.pages, p, l);
        }
    }

    /// Move every page of lruvec `from` to lruvec `to` and free `from` (the LRU part of
    /// memcg reparenting on offline): each list of `from` joins the tail of the same list of
    /// `to` in its order, and pages isolated by reclaim go back to `to` when put back.
    pub fn reparent_lruvec(&mut self, from: LruvecId, to: LruvecId) {
        self.move_lruvec_pages(from, to);
        self.free_lruvec(from);
    }

    /// Move every page of lruvec `from` to the tail of the same list of `to`, in order.
    pub fn move_lruvec_pages(&mut self, from: LruvecId, to: LruvecId) {
        for l in Lru::EVICTABLE.iter().copied().chain([Lru::Unevictable]) {
            while let Some(p) = self.lruvecs[from as usize].first(&self.pages, l) {
                self.lruvecs[from as usize].del(&mut self.pages, p);
                self.pages.set_lruvec_of(p, to);
                self.lruvecs[to as usize].add_tail(&mut self.pages, p, l);
            }
        }
        if self.pages.has_lruvecs() {
            for p in 0..self.pages.nr() {
                if self.pages.lruvec_of(p) == from {
                    self.pages.set_lruvec_of(p, to);
                }
            }
        }
    }
    #[inline]
    pub fn lruvec(&self, id: LruvecId) -> &Lruvec {
        &self.lruvecs[id as usize]
    }
    #[inline]
    pub fn lruvec_mut(&mut self, id: LruvecId) -> &mut Lruvec {
        &mut self.lruvecs[id as usize]
    }

    /// Put an unlisted page on list `l` of its lruvec, at the head (folio_add_lru).
    #[inline]
    pub fn lru_add(&mut self, p: Pfn, l: Lru) {
        let id = self.page_lruvec(p);
        self.lruvecs[id as usize].add_head(&mut self.pages, p, l);
    }
    /// Take a page off its LRU list (lruvec_del_folio); returns the list it was on.
    #[inline]
    pub fn lru_del(&mut self, p: Pfn) -> Lru {
        let id = self.page_lruvec(p);
        self.lruvecs[id as usize].del(&mut self.pages, p)
    }
    /// Move a listed page to the head of `l` in its lruvec (a page isolated by reclaim,
    /// on no list, stays where it is: folio_activate needs PageLRU).
    #[inline]
    pub fn lru_move_head(&mut self, p: Pfn, l: Lru) {
        if matches!(self.pages.lru(p), Lru::None | Lru::Isolated) {
            return;
        }
        let id = self.page_lruvec(p);
        self.lruvecs[id as usize].move_head(&mut self.pages, p, l);
    }
    /// Move a listed page to the tail of `l` in its lruvec (isolated pages stay put).
    #[inline]
    pub fn lru_move_tail(&mut self, p: Pfn, l: Lru) {
        if matches!(self.pages.lru(p), Lru::None | Lru::Isolated) {
            return;
        }
        let id = self.page_lruvec(p);
        self.lruvecs[id as usize].move_tail(&mut self.pages, p, l);
    }
    /// The page at the tail of list `l` of lruvec `id`.
    #[inline]
    pub fn lru_tail(&self, id: LruvecId, l: Lru) -> Option<Pfn> {
        self.lruvecs[id as usize].tail(&self.pages, l)
    }

    /// NR_FREE_PAGES: free pages on the buddy lists (MemFree, the watermark checks);
    /// pages on the per-CPU lists are free but not counted.
    #[inline]
    pub fn nr_free(&self) -> u64 {
        self.free.nr_free
    }
    /// Every free frame: the buddy lists' and the per-CPU lists'.
    #[inline]
    pub fn nr_free_frames(&self) -> u64 {
        self.free.nr_free + self.pcp.total
    }

    /// Free blocks per order (/proc/buddyinfo, frag_show_print: free_area[order].nr_free).
    pub fn free_blocks_per_order(&self) -> [u64; buddy::NR_ORDERS] {
        self.free.blocks_per_order()
    }
    /// Node-wide pages on list `l` (node_page_state(NR_LRU_BASE + l)): the sum over the
    /// node's lruvecs.
    #[inline]
    pub fn lru_len(&self, l: Lru) -> u64 {
        if l == Lru::Free {
            return self.nr_free();
        }
        self.lruvecs.iter().map(|v| v.len(l)).sum()
    }
    pub fn file_lru(&self) -> u64 {
        self.lru_len(Lru::InactiveFile) + self.lru_len(Lru::ActiveFile)
    }
    pub fn anon_lru(&self) -> u64 {
        self.lru_len(Lru::InactiveAnon) + self.lru_len(Lru::ActiveAnon)
    }

    /// A new, empty address_space.
    pub fn new_mapping(&mut self, kind: MappingKind, dev: Option<u32>, disk_base: u64) -> u32 {
        let id = if let Some(id) = self.free_mapping_ids.pop() {
            self.mappings[id as usize] = AddressSpace::new(id, kind, dev, disk_base);
            id
        } else {
            let id = self.mappings.len() as u32;
            assert!(id <= page::MAX_MAPPING, "too many address spaces");
            self.mappings.push(AddressSpace::new(id, kind, dev, disk_base));
            id
        };
        self.mappings[id as usize].pte_block_shift = self.fault_around_shift;
        if kind == MappingKind::Shmem {
            self.shmem_ids.push(id);
        }
        id
    }
    /// Map or unmap the pages of file or shmem mapping `m` in processes' page tables. The
    /// node's NR_FILE_MAPPED follows: page_add_file_rmap counts a page when its first PTE
    /// is set, page_remove_rmap uncounts it when its last one goes (zap_pte_range at
    /// munmap or exit, try_to_unmap before reclaim frees it). Every resident page of a
    /// mapped file or shmem object counts as mapped here; anon pages are AnonPages.
    pub fn set_mapped(&mut self, m: u32, mapped: bool) {
        let s = &mut self.mappings[m as usize];
        if s.mapped == mapped {
            return;
        }
        s.mapped = mapped;
        if !mapped {
            // zap_pte_range of the last mapper: no page table maps the file any more.
            s.mapped_blocks = Vec::new();
        }
        if s.kind != MappingKind::Anon {
            if mapped {
                self.stat.mapped += s.nrpages;
            } else {
                self.stat.mapped -= s.nrpages;
            }
        }
    }

    /// Whether the pages of mapping `m` count in NR_FILE_MAPPED.
    #[inline(always)]
    pub fn counts_mapped(&self, m: u32) -> bool {
        let s = &self.mappings[m as usize];
        s.mapped && s.kind != MappingKind::Anon
    }

    /// Forget an address_space whose pages have all been released.
    pub fn release_mapping(&mut self, id: u32) {
        debug_assert_eq!(self.mappings[id as usize].nrpages, 0);
        self.set_mapped(id, false);
        if self.mappings[id as usize].kind == MappingKind::Shmem {
            if let Some(i) = self.shmem_ids.iter().position(|&x| x == id) {
                self.shmem_ids.swap_remove(i);
            }
        }
        let m = &mut self.mappings[id as usize];
        self.nr_swapcache -= m.nr_swapcache;
        m.nr_swapcache = 0;
        m.live = false;
        let lone = m.i_pages.lone_entry(&self.xa);
        m.i_pages.destroy(&mut self.xa);
        m.i_pages.account_lone_entry(&mut self.xa, lone);
        m.swap_cache.destroy(&mut self.xa);
        m.extent = 0;
        self.free_mapping_ids.push(id);
    }

    /// The entry at `index` of mapping `m` (xa_load on mapping->i_pages).
    #[inline(always)]
    pub fn slot(&self, m: u32, index: u64) -> Slot {
        decode_slot(self.mappings[m as usize].i_pages.load(&self.xa, index))
    }
    /// Hints that the page-cache entry at (`m`, `index`) is wanted soon: `prefetch_slot`
    /// asks for the leaf line holding the entry; `prefetch_page`, issued after it has had
    /// time to arrive, reads the entry and asks for the page's frame record;
    /// `prefetch_page_neighbours` then for its LRU neighbours'. None changes any state.
    #[inline]
    pub fn prefetch_slot(&self, m: u32, index: u64) {
        self.mappings[m as usize].i_pages.prefetch(&self.xa, index);
    }
    #[inline]
    pub fn prefetch_page(&self, m: u32, index: u64) {
        match self.slot(m, index) {
            Slot::Page(p) => self.pages.prefetch(p),
            // A miss: its page will be stored in the leaf, whose counts change.
            _ => self.mappings[m as usize].i_pages.prefetch_cached_header(&self.xa, index),
        }
    }
    /// Before `prefetch_slot`: the way to the entry's leaf (the slot of its parent).
    #[inline]
    pub fn prefetch_slot_parent(&self, m: u32, index: u64) {
        self.mappings[m as usize].i_pages.prefetch_parent(&self.xa, index);
    }
    /// The entry's leaf line and the leaf's header (for a store there).
    #[inline]
    pub fn prefetch_slot_for_store(&self, m: u32, index: u64) {
        self.mappings[m as usize].i_pages.prefetch_for_store(&self.xa, index);
    }
    /// After `prefetch_page`: the LRU neighbours of the page (unlinked when it moves).
    #[inline]
    pub fn prefetch_page_neighbours(&self, m: u32, index: u64) {
        if let Slot::Page(p) = self.slot(m, index) {
            let (n, pr) = self.pages.links(p);
            self.pages.prefetch(n);
            self.pages.prefetch(pr);
        }
    }
    /// The three hints above for a replay that knows its requests ahead, without walking
    /// the tree again at each stage: `prefetch_slot_leaf` asks for the entry's leaf line
    /// and returns the leaf; `prefetch_page_in` reads the entry there (a hint: the leaf
    /// may have changed since) and asks for the page's record, or for the leaf's counts on
    /// a miss, and returns the page it saw; `prefetch_neighbours_of` asks for that page's
    /// LRU neighbours. None changes any state.
    #[inline]
    pub fn prefetch_slot_leaf(&self, m: u32, index: u64) -> u32 {
        self.mappings[m as usize].i_pages.prefetch_leaf(&self.xa, index)
    }
    #[inline]
    pub fn prefetch_page_in(&self, leaf: u32, index: u64) -> Option<Pfn> {
        match decode_slot(self.xa.entry_hint(leaf, index)) {
            Slot::Page(p) if p < self.pages.nr() => {
                self.pages.prefetch(p);
                Some(p)
            }
            _ => {
                self.xa.prefetch_header_hint(leaf);
                None
            }
        }
    }
    #[inline]
    pub fn prefetch_neighbours_of(&self, p: Pfn) {
        if p < self.pages.nr() {
            let (n, pr) = self.pages.links(p);
            self.pages.prefetch(n);
            self.pages.prefetch(pr);
        }
    }
    /// The page at `index` of mapping `m`, if one is cached there (filemap_get_entry).
    #[inline]
    pub fn page(&self, m: u32, index: u64) -> Option<Pfn> {
        match self.slot(m, index) {
            Slot::Page(p) => Some(p),
            _ => None,
        }
    }
    /// Store the encoded entry `e` at `index` of mapping `m` (0 erases it) and return the
    /// entry it replaced. The caller keeps the mapping's counts (nrpages, nrshadows,
    /// nr_swapped).
    #[inline(always)]
    pub fn set_slot(&mut self, m: u32, index: u64, e: u32) -> u32 {
        let s = &mut self.mappings[m as usize];
        if e != 0 && index >= s.extent {
            s.extent = (index + 1).max(s.extent * 3 / 2).max(64);
        }
        let lone = s.i_pages.lone_entry(&self.xa);
        let old = s.i_pages.store(&mut self.xa, index, e);
        s.i_pages.account_lone_entry(&mut self.xa, lone);
        old
    }
    /// The first entry of mapping `m` at an index in [from, end), with its index: ranges
    /// are walked in O(entries present) (xa_find).
    #[inline(always)]
    pub fn next_slot(&self, m: u32, from: u64, end: u64) -> Option<(u64, Slot)> {
        self.mappings[m as usize].i_pages.find(&self.xa, from, end).map(|(i, e)| (i, decode_slot(e)))
    }
    /// The swap slot of a swap-cache page at `index` of mapping `m`, if any.
    #[inline]
    pub fn swap_cache_slot(&self, m: u32, index: u64) -> Option<u32> {
        match self.mappings[m as usize].swap_cache.load(&self.xa, index) {
            0 => None,
            s => Some(s - 1),
        }
    }
    /// Pages in the swap cache, all mappings (SwapCached, "N pages in swap cache").
    pub fn nr_swapcache(&self) -> u64 {
        self.nr_swapcache
    }

    /// The sums of /proc/meminfo: swap-cache pages (SwapCached, kept as a count), and over
    /// the live shmem objects only, the pages of shared anonymous objects (resident and
    /// swapped) and the swapped pages of tmpfs files (Committed_AS).
    pub fn mapping_sums(&self) -> MappingSums {
        let mut s = MappingSums { swapcache: self.nr_swapcache, ..Default::default() };
        for &id in &self.shmem_ids {
            let m = &self.mappings[id as usize];
            if m.owner.is_some() {
                s.shared_anon += m.nrpages + m.nr_swapped;
            } else {
                s.shmem_swapped += m.nr_swapped;
            }
        }
        s
    }

    /// Record (or with None, forget) the swap slot of the swap-cache page at `index`.
    pub fn set_swap_cache_slot(&mut self, m: u32, index: u64, slot: Option<u32>) {
        if let Some(x) = slot {
            self.swap_map.set_owner(x, if index >> 32 == 0 { (m as u64) << 32 | index } else { swapfile::NO_OWNER });
        }
        let s = &mut self.mappings[m as usize];
        let old = s.swap_cache.store(&mut self.xa, index, slot.map_or(0, |x| x + 1));
        // The swap cache's own tree: the page's entry moves to its slot (a slot left keeps
        // the shadow it may have).
        if old != 0 && Some(old - 1) != slot {
            let shadow = self.swap_map.has_shadow(old - 1);
            self.swapper.set_page(old - 1, false, shadow);
        }
        if let Some(x) = slot {
            self.swapper.set_page(x, true, false);
        }
        match (old != 0, slot.is_some()) {
            (false, true) => {
                s.nr_swapcache += 1;
                self.nr_swapcache += 1;
            }
            (true, false) => {
                s.nr_swapcache -= 1;
                self.nr_swapcache -= 1;
            }
            _ => {}
        }
    }
    /// The first swap-cache entry of mapping `m` at an index >= `from`: (index, swap slot).
    pub fn next_swap_cache(&self, m: u32, from: u64) -> Option<(u64, u32)> {
        self.mappings[m as usize].swap_cache.find(&self.xa, from, u64::MAX).map(|(i, s)| (i, s - 1))
    }
    /// Leaves of the page-cache trees that hold only shadow entries (workingset_nodes). The
    /// swap cache's shadow-only leaves join the list only from 6.3 ("swap_state: update
    /// shadow_nodes for anonymous page"); every profile here is older (6.x follows 6.1).
    pub fn shadow_nodes(&self) -> u64 {
        self.xa.shadow_nodes()
    }

    /// Take a frame off the buddy lists (no watermark checks, no per-CPU list: see
    /// page_alloc). With the buddy lists empty a page of the per-CPU lists is given back
    /// first (drain_all_pages).
    #[inline]
    pub fn take_free(&mut self) -> Option<Pfn> {
        if self.free.nr_free == 0 {
            self.drain_one()?;
        }
        self.take_movable()
    }
    /// `take_free` repeated up to `max` times while the frames come from one buddy block
    /// (`FreeArea::take_run_from`): the first frame and how many, consecutive.
    pub fn take_free_run(&mut self, max: u64) -> Option<(Pfn, u64)> {
        if self.free.nr_free > 0 {
            if let Some(r) = self.free.take_run_from(&mut self.pages, pageblock::MigrateType::Movable, max) {
                return Some(r);
            }
        }
        self.take_free().map(|p| (p, 1))
    }
    /// One page of the longest CPU lists back to the buddy lists (None: every list is
    /// empty).
    fn drain_one(&mut self) -> Option<()> {
        let cpu = self.pcp.fullest()?;
        self.free_pcppages_bulk(cpu, 1, pageblock::MigrateType::Unmovable, 0);
        Some(())
    }
    /// free_pcppages_bulk: up to `nr` pages of `cpu`'s lists back to the buddy lists,
    /// each merged onto the list of the type it was freed with (`first`: the list drained
    /// first, 5.14+). Returns how many went; the caller holds zone->lock for them.
    pub(crate) fn free_pcppages_bulk(&mut self, cpu: usize, nr: u32, first: pageblock::MigrateType, first_order: u32) -> u32 {
        let Mm { pcp, pages, free, .. } = self;
        pcp.free_bulk(pages, cpu, nr, first, first_order, |pages, p, order, mt| free.add_order(pages, p, order, mt))
    }
    /// rmqueue_bulk for blocks of order `order` (1-3, 6.x): up to `nr` blocks for
    /// allocations of type `mt` from the buddy lists (__rmqueue at that order, with its
    /// fallback), appended in order to `cpu`'s list for them. Returns the frames that
    /// came; the caller holds zone->lock for them.
    pub(crate) fn rmqueue_bulk_order(&mut self, cpu: usize, mt: pageblock::MigrateType, order: u32, nr: u32) -> u32 {
        debug_assert!(order > 0);
        let mut n = 0;
        while n < nr {
            let Some(p) = self.take_typed_order(mt, order) else { break };
            self.pcp.push_order(&mut self.pages, cpu, p, mt, order, true);
            n += 1;
        }
        self.pcp.bulk_alloc += (n as u64) << order;
        n << order
    }
    /// rmqueue_bulk: up to `nr` pages for allocations of type `mt` from the buddy lists
    /// (__rmqueue, with its fallback), appended in order to `cpu`'s list for `mt`.
    /// Returns how many came; the caller holds zone->lock for them.
    /// `cold` (2.6.39's __GFP_COLD): each page goes before the one taken before it
    /// ("list_add_tail(&page->lru, list); list = &page->lru"), so that the list, refilled
    /// when empty, gives them from its tail in the order taken.
    pub(crate) fn rmqueue_bulk(&mut self, cpu: usize, mt: pageblock::MigrateType, nr: u32, cold: bool) -> u32 {
        debug_assert!(!cold || self.pcp.list_empty(cpu, mt));
        let mut n = 0;
        while n < nr && self.free.nr_free > 0 {
            // __rmqueue per frame; a buddy block whose frames all go is taken whole
            // (`FreeArea::take_run_from`: the same frames, in the same order).
            let got = match self.free.take_run_from(&mut self.pages, mt, (nr - n) as u64) {
                Some(run) => Some(run),
                None => self.rmqueue_fallback(mt).map(|p| (p, 1)),
            };
            let Some((p0, k)) = got else { break };
            for p in p0..p0 + k as Pfn {
                self.pcp.push(&mut self.pages, cpu, p, mt, !cold);
            }
            n += k as u32;
        }
        self.pcp.bulk_alloc += n as u64;
        n
    }
    /// free_unref_page_commit: the free block of order `order` headed by `p` (its frames
    /// own nothing) joins the head of `cpu`'s list for its pageblock's type and order
    /// (`cold`: the tail). The caller checks the lists' length.
    #[inline]
    pub(crate) fn pcp_put_order(&mut self, cpu: usize, p: Pfn, order: u32, cold: bool) -> pageblock::MigrateType {
        for q in p..p + (1 << order) {
            debug_assert_eq!(self.pages.lru(q), Lru::None);
            self.pages.set_owner(q, 0, 0);
            self.pages.set_lruvec_of(q, ROOT_LRUVEC);
        }
        let mt = self.pageblocks.of(p as u64);
        self.pcp.push_order(&mut self.pages, cpu, p, mt, order, cold);
        mt
    }
    /// A movable allocation (__rmqueue): the movable list, else a fallback to the
    /// reclaimable and unmovable blocks (`rmqueue_fallback`).
    #[inline]
    fn take_movable(&mut self) -> Option<Pfn> {
        if let Some(p) = self.free.take(&mut self.pages) {
            return Some(p);
        }
        self.rmqueue_fallback(pageblock::MigrateType::Movable)
    }
    /// boost_watermark (5.0+): a fragmentation event raises the watermarks by a pageblock,
    /// up to watermark_boost_factor / 10000 of the high watermark (at least a pageblock);
    /// not in a zone smaller than four pageblocks. It flags the zone for the allocation
    /// to wake kswapd (ZONE_BOOSTED_WATERMARK, ALLOC_KSWAPD).
    pub(crate) fn boost_watermark(&mut self) {
        let pb = compaction::PAGEBLOCK_NR_PAGES;
        if self.watermark_boost_factor == 0 || pb * 4 > self.managed {
            return;
        }
        // mult_frac(_watermark[WMARK_HIGH], watermark_boost_factor, 10000)
        let max_boost = self.wmark.high * self.watermark_boost_factor / 10000;
        if max_boost == 0 {
            return;
        }
        self.watermark_boost = (self.watermark_boost + pb).min(max_boost.max(pb));
        self.zone_boosted = true;
    }
    /// The watermarks in force: the zone's plus its boost (min_wmark_pages,
    /// low_wmark_pages, high_wmark_pages).
    #[inline]
    pub fn wmark_pages(&self) -> crate::mm::page_alloc::Watermarks {
        let b = self.watermark_boost;
        let w = self.wmark;
        crate::mm::page_alloc::Watermarks { min_free_kbytes: w.min_free_kbytes, min: w.min + b, low: w.low + b, high: w.high + b }
    }
    /// Return a frame to the free list of its pageblock's type (__free_one_page;
    /// `Kernel::free_page` decides whether it stays on a CPU's list).
    #[inline]
    pub fn put_free(&mut self, p: Pfn) {
        debug_assert_eq!(self.pages.lru(p), Lru::None);
        self.pages.set_owner(p, 0, 0);
        self.pages.set_lruvec_of(p, ROOT_LRUVEC);
        let l = self.pageblocks.of(p as u64);
        self.free.add(&mut self.pages, p, l);
    }

    /// A kernel allocation of type `t` (__rmqueue): a frame of its own type's list
    /// (__rmqueue_smallest), else a fallback to the other types' blocks
    /// (`rmqueue_fallback`), which may take a block over.
    pub(crate) fn take_typed(&mut self, t: pageblock::MigrateType) -> Option<Pfn> {
        if self.free.nr_free == 0 {
            self.drain_one()?;
        }
        self.take_typed_buddy(t)
    }
    /// __rmqueue for type `t` on the buddy lists alone.
    fn take_typed_buddy(&mut self, t: pageblock::MigrateType) -> Option<Pfn> {
        if let Some(p) = self.free.take_from(&mut self.pages, t) {
            return Some(p);
        }
        self.rmqueue_fallback(t)
    }

    /// A block of order `order` for an allocation of type `t` from the buddy lists
    /// (__rmqueue at that order: its own type's lists, else a fallback); its head, every
    /// frame allocated. No per-CPU list (6.x's lists of orders 1-3 are
    /// `Kernel::rmqueue_order`'s).
    pub(crate) fn take_typed_order(&mut self, t: pageblock::MigrateType, order: u32) -> Option<Pfn> {
        if order == 0 {
            return self.take_typed(t);
        }
        if let Some(p) = self.free.take_order_from(&mut self.pages, t, order) {
            return Some(p);
        }
        self.rmqueue_fallback_order(t, order)
    }

    /// __zone_watermark_ok for a request of 2^`order` frames against `mark` (the lowmem
    /// reserve is 0: one zone). Free pages less the request's own but one must
    /// stay above the mark; then, before 4.4, the free pages of each lower order are taken
    /// away with the mark halved per order ("for (o = 0; o < order; o++) { free_pages -=
    /// z->free_area[o].nr_free << o; min >>= 1; ... }"), and since 4.4 a free block of
    /// `order` or more must be on an unmovable, movable or reclaimable list (2.6.39's
    /// MIGRATE_RESERVE is usable by the fallback only).
    pub fn watermark_ok_order(&self, order: u32, mark: u64) -> bool {
        let free = self.nr_free() as i64 - (1i64 << order) + 1;
        let mut min = mark as i64;
        if free <= min {
            return false;
        }
        if order == 0 {
            return true;
        }
        if self.watermark_lower_orders {
            let mut free = free;
            for o in 0..order {
                free -= (self.free.nr_free_blocks(o) << o) as i64;
                min >>= 1;
                if free <= min {
                    return false;
                }
            }
            return true;
        }
        use pageblock::MigrateType::{Movable, Reclaimable, Unmovable};
        self.free.has_block(order, &[Unmovable, Movable, Reclaimable])
    }

    /// Free the block of order `order` headed by `p`, every frame of it held by the kernel,
    /// to the buddy lists of its pageblock's type (__free_one_page at its order; no per-CPU
    /// list: boot and tests, `Kernel::pcp_free_order` is the allocator's path).
    pub(crate) fn free_kernel_block(&mut self, p: Pfn, order: u32) {
        self.disown_kernel_block(p, order);
        let l = self.pageblocks.of(p as u64);
        self.free.add_order(&mut self.pages, p, order, l);
    }
    /// Every frame of the block of order `order` at `p` leaves its owner, to be freed by
    /// the caller.
    pub(crate) fn disown_kernel_block(&mut self, p: Pfn, order: u32) {
        for q in p..p + (1 << order) {
            self.disown_kernel_page(q);
            self.pages.set_owner(q, 0, 0);
            self.pages.set_lruvec_of(q, ROOT_LRUVEC);
        }
    }

    /// A frame for the kernel's own use by `owner` from the buddy lists (no watermark
    /// checks, no per-CPU list: boot and tests; `Kernel::alloc_kernel_page` is the
    /// allocator's path).
    pub fn take_kernel(&mut self, owner: KernelOwner) -> Option<Pfn> {
        let p = self.take_typed(self.kernel_migratetype(owner))?;
        self.own_kernel_page(p, owner);
        Some(p)
    }
    /// The migrate type of `owner`'s allocations: reclaimable slab is MIGRATE_RECLAIMABLE
    /// (__GFP_RECLAIMABLE); zram's zsmalloc pages MIGRATE_MOVABLE since 4.8 (zram_write_page's
    /// zs_malloc(..., __GFP_HIGHMEM | __GFP_MOVABLE), zsmalloc page migration); other kernel
    /// memory MIGRATE_UNMOVABLE (gfp_migratetype).
    pub(crate) fn kernel_migratetype(&self, owner: KernelOwner) -> pageblock::MigrateType {
        match owner {
            KernelOwner::Zram if self.zsmalloc_movable => pageblock::MigrateType::Movable,
            KernelOwner::Slab(id) if self.slab.caches.get(id as usize).is_some_and(|c| c.reclaimable()) => pageblock::MigrateType::Reclaimable,
            _ => pageblock::MigrateType::Unmovable,
        }
    }
    /// Allocated frame `p` now belongs to `owner` (on its list of kernel pages).
    pub(crate) fn own_kernel_page(&mut self, p: Pfn, owner: KernelOwner) {
        let c = owner.code();
        debug_assert!(c < NR_KERNEL_OWNERS);
        self.pages.set_owner(p, 0, c as u64);
        let h = self.kernel.base + c as u32;
        lru::link_after(&mut self.pages, h, p);
        self.kernel.nr[c] += 1;
    }
    /// Kernel page `p` leaves its owner, to be freed by the caller.
    pub(crate) fn disown_kernel_page(&mut self, p: Pfn) {
        let c = self.kernel_owner(p).code();
        debug_assert!(self.pages.mapping(p) == 0 && self.pages.lru(p) == Lru::None && self.kernel.nr[c] > 0);
        lru::unlink(&mut self.pages, p);
        self.kernel.nr[c] -= 1;
    }
    /// Who holds kernel page `p`.
    #[inline]
    pub fn kernel_owner(&self, p: Pfn) -> KernelOwner {
        KernelOwner::from_code(self.pages.index(p) as usize)
    }
    /// Free one specific kernel page (__free_pages of a slab page, a page table, ...).
    pub fn free_kernel_page(&mut self, p: Pfn) {
        self.disown_kernel_page(p);
        self.put_free(p);
    }
    /// The most recently taken page of `owner`, if it holds any.
    pub fn last_kernel_page(&self, owner: KernelOwner) -> Option<Pfn> {
        let h = self.kernel.base + owner.code() as u32;
        let p = self.pages.next(h);
        if p == h { None } else { Some(p) }
    }
    /// Free the most recently taken page of `owner`; false if it holds none.
    pub fn free_last_kernel_page(&mut self, owner: KernelOwner) -> bool {
        match self.last_kernel_page(owner) {
            Some(p) => {
                self.free_kernel_page(p);
                true
            }
            None => false,
        }
    }

    /// Count every frame exactly once: free, on an LRU list, or held by the kernel.
    /// Returns a description of the first broken invariant.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.free.check_blocks(&self.pages)?;
        if self.pages.nr() as u64 <= 64 * compaction::PAGEBLOCK_NR_PAGES {
            self.pcp.check_lists(&self.pages)?;
        }
        let listed: u64 = self.lruvecs.iter().map(|v| v.nr_pages()).sum::<u64>() + self.nr_free_frames();
        let held = self.kernel.total();
        let batched = self.lru_add.total;
        if listed + held + self.isolated() + batched != self.managed {
            return Err(format!(
                "frames: {listed} listed + {held} kernel + {} isolated + {batched} in LRU-add batches != {} managed",
                self.isolated(),
                self.managed
            ));
        }
        let in_cache: u64 = self.mappings.iter().filter(|m| m.live).map(|m| m.nrpages).sum();
        let lru_pages = self.file_lru() + self.anon_lru() + self.lru_len(Lru::Unevictable);
        // Every page-cache page is on an LRU list, isolated by reclaim or in an LRU-add
        // batch (isolated and batched pages also include ones already out of their
        // mapping, not yet freed).
        if in_cache < lru_pages || in_cache > lru_pages + self.isolated() + batched {
            return Err(format!(
                "{in_cache} pages in address spaces but {lru_pages} on LRU lists, {} isolated and {batched} in LRU-add batches",
                self.isolated()
            ));
        }
        let swapcache: u64 = self.mappings.iter().filter(|m| m.live).map(|m| m.nr_swapcache).sum();
        if swapcache != self.nr_swapcache {
            return Err(format!("{swapcache} swap-cache pages in the mappings but {} counted", self.nr_swapcache));
        }
        if self.swapper.layout() != swapper_space::SwapperLayout::NoTree && self.swapper.nr_pages() != self.nr_swapcache {
            return Err(format!("{} swap-cache pages in the swap cache's trees but {} counted", self.swapper.nr_pages(), self.nr_swapcache));
        }
        if self.swap_map.state.len() <= 1 << 16 {
            self.swapper.check()?;
        }
        let shmem = self.mappings.iter().filter(|m| m.live && m.kind == MappingKind::Shmem).count();
        if shmem != self.shmem_ids.len() {
            return Err(format!("{shmem} live shmem mappings but {} listed", self.shmem_ids.len()));
        }
        // As many listed as live, each listed one live shmem: the list is exactly those.
        if let Some(&id) = self.shmem_ids.iter().find(|&&id| !(self.mappings[id as usize].live && self.mappings[id as usize].kind == MappingKind::Shmem)) {
            return Err(format!("mapping {id} is listed as live shmem"));
        }
        for (id, m) in self.mappings.iter().enumerate().filter(|(_, m)| m.live) {
            if m.i_pages.len() != m.nrpages + m.nrshadows + m.nr_swapped {
                return Err(format!(
                    "mapping {id}: {} index entries but {} pages + {} shadows + {} swap entries",
                    m.i_pages.len(),
                    m.nrpages,
                    m.nrshadows,
                    m.nr_swapped
                ));
            }
            if m.swap_cache.len() != m.nr_swapcache {
                return Err(format!("mapping {id}: {} swap-cache entries but {} counted", m.swap_cache.len(), m.nr_swapcache));
            }
        }
        let dirty: u64 = self.mappings.iter().filter(|m| m.live).map(|m| m.nr_dirty).sum();
        if dirty != self.stat.dirty {
            return Err(format!("per-mapping dirty {dirty} != node dirty {}", self.stat.dirty));
        }
        let wb: u64 = self.mappings.iter().filter(|m| m.live).map(|m| m.nr_writeback).sum();
        if wb != self.stat.writeback {
            return Err(format!("per-mapping writeback {wb} != node writeback {}", self.stat.writeback));
        }
        let mapped: u64 = self.mappings.iter().filter(|m| m.live && m.mapped && m.kind != MappingKind::Anon).map(|m| m.nrpages).sum();
        if mapped != self.stat.mapped {
            return Err(format!("resident pages of mapped files and shmem {mapped} != node Mapped {}", self.stat.mapped));
        }
        Ok(())
    }
    /// Walk every page index (O(entries)): each tree is well formed, each page entry names a
    /// frame that records the same mapping and index and is on an LRU list, each frame on
    /// an LRU list is in exactly one index, and the shadow list holds exactly the
    /// shadow-only leaves. For tests and debugging.
    pub fn check_index(&self) -> Result<(), String> {
        let mut pages = 0u64;
        let mut values = 0u64;
        for (id, m) in self.mappings.iter().enumerate() {
            if !m.live {
                if !m.i_pages.is_empty() || !m.swap_cache.is_empty() {
                    return Err(format!("released mapping {id} still has index nodes"));
                }
                continue;
            }
            m.i_pages.check(&self.xa).map_err(|e| format!("mapping {id}: {e}"))?;
            m.swap_cache.check(&self.xa).map_err(|e| format!("mapping {id} swap cache: {e}"))?;
            let mut at = 0;
            while let Some((i, e)) = m.i_pages.find(&self.xa, at, u64::MAX) {
                match decode_slot(e) {
                    Slot::Page(p) => {
                        if self.pages.mapping(p) != id as u32 || self.pages.index(p) != i {
                            return Err(format!(
                                "mapping {id} index {i} holds frame {p}, which records mapping {} index {}",
                                self.pages.mapping(p),
                                self.pages.index(p)
                            ));
                        }
                        match self.pages.lru(p) {
                            // Waiting in an LRU-add batch.
                            Lru::None if self.pages.batched(p) => {}
                            Lru::None | Lru::Free => return Err(format!("frame {p} at mapping {id} index {i} is on no LRU list")),
                            // Isolated by a reclaim path: off the lists for a while; one it
                            // reclaimed has already left its index too, so these are not
                            // compared with the list lengths.
                            Lru::Isolated => {}
                            _ => pages += 1,
                        }
                    }
                    Slot::Shadow(_) | Slot::Swap(_) => values += 1,
                    Slot::Empty => unreachable!(),
                }
                at = i + 1;
            }
        }
        let lru_pages = self.file_lru() + self.anon_lru() + self.lru_len(Lru::Unevictable);
        if pages != lru_pages {
            return Err(format!("{pages} listed page entries in the indexes but {lru_pages} pages on LRU lists"));
        }
        let _ = values;
        Ok(())
    }

    /// Pages taken off the LRU by reclaim and not yet put back or freed
    /// (NR_ISOLATED_ANON + NR_ISOLATED_FILE).
    pub fn isolated(&self) -> u64 {
        self.stat.isolated_anon + self.stat.isolated_file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_table_the_model_cannot_index_is_an_error_not_an_abort() {
        let w = Watermarks { min_free_kbytes: 0, min: 0, low: 0, high: 0 };
        // Frames are u32 (NIL is u32::MAX): 2^32 frames (16 TiB of 4 KiB pages) do not fit.
        let e = Mm::try_new(1 << 32, w).err().expect("refused");
        assert!(e.contains("more than the model can index"), "{e}");
        assert!(Mm::try_new(4096, w).is_ok());
    }

    fn mm() -> Mm {
        Mm::try_new(4096, Watermarks { min_free_kbytes: 0, min: 0, low: 0, high: 0 }).unwrap()
    }

    /// 2.6.39's __GFP_COLD: a list refilled for a cold allocation gives its pages from the
    /// tail in the order taken from the buddy lists, as a hot refill does from the head; a
    /// page reclaim freed cold is the next cold allocation's.
    #[test]
    fn cold_allocations_take_the_tail_in_the_order_refilled() {
        use super::pcp::{Pagesets, PcpRule};
        use pageblock::MigrateType::Movable;
        let mut hot = mm();
        hot.pcp = Pagesets::new(PcpRule::SixBatches { cap_kb: 512, cold: true }, 1, 4096, 0);
        let mut cold = mm();
        cold.pcp = Pagesets::new(PcpRule::SixBatches { cap_kb: 512, cold: true }, 1, 4096, 0);
        assert_eq!(hot.rmqueue_bulk(0, Movable, 4, false), 4);
        assert_eq!(cold.rmqueue_bulk(0, Movable, 4, true), 4);
        let h: Vec<Pfn> = (0..4).map(|_| hot.pcp.take(&mut hot.pages, 0, Movable, false).unwrap()).collect();
        let c: Vec<Pfn> = (0..4).map(|_| cold.pcp.take(&mut cold.pages, 0, Movable, true).unwrap()).collect();
        assert_eq!(h, c, "the same pages in the same order");
        assert!(h.windows(2).all(|w| w[1] == w[0] + 1), "{h:?}");
        // A page freed cold goes to the tail: the next cold allocation takes it, a hot one
        // the head.
        assert_eq!(cold.rmqueue_bulk(0, Movable, 2, true), 2);
        cold.pcp_put_order(0, c[0], 0, true);
        assert_eq!(cold.pcp.take(&mut cold.pages, 0, Movable, true), Some(c[0]));
        assert_ne!(cold.pcp.take(&mut cold.pages, 0, Movable, false), Some(c[0]));
        cold.pcp.check_lists(&cold.pages).unwrap();
    }

    /// zram's pages come from movable pageblocks since 4.8 (zsmalloc, __GFP_MOVABLE) and
    /// from unmovable ones on 2.6.39 (xvmalloc); the other kernel pages stay unmovable.
    #[test]
    fn zram_pages_are_movable_since_zsmalloc() {
        use pageblock::MigrateType::{Movable, Unmovable};
        let mut m = mm();
        assert_eq!(m.kernel_migratetype(KernelOwner::Zram), Unmovable);
        m.zsmalloc_movable = true;
        assert_eq!(m.kernel_migratetype(KernelOwner::Zram), Movable);
        assert_eq!(m.kernel_migratetype(KernelOwner::Other), Unmovable);
        let p = m.take_kernel(KernelOwner::Zram).unwrap();
        assert_eq!(m.pageblocks.of(p as u64), Movable);
        assert_eq!(m.kernel_owner(p), KernelOwner::Zram);
        assert_eq!(m.kernel.count(KernelOwner::Zram), 1);
        m.check_invariants().unwrap();
    }

    #[test]
    fn kernel_pages_know_their_owner_and_one_can_be_freed() {
        let mut mm = mm();
        let a = mm.take_kernel(KernelOwner::Slab(0)).unwrap();
        let b = mm.take_kernel(KernelOwner::PageTables).unwrap();
        let c = mm.take_kernel(KernelOwner::Slab(0)).unwrap();
        assert_eq!(mm.kernel_owner(b), KernelOwner::PageTables);
        assert_eq!(mm.kernel.count(KernelOwner::Slab(0)), 2);
        assert_eq!(mm.kernel.count(KernelOwner::PageTables), 1);
        mm.free_kernel_page(a);
        assert_eq!(mm.kernel.count(KernelOwner::Slab(0)), 1);
        assert_eq!(mm.last_kernel_page(KernelOwner::Slab(0)), Some(c));
        assert!(mm.free_last_kernel_page(KernelOwner::Slab(0)));
        assert!(!mm.free_last_kernel_page(KernelOwner::Slab(0)));
        assert_eq!(mm.nr_free(), 4095);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn lruvecs_are_created_up_to_the_max_and_reused() {
        let mut mm = mm();
        let mut ids = Vec::new();
        while let Some(id) = mm.new_lruvec() {
            ids.push(id);
        }
        assert_eq!(ids.len(), MAX_LRUVECS - 1, "all but the root");
        mm.free_lruvec(ids[5]);
        assert_eq!(mm.new_lruvec(), Some(ids[5]));
        // Lists of different lruvecs do not share heads.
        let p = mm.take_free().unwrap();
        let q = mm.take_free().unwrap();
        let (x, y) = (ids[0] as usize, ids[1] as usize);
        mm.lruvecs[x].add_head(&mut mm.pages, p, Lru::InactiveFile);
        mm.lruvecs[y].add_head(&mut mm.pages, q, Lru::InactiveFile);
        assert_eq!(mm.lruvecs[x].collect(&mm.pages, Lru::InactiveFile), vec![p]);
        assert_eq!(mm.lru_len(Lru::InactiveFile), 2, "node-wide length sums the lruvecs");
    }
}
