//! Path lookup and the VFS operations over the dentry and inode caches (fs/namei.c's
//! link_path_walk / lookup_slow, fs/stat.c, fs/readdir.c, fs/dcache.c's shrinkers,
//! fs/inode.c's prune_icache), for the file trees declared with `[[tree]]`.
//!
//! Every operation is resumable: it returns `Err(VfsErr::Wait(step))` when the task must
//! wait — for a directory or inode-table block read through the block device's page cache
//! (sb_bread: Buffers), or for a slab page (which may enter direct reclaim) — and the caller
//! calls again after the step; what was cached by then is found in the caches.
//!
//! The operations (what nfsd drives, by file handle):
//! `vfs_lookup`, `vfs_getattr`, `vfs_open`, `vfs_read`, `vfs_readdir`, `vfs_create`,
//! `vfs_unlink`, `vfs_access`, and by path `vfs_path_lookup` / `vfs_stat`. Writes,
//! setattr and readlink are refused with EOPNOTSUPP / EINVAL (see docs/vfs.md).

use super::dcache::{Killed, NameKey, NIL};
use super::namespace::{FileKind, Stat};
use super::read_write::Errno;
use super::vfs::{inodes_per_slab_page, GenTree, Node, SuperBlock, DENTRIES_PER_SLAB_PAGE};
use crate::mm::{KernelOwner, MappingKind, Slot, PAGE_SIZE, SLAB_VFS_DENTRY, SLAB_VFS_INODE};
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId};
use memtwin_procfs::VmItem;

/// A file handle: the super block and the inode number (what an NFS file handle holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fh {
    pub sb: u32,
    pub ino: u64,
}

/// Why an operation did not complete: an error, or a wait before calling again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VfsErr {
    Errno(Errno),
    Wait(Step),
}

impl From<Step> for VfsErr {
    fn from(s: Step) -> VfsErr {
        VfsErr::Wait(s)
    }
}
impl From<Errno> for VfsErr {
    fn from(e: Errno) -> VfsErr {
        VfsErr::Errno(e)
    }
}

pub type VfsOp<T> = Result<T, VfsErr>;

/// What a shrinker call did, for the reclaim path that made it: objects and slab pages
/// freed, CPU time (spinning on the LRU lock included) and the part spent waiting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShrinkOutcome {
    pub scanned: u64,
    pub freed: u64,
    pub pages_freed: u64,
    pub cpu_ns: Ns,
    pub lock_wait_ns: Ns,
}

/// One directory entry from `vfs_readdir`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: String,
    pub ino: u64,
    pub is_dir: bool,
}

/// The parent directory and ordinal of a node (its place in the tree).
fn parent_of_node(t: &GenTree, n: Node) -> Option<(u32, u64, u64)> {
    match n {
        Node::Dir { depth: 0, .. } => None,
        Node::Dir { depth, idx } => Some((depth - 1, idx / t.spec.dirs_per_dir, idx % t.spec.dirs_per_dir)),
        Node::File(f) => Some((t.leaf_depth(), f / t.spec.files_per_dir, f % t.spec.files_per_dir)),
    }
}

fn name_hash(key: NameKey) -> u64 {
    let h = (key as u64 ^ 0x5bd1_e995).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 33)
}

impl Kernel {
    /// Super blocks for the machine's `[[tree]]`s: each tree's directory exists from boot
    /// on its disk filesystem, and its root dentry and inode are cached and pinned.
    pub(crate) fn boot_trees(&mut self) -> Result<(), String> {
        let trees = self.machine.trees.clone();
        for spec in trees {
            let at = super::normalize("/", &spec.at);
            let Some(mi) = self.fs.mount_of(&at) else {
                return Err(format!("tree at {at}: no filesystem is mounted there"));
            };
            let m = &self.fs.mounts[mi as usize];
            let Some(dev) = m.dev else {
                return Err(format!("tree at {at}: {} is tmpfs; a generated tree lives on a disk filesystem (ext3, ext4, xfs)", m.at));
            };
            if self.vfs.tree_of(&at).is_some() {
                return Err(format!("tree at {at}: another tree already covers it"));
            }
            self.fs.add_boot_dir(&at);
            let dev_bytes = self.block.devs[dev as usize].disk.size_bytes;
            let tree = GenTree::new(memtwin_machine::TreeSpec { at: at.clone(), ..spec.clone() }, dev_bytes);
            let inodes = tree.spec.files + tree.n_dirs;
            self.fs.mounts[mi as usize].inodes_used += inodes;
            self.fs.mounts[mi as usize].used += tree.spec.files * tree.spec.file_size.div_ceil(4096) * 4096;
            let mut sb = SuperBlock {
                mount: mi,
                dev: Some(dev),
                dcache: super::dcache::Dcache::new(),
                icache: super::inode::Icache::new(),
                tree: Some(tree),
                root: NIL,
                dentry_lru_lock: memtwin_engine::LockQueue::new(memtwin_engine::LockKind::Spin),
                inode_lru_lock: memtwin_engine::LockQueue::new(memtwin_engine::LockKind::Spin),
            };
            let root_ino = sb.tree.as_ref().unwrap().ino_of(Node::Dir { depth: 0, idx: 0 });
            let root = sb.dcache.d_alloc(NIL, 0);
            let ri = sb.icache.alloc(root_ino as u32);
            sb.dcache.d_instantiate(root, ri);
            sb.root = root;
            self.vfs.sbs.push(sb);
            self.vfs.slab.dentries += 1;
            self.vfs.slab.inodes += 1;
        }
        // The pinned roots' slab pages, taken at boot like the rest of the boot slab.
        while (self.vfs.slab.dentry_pages.len() as u64) < self.vfs.slab.dentries.div_ceil(DENTRIES_PER_SLAB_PAGE) {
            let Some(p) = self.mm.take_kernel(KernelOwner::Slab(SLAB_VFS_DENTRY)) else { break };
            self.vfs.slab.dentry_pages.push(p);
        }
        while (self.vfs.slab.inode_pages.len() as u64) < self.inode_pages_needed(self.vfs.slab.inodes) {
            let Some(p) = self.mm.take_kernel(KernelOwner::Slab(SLAB_VFS_INODE)) else { break };
            self.vfs.slab.inode_pages.push(p);
        }
        Ok(())
    }

    fn inode_pages_needed(&self, inodes: u64) -> u64 {
        (inodes as f64 / inodes_per_slab_page(self.machine.kernel)).ceil() as u64
    }

    // ---- Slab objects ----------------------------------------------------------------------

    /// A slab page for the VFS caches (cache_grow / allocate_slab -> alloc_pages): from the
    /// free list above the min watermark (kswapd woken below low), else through the
    /// allocator's slow path (direct reclaim) as any allocation.
    fn vfs_slab_page(&mut self, tid: TaskId, owner: KernelOwner) -> Result<u32, Step> {
        let w = self.mm.wmark;
        let free = self.mm.nr_free();
        if free <= w.low {
            self.wake_kswapd();
        }
        if free > w.min {
            if let Some(p) = self.mm.take_kernel(owner) {
                self.vm.inc(VmItem::PgallocNormal);
                self.charge_sys(tid, self.machine.cpu_model.page_alloc_ns);
                return Ok(p);
            }
        }
        let p = self.page_cache_alloc(tid)?;
        // The frame becomes a slab page (not charged to a memory cgroup: no kmem accounting).
        self.memcg_page_freed_unused(p);
        self.mm.put_free(p);
        self.mm.take_kernel(owner).ok_or(Step::Yield)
    }

    /// Make room for `nd` more dentries and `ni` more inodes (kmem_cache_alloc's refill):
    /// the objects themselves are counted by `vfs_slab_commit`, which cannot fail.
    fn vfs_slab_reserve(&mut self, tid: TaskId, nd: u64, ni: u64) -> Result<(), Step> {
        // Split reclaim: the slab allocator's task reclaims slab once slab >= S_start
        // (mm/split_reclaim.rs).
        self.split_slab_reclaim(tid);
        let want_d = (self.vfs.slab.dentries + nd).div_ceil(DENTRIES_PER_SLAB_PAGE);
        while (self.vfs.slab.dentry_pages.len() as u64) < want_d {
            let p = self.vfs_slab_page(tid, KernelOwner::Slab(SLAB_VFS_DENTRY))?;
            self.vfs.slab.dentry_pages.push(p);
        }
        let want_i = self.inode_pages_needed(self.vfs.slab.inodes + ni);
        while (self.vfs.slab.inode_pages.len() as u64) < want_i {
            let p = self.vfs_slab_page(tid, KernelOwner::Slab(SLAB_VFS_INODE))?;
            self.vfs.slab.inode_pages.push(p);
        }
        Ok(())
    }

    fn vfs_slab_commit(&mut self, nd: u64, ni: u64) {
        self.vfs.slab.dentries += nd;
        self.vfs.slab.inodes += ni;
    }

    /// kmem_cache_free of `nd` dentries and `ni` inodes; returns the slab pages given back.
    fn vfs_slab_free(&mut self, nd: u64, ni: u64) -> u64 {
        self.vfs.slab.dentries -= nd;
        self.vfs.slab.inodes -= ni;
        let mut freed = 0;
        let want_d = self.vfs.slab.dentries.div_ceil(DENTRIES_PER_SLAB_PAGE);
        while self.vfs.slab.dentry_pages.len() as u64 > want_d {
            let p = self.vfs.slab.dentry_pages.pop().unwrap();
            self.mm.free_kernel_page(p);
            freed += 1;
        }
        let want_i = self.inode_pages_needed(self.vfs.slab.inodes);
        while self.vfs.slab.inode_pages.len() as u64 > want_i {
            let p = self.vfs.slab.inode_pages.pop().unwrap();
            self.mm.free_kernel_page(p);
            freed += 1;
        }
        self.vm.add(VmItem::Pgfree, freed);
        freed
    }

    // ---- Buffer cache ----------------------------------------------------------------------

    /// sb_bread of the metadata block at byte `pos` of device `dev`: found in the block
    /// device's page cache (Buffers), or read into it (the task sleeps for the read).
    fn vfs_bread(&mut self, tid: TaskId, dev: u32, pos: u64) -> Result<(), Step> {
        let m = self.block.devs[dev as usize].mapping;
        let index = pos / PAGE_SIZE;
        match self.mm.slot(m, index) {
            Slot::Page(p) if !self.mm.pages.locked(p) => {
                self.mark_page_accessed(p);
                self.charge_sys(tid, self.machine.cpu_model.page_cache_ns);
                Ok(())
            }
            Slot::Page(p) => {
                let t = self.block.read_completion(m, index).unwrap_or(self.now + 1).max(self.now + 1);
                self.wait_on_page_reason(tid, m, index, p);
                Err(Step::SleepUntil { t, io: true })
            }
            _ => {
                self.charge_sys(tid, self.machine.cpu_model.page_cache_ns);
                self.fault_read(tid, m, index, 1, index + 1, index)
            }
        }
    }

    // ---- Dentries and inodes ---------------------------------------------------------------

    /// dput, then iput of the inodes whose dentry reference went with it.
    fn vfs_dput(&mut self, sb: usize, d: u32) {
        let mut k = Killed::default();
        let rule = self.vfs.era.dput;
        self.vfs.sbs[sb].dcache.dput(d, rule, &mut k);
        self.vfs_finish_kills(sb, k);
    }

    fn vfs_finish_kills(&mut self, sb: usize, k: Killed) -> u64 {
        let rule = self.vfs.era.iput;
        let mut evicted = 0;
        for i in k.iput {
            let nrpages = self.vfs.sbs[sb].icache.mapping(i).map_or(0, |m| self.mm.mappings[m as usize].nrpages);
            let mapping = self.vfs.sbs[sb].icache.mapping(i);
            if self.vfs.sbs[sb].icache.iput(i, rule, nrpages).is_some() {
                if let Some(m) = mapping {
                    self.vfs_release_mapping(m);
                }
                evicted += 1;
            }
        }
        self.vfs_slab_free(k.freed, evicted)
    }

    /// Drop every page of a freed inode's mapping (truncate_inode_pages) and the mapping.
    fn vfs_release_mapping(&mut self, m: u32) -> u64 {
        let n = self.invalidate_mapping_pages(m);
        if self.mm.mappings[m as usize].nrpages == 0 {
            self.mm.release_mapping(m);
        }
        n
    }

    /// invalidate_mapping_pages(mapping, 0, -1): the clean, unlocked, unmapped pages.
    pub(crate) fn invalidate_mapping_pages(&mut self, m: u32) -> u64 {
        let mut freed = 0;
        let mut at = 0;
        while let Some((index, slot)) = self.mm.next_slot(m, at, u64::MAX) {
            at = index + 1;
            if let Slot::Page(p) = slot {
                let pg = &self.mm.pages;
                if pg.dirty(p) || pg.writeback(p) || pg.locked(p) {
                    continue;
                }
                self.page_cache_delete(p, None);
                freed += 1;
            }
        }
        freed
    }

    /// The node a dentry names (its inode's number in the tree).
    fn dentry_node(&self, sb: usize, d: u32) -> Option<Node> {
        let s = &self.vfs.sbs[sb];
        let i = s.dcache.inode(d)?;
        s.tree.as_ref()?.node_of(s.icache.ino(i) as u64)
    }

    /// One step of link_path_walk: `name` in directory dentry `dir` (held by the caller).
    /// d_lookup in the hash; on a miss the filesystem's lookup (ext3_lookup: the directory
    /// blocks, then ext3_iget: the inode-table block) and a new dentry, negative if the
    /// name does not exist. Returns the dentry with a reference.
    fn vfs_lookup_one(&mut self, tid: TaskId, sb: usize, dir: u32, name: &str) -> VfsOp<u32> {
        let Some(Node::Dir { depth, idx }) = self.dentry_node(sb, dir) else {
            return Err(Errno::ENOTDIR.into());
        };
        self.vfs.stats.lookups += 1;
        let cost = self.vfs.cost;
        let s = &mut self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
        let ord = t.parse_name(depth, name);
        let key = match ord {
            Some(o) if o < u32::MAX as u64 / 2 => o as NameKey,
            _ => s.dcache.intern(name),
        };
        if let Some(d) = s.dcache.d_lookup(dir, key) {
            s.dcache.dget(d);
            if s.dcache.inode(d).is_none() {
                self.vfs.stats.negative_hits += 1;
            }
            self.charge_sys(tid, cost.lookup_hit);
            return Ok(d);
        }
        // lookup_slow -> ext3_lookup -> ext3_find_entry: the directory's blocks.
        let dev = s.dev.unwrap();
        let child = ord.and_then(|o| t.child(depth, idx, o));
        let blocks = t.lookup_blocks(depth, idx, name_hash(key));
        self.charge_sys(tid, cost.lookup_hit);
        for pos in blocks.into_iter().flatten() {
            if let Err(step) = self.vfs_bread(tid, dev, pos) {
                self.vfs.stats.dir_block_reads += 1;
                return Err(step.into());
            }
        }
        let s = &self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
        let ino = child.map(|c| t.ino_of(c));
        // ext3_iget: the inode if cached, else its inode-table block and a new inode.
        let cached = ino.and_then(|i| s.icache.find(i as u32));
        if let (Some(i), None) = (ino, cached) {
            let pos = t.itable_pos(i);
            if let Err(step) = self.vfs_bread(tid, dev, pos) {
                self.vfs.stats.itable_block_reads += 1;
                return Err(step.into());
            }
        }
        let new_inode = (ino.is_some() && cached.is_none()) as u64;
        self.vfs_slab_reserve(tid, 1, new_inode)?;
        self.vfs_slab_commit(1, new_inode);
        self.vfs.stats.lookup_misses += 1;
        let s = &mut self.vfs.sbs[sb];
        let d = s.dcache.d_alloc(dir, key);
        if let Some(i) = ino {
            let ii = match cached {
                Some(ii) => {
                    s.icache.iget(ii);
                    ii
                }
                None => s.icache.alloc(i as u32),
            };
            s.dcache.d_instantiate(d, ii);
        }
        self.charge_sys(tid, cost.d_alloc + new_inode * cost.inode_init);
        Ok(d)
    }

    /// link_path_walk from the tree's root along `rest` ("a/b/c"); the last dentry with a
    /// reference (negative ones are ENOENT).
    fn vfs_walk(&mut self, tid: TaskId, sb: usize, rest: &str) -> VfsOp<u32> {
        let root = self.vfs.sbs[sb].root;
        self.vfs.sbs[sb].dcache.dget(root);
        let mut cur = root;
        for comp in rest.split('/').filter(|c| !c.is_empty() && *c != ".") {
            let next = match self.vfs_lookup_one(tid, sb, cur, comp) {
                Ok(d) => d,
                Err(e) => {
                    self.vfs_dput(sb, cur);
                    return Err(e);
                }
            };
            self.vfs_dput(sb, cur);
            if self.vfs.sbs[sb].dcache.inode(next).is_none() {
                self.vfs_dput(sb, next);
                return Err(Errno::ENOENT.into());
            }
            cur = next;
        }
        Ok(cur)
    }

    /// The dentry of a file handle (exportfs_decode_fh -> d_find_alias): reached from the
    /// root along the node's ancestry, so a handle whose names were pruned is reconnected
    /// (lookups, with their reads) as nfsd's reconnect_path does. Charged as one hit when
    /// everything is cached.
    fn vfs_fh_dentry(&mut self, tid: TaskId, fh: Fh) -> VfsOp<(usize, u32)> {
        let sb = fh.sb as usize;
        let Some(s) = self.vfs.sbs.get(sb) else { return Err(Errno::EINVAL.into()) };
        let Some(t) = s.tree.as_ref() else { return Err(Errno::EINVAL.into()) };
        let Some(node) = t.node_of(fh.ino) else { return Err(Errno::ENOENT.into()) };
        let mut chain = Vec::new();
        let mut n = node;
        while let Some((depth, idx, ord)) = parent_of_node(t, n) {
            chain.push(t.child_name(depth, ord));
            n = Node::Dir { depth, idx };
        }
        chain.reverse();
        let path = chain.join("/");
        let before = self.tasks[tid as usize].pending_sys;
        let misses = self.vfs.stats.lookup_misses;
        let d = self.vfs_walk(tid, sb, &path)?;
        if self.vfs.stats.lookup_misses == misses {
            // All cached: d_find_alias, not a walk.
            self.tasks[tid as usize].pending_sys = before + self.vfs.cost.lookup_hit;
        }
        Ok((sb, d))
    }

    fn vfs_stat_of(&self, sb: usize, d: u32) -> Stat {
        let s = &self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
        let i = s.dcache.inode(d).unwrap();
        let ino = s.icache.ino(i) as u64;
        match t.node_of(ino) {
            Some(Node::Dir { depth, idx }) => {
                let (_, n) = t.children(depth, idx);
                let sub = if depth == t.leaf_depth() { 0 } else { n };
                let blocks = t.dir_blocks(depth, idx);
                Stat { kind: FileKind::Directory, size: blocks * 4096, blocks: blocks * 8, nlink: 2 + sub, mode: 0o40755, ino, mount: s.mount }
            }
            Some(Node::File(f)) => {
                let size = t.file_size(f);
                Stat { kind: FileKind::Regular, size, blocks: size.div_ceil(4096) * 8, nlink: 1, mode: 0o100644, ino, mount: s.mount }
            }
            None => Stat { kind: FileKind::Regular, size: 0, blocks: 0, nlink: 1, mode: 0o100644, ino, mount: s.mount },
        }
    }

    // ---- The operations --------------------------------------------------------------------

    /// The file handle of a path inside a tree (path_lookupat).
    pub fn vfs_path_lookup(&mut self, tid: TaskId, path: &str) -> VfsOp<Fh> {
        let path = super::normalize("/", path);
        let Some((sb, rest)) = self.vfs.tree_of(&path) else { return Err(Errno::ENOENT.into()) };
        let rest = rest.to_string();
        self.charge_sys(tid, self.vfs.cost.syscall);
        let d = self.vfs_walk(tid, sb, &rest)?;
        let s = &self.vfs.sbs[sb];
        let ino = s.icache.ino(s.dcache.inode(d).unwrap()) as u64;
        self.vfs_dput(sb, d);
        Ok(Fh { sb: sb as u32, ino })
    }

    /// stat(2) of a path inside a tree: the walk, then getattr.
    pub fn vfs_stat(&mut self, tid: TaskId, path: &str) -> VfsOp<Stat> {
        let path = super::normalize("/", path);
        let Some((sb, rest)) = self.vfs.tree_of(&path) else { return Err(Errno::ENOENT.into()) };
        let rest = rest.to_string();
        let d = self.vfs_walk(tid, sb, &rest)?;
        self.vfs.stats.getattrs += 1;
        let st = self.vfs_stat_of(sb, d);
        self.charge_sys(tid, self.vfs.cost.getattr);
        self.vfs_dput(sb, d);
        Ok(st)
    }

    /// LOOKUP: `name` in directory `dir` (lookup_one_len); the child's handle.
    pub fn vfs_lookup(&mut self, tid: TaskId, dir: Fh, name: &str) -> VfsOp<Fh> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let c = match self.vfs_lookup_one(tid, sb, d, name) {
            Ok(c) => c,
            Err(e) => {
                self.vfs_dput(sb, d);
                return Err(e);
            }
        };
        self.vfs_dput(sb, d);
        let s = &self.vfs.sbs[sb];
        let r = s.dcache.inode(c).map(|i| Fh { sb: sb as u32, ino: s.icache.ino(i) as u64 });
        self.vfs_dput(sb, c);
        r.ok_or(Errno::ENOENT.into())
    }

    /// GETATTR (vfs_getattr of the handle's inode).
    pub fn vfs_getattr(&mut self, tid: TaskId, fh: Fh) -> VfsOp<Stat> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        self.vfs.stats.getattrs += 1;
        let st = self.vfs_stat_of(sb, d);
        self.charge_sys(tid, self.vfs.cost.getattr);
        self.vfs_dput(sb, d);
        Ok(st)
    }

    /// ACCESS (inode_permission): the inode's mode, root's view: always allowed.
    pub fn vfs_access(&mut self, tid: TaskId, fh: Fh) -> VfsOp<u32> {
        let st = self.vfs_getattr(tid, fh)?;
        Ok(st.mode & 0o777)
    }

    /// open of a regular file: its page-cache mapping (created at the first open, kept
    /// with the inode until the inode is freed). Returns the mapping.
    pub fn vfs_open(&mut self, tid: TaskId, fh: Fh) -> VfsOp<u32> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        let Some(Node::File(f)) = self.dentry_node(sb, d) else {
            self.vfs_dput(sb, d);
            return Err(Errno::EISDIR.into());
        };
        let i = self.vfs.sbs[sb].dcache.inode(d).unwrap();
        let m = match self.vfs.sbs[sb].icache.mapping(i) {
            Some(m) => m,
            None => {
                let dev = self.vfs.sbs[sb].dev;
                let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
                // File data: contiguous extents after the metadata regions, wrapping.
                let size = t.file_size(f).div_ceil(4096) * 4096;
                let base = (f * size.max(4096)) % (t.dev_bytes / 2).max(4096);
                let m = self.mm.new_mapping(MappingKind::File, dev, base);
                self.vfs.sbs[sb].icache.set_mapping(i, m);
                m
            }
        };
        self.charge_sys(tid, self.vfs.cost.syscall);
        self.vfs_dput(sb, d);
        Ok(m)
    }

    /// READ of `len` bytes at `offset` (generic_file_read through the page cache): missing
    /// pages are read with the device's readahead window. Returns the bytes read.
    pub fn vfs_read(&mut self, tid: TaskId, fh: Fh, offset: u64, len: u64) -> VfsOp<u64> {
        let st = self.vfs_getattr(tid, fh)?;
        if st.kind != FileKind::Regular {
            return Err(Errno::EISDIR.into());
        }
        let m = self.vfs_open(tid, fh)?;
        let end = (offset + len).min(st.size);
        if offset >= end {
            return Ok(0);
        }
        let eof = st.size.div_ceil(PAGE_SIZE);
        let copy_bw = self.machine.cpu_model.copy_bw;
        for index in offset / PAGE_SIZE..end.div_ceil(PAGE_SIZE) {
            match self.mm.slot(m, index) {
                Slot::Page(p) if !self.mm.pages.locked(p) => {
                    self.mark_page_accessed(p);
                    self.charge_sys(tid, self.machine.cpu_model.page_cache_ns + (PAGE_SIZE as f64 / copy_bw * 1e9) as Ns);
                }
                Slot::Page(p) => {
                    let t = self.block.read_completion(m, index).unwrap_or(self.now + 1).max(self.now + 1);
                    self.wait_on_page_reason(tid, m, index, p);
                    return Err(Step::SleepUntil { t, io: true }.into());
                }
                _ => {
                    let ra = self.vfs.sbs[fh.sb as usize]
                        .dev
                        .map_or(1, |d| (self.block.devs[d as usize].disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE).max(1));
                    self.fault_read(tid, m, index, ra, eof, index)?;
                }
            }
        }
        Ok(end - offset)
    }

    /// READDIR: up to `count` entries from `cookie` (ext3_readdir over the directory's
    /// blocks: the blocks holding them are read). Returns the entries and the next cookie
    /// (None at the end).
    pub fn vfs_readdir(&mut self, tid: TaskId, dir: Fh, cookie: u64, count: u64) -> VfsOp<(Vec<DirEntry>, Option<u64>)> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let Some(Node::Dir { depth, idx }) = self.dentry_node(sb, d) else {
            self.vfs_dput(sb, d);
            return Err(Errno::ENOTDIR.into());
        };
        self.vfs_dput(sb, d);
        let s = &self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
        let dev = s.dev.unwrap();
        let (first, n) = t.children(depth, idx);
        let end = n.min(cookie + count);
        let nb = t.dir_blocks(depth, idx);
        let (b0, b1) = ((cookie * nb / n.max(1)).min(nb - 1), (end * nb).div_ceil(n.max(1)).min(nb));
        let blocks: Vec<u64> = (b0..b1.max(b0 + 1)).map(|b| t.dir_block_pos(depth, idx, b)).collect();
        for pos in blocks {
            if let Err(step) = self.vfs_bread(tid, dev, pos) {
                self.vfs.stats.dir_block_reads += 1;
                return Err(step.into());
            }
        }
        let s = &self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
        let leaf = depth == t.leaf_depth();
        let mut out = Vec::with_capacity((end.saturating_sub(cookie)) as usize);
        for ord in cookie..end {
            let node = if leaf { Node::File(first + ord) } else { Node::Dir { depth: depth + 1, idx: first + ord } };
            if let Node::File(f) = node {
                if t.removed.contains(&f) {
                    continue;
                }
            }
            out.push(DirEntry { name: t.child_name(depth, ord), ino: t.ino_of(node), is_dir: !leaf });
        }
        let k = out.len() as u64;
        self.charge_sys(tid, self.vfs.cost.syscall + k * self.vfs.cost.readdir_entry);
        Ok((out, (end < n).then_some(end)))
    }

    /// REMOVE: unlink `name` from `dir` (vfs_unlink -> d_delete): the dentry turns negative
    /// if no one else holds it; the inode is evicted at its last iput.
    pub fn vfs_unlink(&mut self, tid: TaskId, dir: Fh, name: &str) -> VfsOp<()> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let c = match self.vfs_lookup_one(tid, sb, d, name) {
            Ok(c) => c,
            Err(e) => {
                self.vfs_dput(sb, d);
                return Err(e);
            }
        };
        self.vfs_dput(sb, d);
        let Some(node) = self.dentry_node(sb, c) else {
            self.vfs_dput(sb, c);
            return Err(Errno::ENOENT.into());
        };
        let Node::File(f) = node else {
            self.vfs_dput(sb, c);
            return Err(Errno::EISDIR.into());
        };
        let s = &mut self.vfs.sbs[sb];
        s.tree.as_mut().unwrap().removed.insert(f);
        let i = s.dcache.inode(c).unwrap();
        s.icache.set_unlinked(i);
        let m = &mut self.fs.mounts[s.mount as usize];
        m.inodes_used -= 1;
        if let Some(ii) = s.dcache.d_delete(c) {
            self.vfs_finish_kills(sb, Killed { iput: vec![ii], freed: 0 });
        }
        self.charge_sys(tid, self.vfs.cost.syscall + self.vfs.cost.free_obj);
        self.vfs_dput(sb, c);
        Ok(())
    }

    /// CREATE in a generated tree: refused (EOPNOTSUPP): a generated directory's entries
    /// are its generated names; files removed with `vfs_unlink` stay removed.
    pub fn vfs_create(&mut self, _tid: TaskId, _dir: Fh, _name: &str) -> VfsOp<Fh> {
        Err(Errno::EOPNOTSUPP.into())
    }

    // ---- Shrinkers -------------------------------------------------------------------------

    /// The shrinkers' count (2.6.39 shrink_dcache_memory / shrink_icache_memory with
    /// nr_to_scan 0; 6.x super_cache_count): unused objects scaled by vfs_cache_pressure.
    pub fn vfs_shrink_count(&self) -> (u64, u64) {
        let (d, i) = self.vfs.nr_unused();
        let p = self.sysctl.vfs_cache_pressure as u64;
        // (nr_unused / 100) * sysctl_vfs_cache_pressure.
        (d / 100 * p, i / 100 * p)
    }

    /// Prune up to `nr` dentries (2.6.39 shrink_dcache_memory -> prune_dcache: each super
    /// block its share by its unused count, under the global dcache_lru_lock; 6.x: the
    /// dentry half of super_cache_scan under the super block's list_lru lock).
    pub fn shrink_dcache(&mut self, nr: u64) -> ShrinkOutcome {
        let mut out = ShrinkOutcome::default();
        let total: u64 = self.vfs.sbs.iter().map(|s| s.dcache.nr_unused).sum();
        if total == 0 || nr == 0 {
            return out;
        }
        let cost = self.vfs.cost;
        // prune_dcache: every super block prunes its share, unused / prune_ratio + 1.
        let prune_ratio = if nr >= total { 1 } else { total / nr };
        for sb in 0..self.vfs.sbs.len() {
            let unused = self.vfs.sbs[sb].dcache.nr_unused;
            let share = if prune_ratio == 1 { unused } else { unused / prune_ratio + 1 };
            if share == 0 {
                continue;
            }
            let mut k = Killed::default();
            let r = self.vfs.sbs[sb].dcache.prune(share, &mut k);
            let hold = r.scanned * cost.lru_hold;
            let lock = if self.vfs.era.global_lru_locks { &mut self.vfs.dcache_lru_lock } else { &mut self.vfs.sbs[sb].dentry_lru_lock };
            let start = lock.acquire(self.now + out.cpu_ns, hold);
            let wait = start - (self.now + out.cpu_ns);
            out.lock_wait_ns += wait;
            out.cpu_ns += wait + hold + r.freed * cost.free_obj;
            out.scanned += r.scanned;
            out.freed += r.freed;
            self.vfs.stats.dentries_pruned += r.freed;
            out.pages_freed += self.vfs_finish_kills(sb, k);
        }
        out
    }

    /// Prune up to `nr` inodes (2.6.39 shrink_icache_memory -> prune_icache: iprune_sem for
    /// read, inode_lru_lock held over the scan, freed inodes disposed of outside it, page
    /// cache of unused inodes invalidated: pginodesteal / kswapd_inodesteal; 6.x: the inode
    /// half of super_cache_scan).
    pub fn shrink_icache(&mut self, kswapd: bool, nr: u64) -> ShrinkOutcome {
        let mut out = ShrinkOutcome::default();
        let total: u64 = self.vfs.sbs.iter().map(|s| s.icache.nr_unused).sum();
        if total == 0 || nr == 0 {
            return out;
        }
        let cost = self.vfs.cost;
        let rule = self.vfs.era.iput;
        self.vfs.iprune_sem_readers += 1;
        for sb in 0..self.vfs.sbs.len() {
            let unused = self.vfs.sbs[sb].icache.nr_unused;
            let share = if self.vfs.era.global_lru_locks { nr * unused / total } else { unused.min(nr) };
            if share == 0 {
                continue;
            }
            let mut ic = std::mem::take(&mut self.vfs.sbs[sb].icache);
            let mut freed_maps = Vec::new();
            let mut inval = |m: u32| self.invalidate_mapping_pages(m);
            let r = ic.prune(share, rule, &mut inval, &mut freed_maps);
            self.vfs.sbs[sb].icache = ic;
            for m in freed_maps {
                self.vfs_release_mapping(m);
            }
            if r.reap > 0 {
                self.vm.add(if kswapd { VmItem::KswapdInodesteal } else { VmItem::Pginodesteal }, r.reap);
            }
            let hold = r.scanned * cost.lru_hold + r.reap * self.machine.cpu_model.page_cache_ns;
            let lock = if self.vfs.era.global_lru_locks { &mut self.vfs.inode_lru_lock } else { &mut self.vfs.sbs[sb].inode_lru_lock };
            let start = lock.acquire(self.now + out.cpu_ns, hold);
            let wait = start - (self.now + out.cpu_ns);
            out.lock_wait_ns += wait;
            out.cpu_ns += wait + hold + r.freed * cost.free_obj;
            out.scanned += r.scanned;
            out.freed += r.freed;
            self.vfs.stats.inodes_pruned += r.freed;
            out.pages_freed += self.vfs_slab_free(0, r.freed) + r.reap;
        }
        self.vfs.iprune_sem_readers -= 1;
        out
    }

    /// drop_caches 2 (drop_slab): shrink every unused dentry and inode, pass after pass
    /// (a pass clears the referenced bits it finds; the next frees those objects) until a
    /// pass changes nothing. Returns the slab pages freed.
    pub(crate) fn vfs_drop_slab(&mut self) -> u64 {
        let mut pages = 0;
        loop {
            let (d, i) = self.vfs.nr_unused();
            if d == 0 && i == 0 {
                return pages;
            }
            // The writer of /proc/sys/vm/drop_caches, not kswapd.
            let a = self.shrink_dcache(d.max(1));
            let b = self.shrink_icache(false, i.max(1));
            pages += a.pages_freed + b.pages_freed;
            if a.freed + b.freed == 0 && self.vfs.nr_unused() == (d, i) {
                return pages;
            }
        }
    }
}

#[cfg(test)]
mod tests;
