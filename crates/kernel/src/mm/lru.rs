//! Intrusive, index-linked lists over the frame table (include/linux/mm_inline.h): the
//! lruvec (four evictable LRU lists and the unevictable list, per node and memory cgroup,
//! with the reclaim state kept per lruvec), circular with a sentinel frame past the real
//! ones as each list's head ("head" is where new pages go, reclaim takes from the tail); and
//! the zone's free pages, a list per pageblock (`FreeArea`).

use super::compaction::{PAGEBLOCK_NR_PAGES, PAGEBLOCK_ORDER};
use super::page::{Lru, Pages, Pfn, NIL};
use crate::profile::RotateReclaimable;
use crate::Kernel;

/// LRU lists per lruvec (enum lru_list: four evictable lists and the unevictable list).
pub const NR_LRU_LISTS: usize = 5;
/// Lruvecs the frame table reserves list heads for: the root lruvec and up to
/// MAX_LRUVECS - 1 memory cgroups per node, creatable at any time without growing the table.
pub const MAX_LRUVECS: usize = 1024;
/// Sentinel frames past the real ones: NR_LRU_LISTS per lruvec.
pub const NR_SENTINELS: u32 = (MAX_LRUVECS * NR_LRU_LISTS) as u32;

/// Index of an lruvec in `Mm::lruvecs`; 0 is the node's root lruvec.
pub type LruvecId = u16;
pub const ROOT_LRUVEC: LruvecId = 0;

#[inline]
pub(crate) fn link_after(pages: &mut Pages, at: Pfn, p: Pfn) {
    let n = pages.next(at);
    pages.set_links(p, n, at);
    pages.set_prev(n, p);
    pages.set_next(at, p);
}
#[inline]
pub(crate) fn unlink(pages: &mut Pages, p: Pfn) {
    let (n, pr) = pages.links(p);
    pages.set_next(pr, n);
    pages.set_prev(n, pr);
    pages.set_links(p, NIL, NIL);
}
#[inline]
pub(crate) fn init_head(pages: &mut Pages, h: Pfn) {
    pages.set_links(h, h, h);
}
#[inline]
fn tail_of(pages: &Pages, h: Pfn) -> Option<Pfn> {
    let t = pages.prev(h);
    if t == h { None } else { Some(t) }
}

/// The zone's free pages (free_area): every frame not in use, kept per pageblock, each
/// block's free frames on the free list of one migrate type (free_area->free_list[mt]):
/// movable (also MIGRATE_RESERVE's frames), unmovable or reclaimable.
///
/// The buddy allocator hands out the smallest free block first (__rmqueue_smallest) and
/// merges a freed page with its free buddies (__free_one_page), so small fragments are used
/// before large free blocks are split, and blocks that empty out become whole again. The
/// model has no orders below the pageblock; it keeps the same preference by the number of
/// free frames of a block: the blocks of each list sit in classes by that number (1, 2-3,
/// 4-7, ..., 256-511, 512), and an allocation takes a frame of a block of the lowest class
/// (the one that entered the class last), the frame freed last in it first.
///
/// At boot every frame is free; listing them all would write the whole frame table before
/// the machine runs (seconds and gigabytes for a TiB of RAM). Instead the frames below a
/// boot mark, `untouched`, are free without being on a list: the blocks wholly below the
/// mark's own block are in no class (whole blocks, used after every other block of the
/// movable list), the mark's block is in the class of its free frames, and taking one of
/// its never-used frames hands out the frame just below the mark, lowering it; a frame
/// above the mark is never unlinked-and-free, so a frame's record is first written when it
/// is first used (the host commits its memory then). A pageblock taken over by another
/// type gets its never-used frames linked (`link_untouched_from`): the mark drops to the
/// block's start.
pub struct FreeArea {
    pub nr_free: u64,
    /// Frames 0 .. untouched are free and not linked (never used since boot).
    untouched: Pfn,
    frames: Pfn,
    /// Per pageblock: its free frames (never-used ones included); its linked free frames, a
    /// list through the frame records' links ending in NIL, taken from the tail; the free
    /// list they are on; its class (`NO_CLASS`: in none) and its neighbours there.
    blk_free: Vec<u16>,
    blk_head: Vec<Pfn>,
    blk_tail: Vec<Pfn>,
    blk_list: Vec<u8>,
    blk_class: Vec<u8>,
    blk_next: Vec<u32>,
    blk_prev: Vec<u32>,
    /// The first block of each class of each free list, and the classes that have one.
    classes: [[u32; NR_CLASSES]; NR_FREE_LISTS],
    nonempty: [u16; NR_FREE_LISTS],
    /// The blocks wholly free: the free buddy blocks of pageblock order or more that
    /// __rmqueue_fallback, looking for the largest free block of another type first, takes
    /// over whole.
    whole: Vec<u64>,
    nr_whole: u64,
}

/// The free list a frame of a pageblock of type `t` is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeList {
    Movable = 0,
    Unmovable = 1,
    Reclaimable = 2,
}
const NR_FREE_LISTS: usize = 3;
const NR_CLASSES: usize = PAGEBLOCK_ORDER as usize + 1;
const NO_CLASS: u8 = u8::MAX;
const NO_BLOCK: u32 = u32::MAX;

impl FreeList {
    fn from_u8(v: u8) -> FreeList {
        match v {
            1 => FreeList::Unmovable,
            2 => FreeList::Reclaimable,
            _ => FreeList::Movable,
        }
    }
}

/// The class of a block with `n` (> 0) free frames: floor(log2(n)), the order of the
/// largest buddy block it could hold.
#[inline]
fn class_of(n: u16) -> u8 {
    (15 - n.leading_zeros() as u8).min(PAGEBLOCK_ORDER as u8)
}

impl Default for FreeArea {
    fn default() -> Self {
        FreeArea::new()
    }
}

impl FreeArea {
    /// Host bytes of the per-pageblock tables: the free count, list ends, list, class and
    /// class links, and a bit for a whole block.
    pub const HOST_BYTES_PER_BLOCK: u64 = 2 + 4 + 4 + 1 + 1 + 4 + 4 + 1;
    /// No frames yet (`add_untouched` gives the boot frames).
    pub fn new() -> FreeArea {
        FreeArea {
            nr_free: 0,
            untouched: 0,
            frames: 0,
            blk_free: Vec::new(),
            blk_head: Vec::new(),
            blk_tail: Vec::new(),
            blk_list: Vec::new(),
            blk_class: Vec::new(),
            blk_next: Vec::new(),
            blk_prev: Vec::new(),
            classes: [[NO_BLOCK; NR_CLASSES]; NR_FREE_LISTS],
            nonempty: [0; NR_FREE_LISTS],
            whole: Vec::new(),
            nr_whole: 0,
        }
    }
    /// Frames of pageblock `b` (the last one may be short).
    #[inline]
    fn block_frames(&self, b: usize) -> u64 {
        (self.frames as u64 - ((b as u64) << PAGEBLOCK_ORDER)).min(PAGEBLOCK_NR_PAGES)
    }
    /// The block holding the boot mark's frame below it (in a class while it has free
    /// frames); blocks under it are in no class.
    #[inline]
    fn mark_block(&self) -> Option<usize> {
        if self.untouched == 0 { None } else { Some(((self.untouched - 1) >> PAGEBLOCK_ORDER) as usize) }
    }
    #[inline]
    fn in_classes(&self, b: usize) -> bool {
        self.mark_block().is_none_or(|m| b >= m)
    }
    fn class_insert(&mut self, b: usize) {
        let (l, c) = (self.blk_list[b] as usize, class_of(self.blk_free[b]));
        let first = self.classes[l][c as usize];
        self.blk_class[b] = c;
        self.blk_prev[b] = NO_BLOCK;
        self.blk_next[b] = first;
        if first != NO_BLOCK {
            self.blk_prev[first as usize] = b as u32;
        }
        self.classes[l][c as usize] = b as u32;
        self.nonempty[l] |= 1 << c;
    }
    fn class_remove(&mut self, b: usize) {
        let (l, c) = (self.blk_list[b] as usize, self.blk_class[b]);
        debug_assert_ne!(c, NO_CLASS);
        let (prev, next) = (self.blk_prev[b], self.blk_next[b]);
        if prev == NO_BLOCK {
            self.classes[l][c as usize] = next;
            if next == NO_BLOCK {
                self.nonempty[l] &= !(1 << c);
            }
        } else {
            self.blk_next[prev as usize] = next;
        }
        if next != NO_BLOCK {
            self.blk_prev[next as usize] = prev;
        }
        self.blk_class[b] = NO_CLASS;
    }
    /// Block `b`'s free count changed: its class follows (none without free frames).
    #[inline]
    fn reclass(&mut self, b: usize) {
        let (n, have) = (self.blk_free[b], self.blk_class[b]);
        if n != 0 && have != NO_CLASS && class_of(n) == have {
            return;
        }
        self.reclass_slow(b);
    }
    #[cold]
    fn reclass_slow(&mut self, b: usize) {
        let n = self.blk_free[b];
        let want = if n == 0 || !self.in_classes(b) { NO_CLASS } else { class_of(n) };
        let have = self.blk_class[b];
        if want == have {
            return;
        }
        if have != NO_CLASS {
            self.class_remove(b);
        }
        if want != NO_CLASS {
            self.class_insert(b);
        }
    }
    #[inline]
    fn block_gains(&mut self, b: usize) {
        self.blk_free[b] += 1;
        if self.blk_free[b] as u64 == self.block_frames(b) {
            self.whole[b / 64] |= 1 << (b % 64);
            self.nr_whole += 1;
        }
        self.reclass(b);
    }
    #[inline]
    fn block_loses(&mut self, b: usize) {
        if self.blk_free[b] as u64 == self.block_frames(b) {
            self.whole[b / 64] &= !(1 << (b % 64));
            self.nr_whole -= 1;
        }
        self.blk_free[b] -= 1;
        self.reclass(b);
    }
    /// Link free frame `p` at the tail of its block's list (taken next).
    #[inline]
    fn link_tail(&mut self, pages: &mut Pages, b: usize, p: Pfn) {
        let t = self.blk_tail[b];
        pages.set_links(p, NIL, t);
        if t == NIL {
            self.blk_head[b] = p;
        } else {
            pages.set_next(t, p);
        }
        self.blk_tail[b] = p;
        pages.set_lru(p, Lru::Free);
    }
    #[inline]
    fn unlink_frame(&mut self, pages: &mut Pages, b: usize, p: Pfn) {
        let (n, pr) = pages.links(p);
        if pr == NIL {
            self.blk_head[b] = n;
        } else {
            pages.set_next(pr, n);
        }
        if n == NIL {
            self.blk_tail[b] = pr;
        } else {
            pages.set_prev(n, pr);
        }
        pages.set_links(p, NIL, NIL);
        pages.set_lru(p, Lru::None);
    }
    /// The per-block counts, lists and classes agree with the free frames (debug
    /// invariant; each block's list is walked while there are few blocks).
    pub fn check_blocks(&self, pages: &Pages) -> Result<(), String> {
        if self.blk_free.is_empty() {
            return Ok(());
        }
        let sum: u64 = self.blk_free.iter().map(|&c| c as u64).sum();
        let whole = (0..self.blk_free.len()).filter(|&b| self.blk_free[b] as u64 == self.block_frames(b)).count() as u64;
        let bits: u64 = self.whole.iter().map(|w| w.count_ones() as u64).sum();
        if sum != self.nr_free || whole != self.nr_whole || bits != whole {
            return Err(format!("pageblock counts: {sum} free frames of {}, {whole} whole blocks, {} counted, {bits} marked", self.nr_free, self.nr_whole));
        }
        for b in 0..self.blk_free.len() {
            let want = if self.blk_free[b] == 0 || !self.in_classes(b) { NO_CLASS } else { class_of(self.blk_free[b]) };
            if self.blk_class[b] != want {
                return Err(format!("pageblock {b}: {} free frames, class {} (want {want})", self.blk_free[b], self.blk_class[b]));
            }
        }
        if self.blk_free.len() <= 64 {
            for b in 0..self.blk_free.len() {
                let start = (b as Pfn) << PAGEBLOCK_ORDER;
                let below = self.untouched.saturating_sub(start).min(self.block_frames(b) as Pfn) as u64;
                let (mut n, mut p) = (0u64, self.blk_head[b]);
                while p != NIL {
                    if p >> PAGEBLOCK_ORDER != b as Pfn || pages.lru(p) != Lru::Free {
                        return Err(format!("frame {p} on pageblock {b}'s free list"));
                    }
                    n += 1;
                    p = pages.next(p);
                }
                if n + below != self.blk_free[b] as u64 {
                    return Err(format!("pageblock {b}: {n} linked + {below} never used, {} counted", self.blk_free[b]));
                }
            }
        }
        Ok(())
    }
    /// Pageblocks whose frames are all free.
    pub fn nr_whole_blocks(&self) -> u64 {
        self.nr_whole
    }
    /// Free frames of the pageblock holding frame `p`.
    pub fn block_free(&self, p: Pfn) -> u64 {
        self.blk_free.get((p >> PAGEBLOCK_ORDER) as usize).map_or(0, |&c| c as u64)
    }
    /// The free list the free frames of the pageblock holding frame `p` are on.
    pub fn block_list(&self, p: Pfn) -> FreeList {
        FreeList::from_u8(self.blk_list.get((p >> PAGEBLOCK_ORDER) as usize).copied().unwrap_or(0))
    }
    /// The pageblock with the most free frames (the highest of equals) for which `ok`
    /// holds (its first frame), if any has a free frame.
    pub fn fullest_block(&self, ok: impl Fn(Pfn) -> bool) -> Option<Pfn> {
        let mut best: Option<(u16, usize)> = None;
        for (b, &c) in self.blk_free.iter().enumerate().rev() {
            if c > best.map_or(0, |(n, _)| n) && ok((b as Pfn) << PAGEBLOCK_ORDER) {
                best = Some((c, b));
            }
        }
        best.map(|(_, b)| (b as Pfn) << PAGEBLOCK_ORDER)
    }
    /// The highest wholly free pageblock for which `ok` holds (its first frame).
    pub fn find_whole_block(&self, ok: impl Fn(Pfn) -> bool) -> Option<Pfn> {
        if self.nr_whole == 0 {
            return None;
        }
        for (w, &word) in self.whole.iter().enumerate().rev() {
            let mut bits = word;
            while bits != 0 {
                let b = 63 - bits.leading_zeros() as usize;
                bits &= !(1 << b);
                let start = ((w * 64 + b) as Pfn) << PAGEBLOCK_ORDER;
                if ok(start) {
                    return Some(start);
                }
            }
        }
        None
    }
    /// At boot: frames 0 .. nr are free, unlinked (nothing is written per frame); the
    /// highest block is handed out first.
    pub fn add_untouched(&mut self, nr: Pfn) {
        assert_eq!(self.untouched, 0, "the boot frames are added once");
        self.untouched = nr;
        self.nr_free += nr as u64;
        self.frames = nr;
        let blocks = (nr as u64).div_ceil(PAGEBLOCK_NR_PAGES) as usize;
        self.blk_free = (0..blocks).map(|b| self.block_frames(b) as u16).collect();
        self.blk_head = vec![NIL; blocks];
        self.blk_tail = vec![NIL; blocks];
        self.blk_list = vec![FreeList::Movable as u8; blocks];
        self.blk_class = vec![NO_CLASS; blocks];
        self.blk_next = vec![NO_BLOCK; blocks];
        self.blk_prev = vec![NO_BLOCK; blocks];
        self.whole = vec![u64::MAX; blocks.div_ceil(64)];
        if blocks % 64 != 0 {
            *self.whole.last_mut().expect("a block") = (1 << (blocks % 64)) - 1;
        }
        self.nr_whole = blocks as u64;
        if let Some(m) = self.mark_block() {
            self.reclass(m);
        }
    }
    /// Free frames never used since boot (not linked).
    pub fn untouched(&self) -> Pfn {
        self.untouched
    }
    /// Put an unlisted frame on its block's free list (taken first there); a block with
    /// no free frame takes list `l` (its pageblock's type), one with some keeps theirs.
    #[inline]
    pub fn add(&mut self, pages: &mut Pages, p: Pfn, l: FreeList) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let b = (p >> PAGEBLOCK_ORDER) as usize;
        if self.blk_free[b] == 0 {
            self.blk_list[b] = l as u8;
        }
        self.link_tail(pages, b, p);
        self.nr_free += 1;
        self.block_gains(b);
    }
    /// The free frames of the pageblock holding `p` go to list `l` (move_freepages_block).
    pub fn move_block(&mut self, p: Pfn, l: FreeList) {
        let b = (p >> PAGEBLOCK_ORDER) as usize;
        if self.blk_list[b] == l as u8 {
            return;
        }
        let in_class = self.blk_class[b] != NO_CLASS;
        if in_class {
            self.class_remove(b);
        }
        self.blk_list[b] = l as u8;
        if in_class {
            self.class_insert(b);
        }
    }
    /// Link the never-used frames from `start` up to the boot mark, and lower the mark to
    /// `start` (a pageblock taken over by another type: move_freepages_block); the blocks
    /// that join the classes keep their lists (the caller moves the claimed one).
    pub fn link_untouched_from(&mut self, pages: &mut Pages, start: Pfn) {
        let old = self.untouched;
        if start >= old {
            return;
        }
        for q in start..old {
            debug_assert_eq!(pages.lru(q), Lru::None);
            // Highest first out of each block, as the mark gave them.
            self.link_tail(pages, (q >> PAGEBLOCK_ORDER) as usize, q);
        }
        self.untouched = start;
        for b in (start >> PAGEBLOCK_ORDER) as usize..=((old - 1) >> PAGEBLOCK_ORDER) as usize {
            self.reclass(b);
        }
        if let Some(m) = self.mark_block() {
            self.reclass(m);
        }
    }
    /// Take one given linked free frame off its list (the compaction free scanner's
    /// __isolate_free_page). Frames below the boot mark are not linked: the caller takes
    /// only frames at or above it.
    #[inline]
    pub fn isolate(&mut self, pages: &mut Pages, p: Pfn) {
        debug_assert!(p >= self.untouched && pages.lru(p) == Lru::Free, "frame {p} is not a linked free frame");
        let b = (p >> PAGEBLOCK_ORDER) as usize;
        self.unlink_frame(pages, b, p);
        self.nr_free -= 1;
        self.block_loses(b);
    }
    /// Take a frame of the movable list.
    #[inline]
    pub fn take(&mut self, pages: &mut Pages) -> Option<Pfn> {
        self.take_from(pages, FreeList::Movable)
    }
    /// Take a frame of list `l` (__rmqueue_smallest): of the block of its lowest class, the
    /// frame freed last there, else the block's never-used frame below the mark; with no
    /// block in a class, the movable list's whole blocks below the mark, highest first.
    #[inline]
    pub fn take_from(&mut self, pages: &mut Pages, l: FreeList) -> Option<Pfn> {
        let mask = self.nonempty[l as usize];
        if mask == 0 {
            return None;
        }
        let b = self.classes[l as usize][mask.trailing_zeros() as usize] as usize;
        let t = self.blk_tail[b];
        let p = if t != NIL {
            self.unlink_frame(pages, b, t);
            t
        } else {
            // A frame never used: all zeros (no owner, no flags, on no list); give it the
            // links an unlisted frame has.
            debug_assert_eq!(self.mark_block(), Some(b), "a block in a class without linked frames holds the mark");
            self.untouched -= 1;
            let p = self.untouched;
            debug_assert_eq!(pages.lru(p), Lru::None);
            pages.set_links(p, NIL, NIL);
            p
        };
        self.nr_free -= 1;
        self.block_loses(b);
        if t == NIL && self.untouched > 0 && self.untouched % PAGEBLOCK_NR_PAGES as Pfn == 0 {
            // The mark moved into the block below: it joins the classes.
            let m = self.mark_block().expect("mark above 0");
            self.reclass(m);
        }
        Some(p)
    }
}

/// struct lruvec: the LRU lists of one memory cgroup on one node, their lengths, and the
/// reclaim state kept per lruvec (the eviction clock, the anon/file cost balance, the
/// pre-5.8 scan/rotate ratios and the refault snapshot).
#[derive(Clone, Debug)]
pub struct Lruvec {
    /// List heads are sentinel frames base .. base + NR_LRU_LISTS.
    base: Pfn,
    len: [u64; NR_LRU_LISTS],
    /// Eviction clock (lruvec->nonresident_age, workingset_age_nonresident).
    pub nonresident_age: u64,
    /// Reclaim cost of each type (lruvec->anon_cost / file_cost, lru_note_cost).
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Pre-5.8 balancing (lruvec->reclaim_stat): recent_scanned / recent_rotated for
    /// [anon, file].
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
    /// WORKINGSET_ACTIVATE_{ANON,FILE} of this lruvec (lruvec_page_state), and their
    /// values at the end of the last reclaim cycle (lruvec->refaults, snapshot_refaults).
    pub workingset_activate: [u64; 2],
    pub refaults: [u64; 2],
    /// In use (freed lruvecs keep their list heads for the next one).
    pub live: bool,
}

impl Lruvec {
    /// An empty lruvec whose list heads are frames `base .. base + NR_LRU_LISTS`.
    pub fn new(pages: &mut Pages, base: Pfn) -> Lruvec {
        for i in 0..NR_LRU_LISTS as u32 {
            init_head(pages, base + i);
        }
        Lruvec {
            base,
            len: [0; NR_LRU_LISTS],
            nonresident_age: 0,
            anon_cost: 0,
            file_cost: 0,
            recent_scanned: [0; 2],
            recent_rotated: [0; 2],
            workingset_activate: [0; 2],
            refaults: [0; 2],
            live: true,
        }
    }
    #[inline]
    fn head(&self, l: Lru) -> Pfn {
        debug_assert!(!matches!(l, Lru::None | Lru::Free | Lru::Isolated), "not an LRU list: {l:?}");
        self.base + l as u32 - 1
    }
    /// Pages on list `l` (lruvec_lru_size).
    #[inline]
    pub fn len(&self, l: Lru) -> u64 {
        self.len[l as usize - 1]
    }
    /// Pages on all five lists.
    pub fn nr_pages(&self) -> u64 {
        self.len.iter().sum()
    }
    pub fn file_lru(&self) -> u64 {
        self.len(Lru::InactiveFile) + self.len(Lru::ActiveFile)
    }
    pub fn anon_lru(&self) -> u64 {
        self.len(Lru::InactiveAnon) + self.len(Lru::ActiveAnon)
    }
    /// [inactive anon, active anon, inactive file, active file].
    pub fn evictable_sizes(&self) -> [u64; 4] {
        [self.len(Lru::InactiveAnon), self.len(Lru::ActiveAnon), self.len(Lru::InactiveFile), self.len(Lru::ActiveFile)]
    }

    /// Put an unlisted page at the head of `l` (lruvec_add_folio).
    #[inline]
    pub fn add_head(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let h = self.head(l);
        link_after(pages, h, p);
        pages.set_lru(p, l);
        self.len[l as usize - 1] += 1;
    }
    /// Put an unlisted page at the tail of `l` (lruvec_add_folio_tail).
    #[inline]
    pub fn add_tail(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        debug_assert_eq!(pages.lru(p), Lru::None, "page already on a list");
        let h = self.head(l);
        let last = pages.prev(h);
        link_after(pages, last, p);
        pages.set_lru(p, l);
        self.len[l as usize - 1] += 1;
    }
    /// Take a page off whatever list of this lruvec it is on (lruvec_del_folio).
    #[inline]
    pub fn del(&mut self, pages: &mut Pages, p: Pfn) -> Lru {
        let l = pages.lru(p);
        if l == Lru::None || l == Lru::Isolated {
            return l;
        }
        debug_assert!(l != Lru::Free, "a free page is on the zone's free list");
        unlink(pages, p);
        pages.set_lru(p, Lru::None);
        self.len[l as usize - 1] -= 1;
        l
    }
    /// The page at the tail of `l`, if any.
    #[inline]
    pub fn tail(&self, pages: &Pages, l: Lru) -> Option<Pfn> {
        tail_of(pages, self.head(l))
    }
    /// The page at the head of `l`, if any.
    #[inline]
    pub fn first(&self, pages: &Pages, l: Lru) -> Option<Pfn> {
        let h = self.head(l);
        let t = pages.next(h);
        if t == h { None } else { Some(t) }
    }
    /// Move a listed page to the head of list `l` (possibly another list).
    #[inline]
    pub fn move_head(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        self.del(pages, p);
        self.add_head(pages, p, l);
    }
    #[inline]
    pub fn move_tail(&mut self, pages: &mut Pages, p: Pfn, l: Lru) {
        self.del(pages, p);
        self.add_tail(pages, p, l);
    }

    /// Walk a list from head to tail (tests and invariant checks only).
    pub fn collect(&self, pages: &Pages, l: Lru) -> Vec<Pfn> {
        let h = self.head(l);
        let mut out = Vec::new();
        let mut p = pages.next(h);
        while p != h {
            out.push(p);
            p = pages.next(p);
        }
        out
    }
}

impl Kernel {
    /// folio_end_writeback: a page reclaim wanted freed (PG_reclaim) is rotated to the tail
    /// of its inactive list so the next reclaim pass finds it first (mm/filemap.c).
    pub(crate) fn end_writeback_reclaim(&mut self, p: Pfn) {
        if !self.mm.pages.reclaim(p) {
            return;
        }
        self.mm.pages.clear_reclaim(p);
        self.rotate_reclaimable(p);
    }

    /// folio_rotate_reclaimable -> lru_move_tail_fn (mm/swap.c): a clean, unlocked page on
    /// an evictable list goes to the inactive tail, deactivated (PGROTATED), through this
    /// CPU's rotate batch (mm/swap.rs). Before 3.10 (rotate_reclaimable_page in 2.6.39) an
    /// active page was left alone; 2.4 has no PG_reclaim.
    pub(crate) fn rotate_reclaimable(&mut self, p: Pfn) {
        if self.profile.rotate_reclaimable == RotateReclaimable::Never {
            return;
        }
        self.rotate_reclaimable_page(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn head_tail_del_move() {
        let mut pages = Pages::new(8, NR_LRU_LISTS as u32);
        let mut l = Lruvec::new(&mut pages, 8);
        for p in 0..4 {
            l.add_head(&mut pages, p, Lru::InactiveFile);
        }
        assert_eq!(l.collect(&pages, Lru::InactiveFile), vec![3, 2, 1, 0]);
        assert_eq!(l.tail(&pages, Lru::InactiveFile), Some(0));
        l.move_head(&mut pages, 0, Lru::ActiveFile);
        assert_eq!(l.len(Lru::InactiveFile), 3);
        assert_eq!(l.len(Lru::ActiveFile), 1);
        assert_eq!(pages.lru(0), Lru::ActiveFile);
        l.del(&mut pages, 2);
        assert_eq!(l.collect(&pages, Lru::InactiveFile), vec![3, 1]);
        l.add_tail(&mut pages, 2, Lru::InactiveFile);
        assert_eq!(l.collect(&pages, Lru::InactiveFile), vec![3, 1, 2]);
        assert_eq!(l.tail(&pages, Lru::ActiveAnon), None);
    }

    /// Frames come out highest block first at boot, each block used up before the next;
    /// frames freed back go out again before any block with more free frames (the
    /// smallest-first rule), the last freed first; every frame once.
    #[test]
    fn free_frames_come_out_of_the_block_with_the_fewest_free_frames_first() {
        const PB: Pfn = PAGEBLOCK_NR_PAGES as Pfn;
        let n = 4 * PB;
        let mut pages = Pages::new(n, 0);
        let mut fa = FreeArea::new();
        fa.add_untouched(n);
        fa.check_blocks(&pages).unwrap();
        // Boot order: block 3 from its top down, then block 2.
        let first: Vec<Pfn> = (0..PB + 88).map(|_| fa.take(&mut pages).unwrap()).collect();
        assert_eq!(first[..PB as usize], (3 * PB..4 * PB).rev().collect::<Vec<_>>()[..]);
        assert_eq!(first[PB as usize], 3 * PB - 1);
        fa.check_blocks(&pages).unwrap();
        // Five frames back into block 3 (5 free), twenty into block 2 (444 free): block 3's
        // go out first, the last freed first.
        for &p in &first[10..15] {
            fa.add(&mut pages, p, FreeList::Movable);
        }
        for &p in &first[PB as usize..PB as usize + 20] {
            fa.add(&mut pages, p, FreeList::Movable);
        }
        fa.check_blocks(&pages).unwrap();
        let again: Vec<Pfn> = (0..5).map(|_| fa.take(&mut pages).unwrap()).collect();
        assert_eq!(again, first[10..15].iter().rev().copied().collect::<Vec<_>>());
        assert!(fa.take(&mut pages).unwrap() / PB == 2);
        // Everything else, each frame once.
        let mut rest = Vec::new();
        while let Some(p) = fa.take(&mut pages) {
            assert_eq!((pages.lru(p), pages.links(p)), (Lru::None, (NIL, NIL)));
            rest.push(p);
        }
        assert_eq!(fa.nr_free, 0);
        assert_eq!(fa.untouched(), 0);
        assert_eq!(rest.len() as Pfn, n - (PB + 88) + 20 - 1);
        let mut seen = rest.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), rest.len());
        fa.check_blocks(&pages).unwrap();
    }

    /// A block's free frames move between lists as one (move_freepages_block), and the
    /// never-used frames under the mark are linked when a block there is taken over.
    #[test]
    fn a_block_moves_to_another_list_whole() {
        const PB: Pfn = PAGEBLOCK_NR_PAGES as Pfn;
        let mut pages = Pages::new(4 * PB, 0);
        let mut fa = FreeArea::new();
        fa.add_untouched(4 * PB);
        let p = fa.take(&mut pages).unwrap();
        assert_eq!(p, 4 * PB - 1);
        // Block 1, wholly under the mark, goes to the unmovable list: the mark drops to its
        // start, block 2 and 3's never-used frames are linked on the movable list.
        fa.link_untouched_from(&mut pages, PB);
        fa.move_block(PB, FreeList::Unmovable);
        fa.check_blocks(&pages).unwrap();
        assert_eq!(fa.untouched(), PB);
        assert!(fa.take_from(&mut pages, FreeList::Unmovable).unwrap() / PB == 1);
        assert!(fa.take_from(&mut pages, FreeList::Reclaimable).is_none());
        // Movable: block 3 (511 free) before block 2 (512), before block 0 under the mark.
        assert_eq!(fa.take(&mut pages).unwrap() / PB, 3);
        fa.check_blocks(&pages).unwrap();
    }
}
