//! Page frames (the kernel's `struct page`, cut to what reclaim needs): one 16-byte record
//! per frame — 16 bytes of host memory per simulated page — holding the four u32 words that
//! the LRU and page-cache paths touch together, so that linking, unlinking or testing a page
//! costs one cache line, not four:
//!
//! * `next`, `prev`: the intrusive LRU (or free-list) links, as frame numbers;
//! * `map`: the owning address_space id (26 bits) and 6 flag bits (reclaim, LRU list,
//!   referenced, dirty);
//! * `idx`: the low 28 bits of the page's index in its address_space and 4 flag bits
//!   (writeback, young, workingset, locked); in a free block's head, its order and list.
//!
//! The table is allocated zeroed (calloc: the host commits its memory as frames are first
//! written), and a frame that was never used is all zeros; the zone's free lists hand out
//! blocks never used without having written them (`buddy::FreeArea`), so a machine costs
//! host memory for the frames it has touched, not for its RAM size.
//!
//! Indices are 64-bit (`MAX_INDEX`: any byte offset of a 64-bit file): a page at an index of
//! 2^28 or more (1 TiB and beyond in its file or block device) keeps the high bits of its
//! index in a side table keyed by frame, `Pages::high`. Only such frames pay for it, and the
//! entry goes whenever the frame is bound to another owner or freed (`set_owner`).
//!
//! Invariant: a frame is in exactly one place — a free buddy block (its head on a free
//! list), one LRU list, isolated for the length of one reclaim step, held by the kernel, or
//! free and never used (see `buddy::FreeArea`).

pub type Pfn = u32;
pub const NIL: Pfn = u32::MAX;
/// The `next` link of a page waiting in a per-CPU LRU-add batch (`Pages::set_batched`):
/// never a frame (Mm::try_new keeps frames below it).
pub const BATCH_LINK: Pfn = NIL - 1;

/// Which LRU list a page is on (`enum lru_list`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Lru {
    None = 0,
    InactiveAnon = 1,
    ActiveAnon = 2,
    InactiveFile = 3,
    ActiveFile = 4,
    Unevictable = 5,
    Free = 6,
    /// Taken off its LRU list by reclaim (isolate_lru_folios), on no list until put back
    /// or freed.
    Isolated = 7,
}

impl Lru {
    pub const EVICTABLE: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];
    #[inline]
    pub fn from_u8(v: u8) -> Lru {
        match v {
            1 => Lru::InactiveAnon,
            2 => Lru::ActiveAnon,
            3 => Lru::InactiveFile,
            4 => Lru::ActiveFile,
            5 => Lru::Unevictable,
            6 => Lru::Free,
            7 => Lru::Isolated,
            _ => Lru::None,
        }
    }
    #[inline]
    pub fn is_file(self) -> bool {
        matches!(self, Lru::InactiveFile | Lru::ActiveFile)
    }
    #[inline]
    pub fn is_active(self) -> bool {
        matches!(self, Lru::ActiveAnon | Lru::ActiveFile)
    }
    /// The list a page of this kind and activity belongs on.
    #[inline]
    pub fn of(file: bool, active: bool) -> Lru {
        match (file, active) {
            (false, false) => Lru::InactiveAnon,
            (false, true) => Lru::ActiveAnon,
            (true, false) => Lru::InactiveFile,
            (true, true) => Lru::ActiveFile,
        }
    }
}

const MAP_BITS: u32 = 26;
const MAP_MASK: u32 = (1 << MAP_BITS) - 1;
/// PG_reclaim: reclaim wants the page freed as soon as its writeback completes
/// (folio_end_writeback -> folio_rotate_reclaimable).
const PG_RECLAIM: u32 = 1 << 26;
const LRU_SHIFT: u32 = 27; // 3 bits: 27..29
const LRU_MASK: u32 = 0b111 << LRU_SHIFT;
const PG_REFERENCED: u32 = 1 << 30;
const PG_DIRTY: u32 = 1 << 31;

const IDX_BITS: u32 = 28;
const IDX_MASK: u32 = (1 << IDX_BITS) - 1;
const PG_WRITEBACK: u32 = 1 << 28;
const PG_YOUNG: u32 = 1 << 29;
const PG_WORKINGSET: u32 = 1 << 30;
const PG_LOCKED: u32 = 1 << 31;
/// In a free frame's `idx`: the frame heads a free buddy block (PageBuddy); the order and
/// free list sit in the bits below.
const BUDDY_HEAD: u32 = 1 << 8;
/// In a frame on no list with no owner: the frame is on a CPU's free list (per_cpu_pages);
/// the migrate type it was freed with sits in the bits below (set_pcppage_migratetype).
/// Kernel pages keep their owner's code (< 64) there.
const PCP_FRAME: u32 = 1 << 9;

/// Largest address_space id a frame can record.
pub const MAX_MAPPING: u32 = MAP_MASK;
/// Largest file size (MAX_LFS_FILESIZE on 64-bit: LLONG_MAX, include/linux/fs.h), and so
/// the largest page index a file or block device can have; frames and the page index take
/// every index up to it.
pub const MAX_LFS_FILESIZE: u64 = i64::MAX as u64;
pub const MAX_INDEX: u64 = MAX_LFS_FILESIZE / super::PAGE_SIZE;
const _: () = assert!(MAX_INDEX <= super::xarray::XA_MAX_INDEX);

/// One frame: the words the LRU and page-cache paths touch together, in one 16-byte,
/// 16-byte-aligned record (a quarter of a host cache line, never split across two).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
struct Frame {
    next: Pfn,
    prev: Pfn,
    map: u32,
    idx: u32,
}
const _: () = assert!(std::mem::size_of::<Frame>() == Pages::HOST_BYTES_PER_PAGE);
// SAFETY: four u32s; an all-zero frame is one on no list, of no mapping.
unsafe impl crate::host::ZeroValid for Frame {}

/// The frame table. List heads are extra frames past the last real one (sentinels).
pub struct Pages {
    f: Vec<Frame>,
    /// index >> 28 of the frames whose index does not fit in `idx` (few: pages past 1 TiB
    /// of their file). Looked up, never iterated.
    high: std::collections::HashMap<Pfn, u64>,
    /// The lruvec of each frame's memory cgroup (folio_memcg -> mem_cgroup_lruvec), 2 bytes
    /// per frame, allocated when the first page is charged to a cgroup's own lruvec; empty:
    /// every page is on the root lruvec.
    lruvec: Vec<u16>,
    nr: u32,
}

macro_rules! flag {
    ($get:ident, $set:ident, $clear:ident, $field:ident, $bit:expr) => {
        #[inline]
        pub fn $get(&self, p: Pfn) -> bool {
            self.f[p as usize].$field & $bit != 0
        }
        #[inline]
        pub fn $set(&mut self, p: Pfn) {
            self.f[p as usize].$field |= $bit;
        }
        #[inline]
        pub fn $clear(&mut self, p: Pfn) {
            self.f[p as usize].$field &= !$bit;
        }
    };
}

impl Pages {
    /// `nr` real frames plus `sentinels` list heads.
    pub fn new(nr: u32, sentinels: u32) -> Pages {
        Pages::try_new(nr, sentinels).expect("frame table allocation")
    }
    /// As `new`, but a host that cannot hold the table is an error, not an abort. Every
    /// frame starts zeroed (no owner, no flags, on no list, links 0): list heads are set up
    /// by their lists, and a frame gets its links when it is first put on a list.
    pub fn try_new(nr: u32, sentinels: u32) -> Result<Pages, String> {
        let total = nr as usize + sentinels as usize;
        // Zeroed without touching the memory: the host commits pages as frames are first
        // written.
        let f = crate::host::try_zeroed_vec::<Frame>(total)?;
        // Frames are touched at random (LRU neighbours, page-cache hits): huge host pages.
        super::xarray::advise_hugepages(&f);
        Ok(Pages { f, high: Default::default(), lruvec: Vec::new(), nr })
    }
    pub fn nr(&self) -> u32 {
        self.nr
    }
    /// The lruvec page `p` belongs to (folio_lruvec).
    #[inline]
    pub fn lruvec_of(&self, p: Pfn) -> u16 {
        if self.lruvec.is_empty() { 0 } else { self.lruvec[p as usize] }
    }
    /// Record the lruvec of page `p` (the caller moves it between lists).
    #[inline]
    pub fn set_lruvec_of(&mut self, p: Pfn, id: u16) {
        if self.lruvec.is_empty() {
            if id == 0 {
                return;
            }
            self.lruvec = vec![0; self.f.len()];
            super::xarray::advise_hugepages(&self.lruvec);
        }
        self.lruvec[p as usize] = id;
    }
    /// Whether any frame was ever given a lruvec other than the root's.
    pub fn has_lruvecs(&self) -> bool {
        !self.lruvec.is_empty()
    }
    /// Host bytes used per simulated frame by this table.
    pub const HOST_BYTES_PER_PAGE: usize = 16;

    /// The next frame on the list frame `p` is on (list_head.next).
    #[inline]
    pub fn next(&self, p: Pfn) -> Pfn {
        self.f[p as usize].next
    }
    /// The previous frame on the list frame `p` is on (list_head.prev).
    #[inline]
    pub fn prev(&self, p: Pfn) -> Pfn {
        self.f[p as usize].prev
    }
    #[inline]
    pub fn set_next(&mut self, p: Pfn, n: Pfn) {
        self.f[p as usize].next = n;
    }
    #[inline]
    pub fn set_prev(&mut self, p: Pfn, n: Pfn) {
        self.f[p as usize].prev = n;
    }
    /// A hint that frame `p`'s record will be used soon (changes nothing).
    #[inline]
    pub fn prefetch(&self, p: Pfn) {
        super::xarray::prefetch(self.f.as_ptr().wrapping_add(p as usize));
    }
    /// Both links of `p` (one record read).
    #[inline]
    pub fn links(&self, p: Pfn) -> (Pfn, Pfn) {
        let f = &self.f[p as usize];
        (f.next, f.prev)
    }
    /// Set both links of `p` (one record written).
    #[inline]
    pub fn set_links(&mut self, p: Pfn, next: Pfn, prev: Pfn) {
        let f = &mut self.f[p as usize];
        f.next = next;
        f.prev = prev;
    }

    #[inline]
    pub fn mapping(&self, p: Pfn) -> u32 {
        self.f[p as usize].map & MAP_MASK
    }
    #[inline]
    pub fn index(&self, p: Pfn) -> u64 {
        let low = (self.f[p as usize].idx & IDX_MASK) as u64;
        if self.high.is_empty() {
            return low;
        }
        match self.high.get(&p) {
            Some(&h) => h << IDX_BITS | low,
            None => low,
        }
    }
    /// Frames whose index keeps its high bits in the side table.
    pub fn high_index_frames(&self) -> usize {
        self.high.len()
    }
    /// Bind a frame to (mapping, index), clearing every flag.
    #[inline]
    pub fn set_owner(&mut self, p: Pfn, mapping: u32, index: u64) {
        debug_assert!(mapping <= MAP_MASK);
        assert!(index <= MAX_INDEX, "page index {index} beyond {MAX_INDEX}");
        let f = &mut self.f[p as usize];
        f.map = mapping & MAP_MASK;
        f.idx = index as u32 & IDX_MASK;
        if index > IDX_MASK as u64 {
            self.high.insert(p, index >> IDX_BITS);
        } else if !self.high.is_empty() {
            self.high.remove(&p);
        }
    }
    /// A free frame inside a free buddy block, not its head: free, no owner, no flags, on
    /// no list.
    #[inline]
    pub fn set_free_frame(&mut self, p: Pfn) {
        self.f[p as usize] = Frame { next: NIL, prev: NIL, map: (Lru::Free as u32) << LRU_SHIFT, idx: 0 };
    }
    /// An allocated frame as the allocator hands it out: no owner, no flags, on no list.
    #[inline]
    pub fn set_allocated(&mut self, p: Pfn) {
        self.f[p as usize] = Frame { next: NIL, prev: NIL, map: 0, idx: 0 };
    }
    /// Free frame `p` heads a free buddy block of `order` on free list `list`
    /// (set_buddy_order: PageBuddy), kept in its `idx` word; its links are the list's.
    #[inline]
    pub fn set_buddy_head(&mut self, p: Pfn, order: u32, list: u32) {
        debug_assert!(order < 16 && list < 16);
        let f = &mut self.f[p as usize];
        f.map = (Lru::Free as u32) << LRU_SHIFT;
        f.idx = BUDDY_HEAD | list << 4 | order;
    }
    /// The order and free list of the free block frame `p` heads, if it heads one.
    #[inline]
    pub fn buddy_head(&self, p: Pfn) -> Option<(u32, u32)> {
        let f = &self.f[p as usize];
        (f.map & LRU_MASK == (Lru::Free as u32) << LRU_SHIFT && f.idx & BUDDY_HEAD != 0).then_some((f.idx & 0xf, (f.idx >> 4) & 0xf))
    }
    /// Frame `p` is on a CPU's free list, freed as migrate type `mt`, the head of a block
    /// of order `order` (0-3); its links are the list's.
    #[inline]
    pub fn set_pcp_frame(&mut self, p: Pfn, mt: u32, order: u32) {
        debug_assert!(mt < 16 && order < 16);
        let f = &mut self.f[p as usize];
        f.map = 0;
        f.idx = PCP_FRAME | order << 4 | mt;
    }
    /// The order of the block frame `p` heads on a CPU's free list.
    #[inline]
    pub fn pcp_order(&self, p: Pfn) -> u32 {
        (self.f[p as usize].idx >> 4) & 0xf
    }
    /// The migrate type frame `p` was freed with, if it is on a CPU's free list.
    #[inline]
    pub fn pcp_migratetype(&self, p: Pfn) -> Option<u32> {
        let f = &self.f[p as usize];
        (f.map == 0 && f.idx & PCP_FRAME != 0).then_some(f.idx & 0xf)
    }
    /// Frames of `start..end` that are free (`Lru::Free`) and that are held outside any
    /// LRU list and mapping (`Lru::None`, mapping 0: kernel pages and pages on CPU lists,
    /// neither PageBuddy nor PageLRU), except kernel pages of owner code `movable_owner`
    /// (__PageMovable: zsmalloc's), which count as neither: one branch-free pass over
    /// the records (pageblock_fallback counts a pageblock this way).
    pub fn census(&self, start: Pfn, end: Pfn, movable_owner: u32) -> (u32, u32) {
        let (mut free, mut held) = (0u32, 0u32);
        for f in &self.f[start as usize..end as usize] {
            let m = f.map;
            free += ((m & LRU_MASK) == (Lru::Free as u32) << LRU_SHIFT) as u32;
            held += ((m & (LRU_MASK | MAP_MASK)) == 0 && f.idx != movable_owner) as u32;
        }
        (free, held)
    }
    #[inline]
    pub fn lru(&self, p: Pfn) -> Lru {
        Lru::from_u8(((self.f[p as usize].map & LRU_MASK) >> LRU_SHIFT) as u8)
    }
    #[inline]
    pub fn set_lru(&mut self, p: Pfn, l: Lru) {
        let m = &mut self.f[p as usize].map;
        *m = (*m & !LRU_MASK) | ((l as u32) << LRU_SHIFT);
    }

    /// The page waits in CPU `cpu`'s LRU-add batch (mm/swap.rs): on no list, its links
    /// hold `BATCH_LINK` and the CPU.
    #[inline]
    pub fn set_batched(&mut self, p: Pfn, cpu: u32) {
        debug_assert_eq!(self.lru(p), Lru::None, "page already on a list");
        self.set_links(p, BATCH_LINK, cpu);
    }
    /// Whether the page waits in an LRU-add batch.
    #[inline]
    pub fn batched(&self, p: Pfn) -> bool {
        self.lru(p) == Lru::None && self.next(p) == BATCH_LINK
    }
    /// The CPU whose LRU-add batch holds the page (`batched`).
    #[inline]
    pub fn batch_cpu(&self, p: Pfn) -> u32 {
        self.prev(p)
    }

    flag!(referenced, set_referenced, clear_referenced, map, PG_REFERENCED);
    flag!(dirty, set_dirty, clear_dirty, map, PG_DIRTY);
    flag!(reclaim, set_reclaim, clear_reclaim, map, PG_RECLAIM);
    // PG_readahead is PG_reclaim's bit (page-flags.h: PG_readahead = PG_reclaim): the page
    // readahead marked for the next window; reclaim's use of the bit is only on pages
    // under writeback, which the readahead paths test first.
    flag!(readahead, set_readahead, clear_readahead, map, PG_RECLAIM);
    flag!(writeback, set_writeback, clear_writeback, idx, PG_WRITEBACK);
    flag!(young, set_young, clear_young, idx, PG_YOUNG);
    flag!(workingset, set_workingset, clear_workingset, idx, PG_WORKINGSET);
    flag!(locked, set_locked, clear_locked, idx, PG_LOCKED);

    /// Test and clear PG_referenced (folio_test_clear_referenced).
    #[inline]
    pub fn test_clear_referenced(&mut self, p: Pfn) -> bool {
        let r = self.referenced(p);
        self.clear_referenced(p);
        r
    }
    #[inline]
    pub fn test_clear_young(&mut self, p: Pfn) -> bool {
        let r = self.young(p);
        self.clear_young(p);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn census_counts_free_frames_and_unlisted_unmapped_ones() {
        let mut p = Pages::new(8, 0);
        for q in 0..8 {
            p.set_owner(q, 0, 0);
        }
        p.set_lru(0, Lru::Free);
        p.set_lru(1, Lru::Free);
        p.set_owner(2, 5, 7); // a page-cache page being added: unlisted but mapped
        p.set_owner(3, 5, 8);
        p.set_lru(3, Lru::ActiveFile);
        p.set_lru(4, Lru::Isolated);
        // 5, 6, 7: kernel pages (mapping 0, on no LRU list).
        assert_eq!(p.census(0, 8, u32::MAX), (2, 3));
        assert_eq!(p.census(1, 3, u32::MAX), (1, 0));
        assert_eq!(p.census(5, 5, u32::MAX), (0, 0));
        // A kernel page of a movable owner (zsmalloc's) counts as neither.
        p.set_owner(7, 0, 3);
        assert_eq!(p.census(0, 8, 3), (2, 2));
    }

    #[test]
    fn fields_do_not_interfere() {
        let mut p = Pages::new(4, 0);
        p.set_owner(1, MAX_MAPPING, IDX_MASK as u64);
        p.set_lru(1, Lru::ActiveFile);
        p.set_dirty(1);
        p.set_locked(1);
        p.set_reclaim(1);
        assert!(p.reclaim(1));
        assert_eq!(p.mapping(1), MAX_MAPPING);
        assert_eq!(p.index(1), IDX_MASK as u64);
        assert_eq!(p.lru(1), Lru::ActiveFile);
        assert!(p.dirty(1) && p.locked(1) && !p.referenced(1) && !p.writeback(1));
        p.clear_dirty(1);
        p.set_referenced(1);
        assert!(p.test_clear_referenced(1));
        assert!(!p.referenced(1));
        assert_eq!(p.lru(1), Lru::ActiveFile);
        assert_eq!(p.mapping(1), MAX_MAPPING);
        p.set_owner(1, 5, 7);
        assert_eq!(p.lru(1), Lru::None);
        assert!(!p.locked(1));
    }

    #[test]
    fn indices_past_28_bits_keep_their_high_bits_until_the_frame_is_reowned() {
        let mut p = Pages::new(4, 0);
        let far = (15u64 << 40) / 4096 + 3; // a page at 15 TiB
        p.set_owner(2, 9, far);
        p.set_writeback(2);
        p.set_owner(3, 9, 5);
        assert_eq!(p.index(2), far);
        assert!(p.writeback(2), "flags share the word with the low bits");
        assert_eq!(p.index(3), 5);
        assert_eq!(p.high_index_frames(), 1, "only the far frame pays for the side table");
        p.set_owner(2, 0, 0);
        assert_eq!(p.index(2), 0);
        assert_eq!(p.high_index_frames(), 0, "freeing the frame clears its entry");
        p.set_owner(1, 1, MAX_INDEX);
        assert_eq!(p.index(1), MAX_INDEX);
    }
}
