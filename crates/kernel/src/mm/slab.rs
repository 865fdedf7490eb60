//! The slab allocator (mm/slab.c before 6.5, mm/slub.c): caches of fixed-size kernel
//! objects carved out of slab pages that come from the page allocator and go back to it
//! only when every object on them is free. The era picks the allocator
//! (`Profile::slab_allocator`): SLAB on 2.4 and 2.6.39, SLUB on 5.x and 6.x.
//!
//! # Public API (stable; other parts of the model build on it)
//!
//! * `CacheId` (u16): a cache, index into `Slabs::caches`; `KernelOwner::Slab(CacheId)`
//!   owns its slab pages.
//! * `ObjHandle` (8 bytes, `Copy`): one object, packed as (cache, slab descriptor, slot);
//!   `.cache()`, `.slab()`, `.slot()`; `Slabs::pfn_of(h)` gives the slab page's frame.
//! * Flags for `kmem_cache_create`: `SLAB_HWCACHE_ALIGN`, `SLAB_RECLAIM_ACCOUNT`
//!   (SReclaimable), `SLAB_TYPESAFE_BY_RCU`, `SLAB_CTOR` (a constructor: SLUB keeps the
//!   free pointer outside the object).
//! * `Slabs` (in `Mm::slab`):
//!   - `kmem_cache_create(name, object_size, align, flags) -> Result<CacheId, String>`
//!     (an existing cache of that name is returned as it is);
//!   - `find(name) -> Option<CacheId>`, `kmalloc_cache(size) -> Option<CacheId>`
//!     (kmalloc_slab: the kmalloc-N / size-N cache for a request);
//!   - `counts(c) -> SlabCounts` {active_objs, num_objs, active_slabs, num_slabs};
//!   - `pages(reclaimable) -> u64` (the Meminfo SReclaimable/SUnreclaim pages);
//!   - `is_allocated(h) -> bool`.
//! * `Mm::kmem_cache_alloc(c) -> Option<ObjHandle>`: an object, taking slab pages with no
//!   watermark check (boot, tests); `Mm::kmem_cache_free(h) -> u64`: free it, returns the
//!   frames given back to the page allocator (0 unless its slab was released).
//! * `Kernel::kmem_cache_alloc(tid, c) -> Result<ObjHandle, Step>`: as a task does it — a
//!   new slab page goes through the page allocator's watermarks, kswapd wake-up and direct
//!   reclaim (`Err(step)` is what the task does before retrying, as `page_cache_alloc`);
//!   `Kernel::kmalloc(tid, size)`; `Kernel::kmem_cache_free(h)` (counts pgfree for the
//!   released frames).
//! * Per-cgroup copies of a cache (5.x before 5.9, `Profile::memcg_kmem_caches`):
//!   `Slabs::memcg_cache(root, memcg)`, `memcg_cache_create`, `root_of(c)`,
//!   `KmemCache::memcg`; their slab pages are owned by `KernelOwner::Slab(root)`.
//!
//! # Representation
//!
//! Per cache, slab descriptors (struct slab / struct page of a slab) in struct-of-arrays
//! form: first frame, in-use count, head of the slot free list, list membership and links
//! of the node's partial/full/free lists. Per object slot: a u16 free-list link (the free
//! pointer the kernel keeps inside a free object) and one bit of an allocation bitmap —
//! 2 bytes and 1 bit of host memory per object, no heap allocation per object. Allocation
//! and free are O(1). The model has one node, so each cache has one kmem_cache_node.

use super::memcontrol::{MemcgId, ObjCharge, ROOT_MEMCG};
use super::page::{Pfn, NIL};
use super::{KernelOwner, Mm, PAGE_SIZE};
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

pub type CacheId = u16;

/// obj_full_size: what a charged object costs its cgroup beyond its slot, the
/// `struct obj_cgroup *` kept for it in the slab's objcg vector (x86-64).
pub(crate) const OBJCG_PTR_BYTES: u64 = 8;

/// SLAB_HWCACHE_ALIGN: align objects on cache lines.
pub const SLAB_HWCACHE_ALIGN: u32 = 0x0000_2000;
/// SLAB_RECLAIM_ACCOUNT: objects are reclaimable (counted in SReclaimable).
pub const SLAB_RECLAIM_ACCOUNT: u32 = 0x0002_0000;
/// SLAB_TYPESAFE_BY_RCU (SLAB_DESTROY_BY_RCU before 4.12).
pub const SLAB_TYPESAFE_BY_RCU: u32 = 0x0008_0000;
/// SLAB_ACCOUNT: objects are charged to the allocating task's memory cgroup (4.5+).
pub const SLAB_ACCOUNT: u32 = 0x0400_0000;
/// The cache has a constructor (kmem_cache_create's ctor argument).
pub const SLAB_CTOR: u32 = 0x8000_0000;

/// Which slab allocator the era's kernels are configured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlabAllocator {
    /// mm/slab.c (CONFIG_SLAB; the default until SLUB became it in 2.6.23 for most
    /// distributions, and the allocator of 2.4 and of the 2.6.39 server kernel).
    Slab,
    /// mm/slub.c (CONFIG_SLUB: every 5.x/6.x distribution kernel).
    Slub,
}

/// cache_line_size() on x86-64.
const CACHE_LINE: u32 = 64;
/// ARCH_KMALLOC_MINALIGN / ARCH_SLAB_MINALIGN on x86-64.
const MINALIGN: u32 = 8;
/// MAX_OBJS_PER_PAGE (mm/slub.c): objects a slab can index.
const MAX_OBJS_PER_PAGE: u32 = 32767;
/// PAGE_ALLOC_COSTLY_ORDER: slub_max_order's default.
const SLUB_MAX_ORDER: u32 = 3;
/// MIN_PARTIAL / MAX_PARTIAL (mm/slub.c).
const MIN_PARTIAL: u32 = 5;
const MAX_PARTIAL: u32 = 10;
/// KMALLOC_MAX_ORDER bound of calculate_slab_order's loop (mm/slab.c, MAX_ORDER - 1).
const SLAB_MAX_GFPORDER: u32 = 10;
/// sizeof(struct slab) and sizeof(kmem_bufctl_t) of 2.6.39's on-slab management (x86-64).
const SLAB_MGMT: u32 = 40;
const BUFCTL: u32 = 4;
/// Most caches the model can hold (KernelOwner codes).
pub const MAX_CACHES: usize = super::MAX_SLAB_CACHES;

/// Counts of one cache as /proc/slabinfo shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlabCounts {
    pub active_objs: u64,
    pub num_objs: u64,
    pub active_slabs: u64,
    pub num_slabs: u64,
}

/// SLAB's per-cpu array tunables (enable_cpucache), shown in /proc/slabinfo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tunables {
    pub limit: u32,
    pub batchcount: u32,
    pub shared: u32,
}

/// One object: its cache, the slab descriptor it lives on, its slot in that slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjHandle(u64);

impl ObjHandle {
    #[inline]
    fn new(cache: CacheId, slab: u32, slot: u16) -> ObjHandle {
        ObjHandle(((cache as u64) << 48) | ((slab as u64) << 16) | slot as u64)
    }
    #[inline]
    pub fn cache(self) -> CacheId {
        (self.0 >> 48) as CacheId
    }
    /// The slab descriptor's index in its cache.
    #[inline]
    pub fn slab(self) -> u32 {
        (self.0 >> 16) as u32
    }
    #[inline]
    pub fn slot(self) -> u16 {
        self.0 as u16
    }
    /// The packed value (for compact storage by users).
    #[inline]
    pub fn raw(self) -> u64 {
        self.0
    }
    #[inline]
    pub fn from_raw(v: u64) -> ObjHandle {
        ObjHandle(v)
    }
}

/// Which list of the node a slab is on.
const L_PARTIAL: u8 = 0;
const L_FULL: u8 = 1;
/// SLAB's slabs_free (SLUB keeps empty slabs on the partial list).
const L_FREE: u8 = 2;
const L_NONE: u8 = 3;
const NO_SLOT: u16 = u16::MAX;

/// struct kmem_cache with its one kmem_cache_node.
pub struct KmemCache {
    pub name: String,
    /// The object as the caller asked for it (object_size / SLAB's obj_size).
    pub object_size: u32,
    /// The object with its alignment and metadata (SLUB's s->size, SLAB's buffer_size):
    /// the "objsize" /proc/slabinfo shows.
    pub size: u32,
    pub align: u32,
    pub flags: u32,
    pub objs_per_slab: u32,
    /// Slab pages are 2^order frames.
    pub order: u32,
    /// SLUB's s->min: the order of one object (get_order(size)) and the objects a slab of
    /// that order holds, what allocate_slab falls back to when the cache's order fails
    /// (SLAB: the cache's own order and objects).
    pub min_order: u32,
    pub min_objs: u32,
    /// SLUB: empty slabs kept on the partial list (set_min_partial).
    pub min_partial: u32,
    /// SLAB: per-cpu array tunables and the node's free_limit (enable_cpucache).
    pub tunables: Tunables,
    pub free_limit: u64,
    // Slab descriptors.
    s_frames: Vec<Pfn>,
    /// The slab's frames are one block of 2^order (allocated at the cache's order), not
    /// frames taken one by one.
    s_block: Vec<bool>,
    /// Object slots the slab has (objs_per_slab, or min_objs for a minimum-order slab).
    s_objs: Vec<u16>,
    /// Object slots over every slab (num_objs).
    total_objs: u64,
    s_inuse: Vec<u16>,
    s_free: Vec<u16>,
    s_list: Vec<u8>,
    s_next: Vec<u32>,
    s_prev: Vec<u32>,
    // Object slots: free-list link and allocation bitmap.
    obj_next: Vec<u16>,
    obj_used: Vec<u64>,
    desc_free: Vec<u32>,
    heads: [u32; 3],
    tails: [u32; 3],
    lens: [u64; 3],
    active_objs: u64,
    /// A cgroup's copy of a cache (memcg_params: root_cache, memcg): the root cache and
    /// the cgroup its slab pages are charged to. None for a root cache.
    pub memcg: Option<(CacheId, MemcgId)>,
}

impl KmemCache {
    fn new(name: &str, object_size: u32, size: u32, align: u32, flags: u32, objs: u32, order: u32) -> KmemCache {
        KmemCache {
            name: name.to_string(),
            object_size,
            size,
            align,
            flags,
            objs_per_slab: objs,
            order,
            min_order: order,
            min_objs: objs,
            min_partial: 0,
            tunables: Tunables::default(),
            free_limit: 0,
            s_frames: Vec::new(),
            s_block: Vec::new(),
            s_objs: Vec::new(),
            total_objs: 0,
            s_inuse: Vec::new(),
            s_free: Vec::new(),
            s_list: Vec::new(),
            s_next: Vec::new(),
            s_prev: Vec::new(),
            obj_next: Vec::new(),
            obj_used: Vec::new(),
            desc_free: Vec::new(),
            heads: [NIL; 3],
            tails: [NIL; 3],
            lens: [0; 3],
            active_objs: 0,
            memcg: None,
        }
    }
    #[inline]
    pub fn reclaimable(&self) -> bool {
        self.flags & SLAB_RECLAIM_ACCOUNT != 0
    }
    /// Frames per slab (pagesperslab).
    #[inline]
    pub fn pages_per_slab(&self) -> u64 {
        1 << self.order
    }
    /// Slabs on the node's partial list (n->nr_partial).
    #[inline]
    pub fn nr_partial(&self) -> u64 {
        self.lens[L_PARTIAL as usize]
    }
    /// SLAB: slabs on slabs_free.
    #[inline]
    pub fn nr_free_slabs(&self) -> u64 {
        self.lens[L_FREE as usize]
    }
    #[inline]
    pub fn nr_slabs(&self) -> u64 {
        self.lens.iter().sum()
    }
    pub fn counts(&self) -> SlabCounts {
        let num_slabs = self.nr_slabs();
        SlabCounts {
            active_objs: self.active_objs,
            num_objs: self.total_objs,
            active_slabs: num_slabs - self.lens[L_FREE as usize],
            num_slabs,
        }
    }
    /// Objects in use on a slab.
    #[inline]
    pub fn slab_inuse(&self, slab: u32) -> u32 {
        self.s_inuse[slab as usize] as u32
    }

    fn list_add_tail(&mut self, s: u32, l: u8) {
        let li = l as usize;
        self.s_list[s as usize] = l;
        self.s_next[s as usize] = NIL;
        self.s_prev[s as usize] = self.tails[li];
        if self.tails[li] == NIL {
            self.heads[li] = s;
        } else {
            self.s_next[self.tails[li] as usize] = s;
        }
        self.tails[li] = s;
        self.lens[li] += 1;
    }
    fn list_add_head(&mut self, s: u32, l: u8) {
        let li = l as usize;
        self.s_list[s as usize] = l;
        self.s_prev[s as usize] = NIL;
        self.s_next[s as usize] = self.heads[li];
        if self.heads[li] == NIL {
            self.tails[li] = s;
        } else {
            self.s_prev[self.heads[li] as usize] = s;
        }
        self.heads[li] = s;
        self.lens[li] += 1;
    }
    fn list_del(&mut self, s: u32) {
        let li = self.s_list[s as usize] as usize;
        debug_assert!(li < 3);
        let (n, p) = (self.s_next[s as usize], self.s_prev[s as usize]);
        if p == NIL { self.heads[li] = n } else { self.s_next[p as usize] = n }
        if n == NIL { self.tails[li] = p } else { self.s_prev[n as usize] = p }
        self.lens[li] -= 1;
        self.s_list[s as usize] = L_NONE;
    }

    /// A descriptor for a new slab on `frames` (one block: `block`) with every slot free:
    /// a slab of the cache's order, or fewer frames for a slab of the minimum order, which
    /// has min_objs slots.
    fn new_slab_desc(&mut self, frames: &[Pfn], block: bool) -> u32 {
        let objs = self.objs_per_slab as usize;
        let per = self.pages_per_slab() as usize;
        debug_assert!(frames.len() == per || frames.len() == 1 << self.min_order);
        let nobjs = if frames.len() == per { objs } else { self.min_objs as usize };
        let s = match self.desc_free.pop() {
            Some(s) => s,
            None => {
                let s = self.s_inuse.len() as u32;
                self.s_inuse.push(0);
                self.s_block.push(false);
                self.s_objs.push(0);
                self.s_free.push(NO_SLOT);
                self.s_list.push(L_NONE);
                self.s_next.push(NIL);
                self.s_prev.push(NIL);
                self.s_frames.resize(self.s_frames.len() + per, NIL);
                self.obj_next.resize(self.obj_next.len() + objs, NO_SLOT);
                self.obj_used.resize((self.s_inuse.len() * objs).div_ceil(64), 0);
                s
            }
        };
        let su = s as usize;
        let n = frames.len();
        self.s_frames[su * per..su * per + n].copy_from_slice(frames);
        self.s_frames[su * per + n..su * per + per].fill(NIL);
        debug_assert!(!block || (frames[0] % n as Pfn == 0 && frames.windows(2).all(|w| w[1] == w[0] + 1)));
        self.s_block[su] = block;
        self.s_objs[su] = nobjs as u16;
        self.total_objs += nobjs as u64;
        self.s_inuse[su] = 0;
        // The free list runs slot 0, 1, 2, ... (the order objects are handed out).
        let base = su * objs;
        for i in 0..objs {
            self.obj_next[base + i] = if i + 1 < nobjs { (i + 1) as u16 } else { NO_SLOT };
        }
        self.s_free[su] = 0;
        s
    }

    /// The slab the next object comes from (SLUB: the partial list's head; SLAB: that, else
    /// the free list's head, moved to the partial list); None when a new slab is needed.
    #[inline]
    fn slab_to_alloc_from(&mut self) -> Option<u32> {
        if self.heads[L_PARTIAL as usize] != NIL {
            return Some(self.heads[L_PARTIAL as usize]);
        }
        let s = self.heads[L_FREE as usize];
        if s == NIL {
            return None;
        }
        self.list_del(s);
        self.list_add_head(s, L_PARTIAL);
        Some(s)
    }
    /// After an allocation from slab `s`: with no free object left it goes to the full
    /// list's tail.
    #[inline]
    fn file_if_full(&mut self, s: u32) {
        if self.s_inuse[s as usize] == self.s_objs[s as usize] {
            self.list_del(s);
            self.list_add_tail(s, L_FULL);
        }
    }

    /// Take a free slot of slab `s` (the slab's freelist).
    #[inline]
    fn take_slot(&mut self, s: u32) -> u16 {
        let su = s as usize;
        let slot = self.s_free[su];
        debug_assert!(slot != NO_SLOT);
        let bit = su * self.objs_per_slab as usize + slot as usize;
        self.s_free[su] = self.obj_next[bit];
        debug_assert!(self.obj_used[bit / 64] & (1 << (bit % 64)) == 0);
        self.obj_used[bit / 64] |= 1 << (bit % 64);
        self.s_inuse[su] += 1;
        self.active_objs += 1;
        slot
    }

    /// Take up to `max` free slots of slab `s` in freelist order (`take_slot` repeated);
    /// `each` gets each slot. A slab no object of which was ever taken (its freelist still
    /// 0, 1, 2, ... as `new_slab_desc` left it) has its bits set a word at a time;
    /// `fresh`: `s` is known to be such a slab (just made).
    #[inline]
    fn take_slots(&mut self, s: u32, max: u64, fresh: bool, mut each: impl FnMut(u16)) -> u64 {
        let su = s as usize;
        let nobjs = self.s_objs[su] as usize;
        let n = (max.min((nobjs - self.s_inuse[su] as usize) as u64)) as usize;
        let base = su * self.objs_per_slab as usize;
        let pristine = fresh
            || self.s_inuse[su] == 0
            && self.s_free[su] == 0
            && self.obj_next[base..base + nobjs].iter().enumerate().all(|(i, &x)| x == if i + 1 < nobjs { (i + 1) as u16 } else { NO_SLOT });
        if !pristine {
            for _ in 0..n {
                each(self.take_slot(s));
            }
            return n as u64;
        }
        for i in 0..n {
            each(i as u16);
        }
        set_bits(&mut self.obj_used, base, n);
        self.s_free[su] = if n < nobjs { n as u16 } else { NO_SLOT };
        self.s_inuse[su] = n as u16;
        self.active_objs += n as u64;
        n as u64
    }

    /// Put a slot back on its slab's freelist; false if it was not allocated.
    #[inline]
    fn put_slot(&mut self, s: u32, slot: u16) -> bool {
        let su = s as usize;
        if su >= self.s_inuse.len() || slot as u32 >= self.objs_per_slab || self.s_list[su] == L_NONE {
            return false;
        }
        let bit = su * self.objs_per_slab as usize + slot as usize;
        if self.obj_used[bit / 64] & (1 << (bit % 64)) == 0 {
            return false;
        }
        self.obj_used[bit / 64] &= !(1 << (bit % 64));
        self.obj_next[bit] = self.s_free[su];
        self.s_free[su] = slot;
        self.s_inuse[su] -= 1;
        self.active_objs -= 1;
        true
    }

    fn is_allocated(&self, s: u32, slot: u16) -> bool {
        let su = s as usize;
        if su >= self.s_inuse.len() || slot as u32 >= self.objs_per_slab || self.s_list[su] == L_NONE {
            return false;
        }
        let bit = su * self.objs_per_slab as usize + slot as usize;
        self.obj_used[bit / 64] & (1 << (bit % 64)) != 0
    }

    fn frames_of(&self, s: u32) -> &[Pfn] {
        let per = self.pages_per_slab() as usize;
        &self.s_frames[s as usize * per..(s as usize + 1) * per]
    }
}

/// Set bits [base, base + n) of `bits`, a word at a time.
fn set_bits(bits: &mut [u64], base: usize, n: usize) {
    let (mut i, end) = (base, base + n);
    while i < end {
        let take = (64 - i % 64).min(end - i);
        let mask = if take == 64 { !0 } else { ((1u64 << take) - 1) << (i % 64) };
        debug_assert!(bits[i / 64] & mask == 0, "slot already allocated");
        bits[i / 64] |= mask;
        i += take;
    }
}

/// The first set bit of `bits` in [base, base + n), relative to `base`: a word at a time.
#[inline]
fn first_set_bit(bits: &[u64], base: usize, n: usize) -> Option<usize> {
    let (mut i, end) = (base, base + n);
    while i < end {
        let take = (64 - i % 64).min(end - i);
        let mut w = bits[i / 64] >> (i % 64);
        if take < 64 {
            w &= (1u64 << take) - 1;
        }
        if w != 0 {
            return Some(i - base + w.trailing_zeros() as usize);
        }
        i += take;
    }
    None
}

/// The frames of a slab: one block of 2^order frames (`block`: allocated and freed as
/// one, __free_pages at the cache's order), or frames taken one by one (the order-0
/// fallback, below).
#[derive(Clone, Debug, Default)]
pub struct SlabPages {
    pub frames: Vec<Pfn>,
    pub block: bool,
}

/// Every slab cache of the machine.
pub struct Slabs {
    pub allocator: SlabAllocator,
    pub caches: Vec<KmemCache>,
    /// Online CPUs: SLUB's min_objects (calculate_order) and SLAB's free_limit.
    pub nr_cpus: u32,
    /// The kmalloc caches by size, smallest first: (size, cache).
    kmalloc: Vec<(u32, CacheId)>,
    /// The cgroups' copies of the root caches (memcg_caches of each root cache's
    /// memcg_params, indexed by kmemcg_id): (root, cgroup) -> copy.
    memcg_caches: std::collections::BTreeMap<(CacheId, MemcgId), CacheId>,
}

/// Most per-cgroup cache copies the model keeps (beyond it, objects stay in the root cache).
pub const MAX_MEMCG_CACHES: usize = 16_384;

fn fls(x: u32) -> u32 {
    32 - x.leading_zeros()
}
fn get_order(size: u64) -> u32 {
    let pages = size.div_ceil(PAGE_SIZE).max(1);
    64 - (pages - 1).leading_zeros()
}
fn align_up(x: u32, a: u32) -> u32 {
    x.div_ceil(a) * a
}

/// SLUB's calc_slab_order (6.1): the smallest order from get_order(min_objects * size)
/// whose leftover is at most 1/fract_leftover of the slab.
pub fn slub_calc_slab_order(size: u32, min_objects: u32, max_order: u32, fract_leftover: u32) -> u32 {
    let min_order = 0;
    if (PAGE_SIZE as u32) / size > MAX_OBJS_PER_PAGE {
        return get_order(size as u64 * MAX_OBJS_PER_PAGE as u64) - 1;
    }
    let mut order = get_order(min_objects as u64 * size as u64).max(min_order);
    while order <= max_order {
        let slab_size = (PAGE_SIZE << order) as u32;
        let rem = slab_size % size;
        if rem <= slab_size / fract_leftover {
            break;
        }
        order += 1;
    }
    order
}

/// SLUB's calculate_order (6.1): min_objects = 4 * (fls(nr_cpus) + 1), capped by what
/// fits in a slub_max_order slab; accept a leftover of 1/16, 1/8, 1/4 of the slab while
/// reducing min_objects, then any order up to slub_max_order, then MAX_ORDER.
pub fn slub_calculate_order(size: u32, nr_cpus: u32) -> u32 {
    let mut min_objects = 4 * (fls(nr_cpus.max(1)) + 1);
    let max_objects = ((PAGE_SIZE << SLUB_MAX_ORDER) as u32) / size;
    min_objects = min_objects.min(max_objects);
    while min_objects > 1 {
        let mut fraction = 16;
        while fraction >= 4 {
            let order = slub_calc_slab_order(size, min_objects, SLUB_MAX_ORDER, fraction);
            if order <= SLUB_MAX_ORDER {
                return order;
            }
            fraction /= 2;
        }
        min_objects -= 1;
    }
    let order = slub_calc_slab_order(size, 1, SLUB_MAX_ORDER, 1);
    if order <= SLUB_MAX_ORDER {
        return order;
    }
    slub_calc_slab_order(size, 1, 10, 1)
}

/// SLAB's cache_estimate (2.6.39): objects of `size` in a slab of 2^order pages, and the
/// bytes left over. On-slab management (struct slab + one kmem_bufctl_t per object,
/// aligned) shares the slab unless it is kept off-slab (objects of PAGE_SIZE/8 or more).
pub fn slab_cache_estimate(order: u32, size: u32, align: u32, off_slab: bool) -> (u32, u32) {
    let slab_size = (PAGE_SIZE << order) as u32;
    if off_slab {
        let num = slab_size / size;
        return (num, slab_size - num * size);
    }
    let mgmt = |n: u32| align_up(SLAB_MGMT + n * BUFCTL, align);
    let mut num = slab_size.saturating_sub(SLAB_MGMT) / (size + BUFCTL);
    if num > 0 && mgmt(num) + num * size > slab_size {
        num -= 1;
    }
    if num == 0 {
        return (0, slab_size);
    }
    (num, slab_size - num * size - mgmt(num))
}

/// SLAB's calculate_slab_order (2.6.39): the first order with objects whose leftover is
/// at most 1/8 of the slab, never above slab_break_gfp_order (BREAK_GFP_ORDER_HI = 1 with
/// more than 32 MiB) unless no object fits yet.
pub fn slab_calculate_slab_order(size: u32, align: u32, off_slab: bool) -> (u32, u32) {
    const SLAB_BREAK_GFP_ORDER: u32 = 1;
    let mut best = (0, 0);
    for order in 0..=SLAB_MAX_GFPORDER {
        let (num, left) = slab_cache_estimate(order, size, align, off_slab);
        if num == 0 {
            continue;
        }
        best = (order, num);
        if order >= SLAB_BREAK_GFP_ORDER {
            break;
        }
        if left * 8 <= (PAGE_SIZE << order) as u32 {
            break;
        }
    }
    best
}

/// SLAB's enable_cpucache (2.6.39): the per-cpu array limit by object size, batchcount
/// (limit + 1) / 2, shared arrays of 8 for objects up to a page on SMP.
pub fn slab_tunables(size: u32, nr_cpus: u32) -> Tunables {
    let p = PAGE_SIZE as u32;
    let limit = if size > 131072 {
        1
    } else if size > p {
        8
    } else if size > 1024 {
        24
    } else if size > 256 {
        54
    } else {
        120
    };
    let shared = if size <= p && nr_cpus > 1 { 8 } else { 0 };
    Tunables { limit, batchcount: limit.div_ceil(2).max(1), shared }
}

impl Slabs {
    pub fn new(allocator: SlabAllocator, nr_cpus: u32) -> Slabs {
        Slabs { allocator, caches: Vec::new(), nr_cpus: nr_cpus.max(1), kmalloc: Vec::new(), memcg_caches: Default::default() }
    }

    /// kmem_cache_create: the object's aligned size and the slab order as the era's
    /// allocator computes them (SLUB: calculate_alignment, calculate_sizes,
    /// calculate_order, set_min_partial; SLAB: __kmem_cache_create's alignment,
    /// calculate_slab_order, enable_cpucache).
    pub fn kmem_cache_create(&mut self, name: &str, object_size: u32, align: u32, flags: u32) -> Result<CacheId, String> {
        if let Some(c) = self.find(name) {
            return Ok(c);
        }
        // A root cache's id names the owner of its slab pages (and its cgroups' copies'):
        // it stays below MAX_CACHES.
        if self.caches.len() >= MAX_CACHES {
            return Err(format!("kmem_cache_create {name}: the model holds at most {MAX_CACHES} slab caches"));
        }
        if object_size == 0 || object_size as u64 > (PAGE_SIZE << 10) / 2 {
            return Err(format!("kmem_cache_create {name}: object size {object_size} is not between 1 and {}", (PAGE_SIZE << 10) / 2));
        }
        // calculate_alignment: a cache-line alignment halves while the object fits twice.
        let mut a = align.max(MINALIGN);
        if flags & SLAB_HWCACHE_ALIGN != 0 {
            let mut ralign = CACHE_LINE;
            while object_size <= ralign / 2 {
                ralign /= 2;
            }
            a = a.max(ralign);
        }
        let a = align_up(a, 8);
        let id = self.caches.len() as CacheId;
        let c = match self.allocator {
            SlabAllocator::Slub => {
                // calculate_sizes: word-aligned object; the free pointer goes after the
                // object when it may not overwrite it (RCU, constructor).
                let mut size = align_up(object_size, 8);
                if flags & (SLAB_TYPESAFE_BY_RCU | SLAB_CTOR) != 0 {
                    size += 8;
                }
                let size = align_up(size, a);
                let order = slub_calculate_order(size, self.nr_cpus);
                let objs = (((PAGE_SIZE << order) as u32) / size).min(MAX_OBJS_PER_PAGE);
                let mut c = KmemCache::new(name, object_size, size, a, flags, objs, order);
                // calculate_sizes: s->min = oo_make(get_order(size), size).
                c.min_order = get_order(size as u64).min(order);
                c.min_objs = (((PAGE_SIZE << c.min_order) as u32) / size).clamp(1, MAX_OBJS_PER_PAGE);
                // set_min_partial: ilog2(size) / 2 within [MIN_PARTIAL, MAX_PARTIAL].
                c.min_partial = ((31 - size.leading_zeros()) / 2).clamp(MIN_PARTIAL, MAX_PARTIAL);
                c
            }
            SlabAllocator::Slab => {
                let size = align_up(object_size, a);
                let off_slab = size >= (PAGE_SIZE as u32) >> 3;
                let (order, objs) = slab_calculate_slab_order(size, a, off_slab);
                let mut c = KmemCache::new(name, object_size, size, a, flags, objs, order);
                c.tunables = slab_tunables(size, self.nr_cpus);
                // alloc_kmemlist / do_tune_cpucache: free objects a node keeps before it
                // destroys empty slabs.
                c.free_limit = (1 + self.nr_cpus as u64) * c.tunables.batchcount as u64 + objs as u64;
                c
            }
        };
        self.caches.push(c);
        Ok(id)
    }

    /// The copy of root cache `root` for cgroup `memcg`, if it exists.
    pub fn memcg_cache(&self, root: CacheId, memcg: MemcgId) -> Option<CacheId> {
        self.memcg_caches.get(&(root, memcg)).copied()
    }

    /// memcg_create_kmem_cache: a copy of root cache `root` for cgroup `memcg`, named
    /// `name`, with the root's geometry (create_cache with the root's sizes and flags).
    pub fn memcg_cache_create(&mut self, root: CacheId, memcg: MemcgId, name: String) -> Result<CacheId, String> {
        if self.caches.len() >= MAX_CACHES + MAX_MEMCG_CACHES {
            return Err(format!("memcg_create_kmem_cache {name}: the model holds at most {MAX_MEMCG_CACHES} per-cgroup caches"));
        }
        let r = &self.caches[root as usize];
        let mut c = KmemCache::new(&name, r.object_size, r.size, r.align, r.flags, r.objs_per_slab, r.order);
        (c.min_order, c.min_objs) = (r.min_order, r.min_objs);
        c.min_partial = r.min_partial;
        c.tunables = r.tunables;
        c.free_limit = r.free_limit;
        c.memcg = Some((root, memcg));
        let id = self.caches.len() as CacheId;
        self.caches.push(c);
        self.memcg_caches.insert((root, memcg), id);
        Ok(id)
    }

    /// The root cache of `c` (itself for a root cache).
    #[inline]
    pub fn root_of(&self, c: CacheId) -> CacheId {
        self.caches[c as usize].memcg.map_or(c, |(r, _)| r)
    }

    /// memcg_deactivate_kmem_caches + the 5.3 reparenting: cgroup `memcg`'s copies stop
    /// taking new objects and belong to `parent` from now on (their pages' charges with
    /// them); the objects in them stay.
    pub fn memcg_reparent_caches(&mut self, memcg: MemcgId, parent: MemcgId) {
        let mine: Vec<(CacheId, CacheId)> = self.memcg_caches.iter().filter(|(k, _)| k.1 == memcg).map(|(k, &c)| (k.0, c)).collect();
        for (root, c) in mine {
            self.memcg_caches.remove(&(root, memcg));
            self.caches[c as usize].memcg = Some((root, parent));
        }
    }

    /// The cache named `name`.
    pub fn find(&self, name: &str) -> Option<CacheId> {
        self.caches.iter().position(|c| c.name == name).map(|i| i as CacheId)
    }

    /// Room for `n` more slabs in `c`'s arrays (boot knows how many it fills).
    pub fn reserve_slabs(&mut self, c: CacheId, n: u64) {
        let k = &mut self.caches[c as usize];
        let n = n as usize;
        let objs = k.objs_per_slab as usize;
        let total = k.s_inuse.len() + n;
        k.s_frames.reserve_exact(n << k.order);
        k.s_inuse.reserve_exact(n);
        k.s_free.reserve_exact(n);
        k.s_list.reserve_exact(n);
        k.s_next.reserve_exact(n);
        k.s_prev.reserve_exact(n);
        k.obj_next.reserve_exact(n * objs);
        k.obj_used.reserve_exact((total * objs).div_ceil(64).saturating_sub(k.obj_used.len()));
    }

    /// Register `c` as the kmalloc cache for requests up to `size` bytes.
    pub fn add_kmalloc(&mut self, size: u32, c: CacheId) {
        let at = self.kmalloc.partition_point(|&(s, _)| s < size);
        self.kmalloc.insert(at, (size, c));
    }

    /// kmalloc_slab: the smallest kmalloc cache that holds `size` bytes.
    pub fn kmalloc_cache(&self, size: u32) -> Option<CacheId> {
        let at = self.kmalloc.partition_point(|&(s, _)| s < size);
        self.kmalloc.get(at).map(|&(_, c)| c)
    }

    pub fn cache(&self, c: CacheId) -> &KmemCache {
        &self.caches[c as usize]
    }

    pub fn counts(&self, c: CacheId) -> SlabCounts {
        self.caches[c as usize].counts()
    }

    /// Slab pages of reclaimable (SLAB_RECLAIM_ACCOUNT) or other caches.
    pub fn pages(&self, reclaimable: bool) -> u64 {
        self.caches.iter().filter(|c| c.reclaimable() == reclaimable).map(|c| c.nr_slabs() << c.order).sum()
    }

    /// Whether `h` is an allocated object.
    /// An allocated object of cache `c` to free when the caller does not keep handles (the
    /// buffer heads of pages): one of slab `prefer` while it has any, else of the oldest full
    /// slab (the head of the full list), else of the first partial slab with objects; the
    /// slab it comes from, for the next call's `prefer`. Pages leave the page cache about in
    /// the order they came, so their buffer heads are freed slab after slab.
    pub fn some_object(&self, c: CacheId, prefer: Option<u32>) -> Option<(ObjHandle, u32)> {
        let k = self.caches.get(c as usize)?;
        let has = |s: u32| (s as usize) < k.s_inuse.len() && k.s_list[s as usize] != L_NONE && k.s_inuse[s as usize] > 0;
        let s = match prefer.filter(|&s| has(s)) {
            Some(s) => s,
            None => {
                let mut s = k.heads[L_FULL as usize];
                if s == NIL {
                    s = k.heads[L_PARTIAL as usize];
                    while s != NIL && k.s_inuse[s as usize] == 0 {
                        s = k.s_next[s as usize];
                    }
                }
                if s == NIL {
                    return None;
                }
                s
            }
        };
        let base = s as usize * k.objs_per_slab as usize;
        let slot = first_set_bit(&k.obj_used, base, k.objs_per_slab as usize)?;
        Some((ObjHandle::new(c, s, slot as u16), s))
    }

    pub fn is_allocated(&self, h: ObjHandle) -> bool {
        self.caches.get(h.cache() as usize).is_some_and(|c| c.is_allocated(h.slab(), h.slot()))
    }

    /// The first frame of the slab holding `h`.
    pub fn pfn_of(&self, h: ObjHandle) -> Pfn {
        self.caches[h.cache() as usize].frames_of(h.slab())[0]
    }

    /// An object from a slab that has one free (SLUB: the partial list; SLAB: partial,
    /// then free slabs), or None when the cache needs a new slab.
    fn alloc_from_lists(&mut self, c: CacheId) -> Option<ObjHandle> {
        let k = &mut self.caches[c as usize];
        let s = k.slab_to_alloc_from()?;
        let slot = k.take_slot(s);
        k.file_if_full(s);
        Some(ObjHandle::new(c, s, slot))
    }

    /// `alloc_from_lists` up to `max` times while the same slab serves them: the objects
    /// (`each` gets their handles in order) and their count; None when the cache needs a
    /// new slab. The boot's fill, a slab at a time.
    /// `fresh`: the partial list's head is a slab `add_new_slab` has just made.
    fn alloc_bulk_from_lists(&mut self, c: CacheId, max: u64, fresh: bool, mut each: impl FnMut(ObjHandle)) -> Option<u64> {
        let k = &mut self.caches[c as usize];
        let s = k.slab_to_alloc_from()?;
        let n = k.take_slots(s, max, fresh, |slot| each(ObjHandle::new(c, s, slot)));
        k.file_if_full(s);
        Some(n)
    }

    /// A new slab on `frames` (allocate_slab / cache_grow) at the head of the partial list,
    /// no object taken.
    fn add_new_slab(&mut self, c: CacheId, pages: &SlabPages) {
        let k = &mut self.caches[c as usize];
        let s = k.new_slab_desc(&pages.frames, pages.block);
        k.list_add_head(s, L_PARTIAL);
    }

    /// A new slab on `frames` (allocate_slab / cache_grow), then one object from it.
    fn alloc_from_new_slab(&mut self, c: CacheId, pages: &SlabPages) -> ObjHandle {
        self.add_new_slab(c, pages);
        self.alloc_from_lists(c).expect("a new slab has free objects")
    }

    /// Free `h` on its slab (SLUB __slab_free, SLAB free_block). Returns the frames to give
    /// back to the page allocator when the slab is released, or an error for an object
    /// that is not allocated.
    fn free_obj(&mut self, h: ObjHandle) -> Result<Option<SlabPages>, String> {
        let allocator = self.allocator;
        let Some(k) = self.caches.get_mut(h.cache() as usize) else {
            return Err(format!("kmem_cache_free: no cache {}", h.cache()));
        };
        let s = h.slab();
        let was_full = k.s_list.get(s as usize) == Some(&L_FULL);
        if !k.put_slot(s, h.slot()) {
            return Err(format!("kmem_cache_free: {} slab {} slot {} is not allocated", k.name, s, h.slot()));
        }
        if was_full {
            // A full slab with a free object goes to the tail of the partial list
            // (SLUB add_partial(DEACTIVATE_TO_TAIL); SLAB free_block: "maximum time for
            // the other objects to be freed, too").
            k.list_del(s);
            k.list_add_tail(s, L_PARTIAL);
        }
        if k.s_inuse[s as usize] != 0 {
            return Ok(None);
        }
        let release = match allocator {
            // __slab_free: an empty slab is discarded when the node already has
            // min_partial partial slabs; else it stays on the partial list.
            SlabAllocator::Slub => k.nr_partial() >= k.min_partial as u64,
            // free_block: an empty slab is destroyed when the node holds more free
            // objects than free_limit; else it goes on slabs_free.
            SlabAllocator::Slab => {
                let free_objects = k.counts().num_objs - k.active_objs;
                free_objects > k.free_limit
            }
        };
        if release {
            Ok(Some(self.release_slab(h.cache(), s)))
        } else {
            if allocator == SlabAllocator::Slab {
                k.list_del(s);
                k.list_add_head(s, L_FREE);
            }
            Ok(None)
        }
    }

    /// Take an empty slab off its list; its frames go back to the page allocator.
    fn release_slab(&mut self, c: CacheId, s: u32) -> SlabPages {
        let k = &mut self.caches[c as usize];
        debug_assert_eq!(k.s_inuse[s as usize], 0);
        k.list_del(s);
        k.desc_free.push(s);
        k.total_objs -= k.s_objs[s as usize] as u64;
        SlabPages { frames: k.frames_of(s).iter().copied().filter(|&p| p != NIL).collect(), block: k.s_block[s as usize] }
    }

    /// Empty slabs the cache could give back: SLUB's empty partial slabs, SLAB's
    /// slabs_free (drain_freelist, kmem_cache_shrink).
    pub fn empty_slabs(&self, c: CacheId) -> u64 {
        let k = &self.caches[c as usize];
        match self.allocator {
            SlabAllocator::Slab => k.nr_free_slabs(),
            SlabAllocator::Slub => {
                let mut n = 0;
                let mut s = k.heads[L_PARTIAL as usize];
                while s != NIL {
                    n += (k.s_inuse[s as usize] == 0) as u64;
                    s = k.s_next[s as usize];
                }
                n
            }
        }
    }

    /// Host bytes the caches' arrays hold (capacity, not length).
    pub fn host_bytes(&self) -> u64 {
        self.caches
            .iter()
            .map(|k| {
                (k.s_frames.capacity() * 4
                    + k.s_inuse.capacity() * 2
                    + k.s_free.capacity() * 2
                    + k.s_list.capacity()
                    + k.s_next.capacity() * 4
                    + k.s_prev.capacity() * 4
                    + k.obj_next.capacity() * 2
                    + k.obj_used.capacity() * 8
                    + k.desc_free.capacity() * 4) as u64
            })
            .sum()
    }

    /// Check every cache's lists against its counts (tests and debug checks).
    pub fn check(&self) -> Result<(), String> {
        for k in &self.caches {
            let mut active = 0u64;
            for l in 0..3u8 {
                let mut n = 0;
                let mut s = k.heads[l as usize];
                while s != NIL {
                    let inuse = k.s_inuse[s as usize] as u32;
                    let cap = k.s_objs[s as usize] as u32;
                    let ok = match l {
                        L_FULL => inuse == cap,
                        L_FREE => inuse == 0,
                        _ => inuse < cap,
                    };
                    if !ok || k.s_list[s as usize] != l {
                        return Err(format!("{}: slab {s} with {inuse} objects on list {l}", k.name));
                    }
                    let base = s as usize * k.objs_per_slab as usize;
                    let bits = (0..k.objs_per_slab as usize).filter(|i| k.obj_used[(base + i) / 64] & (1 << ((base + i) % 64)) != 0).count();
                    if bits as u32 != inuse {
                        return Err(format!("{}: slab {s} counts {inuse} objects, bitmap {bits}", k.name));
                    }
                    active += inuse as u64;
                    n += 1;
                    s = k.s_next[s as usize];
                }
                if n != k.lens[l as usize] {
                    return Err(format!("{}: list {l} holds {n} slabs, counted {}", k.name, k.lens[l as usize]));
                }
            }
            if active != k.active_objs {
                return Err(format!("{}: {active} objects on slabs, counted {}", k.name, k.active_objs));
            }
        }
        Ok(())
    }
}

impl Mm {
    /// kmem_cache_alloc with slab pages taken at once (no watermark check): boot and tests.
    pub fn kmem_cache_alloc(&mut self, c: CacheId) -> Option<ObjHandle> {
        if let Some(h) = self.slab.alloc_from_lists(c) {
            return Some(h);
        }
        let pages = self.take_slab_frames(c)?;
        Some(self.slab.alloc_from_new_slab(c, &pages))
    }

    /// `kmem_cache_alloc` `n` times (fewer if memory runs out: the count made), a slab's
    /// objects at a time; `each` gets the handles in allocation order.
    pub fn kmem_cache_alloc_bulk(&mut self, c: CacheId, n: u64, mut each: impl FnMut(ObjHandle)) -> u64 {
        let (mut done, mut fresh) = (0, false);
        while done < n {
            match self.slab.alloc_bulk_from_lists(c, n - done, fresh, &mut each) {
                Some(k) => (done, fresh) = (done + k, false),
                None => {
                    let Some(pages) = self.take_slab_frames(c) else { break };
                    self.slab.add_new_slab(c, &pages);
                    fresh = true;
                }
            }
        }
        done
    }

    /// The frames for a new slab of `c`, owned by `KernelOwner::Slab(c)`: one block of the
    /// cache's order when the buddy lists have one, else (SLUB) a slab of its minimum
    /// order, or (SLAB) the 2^order frames one by one; None (and nothing taken) when the
    /// free list cannot supply them.
    fn take_slab_frames(&mut self, c: CacheId) -> Option<SlabPages> {
        let (n, order, min_order) = {
            let k = &self.slab.caches[c as usize];
            (k.pages_per_slab(), k.order, k.min_order)
        };
        if self.nr_free() < n {
            return None;
        }
        let owner = KernelOwner::Slab(self.slab.root_of(c));
        let mt = self.kernel_migratetype(owner);
        if order > 0 {
            if let Some(p) = self.take_typed_order(mt, order) {
                return Some(self.own_slab_block(p, n, owner));
            }
            if self.slab.allocator == SlabAllocator::Slub {
                let p = self.take_typed_order(mt, min_order)?;
                return Some(self.own_slab_block(p, 1 << min_order, owner));
            }
        }
        let mut v = Vec::with_capacity(n as usize);
        for _ in 0..n {
            v.push(self.take_kernel(owner).expect("free frames counted"));
        }
        Some(SlabPages { frames: v, block: false })
    }
    /// The block of `n` frames at `p`, just allocated, becomes `owner`'s slab pages.
    pub(crate) fn own_slab_block(&mut self, p: Pfn, n: u64, owner: KernelOwner) -> SlabPages {
        let frames: Vec<Pfn> = (p..p + n as Pfn).collect();
        for &q in &frames {
            self.own_kernel_page(q, owner);
        }
        SlabPages { frames, block: true }
    }

    /// kmem_cache_free: returns the frames given back to the page allocator (0 unless the
    /// object's slab was released).
    pub fn kmem_cache_free(&mut self, h: ObjHandle) -> u64 {
        let pages = self.slab_free_obj(h);
        self.free_slab_pages(&pages)
    }
    /// Give a released slab's frames back to the buddy lists (boot and tests: no per-CPU
    /// list); the frames freed.
    fn free_slab_pages(&mut self, pages: &SlabPages) -> u64 {
        if pages.block {
            let order = pages.frames.len().trailing_zeros();
            self.free_kernel_block(pages.frames[0], order);
        } else {
            for &p in &pages.frames {
                self.free_kernel_page(p);
            }
        }
        pages.frames.len() as u64
    }
    /// Free object `h`: the frames of its slab when the slab is released (empty, and not
    /// allocated, otherwise), still owned by the slab's cache for the caller to free.
    /// Freeing an object that is not allocated is a bug of the caller (debug builds
    /// assert; release builds ignore it).
    pub(crate) fn slab_free_obj(&mut self, h: ObjHandle) -> SlabPages {
        match self.slab.free_obj(h) {
            Ok(pages) => pages.unwrap_or_default(),
            Err(e) => {
                debug_assert!(false, "{e}");
                SlabPages::default()
            }
        }
    }

    /// Release up to `max` empty slabs of `c` (SLAB drain_freelist, SLUB
    /// __kmem_cache_shrink); returns frames freed.
    pub fn kmem_cache_drain(&mut self, c: CacheId, max: u64) -> u64 {
        let mut freed = 0;
        for _ in 0..max {
            let k = &self.slab.caches[c as usize];
            let s = match self.slab.allocator {
                SlabAllocator::Slab => k.heads[L_FREE as usize],
                SlabAllocator::Slub => {
                    let mut s = k.heads[L_PARTIAL as usize];
                    while s != NIL && k.s_inuse[s as usize] != 0 {
                        s = k.s_next[s as usize];
                    }
                    s
                }
            };
            if s == NIL {
                break;
            }
            let pages = self.slab.release_slab(c, s);
            freed += self.free_slab_pages(&pages);
        }
        freed
    }
}

impl Kernel {
    /// kmem_cache_alloc for task `tid`: an object from a partial slab, or a new slab whose
    /// pages come through the page allocator's watermarks (kswapd, direct reclaim, OOM).
    /// `Err` is what the task does before it retries, as for `page_cache_alloc`.
    pub fn kmem_cache_alloc(&mut self, tid: TaskId, c: CacheId) -> Result<ObjHandle, Step> {
        self.kmem_cache_alloc_memcg(tid, c).map(|(h, _)| h)
    }

    /// `kmem_cache_alloc`, and the memory cgroup the object is charged to (ROOT_MEMCG:
    /// not charged), which `kmem_cache_free_memcg` takes back.
    pub fn kmem_cache_alloc_memcg(&mut self, tid: TaskId, c: CacheId) -> Result<(ObjHandle, MemcgId), Step> {
        // Split reclaim: the task allocating a slab object reclaims slab (only) once slab
        // has reached S_start (mm/split_reclaim.rs).
        self.split_slab_reclaim(tid)?;
        // 5.x: a task of a cgroup allocates from the cgroup's copy of the cache, whose
        // slab pages are charged to the cgroup (memcg_kmem_get_cache, memcg_charge_slab).
        let c = self.memcg_kmem_get_cache(tid, c);
        let cache_memcg = self.mm.slab.caches[c as usize].memcg.map_or(ROOT_MEMCG, |(_, m)| m);
        // 6.x: memcg_slab_pre_alloc_hook: the object's charge comes first (it may reclaim
        // in the cgroup).
        let memcg = self.slab_account_memcg(tid, c);
        let (size, reclaimable) = {
            let k = &self.mm.slab.caches[c as usize];
            (k.size as u64 + OBJCG_PTR_BYTES, k.reclaimable())
        };
        if memcg != ROOT_MEMCG {
            self.obj_cgroup_charge(tid, memcg, size, reclaimable)?;
        }
        // The cgroup whose list_lru the object joins (the one it is charged to).
        let owner = if memcg != ROOT_MEMCG { memcg } else { cache_memcg };
        if let Some(h) = self.mm.slab.alloc_from_lists(c) {
            return Ok((h, owner));
        }
        let (n, order, min_order) = {
            let k = &self.mm.slab.caches[c as usize];
            (k.pages_per_slab(), k.order, k.min_order)
        };
        let slub = self.mm.slab.allocator == SlabAllocator::Slub;
        // SLUB's allocate_slab: "Let the initial higher-order allocation fail under memory
        // pressure so we fall-back to the minimum order allocation": the cache's order
        // first with __GFP_NORETRY and without __GFP_RECLAIM (no kswapd wake-up, no direct
        // reclaim), which succeeds while the min watermark holds at that order; then s->min
        // (the order of one object) through the allocator's full path: a slab of fewer
        // objects. SLAB's kmem_getpages asks for the cache's order through the full path.
        let try_first = slub && order > min_order;
        let fallback = if slub { 1u64 << min_order } else { n };
        if cache_memcg != ROOT_MEMCG {
            self.memcg_charge_slab(tid, cache_memcg, if try_first { n } else { fallback }, reclaimable)?;
        }
        let first = if try_first { self.take_slab_block(c) } else { None };
        let pages = match first {
            Some(pages) => pages,
            None => {
                if try_first && cache_memcg != ROOT_MEMCG {
                    // memcg_charge_slab charges the order allocated.
                    self.memcg_uncharge_slab(cache_memcg, n - fallback, reclaimable);
                }
                // A failed allocation gives the charges back (memcg_slab_post_alloc_hook,
                // memcg_uncharge_slab).
                if let Err(step) = self.alloc_pages_gate(tid, fallback) {
                    self.obj_cgroup_uncharge(memcg, size, reclaimable);
                    self.memcg_uncharge_slab(cache_memcg, fallback, reclaimable);
                    return Err(step);
                }
                let got = if slub { self.take_slab_min(c) } else { self.take_slab_frames(c) };
                let Some(pages) = got else {
                    self.obj_cgroup_uncharge(memcg, size, reclaimable);
                    self.memcg_uncharge_slab(cache_memcg, fallback, reclaimable);
                    return Err(Step::Yield);
                };
                pages
            }
        };
        let got = pages.frames.len() as u64;
        self.vm.add(VmItem::PgallocNormal, got);
        self.charge_sys(tid, self.machine.cpu_model.page_alloc_ns * got);
        Ok((self.mm.slab.alloc_from_new_slab(c, &pages), owner))
    }

    /// A slab of `c`'s minimum order (SLUB's s->min) through this CPU's lists: one frame,
    /// or a block of that order.
    fn take_slab_min(&mut self, c: CacheId) -> Option<SlabPages> {
        let min_order = self.mm.slab.caches[c as usize].min_order;
        let owner = KernelOwner::Slab(self.mm.slab.root_of(c));
        let mt = self.mm.kernel_migratetype(owner);
        let p = self.rmqueue_order(self.this_cpu(), mt, min_order)?;
        if min_order == 0 {
            self.mm.own_kernel_page(p, owner);
            return Some(SlabPages { frames: vec![p], block: false });
        }
        Some(self.mm.own_slab_block(p, 1 << min_order, owner))
    }

    /// A block of the cache's order for a new slab of `c` when the min watermark (with
    /// its boost) holds at that order (__zone_watermark_ok): from this CPU's list for the
    /// order on 6.x (5.13+), else from the buddy lists under zone->lock (`rmqueue_order`).
    fn take_slab_block(&mut self, c: CacheId) -> Option<SlabPages> {
        let (n, order) = {
            let k = &self.mm.slab.caches[c as usize];
            (k.pages_per_slab(), k.order)
        };
        if !self.mm.watermark_ok_order(order, self.mm.wmark_pages().min) {
            return None;
        }
        let owner = KernelOwner::Slab(self.mm.slab.root_of(c));
        let p = self.rmqueue_order(self.this_cpu(), self.mm.kernel_migratetype(owner), order)?;
        Some(self.mm.own_slab_block(p, n, owner))
    }

    /// kmalloc for task `tid`: an object of the smallest kmalloc cache that holds `size`.
    pub fn kmalloc(&mut self, tid: TaskId, size: u32) -> Result<ObjHandle, Step> {
        // Larger requests go to the page allocator in the kernel (kmalloc_large); the
        // model's callers stay within the largest kmalloc cache.
        debug_assert!(self.mm.slab.kmalloc_cache(size).is_some(), "kmalloc({size}) beyond the kmalloc caches");
        let c = self.mm.slab.kmalloc_cache(size).or_else(|| self.mm.slab.kmalloc.last().map(|&(_, c)| c)).expect("kmalloc caches exist");
        self.kmem_cache_alloc(tid, c)
    }

    /// SLAB's 2^order frames for a new slab of `c`, owned by `KernelOwner::Slab(c)`: one
    /// block of that order when the watermark at that order holds (`take_slab_block`);
    /// else frames one by one through this CPU's lists (the model's stand-in for
    /// kmem_getpages' reclaim at that order). None (and nothing taken) when the free pages
    /// cannot supply them.
    fn take_slab_frames(&mut self, c: CacheId) -> Option<SlabPages> {
        let k = &self.mm.slab.caches[c as usize];
        let (n, order) = (k.pages_per_slab(), k.order);
        if self.mm.nr_free() < n {
            return None;
        }
        if order > 0 {
            if let Some(pages) = self.take_slab_block(c) {
                return Some(pages);
            }
        }
        let owner = KernelOwner::Slab(self.mm.slab.root_of(c));
        let mut v = Vec::with_capacity(n as usize);
        for _ in 0..n {
            v.push(self.alloc_kernel_page(owner).expect("free frames counted"));
        }
        Some(SlabPages { frames: v, block: false })
    }

    /// Give a released slab's frames back: a block as one (__free_pages at its order: this
    /// CPU's list for that order on 6.x, the buddy lists under zone->lock before 5.13),
    /// frames taken one by one to this CPU's lists.
    pub(crate) fn free_slab_pages(&mut self, pages: &SlabPages) {
        if pages.block {
            let order = pages.frames.len().trailing_zeros();
            self.mm.disown_kernel_block(pages.frames[0], order);
            self.pcp_free_order(pages.frames[0], order, false);
        } else {
            for &p in &pages.frames {
                self.free_kernel_page(p);
            }
        }
    }

    /// kmem_cache_free (kfree): a released slab's frames count as freed pages (pgfree) and
    /// go to this CPU's lists; those of a cgroup's copy of a cache are uncharged from it
    /// (memcg_uncharge_slab).
    pub fn kmem_cache_free(&mut self, h: ObjHandle) -> u64 {
        let k = &self.mm.slab.caches[h.cache() as usize];
        let (copy_of, reclaimable) = (k.memcg, k.reclaimable());
        let pages = self.mm.slab_free_obj(h);
        self.free_slab_pages(&pages);
        let n = pages.frames.len() as u64;
        if n > 0 {
            if let Some((_, m)) = copy_of {
                self.memcg_uncharge_slab(m, n, reclaimable);
            }
        }
        self.vm.add(VmItem::Pgfree, n);
        n
    }

    /// kmem_cache_free of an object charged to cgroup `memcg` (6.x memcg_slab_free_hook:
    /// obj_cgroup_uncharge; 5.x charges slab pages, not objects).
    pub fn kmem_cache_free_memcg(&mut self, h: ObjHandle, memcg: MemcgId) -> u64 {
        if memcg != ROOT_MEMCG && self.profile.kmem_accounting {
            let k = &self.mm.slab.caches[h.cache() as usize];
            let (size, reclaimable) = (k.size as u64 + OBJCG_PTR_BYTES, k.reclaimable());
            self.obj_cgroup_uncharge(memcg, size, reclaimable);
        }
        self.kmem_cache_free(h)
    }
}

/// Objects of one cache that the model counts without naming each one (buffer heads,
/// page-cache tree nodes): any object of the cache can be the one freed, taken from the
/// slab the last one came from while it has some (`Slabs::some_object`), so that objects
/// allocated together go slab after slab. No handle is kept per object.
#[derive(Clone, Copy, Debug, Default)]
pub struct ObjPool {
    pub cache: Option<CacheId>,
    /// The slab the last freed object came from.
    draining: Option<u32>,
}

impl ObjPool {
    pub fn new(cache: Option<CacheId>) -> ObjPool {
        ObjPool { cache, draining: None }
    }
}

impl Kernel {
    /// kmem_cache_alloc of one object of `pool` without a watermark check (the callers'
    /// allocations are __GFP_NOFAIL or made after the event that needed them), charged on
    /// 6.x to cgroup `memcg` as `how` says (a task may reclaim in the cgroup first: `Err` is
    /// what it does before it tries again). Ok(false): no object (no cache in this era, or
    /// no free page for a new slab).
    pub(crate) fn pool_alloc(&mut self, pool: ObjPool, how: ObjCharge, memcg: MemcgId) -> Result<bool, Step> {
        let Some(c) = pool.cache else { return Ok(false) };
        let memcg = if self.profile.kmem_accounting { memcg } else { ROOT_MEMCG };
        let (size, reclaimable) = {
            let k = &self.mm.slab.caches[c as usize];
            (k.size as u64 + OBJCG_PTR_BYTES, k.reclaimable())
        };
        if memcg != ROOT_MEMCG {
            self.obj_cgroup_charge_by(how, memcg, size, reclaimable)?;
        }
        let slabs = self.mm.slab.caches[c as usize].nr_slabs();
        if self.mm.kmem_cache_alloc(c).is_none() {
            self.obj_cgroup_uncharge(memcg, size, reclaimable);
            return Ok(false);
        }
        let k = &self.mm.slab.caches[c as usize];
        let new_pages = (k.nr_slabs() - slabs) * k.pages_per_slab();
        self.vm.add(VmItem::PgallocNormal, new_pages);
        Ok(true)
    }

    /// kmem_cache_free of one object of `*pool`, uncharged on 6.x from cgroup `memcg`.
    pub(crate) fn pool_free(&mut self, pool: &mut ObjPool, memcg: MemcgId) {
        let Some(c) = pool.cache else { return };
        let Some((h, s)) = self.mm.slab.some_object(c, pool.draining) else { return };
        pool.draining = Some(s);
        let memcg = if self.profile.kmem_accounting { memcg } else { ROOT_MEMCG };
        self.kmem_cache_free_memcg(h, memcg);
    }
}

/// A cache the kernel creates at boot: name, object size, alignment, flags, and its share
/// (per mille) of the reclaimable or unreclaimable slab an idle system holds.
pub struct BootCache {
    pub name: &'static str,
    pub object_size: u32,
    pub align: u32,
    pub flags: u32,
    pub share: u32,
}

const R: u32 = SLAB_RECLAIM_ACCOUNT;
const H: u32 = SLAB_HWCACHE_ALIGN;
const C: u32 = SLAB_CTOR;
const A: u32 = SLAB_ACCOUNT;

const fn bc(name: &'static str, object_size: u32, flags: u32, share: u32) -> BootCache {
    BootCache { name, object_size, align: 0, flags, share }
}

/// 5.x/6.x (SLUB) boot caches. Object sizes are the x86-64 structures of 6.x (struct
/// dentry 192, ext4_inode_info 1120, xa_node 576, buffer_head 104, ...); the caches with
/// constructors (inode_init_once, radix_tree_node_ctor) keep SLUB's free pointer outside
/// the object; the dentry and inode caches are SLAB_ACCOUNT (charged to cgroups). The first reclaimable and the first other cache fill what the shares leave.
/// radix_tree_node has no share: its objects are the nodes of the page-cache trees, the
/// idle system's cached files included (`mm::radix_tree`).
pub const BOOT_CACHES_SLUB: &[BootCache] = &[
    bc("dentry", 192, R | A, 600),
    bc("ext4_inode_cache", 1120, R | C | A, 200),
    bc("radix_tree_node", 576, R | C, 0),
    bc("buffer_head", 104, R, 50),
    bc("inode_cache", 616, R | C | A, 15),
    bc("proc_inode_cache", 688, R | C | A, 15),
    bc("kmalloc-64", 64, 0, 150),
    bc("kmalloc-8", 8, 0, 20),
    bc("kmalloc-16", 16, 0, 30),
    bc("kmalloc-32", 32, 0, 40),
    bc("kmalloc-96", 96, 0, 30),
    bc("kmalloc-128", 128, 0, 60),
    bc("kmalloc-192", 192, 0, 40),
    bc("kmalloc-256", 256, 0, 40),
    bc("kmalloc-512", 512, 0, 60),
    bc("kmalloc-1k", 1024, 0, 60),
    bc("kmalloc-2k", 2048, 0, 50),
    bc("kmalloc-4k", 4096, 0, 50),
    bc("kmalloc-8k", 8192, 0, 20),
    bc("vm_area_struct", 184, H, 60),
    bc("anon_vma", 104, 0, 20),
    bc("filp", 192, H, 30),
    bc("task_struct", 5888, H, 40),
    bc("mm_struct", 1600, H, 20),
    bc("kernfs_node_cache", 136, 0, 90),
    bc("shmem_inode_cache", 744, C | A, 20),
];

/// 2.6.39 (SLAB) boot caches, 2.6.39 x86-64 sizes (struct dentry 192, ext3_inode_info
/// 800, radix_tree_node 560, buffer_head 104); kmalloc caches are size-N (kmalloc_sizes.h).
pub const BOOT_CACHES_SLAB: &[BootCache] = &[
    bc("dentry", 192, R, 600),
    bc("ext3_inode_cache", 800, R, 200),
    bc("radix_tree_node", 560, R, 0),
    bc("buffer_head", 104, R, 50),
    bc("inode_cache", 560, R, 15),
    bc("proc_inode_cache", 656, R, 15),
    bc("size-64", 64, 0, 150),
    bc("size-32", 32, 0, 60),
    bc("size-96", 96, 0, 30),
    bc("size-128", 128, 0, 60),
    bc("size-192", 192, 0, 40),
    bc("size-256", 256, 0, 40),
    bc("size-512", 512, 0, 60),
    bc("size-1024", 1024, 0, 60),
    bc("size-2048", 2048, 0, 50),
    bc("size-4096", 4096, 0, 50),
    bc("size-8192", 8192, 0, 20),
    bc("vm_area_struct", 176, H, 60),
    bc("anon_vma", 72, H, 20),
    bc("filp", 256, H, 30),
    bc("task_struct", 5856, 0, 40),
    bc("mm_struct", 1408, H, 20),
    bc("sysfs_dir_cache", 144, 0, 90),
    bc("shmem_inode_cache", 784, 0, 20),
];

/// 2.4 (SLAB) boot caches (2.4 i386-era names: dentry_cache, inode_cache, size-N).
pub const BOOT_CACHES_SLAB24: &[BootCache] = &[
    bc("dentry_cache", 128, R, 600),
    bc("inode_cache", 512, R, 300),
    bc("buffer_head", 128, R, 100),
    bc("size-64", 64, 0, 300),
    bc("size-32", 32, 0, 100),
    bc("size-128", 128, 0, 150),
    bc("size-256", 256, 0, 100),
    bc("size-512", 512, 0, 100),
    bc("size-1024", 1024, 0, 100),
    bc("size-2048", 2048, 0, 50),
    bc("size-4096", 4096, 0, 50),
    bc("vm_area_struct", 96, 0, 50),
    bc("filp", 128, 0, 50),
];

/// The kmalloc size of a cache name (kmalloc-N, kmalloc-Nk, size-N).
fn kmalloc_size(name: &str) -> Option<u32> {
    let n = name.strip_prefix("kmalloc-").or_else(|| name.strip_prefix("size-"))?;
    match n.strip_suffix('k') {
        Some(k) => k.parse::<u32>().ok().map(|v| v * 1024),
        None => n.parse().ok(),
    }
}

impl Slabs {
    /// The boot caches of the era (kmem_cache_init, kmem_cache_init_late and the caches
    /// subsystems create at boot: dcache_init, inode_init, buffer_init, radix_tree_init).
    pub fn boot_caches(&self, linux24: bool) -> &'static [BootCache] {
        match (self.allocator, linux24) {
            (SlabAllocator::Slub, _) => BOOT_CACHES_SLUB,
            (SlabAllocator::Slab, false) => BOOT_CACHES_SLAB,
            (SlabAllocator::Slab, true) => BOOT_CACHES_SLAB24,
        }
    }

    /// Create the era's boot caches and register the kmalloc ones.
    pub fn kmem_cache_init(&mut self, linux24: bool) {
        for b in self.boot_caches(linux24) {
            let c = self.kmem_cache_create(b.name, b.object_size, b.align, b.flags).expect("boot caches fit");
            if let Some(sz) = kmalloc_size(b.name) {
                self.add_kmalloc(sz, c);
            }
        }
    }
}

impl Mm {
    /// Fill the boot caches so that reclaimable caches hold `reclaimable` pages and the
    /// others `other` pages, each cache its share in whole slabs (the first cache of each
    /// kind takes what the shares leave). Of the first reclaimable cache (the dentries),
    /// `unused` pages' worth of whole slabs hold objects no one uses — returned in
    /// allocation order for the shrinker that stands for the dcache LRU. So that those
    /// slabs go back to the page allocator when the objects are freed, the in-use slabs
    /// before them include partial ones (SLUB keeps min_partial empty slabs otherwise).
    pub fn boot_populate_slab(&mut self, boot: &[BootCache], reclaimable: u64, other: u64, unused: u64) -> Vec<ObjHandle> {
        let mut unused_objs = Vec::new();
        for recl in [true, false] {
            let total = if recl { reclaimable } else { other };
            let ids: Vec<CacheId> = boot.iter().filter(|b| (b.flags & SLAB_RECLAIM_ACCOUNT != 0) == recl).filter_map(|b| self.slab.find(b.name)).collect();
            let Some((&filler, rest)) = ids.split_first() else { continue };
            let mut left = total;
            for &c in rest {
                let share = boot.iter().find(|b| self.slab.caches[c as usize].name == b.name).map_or(0, |b| b.share) as u64;
                let pps = self.slab.caches[c as usize].pages_per_slab();
                let budget = total * share / 1000;
                let slabs = (budget / pps).min(left / pps);
                self.fill_slabs(c, slabs, None);
                left -= slabs * pps;
            }
            let pps = self.slab.caches[filler as usize].pages_per_slab();
            if recl {
                let unused = (unused / pps).min(left / pps);
                let used = left / pps - unused;
                self.slab.reserve_slabs(filler, left / pps);
                self.fill_slabs(filler, used, Some(0));
                let objs = self.slab.caches[filler as usize].objs_per_slab as u64;
                unused_objs.reserve_exact((unused * objs) as usize);
                self.kmem_cache_alloc_bulk(filler, unused * objs, |h| unused_objs.push(h));
            } else {
                self.fill_slabs(filler, left / pps, None);
            }
        }
        unused_objs
    }

    /// Allocate `slabs` slabs' worth of objects in `c`; with `holes`, then free one object
    /// of each of the last min_partial slabs so that they are partial.
    fn fill_slabs(&mut self, c: CacheId, slabs: u64, holes: Option<u32>) {
        self.slab.reserve_slabs(c, slabs);
        let objs = self.slab.caches[c as usize].objs_per_slab as u64;
        let mut last = Vec::new();
        let mut i = 0u64;
        let want = holes.is_some();
        let made = self.kmem_cache_alloc_bulk(c, slabs * objs, |h| {
            if want && i % objs == 0 {
                last.push(h);
            }
            i += 1;
        });
        if made < slabs * objs {
            return;
        }
        if holes.is_some() && objs > 1 {
            let keep = self.slab.caches[c as usize].min_partial.max(1) as usize;
            for &h in last.iter().rev().take(keep) {
                self.kmem_cache_free(h);
            }
        }
    }
}

impl Kernel {
    /// The caches as /proc/slabinfo lists them: newest first (slab_caches / cache_chain
    /// take new caches at the head). SLUB reports every slab as active and no tunables;
    /// SLAB its tunables, and slabs_free as inactive.
    pub fn slabinfo(&self) -> Vec<memtwin_procfs::SlabInfo> {
        // The cgroups' copies are not listed: their counts add to their root cache's line
        // (memcg_accumulate_slabinfo, 5.x).
        let mut sum: Vec<SlabCounts> = self.mm.slab.caches.iter().map(|c| if c.memcg.is_none() { c.counts() } else { SlabCounts::default() }).collect();
        for c in self.mm.slab.caches.iter() {
            if let Some((r, _)) = c.memcg {
                let (n, s) = (c.counts(), &mut sum[r as usize]);
                s.active_objs += n.active_objs;
                s.num_objs += n.num_objs;
                s.active_slabs += n.active_slabs;
                s.num_slabs += n.num_slabs;
            }
        }
        self.slabinfo_of(self.mm.slab.caches.iter().enumerate().rev().filter(|(_, c)| c.memcg.is_none()).map(|(i, c)| (c, sum[i])))
    }

    /// The copies of caches that belong to cgroup `memcg`, as v1 memory.kmem.slabinfo
    /// lists them (memcg_slab_show: the cgroup's kmem_caches, newest first; 5.x).
    pub fn memcg_slabinfo(&self, memcg: MemcgId) -> Vec<memtwin_procfs::SlabInfo> {
        self.slabinfo_of(self.mm.slab.caches.iter().rev().filter(|c| c.memcg.is_some_and(|(_, m)| m == memcg)).map(|c| (c, c.counts())))
    }

    fn slabinfo_of<'a>(&self, caches: impl Iterator<Item = (&'a KmemCache, SlabCounts)>) -> Vec<memtwin_procfs::SlabInfo> {
        let slub = self.mm.slab.allocator == SlabAllocator::Slub;
        caches
            .map(|(c, n)| {
                memtwin_procfs::SlabInfo {
                    name: c.name.clone(),
                    active_objs: n.active_objs,
                    num_objs: n.num_objs,
                    objsize: c.size,
                    objperslab: c.objs_per_slab,
                    pagesperslab: 1 << c.order,
                    limit: if slub { 0 } else { c.tunables.limit },
                    batchcount: if slub { 0 } else { c.tunables.batchcount },
                    sharedfactor: if slub { 0 } else { c.tunables.shared },
                    active_slabs: if slub { n.num_slabs } else { n.active_slabs },
                    num_slabs: n.num_slabs,
                    sharedavail: 0,
                }
            })
            .collect()
    }
}
