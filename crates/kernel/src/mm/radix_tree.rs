//! The nodes of page-cache trees as slab objects (lib/radix-tree.c radix_tree_node_alloc on
//! 2.6.39, lib/xarray.c xas_alloc from 4.20: both from `radix_tree_node_cachep`, the
//! reclaimable `radix_tree_node` cache; 560 bytes on 2.6.39, 576 from 4.20).
//!
//! Every page-cache tree — a file's, a block device's, a tmpfs file's or a shared anonymous
//! object's — holds one node per 64 indices in use at the bottom and one per 64 nodes above
//! (`mm::xarray` keeps the same shape on the host), except that a tree whose only entry is
//! at index 0 keeps it in its root pointer, with no node (radix_tree_insert at height 0,
//! xas_shrink): a one-page file costs no node, a two-page file one, a 256 MiB file 1,041.
//! Shadow entries keep their node (6.x workingset), until the shadow-node shrinker takes it.
//! 2.4 indexes the page cache in a global hash table: no nodes, no cache.
//!
//! The host tree's nodes carry the cgroup their object is charged to; `mm::xarray` counts,
//! by cgroup, the nodes the kernel's trees gain and lose, and after each event
//! `radix_tree_settle` allocates or frees that many objects — without a watermark check
//! and, for split reclaim, without the slab-reclaim check of a task allocating an object
//! (the kernel allocates a node as the page goes in, may reclaim for it, and fails the
//! insertion without one). On 6.x a node is charged to the cgroup of the task that inserts
//! the page that needs it (the page cache's xarray is XA_FLAGS_ACCOUNT, 4.20+), and
//! uncharged from it when freed (from its parent once it is removed); a charge that would
//! go over the cgroup's limit is owed and taken with the cgroup's next charge by a task,
//! which reclaims for it (the kernel's inserting task reclaims first). 5.x's charge (through the cgroup's copy of the
//! cache) is not modelled. The swap cache's trees (by swap slot, where the model indexes its
//! swap cache per mapping) are counted apart (`mm::swapper_space`); their nodes are objects of
//! the same cache, nobody's cgroup's.
//!
//! Measured on this host's 6.18 kernel (ext4, a v1 memory cgroup, `validation/manual/
//! radix-tree-6.18/`): reading 5,000 one-page files added no object, 5,000 two-page files
//! 4,908-4,914 objects and 2,888-2,892 kB of cgroup kernel memory (584 bytes each with
//! SLUB's free pointer); a 256 MiB file only 56-106, because ext4 on 6.16+ caches large
//! folios, which fill a node's slot range of the level above instead of a leaf each (the
//! model's 6.x profile follows 6.1, whose ext4 caches single pages).

use super::memcontrol::{MemcgId, ObjCharge, ROOT_MEMCG};
use super::slab::ObjPool;
use super::swapper_space::SwapperLayout;
use super::MappingKind;
use crate::Kernel;

/// Nodes of the kernel's tree holding indices 0..n: a leaf per 64, a node per 64 nodes above,
/// none for a lone entry at index 0.
pub fn nodes_for_dense(n: u64) -> u64 {
    let (mut total, mut level) = (0, n);
    while level > 1 {
        level = level.div_ceil(64);
        total += level;
    }
    total
}

/// The radix_tree_node objects of the machine's page-cache trees.
#[derive(Default)]
pub struct RadixNodes {
    pool: ObjPool,
    /// Objects the trees need that the last settle could not allocate (no free page).
    short: Vec<(MemcgId, i64)>,
    scratch: Vec<(MemcgId, i64)>,
}

impl Kernel {
    /// The cache page-cache tree nodes come from (None on 2.4).
    pub(crate) fn radix_tree_init(&mut self) {
        self.radix = RadixNodes { pool: ObjPool::new(self.mm.slab.find("radix_tree_node")), ..Default::default() };
        // The swap cache's trees (mm/swapper_space.rs): by era, and whether evicted
        // swap-backed pages leave shadows in them (5.9+).
        let layout = match self.machine.kernel {
            memtwin_machine::KernelProfile::Linux24 => SwapperLayout::NoTree,
            memtwin_machine::KernelProfile::Linux2639 => SwapperLayout::OneTree,
            _ => SwapperLayout::Trunks,
        };
        let layout = if self.radix.pool.cache.is_some() { layout } else { SwapperLayout::NoTree };
        self.mm.swapper.configure(layout, self.profile.anon_workingset);
    }

    /// Slab pages the nodes of a file cached whole from index 0 to `n` - 1 take (the idle
    /// system's cached files at boot, whose nodes are part of its slab).
    pub(crate) fn radix_tree_pages_for_dense(&self, n: u64) -> u64 {
        let Some(c) = self.radix.pool.cache else { return 0 };
        let k = &self.mm.slab.caches[c as usize];
        nodes_for_dense(n).div_ceil(k.objs_per_slab as u64) * k.pages_per_slab()
    }

    /// The cgroup a node allocated now is charged to: the inserting task's on 6.x
    /// (xas_alloc's __GFP_ACCOUNT charges current's objcg); the root otherwise.
    pub(crate) fn radix_tree_set_active_memcg(&mut self) {
        let m = match self.current {
            Some(t) if self.profile.kmem_accounting && self.memcg.active() => self.task_memcg(t),
            _ => ROOT_MEMCG,
        };
        self.mm.xa.active_memcg = m;
    }

    /// Allocate or free radix_tree_node objects for the nodes the kernel's page-cache trees
    /// gained or lost since the last call, charged to or uncharged from their cgroups.
    pub(crate) fn radix_tree_settle(&mut self) {
        let mut v = std::mem::take(&mut self.radix.scratch);
        self.mm.xa.take_charges(&mut v);
        // The swap cache's trees are not accounted to a cgroup (init_swap_address_space
        // has no XA_FLAGS_ACCOUNT).
        let swap = self.mm.swapper.take_delta();
        if swap != 0 {
            v.push((ROOT_MEMCG, swap));
        }
        if v.is_empty() && self.radix.short.is_empty() {
            self.radix.scratch = v;
            return;
        }
        v.append(&mut self.radix.short);
        let mut pool = self.radix.pool;
        for &(memcg, d) in &v {
            if pool.cache.is_none() {
                break;
            }
            if d < 0 {
                for _ in 0..-d {
                    self.pool_free(&mut pool, memcg);
                }
                continue;
            }
            for i in 0..d {
                // Without a task the charge cannot fail: what would go over the limit is
                // owed, charged with the cgroup's next charge by a task.
                if !self.pool_alloc(pool, ObjCharge::Defer, memcg).unwrap_or(false) {
                    self.radix.short.push((memcg, d - i));
                    break;
                }
            }
        }
        self.radix.pool = pool;
        v.clear();
        self.radix.scratch = v;
    }

    /// After a settle, the radix_tree_node cache holds one object per node of the kernel's
    /// page-cache trees (it has no boot share), and the count kept as the trees change
    /// agrees with the trees.
    pub fn check_radix_invariants(&self) -> Result<(), String> {
        let Some(c) = self.radix.pool.cache else { return Ok(()) };
        let sum: u64 = self.mm.mappings.iter().filter(|s| s.live && s.kind != MappingKind::Anon).map(|s| s.i_pages.kernel_nodes(&self.mm.xa) as u64).sum();
        if sum != self.mm.xa.kernel_nodes() {
            return Err(format!("the page-cache trees have {sum} kernel nodes, {} counted", self.mm.xa.kernel_nodes()));
        }
        let short: i64 = self.radix.short.iter().map(|&(_, d)| d).sum();
        let active = self.mm.slab.counts(c).active_objs;
        let swap = self.mm.swapper.nodes();
        if active as i64 + short != (sum + swap) as i64 {
            return Err(format!("radix_tree_node holds {active} objects ({short} short), the page-cache trees {sum} nodes and the swap cache's {swap}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_dense_tree_has_a_leaf_per_64_pages_and_a_node_per_64_nodes_above() {
        assert_eq!(super::nodes_for_dense(1), 0);
        assert_eq!(super::nodes_for_dense(2), 1);
        assert_eq!(super::nodes_for_dense(64), 1);
        assert_eq!(super::nodes_for_dense(65), 3);
        assert_eq!(super::nodes_for_dense(65536), 1024 + 16 + 1);
    }
}
