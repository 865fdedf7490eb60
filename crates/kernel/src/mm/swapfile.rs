//! Swap areas and slots (mm/swapfile.c): areas with priorities, slot allocation in order
//! within an area (the cluster allocator keeps swap-outs sequential), freeing, and
//! swapon/swapoff (try_to_unuse reads every swapped page back in).

use super::{Content, PAGE_SIZE};
use crate::Kernel;
use memtwin_machine::SwapKind;

/// Where an area's slots live.
#[derive(Clone, Debug, PartialEq)]
pub enum AreaKind {
    /// A partition or a swap file: slot N is at byte `base + (N + 1) * 4096` of device `dev`
    /// (the first page holds the swap header).
    Block { dev: u32, base: u64 },
    /// zram: compressed in RAM.
    Zram { algorithm: String },
}

#[derive(Clone, Debug)]
pub struct SwapArea {
    pub name: String,
    pub kind: AreaKind,
    pub pages: u64,
    pub used: u64,
    pub priority: i32,
    pub active: bool,
    /// First global slot number of this area.
    pub start: u32,
    /// Slots never used yet start here (allocation goes in order through them, as the
    /// cluster allocator keeps swap-out sequential); freed slots are reused from a stack.
    pub cursor: u32,
    pub free_slots: Vec<u32>,
    /// zram: bytes stored after compression, pages stored, same-filled pages.
    pub zram_compr_bytes: u64,
    pub zram_pages: u64,
    pub zram_same: u64,
    /// Frames zram's allocator holds for the compressed data.
    pub zram_frames: u64,
}

/// Per-slot state: 0 free; otherwise in use, with the workingset shadow of the page
/// that was evicted to it (bit 31 marks use) and, for zram, its compressed size.
#[derive(Default)]
pub struct SwapMap {
    pub state: Vec<u32>,
    pub zsize: Vec<u16>,
    /// The page each slot was last given to, (mapping, index) packed as mapping << 32 |
    /// index, stored inverted so that a slot never given out holds 0 (the map is allocated
    /// zeroed, its memory untouched until used): read and written through `owner` and
    /// `set_owner`. What swap_cluster_readahead finds at a slot (the kernel reads the slot
    /// and looks the page up by its swap entry). Checked against the mapping's entry before
    /// use: a freed slot keeps a stale owner.
    owner: Vec<u64>,
}

impl SwapMap {
    /// The slot is in use and keeps the workingset shadow of the page evicted to it.
    #[inline]
    pub fn has_shadow(&self, slot: u32) -> bool {
        self.state.get(slot as usize).is_some_and(|&st| st & !IN_USE != 0)
    }
    /// The page slot `slot` was last given to, packed (mapping << 32 | index), if known.
    #[inline]
    pub fn owner(&self, slot: u32) -> Option<u64> {
        self.owner.get(slot as usize).map(|&o| !o).filter(|&o| o != NO_OWNER)
    }
    /// Record the page given slot `slot` (`NO_OWNER` when it cannot be packed).
    #[inline]
    pub fn set_owner(&mut self, slot: u32, packed: u64) {
        if let Some(o) = self.owner.get_mut(slot as usize) {
            *o = !packed;
        }
    }
}

/// Swap slots with a read or a write in flight and the page (mapping, index) each is for:
/// what the kernel's bio carries in its pages, kept here per slot because a request names
/// only its first slot and length. Looked up by slot in chunks of 4096 slots allocated
/// while one of their slots is in flight (slots are taken in order, so the slots of the
/// requests in flight sit in few chunks and a lookup touches memory the one before did,
/// where a hash table would scatter them).
#[derive(Default)]
pub struct SlotsInFlight {
    chunks: Vec<Option<Box<InFlightChunk>>>,
    spare: Vec<Box<InFlightChunk>>,
    len: usize,
}

const IN_FLIGHT_CHUNK: usize = 4096;

/// Empty chunks kept for reuse.
const SPARE_CHUNKS: usize = 4;

struct InFlightChunk {
    present: [u64; IN_FLIGHT_CHUNK / 64],
    pages: [(u32, u64); IN_FLIGHT_CHUNK],
    n: u32,
}

impl InFlightChunk {
    /// A new, empty chunk. Out of line: the 64 KiB value is built on the stack before it
    /// is boxed, and a caller that inlined this would probe that much stack on every call.
    #[cold]
    #[inline(never)]
    fn new_boxed() -> Box<InFlightChunk> {
        Box::new(InFlightChunk { present: [0; IN_FLIGHT_CHUNK / 64], pages: [(0, 0); IN_FLIGHT_CHUNK], n: 0 })
    }
}

impl SlotsInFlight {
    /// Record the page of `slot`; returns the page recorded there before, if any.
    pub fn insert(&mut self, slot: u32, page: (u32, u64)) -> Option<(u32, u64)> {
        let (c, i) = (slot as usize / IN_FLIGHT_CHUNK, slot as usize % IN_FLIGHT_CHUNK);
        if self.chunks.len() <= c {
            self.chunks.resize_with(c + 1, || None);
        }
        let spare = &mut self.spare;
        let ch = self.chunks[c].get_or_insert_with(|| spare.pop().unwrap_or_else(InFlightChunk::new_boxed));
        let old = std::mem::replace(&mut ch.pages[i], page);
        let bit = 1u64 << (i % 64);
        if ch.present[i / 64] & bit != 0 {
            return Some(old);
        }
        ch.present[i / 64] |= bit;
        ch.n += 1;
        self.len += 1;
        None
    }
    /// Forget `slot`, returning its page if it was recorded.
    pub fn remove(&mut self, slot: u32) -> Option<(u32, u64)> {
        let (c, i) = (slot as usize / IN_FLIGHT_CHUNK, slot as usize % IN_FLIGHT_CHUNK);
        let ch = self.chunks.get_mut(c)?.as_mut()?;
        let bit = 1u64 << (i % 64);
        if ch.present[i / 64] & bit == 0 {
            return None;
        }
        ch.present[i / 64] &= !bit;
        ch.n -= 1;
        self.len -= 1;
        let page = ch.pages[i];
        if ch.n == 0 {
            // Keep a few chunks for the next requests (the slots in flight move from one
            // chunk to the next as they are taken); give the rest back.
            let ch = self.chunks[c].take().expect("chunk present");
            if self.spare.len() < SPARE_CHUNKS {
                self.spare.push(ch);
            }
        }
        Some(page)
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn len(&self) -> usize {
        self.len
    }
}

/// `SwapMap::owner` of a slot whose page cannot be recorded.
pub const NO_OWNER: u64 = u64::MAX;

const IN_USE: u32 = 1 << 31;

/// SWAP_SLOTS_CACHE_SIZE = SWAP_BATCH (include/linux/swap_slots.h, include/linux/swap.h).
pub const SWAP_SLOTS_CACHE_SIZE: usize = 64;

/// One CPU's struct swap_slots_cache: slots allocated in a batch and not yet used (handed
/// out from the end: the batch is stored in reverse), and freed slots not yet returned.
#[derive(Clone, Debug, Default)]
pub struct SwapSlotsCache {
    pub slots: Vec<u32>,
    pub slots_ret: Vec<u32>,
}

impl Kernel {
    pub(crate) fn boot_swap(&mut self) -> Result<(), String> {
        let mut next_prio = -2;
        for s in self.machine.swaps.clone() {
            let priority = s.priority.unwrap_or_else(|| {
                let p = next_prio;
                next_prio -= 1;
                p
            });
            let a = self.add_swap_area(&s.kind, s.size_bytes, priority, s.enabled)?;
            if s.enabled {
                self.log_swapon(a);
            }
        }
        Ok(())
    }

    /// The line sys_swapon (mm/swapfile.c, enable_swap_info's caller) logs when an area is
    /// switched on: usable size, priority, extents and span, "SS" for a non-rotational
    /// device (SWP_SOLIDSTATE). 2.4 logged its own shorter line.
    pub fn log_swapon(&mut self, area: usize) {
        let a = &self.swap.areas[area];
        let kb = a.pages * (PAGE_SIZE / 1024);
        let ss = match a.kind {
            AreaKind::Zram { .. } => true,
            AreaKind::Block { dev, .. } => !self.block.devs[dev as usize].disk.model.rotational,
        };
        let line = if self.machine.kernel == memtwin_machine::KernelProfile::Linux24 {
            format!("Adding Swap: {kb}k swap-space (priority {})", a.priority)
        } else {
            format!("Adding {kb}k swap on {}.  Priority:{} extents:1 across:{kb}k {}", a.name, a.priority, if ss { "SS" } else { "" })
        };
        self.printk(crate::printk::KERN_INFO, &line);
    }

    /// Register an area (mkswap + swapon); returns its index.
    pub fn add_swap_area(&mut self, kind: &SwapKind, size_bytes: u64, priority: i32, active: bool) -> Result<usize, String> {
        let (name, kind) = match kind {
            SwapKind::Partition { disk } => {
                let dev = self.block.find(disk).ok_or_else(|| format!("no block device {disk}"))?;
                (format!("/dev/{disk}"), AreaKind::Block { dev, base: 0 })
            }
            SwapKind::File { path } => {
                let mount = self.fs.mount_of(path).ok_or_else(|| format!("{path}: not on a mounted filesystem"))?;
                let dev = self.fs.mounts[mount as usize].dev.ok_or_else(|| format!("{path}: swap files on tmpfs are not supported"))?;
                // The file's blocks are contiguous, far from other files.
                (path.clone(), AreaKind::Block { dev, base: (1u64 << 46) + self.swap.areas.len() as u64 * (1 << 40) })
            }
            SwapKind::Zram { algorithm } => (format!("/dev/zram{}", self.swap.areas.iter().filter(|a| matches!(a.kind, AreaKind::Zram { .. })).count()), AreaKind::Zram { algorithm: algorithm.clone() }),
        };
        let pages = (size_bytes / PAGE_SIZE).saturating_sub(1);
        let start = self.mm.swap_map.state.len() as u32;
        if start as u64 + pages >= super::MAX_SWAP_SLOTS {
            return Err("swap space larger than 2 TiB is not modelled".into());
        }
        // A host that cannot hold the swap map is an error, not an abort. The map grows
        // zeroed and untouched (a free slot with no owner is all zeros): a machine with a
        // large swap area costs the host memory only for the slots it uses.
        let oom = |e: String| format!("cannot allocate the swap map for {pages} slots: {e}");
        let end = start as usize + pages as usize;
        crate::host::try_grow_zeroed(&mut self.mm.swap_map.state, end).map_err(oom)?;
        self.mm.swapper.add_area(start, pages);
        crate::host::try_grow_zeroed(&mut self.mm.swap_map.owner, end).map_err(oom)?;
        if matches!(kind, AreaKind::Zram { .. }) {
            crate::host::try_grow_zeroed(&mut self.mm.swap_map.zsize, end).map_err(oom)?;
        }
        self.swap.areas.push(SwapArea {
            name,
            kind,
            pages,
            used: 0,
            priority,
            active,
            start,
            cursor: start,
            free_slots: Vec::new(),
            zram_compr_bytes: 0,
            zram_pages: 0,
            zram_same: 0,
            zram_frames: 0,
        });
        Ok(self.swap.areas.len() - 1)
    }

    /// (SwapTotal, SwapFree) in pages.
    pub fn swap_totals(&self) -> (u64, u64) {
        let act = self.swap.areas.iter().filter(|a| a.active);
        let total: u64 = act.clone().map(|a| a.pages).sum();
        let used: u64 = act.map(|a| a.used).sum();
        (total, total - used)
    }

    /// get_swap_pages: is there a free slot in an active area?
    pub fn swap_available(&self) -> bool {
        self.swap.areas.iter().any(|a| a.active && a.used < a.pages)
    }

    /// vm_swap_full: more than half of swap is in use (swap-cache copies are then dropped).
    pub fn vm_swap_full(&self) -> bool {
        let (t, f) = self.swap_totals();
        t > 0 && f * 2 < t
    }

    pub fn area_of(&self, slot: u32) -> usize {
        self.swap.areas.iter().rposition(|a| a.start <= slot).unwrap_or(0)
    }

    /// folio_alloc_swap (get_swap_page before 5.16): one slot for a page reclaim swaps
    /// out. With the per-CPU slot caches (mm/swap_slots.c, 4.11 .. 6.13) it comes from this
    /// CPU's batch, refilled SWAP_SLOTS_CACHE_SIZE at a time by refill_swap_slots_cache;
    /// otherwise (or when the caches are deactivated) straight from get_swap_pages.
    pub fn get_swap_slot(&mut self) -> Option<u32> {
        if self.profile.swap_slots_cache && self.check_cache_active() {
            let cpu = self.swap_slots_cpu();
            if self.swap.slot_caches[cpu].slots.is_empty() {
                // refill_swap_slots_cache -> get_swap_pages(SWAP_SLOTS_CACHE_SIZE, ...):
                // the batch is taken in allocation order and handed out in that order.
                let mut batch = std::mem::take(&mut self.swap.slot_caches[cpu].slots);
                while batch.len() < SWAP_SLOTS_CACHE_SIZE {
                    match self.get_swap_page_global() {
                        Some(s) => batch.push(s),
                        None => break,
                    }
                }
                batch.reverse();
                self.swap.slot_caches[cpu].slots = batch;
            }
            if let Some(s) = self.swap.slot_caches[cpu].slots.pop() {
                return Some(s);
            }
        }
        self.get_swap_page_global()
    }

    /// The slot get_swap_slot would hand out next (this CPU's cache, or the allocator's
    /// cursor in the area it would use).
    pub fn peek_swap_slot(&self) -> Option<u32> {
        if self.profile.swap_slots_cache && self.swap.slot_cache_active {
            let cpu = self.current.map_or(0, |t| self.sched.task_cpu(t) as usize);
            if let Some(&s) = self.swap.slot_caches.get(cpu).and_then(|c| c.slots.last()) {
                return Some(s);
            }
        }
        let area = (0..self.swap.areas.len())
            .filter(|&i| self.swap.areas[i].active && self.swap.areas[i].used < self.swap.areas[i].pages)
            .max_by_key(|&i| (self.swap.areas[i].priority, std::cmp::Reverse(i)))?;
        let a = &self.swap.areas[area];
        if a.cursor < a.start + a.pages as u32 { Some(a.cursor) } else { a.free_slots.last().copied() }
    }

    /// The CPU whose slot cache the running task uses (raw_cpu_ptr(&swp_slots)).
    fn swap_slots_cpu(&mut self) -> usize {
        let n = self.machine.cpus.max(1) as usize;
        if self.swap.slot_caches.len() < n {
            self.swap.slot_caches.resize_with(n, SwapSlotsCache::default);
        }
        self.current.map_or(0, |t| self.sched.task_cpu(t) as usize).min(n - 1)
    }

    /// check_cache_active (mm/swap_slots.c): the caches are switched on while more than
    /// THRESHOLD_ACTIVATE_SWAP_SLOTS_CACHE free slots per online CPU remain, and off (all
    /// cached slots drained back) when fewer than THRESHOLD_DEACTIVATE_SWAP_SLOTS_CACHE do.
    fn check_cache_active(&mut self) -> bool {
        let (_, free) = self.swap_totals();
        let cpus = self.machine.cpus.max(1) as u64;
        if !self.swap.slot_cache_active {
            if free > cpus * 5 * SWAP_SLOTS_CACHE_SIZE as u64 {
                self.swap.slot_cache_active = true;
            }
        } else if free < cpus * 2 * SWAP_SLOTS_CACHE_SIZE as u64 {
            // deactivate_swap_slots_cache -> drain_slots_cache_cpu on every CPU.
            self.swap.slot_cache_active = false;
            self.drain_swap_slots_caches();
        }
        self.swap.slot_cache_active
    }

    /// drain_slots_cache_cpu on every CPU (swapoff, deactivation): cached slots, allocated
    /// and returned, go back to the swap map.
    pub fn drain_swap_slots_caches(&mut self) {
        for cpu in 0..self.swap.slot_caches.len() {
            let c = std::mem::take(&mut self.swap.slot_caches[cpu]);
            for s in c.slots.into_iter().chain(c.slots_ret) {
                self.swap_entry_free(s);
            }
        }
    }

    /// Slots held by the per-CPU caches (allocated, not yet used; freed, not yet returned).
    pub fn swap_slots_cached(&self) -> u64 {
        self.swap.slot_caches.iter().map(|c| (c.slots.len() + c.slots_ret.len()) as u64).sum()
    }

    /// get_swap_pages / scan_swap_map_slots: a free slot from the highest-priority active
    /// area with room, allocated in order from the area's cursor.
    fn get_swap_page_global(&mut self) -> Option<u32> {
        let area = (0..self.swap.areas.len())
            .filter(|&i| self.swap.areas[i].active && self.swap.areas[i].used < self.swap.areas[i].pages)
            .max_by_key(|&i| (self.swap.areas[i].priority, std::cmp::Reverse(i)))?;
        let a = &mut self.swap.areas[area];
        let end = a.start + a.pages as u32;
        let s = if a.cursor < end {
            a.cursor += 1;
            a.cursor - 1
        } else {
            a.free_slots.pop()?
        };
        debug_assert_eq!(self.mm.swap_map.state[s as usize], 0);
        self.mm.swap_map.state[s as usize] = IN_USE;
        a.used += 1;
        Some(s)
    }

    /// The last reference to a slot is gone (swap_free, free_swap_and_cache, the swap cache
    /// dropping its copy). free_swap_slot (4.11 .. 6.13) parks it in this CPU's return
    /// batch, which goes back to the swap map (swapcache_free_entries) when it holds
    /// SWAP_SLOTS_CACHE_SIZE; until then the slot still counts as used. Without the caches
    /// it is freed at once.
    pub fn swap_free(&mut self, slot: u32) {
        if self.mm.swap_map.state[slot as usize] == 0 {
            return;
        }
        if self.profile.swap_slots_cache && self.swap.slot_cache_active {
            // The workingset shadow goes with the swap cache entry; the slot stays allocated.
            self.mm.swap_map.state[slot as usize] = IN_USE;
            self.mm.swapper.set_shadow(slot, false);
            let cpu = self.swap_slots_cpu();
            if self.swap.slot_caches[cpu].slots_ret.len() >= SWAP_SLOTS_CACHE_SIZE {
                let batch = std::mem::take(&mut self.swap.slot_caches[cpu].slots_ret);
                for s in &batch {
                    self.swap_entry_free(*s);
                }
                let mut batch = batch;
                batch.clear();
                self.swap.slot_caches[cpu].slots_ret = batch;
            }
            self.swap.slot_caches[cpu].slots_ret.push(slot);
            return;
        }
        self.swap_entry_free(slot);
    }

    /// swap_entry_free / swap_range_free: the slot is free in the swap map again (zram
    /// gives its memory back).
    fn swap_entry_free(&mut self, slot: u32) {
        let st = &mut self.mm.swap_map.state[slot as usize];
        if *st == 0 {
            return;
        }
        *st = 0;
        // swap_range_free -> clear_shadow_from_swap_cache (5.9+).
        self.mm.swapper.set_shadow(slot, false);
        self.memcg_uncharge_swap(slot);
        let ai = self.area_of(slot);
        self.swap.areas[ai].used -= 1;
        self.swap.areas[ai].free_slots.push(slot);
        if matches!(self.swap.areas[ai].kind, AreaKind::Zram { .. }) {
            let z = std::mem::take(&mut self.mm.swap_map.zsize[slot as usize]);
            let a = &mut self.swap.areas[ai];
            a.zram_pages -= 1;
            if z == 0 {
                a.zram_same -= 1;
            }
            a.zram_compr_bytes -= z as u64;
            self.zram_fit_frames(ai);
        }
    }

    /// The workingset shadow stored with a swapped-out page.
    pub fn swap_shadow(&self, slot: u32) -> Option<u32> {
        let st = self.mm.swap_map.state[slot as usize];
        if st & !IN_USE != 0 { Some(st & !IN_USE) } else { None }
    }
    pub fn set_swap_shadow(&mut self, slot: u32, shadow: u32) {
        self.mm.swap_map.state[slot as usize] = IN_USE | (shadow & !IN_USE);
        self.mm.swapper.set_shadow(slot, shadow & !IN_USE != 0);
    }
    /// A page swapped in takes its slot's entry in the swap cache: the shadow is gone
    /// (add_to_swap_cache returns it to the caller for workingset_refault).
    pub fn clear_swap_shadow(&mut self, slot: u32) {
        if self.mm.swap_map.has_shadow(slot) {
            self.mm.swap_map.state[slot as usize] = IN_USE;
            self.mm.swapper.set_shadow(slot, false);
        }
    }

    /// zram stores a page: compressed size by content (same-filled pages are a marker).
    pub fn zram_store(&mut self, slot: u32, content: Content) {
        let ai = self.area_of(slot);
        let size: u16 = match content {
            Content::Zero => 0,
            // lzo-rle/lz4 on program data: ~3:1; zsmalloc packs objects in size classes.
            Content::Text => 1400,
            // Incompressible: zram stores the page as is (huge class).
            Content::Random => 4096,
        };
        self.mm.swap_map.zsize[slot as usize] = size;
        let a = &mut self.swap.areas[ai];
        a.zram_pages += 1;
        if size == 0 {
            a.zram_same += 1;
        }
        a.zram_compr_bytes += size as u64;
        self.zram_fit_frames(ai);
    }

    /// zsmalloc holds whole frames: as many as the compressed bytes need.
    fn zram_fit_frames(&mut self, ai: usize) {
        let want = self.swap.areas[ai].zram_compr_bytes.div_ceil(PAGE_SIZE);
        while self.swap.areas[ai].zram_frames < want {
            if self.alloc_kernel_page(super::KernelOwner::Zram).is_none() {
                break;
            }
            self.swap.areas[ai].zram_frames += 1;
        }
        while self.swap.areas[ai].zram_frames > want {
            self.free_last_kernel_page(super::KernelOwner::Zram);
            self.swap.areas[ai].zram_frames -= 1;
        }
    }

    /// swapon -a / swapoff -a for areas that are not in use. swapoff of an area in use is
    /// done by `swapoff_area` (the caller reads pages back first).
    pub fn swap_all(&mut self, on: bool) -> usize {
        if !on {
            // swapoff: disable_swap_slots_cache_lock drains every CPU's cache first.
            self.drain_swap_slots_caches();
        }
        let mut n = 0;
        for a in &mut self.swap.areas {
            if a.active != on && (on || a.used == 0) {
                a.active = on;
                n += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn slots_in_flight_behave_as_a_map() {
        use super::SlotsInFlight;
        let mut f = SlotsInFlight::default();
        assert!(f.is_empty());
        assert_eq!(f.insert(5, (1, 50)), None);
        assert_eq!(f.insert(5, (2, 60)), Some((1, 50)));
        assert_eq!(f.insert(9000, (3, 70)), None);
        assert_eq!(f.len(), 2);
        assert_eq!(f.remove(6), None);
        assert_eq!(f.remove(5), Some((2, 60)));
        assert_eq!(f.remove(5), None);
        // A chunk emptied and taken again starts empty.
        assert_eq!(f.remove(9000), Some((3, 70)));
        assert!(f.is_empty());
        assert_eq!(f.remove(9000), None);
        assert_eq!(f.insert(8999, (4, 80)), None);
        assert_eq!(f.remove(9000), None);
        assert_eq!(f.remove(8999), Some((4, 80)));
        assert_eq!(f.remove(1 << 30), None);
        assert!(f.is_empty());
    }

    use super::*;

    #[test]
    fn a_slot_never_given_out_has_no_owner_and_a_given_one_keeps_its_page() {
        let mut map = SwapMap::default();
        crate::host::try_grow_zeroed(&mut map.owner, 4).unwrap();
        assert_eq!(map.owner(2), None);
        map.set_owner(2, 0);
        assert_eq!(map.owner(2), Some(0), "mapping 0, index 0 is an owner");
        map.set_owner(3, 5 << 32 | 9);
        assert_eq!(map.owner(3), Some(5 << 32 | 9));
        map.set_owner(3, NO_OWNER);
        assert_eq!(map.owner(3), None);
        // Past the map: nothing recorded, nothing found.
        map.set_owner(9, 1);
        assert_eq!(map.owner(9), None);
    }
}
