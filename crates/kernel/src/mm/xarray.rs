//! The page-cache index (lib/xarray.c, reduced to what the page cache uses): a radix tree
//! of 64-slot nodes (XA_CHUNK_SHIFT = 6) keyed by a 64-bit page index, holding the u32
//! entries of `mm::Slot` (a page, a shadow, a swap entry) or, for the swap cache, a swap
//! slot + 1. 0 is the empty entry.
//!
//! * Sparse: a tree holds only the nodes on the paths to its entries, so host memory
//!   follows the entries present, not the offsets: a page at 15 TiB of a block device costs
//!   one leaf and the few interior nodes above it (the height grows by one level per 6 bits
//!   of index, xas_expand), never a vector as long as the device.
//! * Nodes live in one arena (`XaNodes`) shared by every tree of the machine, allocated in
//!   chunks and reused through a free list: in steady state storing an entry allocates
//!   nothing on the host. A node counts its entries (`count`) and its value entries
//!   (`nr_values`: shadow and swap entries, xa_is_value); a node whose last entry goes is
//!   freed, its empty ancestors with it (xas_delete_node), and a root with a single child in
//!   slot 0 is replaced by that child (xas_shrink).
//! * Leaf nodes of page-cache trees that hold only shadow entries are kept on the workingset
//!   shadow list (workingset_update_node, the `shadow_nodes` list_lru), oldest first, for
//!   the shadow-node shrinker (mm/workingset.rs).
//! * Sequential access stays cheap: each tree remembers the leaf it last used
//!   (`XArray::last`, the role of an xa_state kept across a loop), so a lookup, store or
//!   range step that stays within that leaf does not walk from the root; range iteration
//!   (`XArray::find`) visits only the nodes that hold entries, O(entries present).

use std::cell::Cell;

pub const XA_CHUNK_SHIFT: u32 = 6;
pub const XA_CHUNK_SIZE: usize = 1 << XA_CHUNK_SHIFT;
const XA_CHUNK_MASK: u64 = XA_CHUNK_SIZE as u64 - 1;
/// No node.
pub const NO_NODE: u32 = u32::MAX;
/// Largest index a tree takes: a page index whose byte offset (index * 4 KiB) fits in 64
/// bits. Interior nodes then have a shift of at most 48, whose span never overflows.
pub const XA_MAX_INDEX: u64 = (1 << 52) - 1;
/// Value entries (xa_is_value): bit 31 set (shadow and swap entries of `mm::Slot`).
const VALUE_BIT: u32 = 1 << 31;

/// Node flags.
const ON_LRU: u8 = 1;
const TRACK_SHADOWS: u8 = 2;
const FREE: u8 = 4;
/// A node of a kernel page-cache tree: a radix_tree_node object (`mm::radix_tree`).
const ACCOUNT: u8 = 8;

/// struct xa_node: 64 slots (entries in a leaf, child node + 1 in an interior node), the
/// first index the node covers, its place in its parent, and the counts that decide when it
/// is freed and when it holds only shadows. 288 bytes.
#[derive(Clone)]
pub struct XaNode {
    pub slots: [u32; XA_CHUNK_SIZE],
    /// First index covered: the node covers [index, index + 64 << shift).
    index: u64,
    /// Parent node (NO_NODE at the root); the next free node while on the free list.
    parent: u32,
    /// The tree's owner (the mapping id), for the shadow shrinker.
    owner: u32,
    /// Links of the shadow-node list (private_list in the kernel).
    lru_prev: u32,
    lru_next: u32,
    shift: u8,
    /// Slot of this node in its parent.
    offset: u8,
    count: u8,
    nr_values: u8,
    flags: u8,
    /// The memory cgroup its object is charged to (ACCOUNT nodes).
    memcg: u16,
}

impl XaNode {
    /// Ask the host for the node's header (the fields after the slots, which may straddle
    /// two cache lines).
    #[inline(always)]
    fn prefetch_header(&self) {
        prefetch(&self.index);
        prefetch(&self.flags);
    }
    const EMPTY: XaNode = XaNode {
        slots: [0; XA_CHUNK_SIZE],
        index: 0,
        parent: NO_NODE,
        owner: 0,
        lru_prev: NO_NODE,
        lru_next: NO_NODE,
        shift: 0,
        offset: 0,
        count: 0,
        nr_values: 0,
        flags: FREE,
        memcg: 0,
    };
    /// Last index the node covers.
    #[inline]
    fn last(&self) -> u64 {
        self.index + ((XA_CHUNK_SIZE as u64) << self.shift) - 1
    }
    /// Whether workingset_update_node would change this node's shadow-list membership.
    #[inline(always)]
    fn needs_update(&self) -> bool {
        let shadow_only = self.count > 0 && self.count == self.nr_values;
        self.flags & TRACK_SHADOWS != 0 && shadow_only != (self.flags & ON_LRU != 0)
    }
    pub fn count(&self) -> u32 {
        self.count as u32
    }
    pub fn nr_values(&self) -> u32 {
        self.nr_values as u32
    }
    pub fn owner(&self) -> u32 {
        self.owner
    }
    pub fn first_index(&self) -> u64 {
        self.index
    }
    pub fn is_leaf(&self) -> bool {
        self.shift == 0
    }
}

/// Nodes the arena grows by at least (18 KiB), and at most a quarter of its size at a time.
const CHUNK_NODES: usize = 64;

/// The node arena of every tree of a machine, with its free list and the workingset
/// shadow-node list (a list_lru of leaf nodes holding only shadow entries).
pub struct XaNodes {
    nodes: Vec<XaNode>,
    free: u32,
    live: u64,
    lru_head: u32,
    lru_tail: u32,
    lru_len: u64,
    /// The kernel's view of the accounted trees (`mm::radix_tree`): the cgroup a node made
    /// now is charged to (the inserting task's: set_active_memcg / current's objcg), the
    /// nodes the kernel's trees hold, and by cgroup the change in them since the kernel
    /// last matched the radix_tree_node objects to them.
    pub active_memcg: u16,
    kernel_nodes: u64,
    charge_delta: Vec<i64>,
    charge_dirty: bool,
}

impl Default for XaNodes {
    fn default() -> Self {
        XaNodes {
            nodes: Vec::new(),
            free: NO_NODE,
            live: 0,
            lru_head: NO_NODE,
            lru_tail: NO_NODE,
            lru_len: 0,
            active_memcg: 0,
            kernel_nodes: 0,
            charge_delta: Vec::new(),
            charge_dirty: false,
        }
    }
}

/// Host bytes of one node.
pub const NODE_BYTES: u64 = std::mem::size_of::<XaNode>() as u64;

impl XaNodes {
    #[inline(always)]
    pub fn node(&self, id: u32) -> &XaNode {
        &self.nodes[id as usize]
    }
    #[inline(always)]
    fn node_mut(&mut self, id: u32) -> &mut XaNode {
        &mut self.nodes[id as usize]
    }
    /// Nodes in use by every tree.
    pub fn live(&self) -> u64 {
        self.live
    }
    /// Nodes the arena holds (in use or free): its host memory is this times NODE_BYTES.
    pub fn allocated(&self) -> u64 {
        self.nodes.capacity() as u64
    }
    /// Host bytes of the arena.
    pub fn host_bytes(&self) -> u64 {
        self.allocated() * NODE_BYTES
    }
    /// Nodes the kernel's page-cache trees hold (radix_tree_node objects they need).
    pub fn kernel_nodes(&self) -> u64 {
        self.kernel_nodes
    }
    /// `n` kernel nodes more (or fewer) charged to `memcg`.
    #[inline]
    fn charge(&mut self, memcg: u16, n: i64) {
        let m = memcg as usize;
        if self.charge_delta.len() <= m {
            self.charge_delta.resize(m + 1, 0);
        }
        self.charge_delta[m] += n;
        self.kernel_nodes = self.kernel_nodes.wrapping_add_signed(n);
        self.charge_dirty = true;
    }
    /// The change in kernel nodes by cgroup since the last call, then forgotten:
    /// (cgroup, nodes more or fewer), for `Kernel::radix_tree_settle`.
    pub fn take_charges(&mut self, out: &mut Vec<(u16, i64)>) {
        out.clear();
        if !self.charge_dirty {
            return;
        }
        self.charge_dirty = false;
        for (m, d) in self.charge_delta.iter_mut().enumerate() {
            if *d != 0 {
                out.push((m as u16, std::mem::take(d)));
            }
        }
    }
    /// A cgroup is removed: its nodes are charged to `to` from now on (memcg_reparent_objcgs),
    /// and so is what it had not settled yet.
    pub fn reparent_memcg(&mut self, from: u16, to: u16) {
        for n in self.nodes.iter_mut() {
            if n.flags & (FREE | ACCOUNT) == ACCOUNT && n.memcg == from {
                n.memcg = to;
            }
        }
        if let Some(d) = self.charge_delta.get_mut(from as usize).map(std::mem::take) {
            self.charge(to, d);
            self.kernel_nodes = self.kernel_nodes.wrapping_add_signed(-d);
        }
        if self.active_memcg == from {
            self.active_memcg = to;
        }
    }
    /// Leaf nodes holding only shadow entries (the shadow_nodes list_lru).
    pub fn shadow_nodes(&self) -> u64 {
        self.lru_len
    }
    /// The oldest shadow-only node (list_lru_walk starts at the head).
    pub fn oldest_shadow_node(&self) -> Option<u32> {
        (self.lru_head != NO_NODE).then_some(self.lru_head)
    }

    #[allow(clippy::too_many_arguments)]
    fn alloc(&mut self, owner: u32, track: bool, account: bool, shift: u8, index: u64, parent: u32, offset: u8) -> u32 {
        if self.free == NO_NODE {
            let base = self.nodes.len() as u32;
            let grow = (self.nodes.len() / 4).max(CHUNK_NODES);
            assert!((base as usize + grow) < NO_NODE as usize, "page-cache index node arena full");
            self.nodes.reserve_exact(grow);
            self.nodes.resize(base as usize + grow, XaNode::EMPTY);
            advise_hugepages(&self.nodes);
            // Chain the new nodes onto the free list, lowest first out.
            for i in (0..grow as u32).rev() {
                let id = base + i;
                let next = self.free;
                self.node_mut(id).parent = next;
                self.free = id;
            }
        }
        let id = self.free;
        let n = self.node_mut(id);
        let next = n.parent;
        // A free node's slots are all empty (`release`): only the header is written.
        debug_assert!(n.flags & FREE != 0 && n.count == 0 && n.slots.iter().all(|&e| e == 0));
        n.index = index;
        n.parent = parent;
        n.owner = owner;
        n.shift = shift;
        n.offset = offset;
        n.nr_values = 0;
        n.flags = if track { TRACK_SHADOWS } else { 0 };
        self.free = next;
        self.live += 1;
        if account {
            let m = self.active_memcg;
            let n = self.node_mut(id);
            n.flags |= ACCOUNT;
            n.memcg = m;
            self.charge(m, 1);
        }
        id
    }

    fn release(&mut self, id: u32) {
        if self.node(id).flags & ON_LRU != 0 {
            self.lru_del(id);
        }
        let n = self.node(id);
        if n.flags & ACCOUNT != 0 {
            self.charge(n.memcg, -1);
        }
        let free = self.free;
        let n = self.node_mut(id);
        debug_assert!(n.slots.iter().all(|&e| e == 0), "a node is freed empty");
        n.count = 0;
        n.nr_values = 0;
        n.flags = FREE;
        n.parent = free;
        self.free = id;
        self.live -= 1;
    }

    /// workingset_update_node: a leaf of a page-cache tree whose entries are all shadows
    /// goes on the shadow list (at the tail: list_lru_add); one that holds a page again, or
    /// nothing, comes off it (list_lru_del).
    #[inline(never)]
    fn update_node(&mut self, id: u32) {
        let n = self.node(id);
        if n.flags & TRACK_SHADOWS == 0 || n.shift != 0 {
            return;
        }
        let shadow_only = n.count > 0 && n.count == n.nr_values;
        let on = n.flags & ON_LRU != 0;
        if shadow_only && !on {
            self.lru_add(id);
        } else if !shadow_only && on {
            self.lru_del(id);
        }
    }

    fn lru_add(&mut self, id: u32) {
        let tail = self.lru_tail;
        {
            let n = self.node_mut(id);
            n.flags |= ON_LRU;
            n.lru_prev = tail;
            n.lru_next = NO_NODE;
        }
        if tail == NO_NODE {
            self.lru_head = id;
        } else {
            self.node_mut(tail).lru_next = id;
        }
        self.lru_tail = id;
        self.lru_len += 1;
    }

    fn lru_del(&mut self, id: u32) {
        let (prev, next) = {
            let n = self.node_mut(id);
            n.flags &= !ON_LRU;
            let pn = (n.lru_prev, n.lru_next);
            n.lru_prev = NO_NODE;
            n.lru_next = NO_NODE;
            pn
        };
        if prev == NO_NODE {
            self.lru_head = next;
        } else {
            self.node_mut(prev).lru_next = next;
        }
        if next == NO_NODE {
            self.lru_tail = prev;
        } else {
            self.node_mut(next).lru_prev = prev;
        }
        self.lru_len -= 1;
    }
}

/// One tree (struct xarray): its root node and the leaf last used.
#[derive(Debug)]
pub struct XArray {
    root: u32,
    /// The leaf last used and the first index it covers (NO_BASE: none).
    last: Cell<u32>,
    last_base: Cell<u64>,
    owner: u32,
    track: bool,
    /// A kernel page-cache tree: its nodes are radix_tree_node objects.
    account: bool,
    /// Nodes of this tree.
    nnodes: u32,
    /// Entries present.
    nr: u64,
}

/// No cached leaf (never a leaf's first index, which is a multiple of 64).
const NO_BASE: u64 = u64::MAX;

/// A hint to the host CPU that the cache line at `p` will be read soon (no effect on the
/// model; nothing on targets without the instruction).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A hint to the host kernel that the memory of `v` (a large table indexed at random, such
/// as the frame table or the index-node arena) should be backed by huge pages
/// (madvise(MADV_HUGEPAGE)): one host TLB entry then covers 2 MiB of it instead of 4 KiB,
/// so a random access costs one memory load, not a page-table walk as well. No effect on
/// the model; ignored where the host does not support it. Memory not yet touched stays
/// uncommitted.
pub fn advise_hugepages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: i32 = 14;
        const HUGE: usize = 2 << 20;
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let start = v.as_ptr() as usize;
        let end = start + std::mem::size_of_val(v);
        // Only whole huge pages inside the block are worth it (and madvise needs a
        // page-aligned start).
        let (a, b) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if b > a {
            // SAFETY: [a, b) lies inside the live allocation of `v`; MADV_HUGEPAGE changes no
            // contents, only how the host backs the pages. A failure is harmless.
            unsafe {
                madvise(a as *mut std::ffi::c_void, b - a, MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

#[inline]
fn is_value(e: u32) -> u8 {
    (e & VALUE_BIT != 0) as u8
}

impl XArray {
    /// An empty tree owned by `owner`; `track_shadows`: its shadow-only leaves go on the
    /// workingset shadow list (page-cache trees of files and block devices:
    /// mapping_set_update, not shmem).
    pub const fn new(owner: u32, track_shadows: bool) -> XArray {
        XArray { root: NO_NODE, last: Cell::new(NO_NODE), last_base: Cell::new(NO_BASE), owner, track: track_shadows, account: false, nnodes: 0, nr: 0 }
    }
    /// The tree as a kernel page-cache tree, whose nodes are radix_tree_node objects
    /// charged as `XaNodes` says (`mm::radix_tree`).
    pub const fn accounted(mut self) -> XArray {
        self.account = true;
        self
    }
    pub fn is_empty(&self) -> bool {
        self.root == NO_NODE
    }
    /// Entries present.
    pub fn len(&self) -> u64 {
        self.nr
    }
    /// Nodes of this tree (the host's: a tree with one entry, at index 0, has a leaf).
    #[inline(always)]
    pub fn nnodes(&self) -> u32 {
        self.nnodes
    }
    /// The nodes the kernel's tree has for the same entries: as `nnodes`, except that a
    /// lone entry at index 0 sits in the root pointer itself, no node (xa_head; 2.6.39's
    /// radix_tree_insert at height 0 and radix_tree_shrink, 6.x's xas_shrink).
    #[inline]
    pub fn kernel_nodes(&self, a: &XaNodes) -> u32 {
        self.nnodes - self.lone_entry(a).is_some() as u32
    }
    /// For an accounted tree whose only entry is at index 0: the host node holding it,
    /// which the kernel does not have, and its cgroup. Taken before a change and given to
    /// `account_lone_entry` after it.
    #[inline(always)]
    pub fn lone_entry(&self, a: &XaNodes) -> Option<(u32, u16)> {
        if self.nnodes == 1 && self.account {
            let r = a.node(self.root);
            if r.count == 1 && r.slots[0] != 0 {
                return Some((self.root, r.memcg));
            }
        }
        None
    }
    /// After a change: a tree that came to hold a lone entry at index 0 has one kernel
    /// node fewer (xas_shrink frees it); one that no longer does has one more — the node
    /// that held it, allocated now for the inserting task's cgroup — or, emptied, the one
    /// its release took off again.
    #[inline(always)]
    pub fn account_lone_entry(&self, a: &mut XaNodes, before: Option<(u32, u16)>) {
        if !self.account || (before.is_none() && self.nnodes != 1) {
            return;
        }
        match (before, self.lone_entry(a)) {
            (None, Some((_, m))) => a.charge(m, -1),
            (Some((_, m)), None) if self.nnodes == 0 => a.charge(m, 1),
            (Some((id, _)), None) => {
                let m = a.active_memcg;
                a.node_mut(id).memcg = m;
                a.charge(m, 1);
            }
            _ => {}
        }
    }

    #[inline]
    fn set_last(&self, leaf: u32, base: u64) {
        self.last.set(leaf);
        self.last_base.set(base);
    }
    #[inline]
    fn forget_last(&self) {
        self.last.set(NO_NODE);
        self.last_base.set(NO_BASE);
    }
    /// The cached leaf, if it covers `index`.
    #[inline(always)]
    fn cached(&self, index: u64) -> Option<u32> {
        (index & !XA_CHUNK_MASK == self.last_base.get()).then(|| self.last.get())
    }

    /// The leaf that covers `index`, if the tree has one (xas_load's walk).
    #[inline]
    fn leaf(&self, a: &XaNodes, index: u64) -> Option<u32> {
        if let Some(c) = self.cached(index) {
            return Some(c);
        }
        self.walk(a, index)
    }

    #[inline(never)]
    fn walk(&self, a: &XaNodes, index: u64) -> Option<u32> {
        // A sibling of the cached leaf (the next 64 pages of a sequential run) is one step
        // from their common parent, not a walk from the root.
        let c = self.last.get();
        if c != NO_NODE && (index ^ self.last_base.get()) >> (2 * XA_CHUNK_SHIFT) == 0 {
            let parent = a.node(c).parent;
            if parent != NO_NODE {
                let e = a.node(parent).slots[((index >> XA_CHUNK_SHIFT) & XA_CHUNK_MASK) as usize];
                if e == 0 {
                    return None;
                }
                self.set_last(e - 1, index & !XA_CHUNK_MASK);
                return Some(e - 1);
            }
        }
        if self.root == NO_NODE {
            return None;
        }
        let mut node = self.root;
        let r = a.node(node);
        if index > r.last() {
            return None;
        }
        // Down by the root's height, not by each node's own `shift`: the header of a node is
        // on another host cache line than the slot wanted, and the leaf's is rarely in cache
        // (its slot line may have been prefetched).
        let mut shift = r.shift;
        while shift > 0 {
            let e = a.node(node).slots[((index >> shift) & XA_CHUNK_MASK) as usize];
            if e == 0 {
                return None;
            }
            node = e - 1;
            shift -= XA_CHUNK_SHIFT as u8;
        }
        self.set_last(node, index & !XA_CHUNK_MASK);
        Some(node)
    }

    /// A hint that the entry at `index` will be loaded soon: walks the interior nodes
    /// and asks the host CPU for the line of the leaf that holds the entry, without reading
    /// the leaf. Changes nothing (not even the cached leaf): callers issue it some requests
    /// ahead so that the host's memory latency overlaps with the work in between.
    #[inline]
    pub fn prefetch(&self, a: &XaNodes, index: u64) {
        self.prefetch_at(a, index, 0, false);
    }

    /// As `prefetch`, one level up: the line of the slot of the leaf's parent (the
    /// interior nodes just above the leaves are too many to stay in the host's caches), so
    /// that a `prefetch` issued later finds the way to the leaf cached.
    #[inline]
    pub fn prefetch_parent(&self, a: &XaNodes, index: u64) {
        self.prefetch_at(a, index, XA_CHUNK_SHIFT as u8, false);
    }

    /// As `prefetch`, and the leaf's header too (its counts, written when an entry is
    /// stored where there was none or a value entry changes kind).
    #[inline]
    pub fn prefetch_for_store(&self, a: &XaNodes, index: u64) {
        self.prefetch_at(a, index, 0, true);
    }

    /// The header line of the leaf `index` is in, if that leaf is the cached one (after a
    /// `load` of `index`).
    #[inline]
    pub fn prefetch_cached_header(&self, a: &XaNodes, index: u64) {
        if let Some(c) = self.cached(index) {
            a.node(c).prefetch_header();
        }
    }

    /// Walk down to the node at height `stop_shift` on the way to `index` (reading only
    /// the nodes above it) and prefetch the line of its slot for `index`, and its header
    /// line if `header`.
    /// Returns the node reached (NO_NODE if the way ends before it).
    #[inline]
    fn prefetch_at(&self, a: &XaNodes, index: u64, stop_shift: u8, header: bool) -> u32 {
        if self.root == NO_NODE {
            return NO_NODE;
        }
        let mut node = self.root;
        let r = a.node(node);
        if index > r.last() {
            return NO_NODE;
        }
        let mut shift = r.shift;
        while shift > stop_shift {
            let e = a.node(node).slots[((index >> shift) & XA_CHUNK_MASK) as usize];
            if e == 0 {
                return NO_NODE;
            }
            node = e - 1;
            shift -= XA_CHUNK_SHIFT as u8;
        }
        let n = a.node(node);
        prefetch(&n.slots[((index >> shift) & XA_CHUNK_MASK) as usize]);
        if header {
            n.prefetch_header();
        }
        node
    }

    /// As `prefetch`, and the leaf whose slot line was asked for (NO_NODE: none), for
    /// `entry_hint` a little later without a second walk.
    #[inline]
    pub fn prefetch_leaf(&self, a: &XaNodes, index: u64) -> u32 {
        self.prefetch_at(a, index, 0, false)
    }
}

impl XaNodes {
    /// The entry for `index` in node `leaf` as `XArray::prefetch_leaf` found it earlier, 0
    /// if there is no such node. A hint only, for asking the host for memory ahead: the
    /// node may since have been freed or given to other indices, so the entry may be
    /// another's. Never a lookup of the model.
    #[inline]
    pub fn entry_hint(&self, leaf: u32, index: u64) -> u32 {
        self.nodes.get(leaf as usize).map_or(0, |n| n.slots[(index & XA_CHUNK_MASK) as usize])
    }
    /// Ask the host for the header of node `leaf` (its counts), if there is such a node.
    #[inline]
    pub fn prefetch_header_hint(&self, leaf: u32) {
        if let Some(n) = self.nodes.get(leaf as usize) {
            n.prefetch_header();
        }
    }
}

impl XArray {

    /// xa_load: the entry at `index` (0: none).
    #[inline(always)]
    pub fn load(&self, a: &XaNodes, index: u64) -> u32 {
        if let Some(c) = self.cached(index) {
            return a.node(c).slots[(index & XA_CHUNK_MASK) as usize];
        }
        if self.root == NO_NODE {
            return 0;
        }
        match self.walk(a, index) {
            Some(l) => a.node(l).slots[(index & XA_CHUNK_MASK) as usize],
            None => 0,
        }
    }

    /// xa_store: put `entry` at `index` (0 erases). Returns the entry it replaced.
    #[inline(always)]
    pub fn store(&mut self, a: &mut XaNodes, index: u64, entry: u32) -> u32 {
        if entry == 0 {
            return self.erase(a, index);
        }
        let leaf = match self.cached(index) {
            Some(c) => c,
            None => {
                assert!(index <= XA_MAX_INDEX, "page index {index} beyond the index's range");
                self.create_leaf(a, index)
            }
        };
        let off = (index & XA_CHUNK_MASK) as usize;
        let n = a.node_mut(leaf);
        let old = n.slots[off];
        n.slots[off] = entry;
        if old == 0 {
            n.count += 1;
            self.nr += 1;
        }
        if is_value(entry) != is_value(old) || old == 0 {
            n.nr_values = n.nr_values + is_value(entry) - is_value(old);
            if n.needs_update() {
                a.update_node(leaf);
            }
        }
        old
    }

    /// xa_erase: empty the slot at `index`, freeing nodes left empty. Returns the old entry.
    #[inline(always)]
    pub fn erase(&mut self, a: &mut XaNodes, index: u64) -> u32 {
        let Some(leaf) = self.leaf(a, index) else { return 0 };
        let off = (index & XA_CHUNK_MASK) as usize;
        let n = a.node_mut(leaf);
        let old = n.slots[off];
        if old == 0 {
            return 0;
        }
        n.slots[off] = 0;
        n.count -= 1;
        n.nr_values -= is_value(old);
        self.nr -= 1;
        if n.count == 0 {
            self.delete_node(a, leaf);
        } else if n.needs_update() {
            a.update_node(leaf);
        }
        old
    }

    /// The leaf covering `index`, created with the path to it (xas_create), growing the
    /// tree's height first if `index` is beyond the root (xas_expand).
    #[inline(never)]
    fn create_leaf(&mut self, a: &mut XaNodes, index: u64) -> u32 {
        if self.root == NO_NODE {
            let mut shift = 0u32;
            while index >> shift > XA_CHUNK_MASK {
                shift += XA_CHUNK_SHIFT;
            }
            self.root = a.alloc(self.owner, self.track, self.account, shift as u8, 0, NO_NODE, 0);
            self.nnodes += 1;
        } else {
            while index > a.node(self.root).last() {
                let old = self.root;
                let shift = a.node(old).shift + XA_CHUNK_SHIFT as u8;
                let root = a.alloc(self.owner, self.track, self.account, shift, 0, NO_NODE, 0);
                self.nnodes += 1;
                let r = a.node_mut(root);
                r.slots[0] = old + 1;
                r.count = 1;
                let o = a.node_mut(old);
                o.parent = root;
                o.offset = 0;
                self.root = root;
            }
        }
        let mut node = self.root;
        // As in `walk`: down by the root's height, reading only the slot lines of nodes
        // that exist.
        let mut shift = a.node(node).shift;
        loop {
            if shift == 0 {
                self.set_last(node, index & !XA_CHUNK_MASK);
                return node;
            }
            let off = ((index >> shift) & XA_CHUNK_MASK) as usize;
            let e = a.node(node).slots[off];
            let n_shift = shift;
            shift -= XA_CHUNK_SHIFT as u8;
            node = if e != 0 {
                e - 1
            } else {
                let n = a.node(node);
                let shift = n_shift;
                let base = n.index + ((off as u64) << shift);
                let child = a.alloc(self.owner, self.track, self.account, shift - XA_CHUNK_SHIFT as u8, base, node, off as u8);
                self.nnodes += 1;
                let p = a.node_mut(node);
                p.slots[off] = child + 1;
                p.count += 1;
                child
            };
        }
    }

    /// xas_delete_node: free an empty node and every ancestor it leaves empty, then shrink
    /// the tree's height (xas_shrink).
    #[inline(never)]
    fn delete_node(&mut self, a: &mut XaNodes, node: u32) {
        let mut node = node;
        loop {
            let (parent, off) = {
                let n = a.node(node);
                debug_assert_eq!(n.count, 0);
                (n.parent, n.offset as usize)
            };
            if self.last.get() == node {
                self.forget_last();
            }
            a.release(node);
            self.nnodes -= 1;
            if parent == NO_NODE {
                self.root = NO_NODE;
                return;
            }
            let p = a.node_mut(parent);
            p.slots[off] = 0;
            p.count -= 1;
            if p.count > 0 {
                break;
            }
            node = parent;
        }
        self.shrink(a);
    }

    /// xas_shrink: while the root is an interior node whose only entry is in slot 0, that
    /// child becomes the root.
    fn shrink(&mut self, a: &mut XaNodes) {
        loop {
            let r = a.node(self.root);
            if r.shift == 0 || r.count != 1 || r.slots[0] == 0 {
                return;
            }
            let child = r.slots[0] - 1;
            let old = self.root;
            a.node_mut(child).parent = NO_NODE;
            a.node_mut(old).slots[0] = 0;
            a.release(old);
            self.nnodes -= 1;
            self.root = child;
        }
    }

    /// xa_find: the first entry at an index in [from, end), with its index. Visits only
    /// nodes that hold entries; a run of calls moving forward stays in the cached leaf.
    #[inline(always)]
    pub fn find(&self, a: &XaNodes, from: u64, end: u64) -> Option<(u64, u32)> {
        if let Some(c) = self.cached(from) {
            // Within the cached leaf first: the next entry of a dense range is there.
            let n = a.node(c);
            let start = (from & XA_CHUNK_MASK) as usize;
            if let Some(off) = n.slots[start..].iter().position(|&e| e != 0) {
                let i = n.index + (start + off) as u64;
                return (i < end).then(|| (i, n.slots[start + off]));
            }
        }
        self.find_slow(a, from, end)
    }

    #[inline(never)]
    fn find_slow(&self, a: &XaNodes, from: u64, end: u64) -> Option<(u64, u32)> {
        if self.root == NO_NODE || from >= end {
            return None;
        }
        let mut index = from;
        let mut node = if let Some(c) = self.cached(from) {
            c
        } else {
            if from > a.node(self.root).last() {
                return None;
            }
            self.root
        };
        loop {
            let n = a.node(node);
            // `index` lies within this node.
            let mut off = ((index - n.index) >> n.shift) as usize;
            let mut child = NO_NODE;
            while off < XA_CHUNK_SIZE {
                let e = n.slots[off];
                if e != 0 {
                    if n.shift == 0 {
                        let i = n.index + off as u64;
                        if i >= end {
                            return None;
                        }
                        self.set_last(node, n.index);
                        return Some((i, e));
                    }
                    index = index.max(n.index + ((off as u64) << n.shift));
                    child = e - 1;
                    break;
                }
                off += 1;
                index = n.index + ((off as u64) << n.shift);
                if index >= end {
                    return None;
                }
            }
            if child != NO_NODE {
                node = child;
                continue;
            }
            // Past this node: climb to the ancestor that covers `index`.
            let mut up = n.parent;
            loop {
                if up == NO_NODE {
                    return None;
                }
                let u = a.node(up);
                if index <= u.last() {
                    break;
                }
                up = u.parent;
            }
            node = up;
        }
    }

    /// xa_destroy: free every node.
    pub fn destroy(&mut self, a: &mut XaNodes) {
        if self.root != NO_NODE {
            let mut stack = vec![self.root];
            while let Some(id) = stack.pop() {
                let n = a.node_mut(id);
                if n.shift > 0 {
                    stack.extend(n.slots.iter().filter(|&&e| e != 0).map(|&e| e - 1));
                }
                n.slots = [0; XA_CHUNK_SIZE];
                a.release(id);
            }
        }
        self.root = NO_NODE;
        self.forget_last();
        self.nr = 0;
        self.nnodes = 0;
    }

    /// Nodes of this tree (a walk: for tests and accounting).
    pub fn nodes(&self, a: &XaNodes) -> u64 {
        if self.root == NO_NODE {
            return 0;
        }
        let mut stack = vec![self.root];
        let mut n = 0;
        while let Some(id) = stack.pop() {
            n += 1;
            let node = a.node(id);
            if node.shift > 0 {
                stack.extend(node.slots.iter().filter(|&&e| e != 0).map(|&e| e - 1));
            }
        }
        n
    }

    /// Height of the tree (levels of nodes; 0 when empty).
    pub fn height(&self, a: &XaNodes) -> u32 {
        if self.root == NO_NODE {
            0
        } else {
            a.node(self.root).shift as u32 / XA_CHUNK_SHIFT + 1
        }
    }

    /// Remove a shadow-only leaf whole (shadow_lru_isolate -> xa_delete_node): its entries
    /// go, the node is freed. Returns how many entries it held.
    pub fn delete_leaf(&mut self, a: &mut XaNodes, leaf: u32) -> u32 {
        let n = a.node_mut(leaf);
        debug_assert!(n.shift == 0 && n.owner == self.owner);
        let k = n.count as u32;
        n.slots = [0; XA_CHUNK_SIZE];
        n.count = 0;
        n.nr_values = 0;
        self.nr -= k as u64;
        self.delete_node(a, leaf);
        k
    }

    /// Check the tree's structure against its counts (debug and tests): every node's count
    /// and nr_values match its slots, children point back to their parent, no node is
    /// empty, and the shadow-list membership follows workingset_update_node's rule.
    pub fn check(&self, a: &XaNodes) -> Result<(), String> {
        if self.root == NO_NODE {
            return if self.nr == 0 { Ok(()) } else { Err(format!("empty tree counts {} entries", self.nr)) };
        }
        if a.node(self.root).parent != NO_NODE {
            return Err("root has a parent".into());
        }
        let mut stack = vec![self.root];
        let (mut entries, mut nodes) = (0u64, 0u32);
        while let Some(id) = stack.pop() {
            let n = a.node(id);
            nodes += 1;
            if n.flags & FREE != 0 {
                return Err(format!("node {id} is free but in the tree"));
            }
            let count = n.slots.iter().filter(|&&e| e != 0).count();
            if count != n.count as usize || count == 0 {
                return Err(format!("node {id}: count {} but {count} slots used", n.count));
            }
            if n.shift == 0 {
                let values = n.slots.iter().filter(|&&e| e & VALUE_BIT != 0).count();
                if values != n.nr_values as usize {
                    return Err(format!("node {id}: nr_values {} but {values} values", n.nr_values));
                }
                entries += count as u64;
                let want = n.flags & TRACK_SHADOWS != 0 && n.count == n.nr_values;
                if want != (n.flags & ON_LRU != 0) {
                    return Err(format!("node {id}: shadow-list membership {} but shadow-only {want}", n.flags & ON_LRU != 0));
                }
            } else {
                for (off, &e) in n.slots.iter().enumerate() {
                    if e == 0 {
                        continue;
                    }
                    let c = a.node(e - 1);
                    if c.parent != id || c.offset as usize != off || c.shift + XA_CHUNK_SHIFT as u8 != n.shift || c.index != n.index + ((off as u64) << n.shift) {
                        return Err(format!("node {} is not linked as slot {off} of node {id}", e - 1));
                    }
                    stack.push(e - 1);
                }
            }
        }
        if entries != self.nr {
            return Err(format!("tree counts {} entries, holds {entries}", self.nr));
        }
        if nodes != self.nnodes {
            return Err(format!("tree counts {} nodes, has {nodes}", self.nnodes));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// The kernel keeps a lone entry at index 0 in the root pointer: a one-page file has
    /// no node, a two-page file one, 65 pages a root and two leaves.
    #[test]
    fn kernel_nodes_count_no_node_for_a_lone_entry_at_index_0() {
        let mut a = XaNodes::default();
        let mut t = XArray::new(1, false).accounted();
        // As Mm::set_slot does it: the lone entry's node is accounted around each change.
        let store = |t: &mut XArray, a: &mut XaNodes, i: u64, e: u32| {
            let lone = t.lone_entry(a);
            t.store(a, i, e);
            t.account_lone_entry(a, lone);
        };
        let mut charges = Vec::new();
        store(&mut t, &mut a, 0, 1);
        assert_eq!((t.nnodes(), t.kernel_nodes(&a), a.kernel_nodes()), (1, 0, 0));
        // The second entry's node is charged to the cgroup inserting it.
        a.active_memcg = 3;
        store(&mut t, &mut a, 1, 2);
        assert_eq!((t.nnodes(), t.kernel_nodes(&a), a.kernel_nodes()), (1, 1, 1));
        a.take_charges(&mut charges);
        assert_eq!(charges, vec![(3, 1)]);
        a.active_memcg = 0;
        store(&mut t, &mut a, 64, 3);
        assert_eq!((t.nnodes(), t.kernel_nodes(&a), a.kernel_nodes()), (3, 3, 3));
        store(&mut t, &mut a, 64, 0);
        store(&mut t, &mut a, 1, 0);
        assert_eq!((t.nnodes(), t.kernel_nodes(&a), a.kernel_nodes()), (1, 0, 0), "shrunk back to the lone entry");
        a.take_charges(&mut charges);
        assert_eq!(charges, vec![(3, -1)], "the root's two nodes came and went; cgroup 3's node went");
        // A lone entry elsewhere needs its leaf.
        store(&mut t, &mut a, 0, 0);
        store(&mut t, &mut a, 5, 1);
        assert_eq!((t.nnodes(), t.kernel_nodes(&a), a.kernel_nodes()), (1, 1, 1));
        t.check(&a).unwrap();
        let lone = t.lone_entry(&a);
        t.destroy(&mut a);
        t.account_lone_entry(&mut a, lone);
        assert_eq!((t.nnodes(), a.live(), a.kernel_nodes()), (0, 0, 0));
        // A tree that is not the kernel's (anonymous memory's index) counts none.
        let mut u = XArray::new(2, false);
        u.store(&mut a, 1, 1);
        assert_eq!(a.kernel_nodes(), 0);
    }

    #[test]
    fn store_load_erase_and_nodes_are_freed() {
        let mut a = XaNodes::default();
        let mut t = XArray::new(1, false);
        assert_eq!(t.load(&a, 0), 0);
        assert_eq!(t.store(&mut a, 5, 7), 0);
        assert_eq!(t.load(&a, 5), 7);
        assert_eq!(t.store(&mut a, 5, 8), 7);
        assert_eq!((t.len(), t.nodes(&a), t.height(&a)), (1, 1, 1));
        // An index at 15 TiB of 4 KiB pages: the tree grows to 6 levels, one node each.
        let far = 15u64 << 28;
        t.store(&mut a, far, 9);
        assert_eq!(t.load(&a, far), 9);
        assert_eq!(t.load(&a, far + 1), 0);
        assert_eq!(t.load(&a, 5), 8);
        assert_eq!(t.height(&a), 6);
        assert_eq!(t.nodes(&a), 6 + 5, "a second path of five nodes below the root");
        t.check(&a).unwrap();
        assert_eq!(t.erase(&mut a, far), 9);
        // The far path is freed and the root shrinks back to the leaf.
        assert_eq!((t.nodes(&a), t.height(&a), a.live()), (1, 1, 1));
        assert_eq!(t.erase(&mut a, 5), 8);
        assert!(t.is_empty());
        assert_eq!(a.live(), 0);
        t.check(&a).unwrap();
        // Freed nodes are reused: no new chunk.
        let before = a.allocated();
        for i in 0..100 {
            t.store(&mut a, i * 4096, 1);
        }
        for i in 0..100 {
            t.erase(&mut a, i * 4096);
        }
        for i in 0..100 {
            t.store(&mut a, i * 4096 + 1, 1);
        }
        assert!(a.allocated() <= before.max(CHUNK_NODES as u64 * 4));
        t.check(&a).unwrap();
    }

    #[test]
    fn find_visits_entries_in_order_within_a_range() {
        let mut a = XaNodes::default();
        let mut t = XArray::new(1, false);
        let idx = [0u64, 1, 63, 64, 4095, 4096, 1 << 20, (1 << 40) + 3, XA_MAX_INDEX];
        for (k, &i) in idx.iter().enumerate() {
            t.store(&mut a, i, k as u32 + 1);
        }
        let mut got = Vec::new();
        let mut from = 0;
        while let Some((i, e)) = t.find(&a, from, u64::MAX) {
            got.push((i, e));
            from = i + 1;
        }
        let want: Vec<_> = idx.iter().enumerate().map(|(k, &i)| (i, k as u32 + 1)).collect();
        assert_eq!(got, want);
        assert_eq!(t.find(&a, 2, 63), None);
        assert_eq!(t.find(&a, 2, 64), Some((63, 3)));
        assert_eq!(t.find(&a, 4097, 1 << 20), None);
        assert_eq!(t.find(&a, 4097, (1 << 20) + 1), Some((1 << 20, 7)));
        assert_eq!(t.find(&a, XA_MAX_INDEX, u64::MAX), Some((XA_MAX_INDEX, 9)));
    }

    #[test]
    fn shadow_only_leaves_are_listed_oldest_first() {
        let mut a = XaNodes::default();
        let mut t = XArray::new(3, true);
        let shadow = VALUE_BIT | 5;
        t.store(&mut a, 0, 1);
        t.store(&mut a, 1, shadow);
        assert_eq!(a.shadow_nodes(), 0, "a page in the node");
        t.store(&mut a, 0, shadow);
        assert_eq!(a.shadow_nodes(), 1);
        t.store(&mut a, 64, shadow);
        assert_eq!(a.shadow_nodes(), 2);
        let oldest = a.oldest_shadow_node().unwrap();
        assert_eq!(a.node(oldest).first_index(), 0);
        assert_eq!(a.node(oldest).owner(), 3);
        t.store(&mut a, 1, 2);
        assert_eq!(a.shadow_nodes(), 1, "a page came back");
        assert_eq!(a.node(a.oldest_shadow_node().unwrap()).first_index(), 64);
        let leaf = a.oldest_shadow_node().unwrap();
        assert_eq!(t.delete_leaf(&mut a, leaf), 1);
        assert_eq!(a.shadow_nodes(), 0);
        assert_eq!(t.load(&a, 64), 0);
        assert_eq!(t.load(&a, 1), 2);
        t.check(&a).unwrap();
        // Untracked trees (shmem, anon) never list nodes.
        let mut u = XArray::new(4, false);
        u.store(&mut a, 0, shadow);
        assert_eq!(a.shadow_nodes(), 0);
        u.destroy(&mut a);
        t.destroy(&mut a);
        assert_eq!(a.live(), 0);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Store(u64, u32),
        Erase(u64),
        Find(u64, u64),
    }

    fn index() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..200, 0u64..5000, (0u64..4).prop_map(|k| (k << 28) + 7), 0u64..=XA_MAX_INDEX]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (index(), prop_oneof![1u32..1000, Just(VALUE_BIT | 9)]).prop_map(|(i, e)| Op::Store(i, e)),
            2 => index().prop_map(Op::Erase),
            1 => (index(), index()).prop_map(|(a, b)| Op::Find(a.min(b), a.max(b))),
        ]
    }

    proptest! {
        /// Random stores, erases and range finds against a BTreeMap model; the structure
        /// stays consistent and every node is freed when the tree empties.
        #[test]
        fn matches_a_btreemap(ops in proptest::collection::vec(op(), 1..300)) {
            let mut a = XaNodes::default();
            let mut t = XArray::new(1, true);
            let mut m = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Store(i, e) => {
                        prop_assert_eq!(t.store(&mut a, i, e), m.insert(i, e).unwrap_or(0));
                    }
                    Op::Erase(i) => {
                        prop_assert_eq!(t.erase(&mut a, i), m.remove(&i).unwrap_or(0));
                    }
                    Op::Find(f, e) => {
                        let want = m.range(f..e).next().map(|(&i, &v)| (i, v));
                        prop_assert_eq!(t.find(&a, f, e), want);
                    }
                }
                t.check(&a).map_err(TestCaseError::fail)?;
                prop_assert_eq!(t.len(), m.len() as u64);
            }
            for (&i, &e) in &m {
                prop_assert_eq!(t.load(&a, i), e);
            }
            let keys: Vec<u64> = m.keys().copied().collect();
            for i in keys {
                t.erase(&mut a, i);
            }
            prop_assert!(t.is_empty());
            prop_assert_eq!(a.live(), 0);
            prop_assert_eq!(a.shadow_nodes(), 0);
        }
    }
}
