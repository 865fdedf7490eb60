//! Host memory a simulated machine needs, estimated before it boots, and the host memory
//! available to hold it.
//!
//! The estimate counts the model's tables at their size when the machine's RAM and swap are
//! in use, from the per-unit costs of the data structures:
//!
//! * the frame table: `Pages::HOST_BYTES_PER_PAGE` (16 B) per page frame, plus the LRU list
//!   heads (`mm::page`);
//! * the page index (`mm::xarray`): every resident page has an entry in its address
//!   space's radix tree. Cached densely (files read or written in runs, anonymous memory),
//!   64 pages share one 288-byte leaf, plus 1/64 of that for the levels above: about 4.6 B
//!   per page (`tree_bytes`). With swap configured, swap-backed pages in the swap cache also
//!   have an entry in their mapping's swap-cache tree (as much again);
//! * swap: the swap map's u32 state and u64 owner per slot, a u16 compressed size per zram slot
//!   (`mm::swapfile::SwapMap`), the stack of freed slots (a u32 each, up to 8 B), the
//!   swapped-out page's swap entry in its mapping's tree (dense: as a page), and the counts
//!   that stand for the swap cache's own trees (`mm::swapper_space`, 0.3 B per slot);
//! * memory cgroups, when a run uses them: the page -> lruvec table (`mm::page`,
//!   folio_lruvec), a u16 per page frame, allocated when the first page is charged to a
//!   cgroup (`estimate_with_cgroups`);
//! * a fixed part: tasks, the event queue, mapping descriptors, the series of a short run,
//!   the Python interpreter and the extension (measured on a small run: `FIXED_BYTES`).
//!
//! Not covered: the series grows by about 1.3 KB per simulated second (bounded by the run's
//! simulated-time limit), captured output and the transcript (bounded by the output limit);
//! sparse caching, where a page alone in its 64-page range of the file costs a whole leaf
//! (288 B) and, the first in its range of 2^12, 2^18 ... pages, the interior nodes above it
//! (at most 5 more for a 16 TiB device; bounded by the pages cached, never by the file or
//! device size); and the shadow entries of evicted pages, whose nodes the shadow shrinker
//! keeps to at most one per 8 page frames (`mm::workingset`: at most 36 B per frame, reached
//! only when much more than RAM was streamed through the cache).

use crate::mm::NR_ALL_SENTINELS;
use crate::mm::page::Pages;
use crate::mm::xarray::{NODE_BYTES, XA_CHUNK_SIZE};
use crate::mm::PAGE_SIZE;
use memtwin_machine::{Machine, SwapKind};

/// A type for which all-zero bytes are a valid value (plain integers and records of them):
/// what `try_zeroed_vec` may hand out without writing it.
///
/// # Safety
/// Implement only for types whose every field is an integer (no references, no enums with
/// invalid zero values, no padding-sensitive invariants).
pub unsafe trait ZeroValid: Copy {}
// SAFETY: plain integers.
unsafe impl ZeroValid for u16 {}
unsafe impl ZeroValid for u32 {}
unsafe impl ZeroValid for u64 {}

/// `n` zeros, as `vec![0; n]` makes them (calloc: a large zeroed block comes from fresh
/// pages that the host commits only when first written, so a table sized for the machine
/// costs nothing until it is used), but failing with an error instead of aborting when the
/// host cannot hold it.
pub fn try_zeroed_vec<T: ZeroValid>(n: usize) -> Result<Vec<T>, String> {
    let layout = std::alloc::Layout::array::<T>(n).map_err(|e| e.to_string())?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size; a non-null result is a zeroed block of `n`
    // values of T (all-zero is a valid T: ZeroValid) from the global allocator with exactly
    // this layout, which is what Vec::from_raw_parts requires (length = capacity = n).
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        return Err(format!("memory allocation of {} bytes failed", layout.size()));
    }
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// Grow `v` to `len` values, the new ones zero. An empty table is allocated zeroed
/// (`try_zeroed_vec`: nothing written); one with values grows in place (realloc, which
/// moves a large block without copying it) and has its new part written, so that growing
/// never holds two copies of the table nor touches its old part.
pub fn try_grow_zeroed<T: ZeroValid + Default>(v: &mut Vec<T>, len: usize) -> Result<(), String> {
    if len <= v.len() {
        return Ok(());
    }
    if v.is_empty() {
        *v = try_zeroed_vec::<T>(len)?;
        return Ok(());
    }
    v.try_reserve_exact(len - v.len()).map_err(|e| e.to_string())?;
    v.resize(len, T::default());
    Ok(())
}

/// Host bytes of the radix-tree nodes holding `entries` entries at consecutive indices (a
/// leaf per 64 entries, a node per 64 nodes on each level above), plus one arena chunk of
/// 64 nodes allocated ahead.
pub fn tree_bytes(entries: u64) -> u64 {
    let fanout = XA_CHUNK_SIZE as u64;
    let mut level = entries.div_ceil(fanout);
    let mut nodes = level;
    while level > 1 {
        level = level.div_ceil(fanout);
        nodes += level;
    }
    (nodes + fanout).saturating_mul(NODE_BYTES)
}
/// Swap map: u32 state and u64 owner per slot, and the u32 stack of freed slots (capacity
/// up to twice its length); zram adds a u16 compressed size.
pub const SWAP_MAP_BYTES_PER_SLOT: u64 = 4 + 8 + 8;
pub const ZRAM_BYTES_PER_SLOT: u64 = 2;
/// The swap cache's trees as counts (`mm::swapper_space`): two bits per slot (an entry, a
/// page) and two bytes per leaf of 64 slots; the levels above are 1/64 of that and less.
pub const SWAPPER_BYTES_PER_64_SLOTS: u64 = 2 * 8 + 2 + 1;
/// What a run needs whatever the machine's size: the Python interpreter and the extension,
/// the model's small tables and a short run's series. Measured: `memtwin run` of `free -m`
/// on a 64M machine peaks at 20 MB resident (`/usr/bin/time -v`); rounded up.
pub const FIXED_BYTES: u64 = 32 << 20;

/// Host bytes the frame table of `frames` page frames takes.
/// Host bytes per boot slab page: its objects' free-list links and allocation bits, its
/// slab descriptor, and the handles of unused boot dentries (`mm::slab`), which may all
/// wait in the RCU queue at once (a drop_caches: `rcu.rs`, 8 bytes each in a queue grown
/// by doubling); measured by `boot_slab_host_memory_stays_within_the_estimate` (102..131 B
/// by era at boot, up to 188 B with the queue full).
pub const SLAB_BYTES_PER_PAGE: u64 = 200;

/// Host bytes per page of RAM for buffer heads, were every page a page-cache page carrying
/// one (`fs::buffer`): its object's free-list link and allocation bit, a share of its slab's
/// descriptor (39 objects a slab page), the per-frame bit, and the tables' growth by doubling.
pub const BUFFER_HEAD_BYTES_PER_PAGE: u64 = 3;

/// Host memory of the slab caches populated at boot (1% of memory, at most 64 MiB).
pub fn slab_bytes(frames: u64) -> u64 {
    (frames / 100).min(64 * 1024 * 1024 / PAGE_SIZE) * SLAB_BYTES_PER_PAGE
}

pub fn frame_table_bytes(frames: u64) -> u64 {
    (frames + NR_ALL_SENTINELS as u64).saturating_mul(Pages::HOST_BYTES_PER_PAGE as u64)
}

/// The estimate, by part, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostEstimate {
    pub frames: u64,
    pub page_index: u64,
    pub swap: u64,
    /// The slab caches populated at boot.
    pub slab: u64,
    /// The buffer heads the page cache may come to carry (`BUFFER_HEAD_BYTES_PER_PAGE`).
    pub buffer_heads: u64,
    /// The page -> lruvec table of memory cgroups (0 unless the run uses cgroups).
    pub memcg: u64,
    pub fixed: u64,
}

impl HostEstimate {
    pub fn total(&self) -> u64 {
        self.frames.saturating_add(self.page_index).saturating_add(self.swap).saturating_add(self.slab).saturating_add(self.buffer_heads).saturating_add(self.memcg).saturating_add(self.fixed)
    }
}

/// Host bytes of the page -> lruvec table of `frames` page frames (a u16 each, sentinels
/// included).
pub fn lruvec_table_bytes(frames: u64) -> u64 {
    (frames + NR_ALL_SENTINELS as u64).saturating_mul(2)
}

/// `estimate`, for a run that puts pages in memory cgroups.
pub fn estimate_with_cgroups(machine: &Machine) -> HostEstimate {
    let mut e = estimate(machine);
    e.memcg = lruvec_table_bytes(machine.mem_total_bytes() / PAGE_SIZE);
    e
}

/// Host memory `machine` needs with its RAM and swap in use.
pub fn estimate(machine: &Machine) -> HostEstimate {
    let frames = machine.mem_total_bytes() / PAGE_SIZE;
    let has_swap = !machine.swaps.is_empty();
    let mut swap = 0u64;
    for s in &machine.swaps {
        let slots = (s.size_bytes / PAGE_SIZE).saturating_sub(1);
        let per = SWAP_MAP_BYTES_PER_SLOT + if matches!(s.kind, SwapKind::Zram { .. }) { ZRAM_BYTES_PER_SLOT } else { 0 };
        swap = swap
            .saturating_add(slots.saturating_mul(per))
            .saturating_add(tree_bytes(slots))
            .saturating_add(slots.div_ceil(64).saturating_mul(SWAPPER_BYTES_PER_64_SLOTS));
    }
    let page_index = tree_bytes(frames).saturating_mul(if has_swap { 2 } else { 1 });
    HostEstimate {
        frames: frame_table_bytes(frames),
        page_index,
        swap,
        slab: slab_bytes(frames),
        buffer_heads: frames.saturating_mul(BUFFER_HEAD_BYTES_PER_PAGE),
        memcg: 0,
        fixed: FIXED_BYTES,
    }
}

/// Host memory available to this process, in bytes, and where the figure comes from:
/// MemAvailable of /proc/meminfo (MemFree + Buffers + Cached on kernels before 3.14),
/// lowered to what the process's cgroup (v2) still allows. None: nothing readable.
pub fn available() -> Option<(u64, &'static str)> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let from_meminfo = meminfo.as_deref().and_then(|t| {
        let field = |name: &str| -> Option<u64> {
            t.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()).map(|kb| kb * 1024)
        };
        match field("MemAvailable") {
            Some(v) => Some((v, "MemAvailable")),
            None => Some((field("MemFree")? + field("Buffers").unwrap_or(0) + field("Cached").unwrap_or(0), "MemFree+Buffers+Cached")),
        }
    });
    match (from_meminfo, cgroup_room()) {
        (Some((m, _)), Some(c)) if c < m => Some((c, "the cgroup's memory.max")),
        (Some(m), _) => Some(m),
        (None, Some(c)) => Some((c, "the cgroup's memory.max")),
        (None, None) => None,
    }
}

/// cgroup v2: memory.max less memory.current of this process's cgroup, if limited.
fn cgroup_room() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = format!("/sys/fs/cgroup{}", if path == "/" { "" } else { path });
    let max: u64 = std::fs::read_to_string(format!("{dir}/memory.max")).ok()?.trim().parse().ok()?;
    let cur: u64 = std::fs::read_to_string(format!("{dir}/memory.current")).ok()?.trim().parse().ok()?;
    Some(max.saturating_sub(cur))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_counts_frames_index_and_swap() {
        let mut m = memtwin_machine::preset("default").unwrap();
        m.swaps.clear();
        let e = estimate(&m);
        let frames = m.mem_total_bytes() / PAGE_SIZE;
        assert_eq!(e.frames, (frames + NR_ALL_SENTINELS as u64) * 16);
        assert_eq!(e.page_index, tree_bytes(frames));
        // About 4.6 B per densely cached page: a 288-byte node per 64 pages, and 1/64 more.
        let per_page = e.page_index as f64 / frames as f64;
        assert!((4.5..4.8).contains(&per_page), "{per_page} B per page");
        assert_eq!(e.swap, 0);
        // Doubling RAM doubles the per-page parts.
        let twice = format!("ram={}", m.ram_bytes * 2);
        memtwin_machine::apply_set(&mut m, &twice).unwrap();
        let e2 = estimate(&m);
        let frames2 = m.mem_total_bytes() / PAGE_SIZE;
        assert_eq!(e2.frames - e.frames, (frames2 - frames) * 16);
    }

    #[test]
    fn cgroups_add_two_bytes_a_frame() {
        let m = memtwin_machine::preset("default").unwrap();
        let (plain, cg) = (estimate(&m), estimate_with_cgroups(&m));
        let frames = m.mem_total_bytes() / PAGE_SIZE;
        assert_eq!(plain.memcg, 0);
        assert_eq!(cg.total() - plain.total(), (frames + NR_ALL_SENTINELS as u64) * 2);
    }

    #[test]
    fn tree_bytes_counts_every_level() {
        let n = NODE_BYTES;
        assert_eq!(n, 288);
        assert_eq!(tree_bytes(0), 64 * n);
        assert_eq!(tree_bytes(64), 65 * n);
        assert_eq!(tree_bytes(65), (2 + 1 + 64) * n);
        assert_eq!(tree_bytes(64 * 64 * 64), (4096 + 64 + 1 + 64) * n);
    }

    #[test]
    fn available_reads_this_host() {
        let (bytes, src) = available().expect("/proc/meminfo is readable on Linux");
        assert!(bytes > 0, "{src}");
    }

    #[test]
    fn zeroed_tables_grow_keeping_their_values_and_fail_without_aborting() {
        let mut v = try_zeroed_vec::<u32>(3).unwrap();
        assert_eq!(v, [0, 0, 0]);
        v[1] = 7;
        try_grow_zeroed(&mut v, 6).unwrap();
        assert_eq!(v, [0, 7, 0, 0, 0, 0]);
        // Shrinking is not growing: left as it is.
        try_grow_zeroed(&mut v, 2).unwrap();
        assert_eq!(v.len(), 6);
        assert!(try_zeroed_vec::<u64>(0).unwrap().is_empty());
        // Larger than an allocation may be: an error, not an abort.
        assert!(try_zeroed_vec::<u64>(usize::MAX / 4).is_err());
    }
}
