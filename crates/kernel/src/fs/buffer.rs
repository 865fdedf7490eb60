//! Buffer heads of page-cache pages (fs/buffer.c): the `struct buffer_head` a block-based
//! filesystem attaches to a page (page->private, PG_private) for each block of it, objects
//! of the `buffer_head` slab cache that live as long as the page stays cached.
//!
//! Which pages carry them:
//! * metadata blocks a filesystem reads or creates through the buffer cache (sb_bread,
//!   __getblk -> grow_dev_page: directory and inode-table blocks), every era — in the
//!   model when the filesystem first uses the block (a block of ext4's inode-table
//!   readahead window gets its buffer head when an inode in it is read, not when the
//!   window is);
//! * file pages written through write_begin on ext2, ext3 and ext4
//!   (block_write_begin / ext4_da_write_begin -> create_empty_buffers), and on xfs before
//!   5.x (xfs left buffer heads for iomap in 4.x);
//! * on 2.4 every page a block filesystem or a block device reads (block_read_full_page),
//!   and on 2.6.39 every page of a block device's own page cache (blkdev_readpage is
//!   block_read_full_page there); later kernels and 2.6.39's ext3 read file pages and
//!   block-device pages with mpage_readpages / mpage_readahead, which attaches none to a
//!   page whose blocks are contiguous.
//!
//! The model's blocks are 4 KiB: one buffer head per page. They go with the page
//! (try_to_release_page -> try_to_free_buffers on reclaim, truncation and invalidation) and
//! move with it when compaction migrates it (buffer_migrate_folio). The allocations are
//! __GFP_NOFAIL (grow_dev_page; alloc_page_buffers with retry): the slab page comes without
//! a watermark check, and on 6.x the object is charged to the page's memory cgroup
//! (folio_alloc_buffers: set_active_memcg(folio_memcg), __GFP_ACCOUNT), reclaiming in it
//! first when the charge needs a page the cgroup has no room for.
//! Not modelled: 5.x's charge (through the cgroup's copy of the cache), blocks smaller than
//! a page, and buffer_heads_over_limit (10% of low memory in buffer heads, which one per
//! page never reaches).
//!
//! Measured on this host's 6.18 kernel (ext4 on virtio): writing a 256 MiB file added
//! 65,520 objects to `buffer_head` in /proc/slabinfo (65,536 pages); reading a 128 MiB file
//! whose pages had been dropped added none; deleting the file took them back.

use crate::mm::memcontrol::{ObjCharge, ROOT_MEMCG};
use crate::mm::page::Pfn;
use crate::mm::slab::ObjPool;
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_machine::KernelProfile;

/// The buffer heads of the page cache: which frames carry one (PG_private: one bit per
/// frame, a table that grows to the highest such frame), and how many. The objects are
/// interchangeable in the model: a page that loses its buffer head frees one of the cache's
/// objects (`Slabs::some_object`), and its charge goes back to the cgroup the page is charged
/// to — no handle is kept per page, so a page with buffers costs an eighth of a host byte.
#[derive(Default)]
pub struct BufferHeads {
    pool: ObjPool,
    bits: Vec<u64>,
    nr: u64,
}

impl BufferHeads {
    #[inline]
    pub fn has_buffers(&self, p: Pfn) -> bool {
        self.bits.get(p as usize / 64).is_some_and(|w| w & (1 << (p % 64)) != 0)
    }
    fn set(&mut self, p: Pfn) {
        let w = p as usize / 64;
        if self.bits.len() <= w {
            self.bits.resize(w + 1, 0);
        }
        self.bits[w] |= 1 << (p % 64);
        self.nr += 1;
    }
    fn clear(&mut self, p: Pfn) {
        self.bits[p as usize / 64] &= !(1 << (p % 64));
        self.nr -= 1;
    }
}

/// Does a filesystem of type `fstype` attach buffer heads to the file pages it writes, on
/// kernel `era`?
pub fn fs_write_buffers(era: KernelProfile, fstype: &str) -> bool {
    match fstype {
        "ext2" | "ext3" | "ext4" => true,
        "xfs" => matches!(era, KernelProfile::Linux2639 | KernelProfile::Linux24),
        _ => false,
    }
}

impl Kernel {
    /// buffer_init: the cache buffer heads come from (kmem_cache_init made it).
    pub(crate) fn buffer_init(&mut self) {
        self.bh = BufferHeads { pool: ObjPool::new(self.mm.slab.find("buffer_head")), ..Default::default() };
    }

    /// Whether write_begin on mapping `m` attaches buffer heads to the pages it writes: a
    /// file of a filesystem that uses them (`fs_write_buffers`), or a block device
    /// (blkdev_write_begin -> block_write_begin).
    pub(crate) fn write_begin_buffers(&self, m: u32) -> bool {
        let s = &self.mm.mappings[m as usize];
        s.kind == crate::mm::MappingKind::BlockDev || s.fs_buffers
    }

    /// create_empty_buffers / grow_dev_page: page `p` (in the page cache) gets its buffer
    /// head, unless it has one. On 6.x the object is charged to the page's cgroup: for task
    /// `tid` through try_charge_memcg (it may reclaim in the cgroup first: `Err` is what the
    /// task does before it tries again), without a task past the limit (__GFP_NOFAIL's
    /// force).
    pub(crate) fn attach_page_buffers(&mut self, tid: Option<TaskId>, p: Pfn) -> Result<(), Step> {
        if self.bh.pool.cache.is_none() || self.bh.has_buffers(p) {
            return Ok(());
        }
        let memcg = if self.profile.kmem_accounting { self.page_memcg(p) } else { ROOT_MEMCG };
        if !self.pool_alloc(self.bh.pool, tid.map_or(ObjCharge::Force, ObjCharge::Task), memcg)? {
            return Ok(());
        }
        self.bh.set(p);
        let m = self.mm.pages.mapping(p);
        self.mm.mappings[m as usize].nr_buffers += 1;
        Ok(())
    }

    /// block_read_full_page: on 2.4 a page a block filesystem or a block device reads, on
    /// 2.6.39 a page of a block device, has buffer heads from the moment it is added.
    pub(crate) fn readpage_buffers(&self, m: u32) -> bool {
        let s = &self.mm.mappings[m as usize];
        match self.machine.kernel {
            KernelProfile::Linux24 => match s.kind {
                crate::mm::MappingKind::BlockDev => true,
                crate::mm::MappingKind::File => self.write_begin_buffers(m),
                _ => false,
            },
            KernelProfile::Linux2639 => s.kind == crate::mm::MappingKind::BlockDev,
            _ => false,
        }
    }

    /// try_to_free_buffers: page `p` leaves the page cache; its buffer heads are freed,
    /// uncharged from the cgroup the page is charged to (on 6.x: the page keeps its cgroup
    /// until it is gone, and a removed cgroup's charges went to its parent with the page's).
    pub(crate) fn free_page_buffers(&mut self, p: Pfn, m: u32) {
        if self.mm.mappings[m as usize].nr_buffers == 0 || !self.bh.has_buffers(p) {
            return;
        }
        self.bh.clear(p);
        self.mm.mappings[m as usize].nr_buffers -= 1;
        let memcg = if self.profile.kmem_accounting { self.page_memcg(p) } else { ROOT_MEMCG };
        let mut pool = self.bh.pool;
        self.pool_free(&mut pool, memcg);
        self.bh.pool = pool;
    }

    /// Every frame marked as carrying a buffer head is a cached page of a live file or
    /// block-device mapping, counted in its mapping's `nr_buffers`. The counts are checked
    /// always, each frame only while there are few (the check runs after every event in
    /// debug runs).
    pub fn check_buffer_invariants(&self) -> Result<(), String> {
        let counted: u64 = self.mm.mappings.iter().filter(|s| s.live).map(|s| s.nr_buffers as u64).sum();
        let bits: u64 = self.bh.bits.iter().map(|w| w.count_ones() as u64).sum();
        if counted != self.bh.nr || bits != self.bh.nr {
            return Err(format!("{} buffer heads, {bits} frames marked, {counted} counted by the mappings", self.bh.nr));
        }
        if self.bh.nr > 4096 {
            return Ok(());
        }
        for (w, &word) in self.bh.bits.iter().enumerate() {
            for b in 0..64 {
                if word & (1 << b) == 0 {
                    continue;
                }
                let p = (w * 64 + b) as Pfn;
                let m = self.mm.pages.mapping(p);
                let s = &self.mm.mappings[m as usize];
                if !s.live || !matches!(s.kind, crate::mm::MappingKind::File | crate::mm::MappingKind::BlockDev) || self.mm.page(m, self.mm.pages.index(p)) != Some(p) {
                    return Err(format!("buffer head of frame {p}, not a page-cache page (mapping {m})"));
                }
            }
        }
        Ok(())
    }

    /// buffer_migrate_folio: the buffer heads follow a migrated page.
    pub(crate) fn migrate_page_buffers(bh: &mut BufferHeads, old: Pfn, new: Pfn) {
        if bh.has_buffers(old) {
            bh.clear(old);
            bh.set(new);
        }
    }
}
