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
//! `vfs_lookup`, `vfs_getattr`, `vfs_statat`, `vfs_open`, `vfs_read`, `vfs_readdir`,
//! `vfs_create`, `vfs_unlink`, `vfs_access`, and by path `vfs_path_lookup` / `vfs_stat`. Writes,
//! setattr and readlink are refused with EOPNOTSUPP / EINVAL (see docs/vfs.md).

use super::dcache::{Killed, NameKey, PruneBudget, NIL};
use super::inode::IputRule;
use super::namespace::{FileKind, Stat};
use super::read_write::Errno;
use super::vfs::{GenTree, Node, SuperBlock};
use crate::mm::list_lru::LruMemcg;
use crate::mm::shrinker::ShrinkLock;
use crate::mm::slab::ObjHandle;
use crate::mm::{MappingKind, Slot, PAGE_SIZE};
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId};


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
    /// Of the count asked for, what a walk cut at its visit limit left to do.
    pub left: u64,
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

fn set_obj(v: &mut Vec<u64>, slot: u32, h: ObjHandle) {
    if v.len() <= slot as usize {
        v.resize(slot as usize + 1, 0);
    }
    v[slot as usize] = h.raw();
}

/// A symbolic link's target: the file before it in its directory.
pub fn symlink_target(t: &GenTree, f: u64) -> String {
    let ord = f % t.spec.files_per_dir;
    format!("f{}", ord.saturating_sub(t.symlinks_per_dir))
}

/// ext4's default inode_readahead_blks (EXT4_DEF_INODE_READAHEAD_BLKS).
const EXT4_INODE_READAHEAD_BLKS: u64 = 32;

/// The largest NFSv3 WRITE/READ the server accepts in one RPC (nfsd's default max
/// block size on a 64 GB machine, NFSSVC_MAXBLKSIZE: 1 MiB).
pub const NFSSVC_MAXBLKSIZE: u64 = 1 << 20;

fn name_hash(key: NameKey) -> u64 {
    let h = (key as u64 ^ 0x5bd1_e995).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 33)
}

impl Kernel {
    /// Super blocks for the machine's `[[tree]]`s: each tree's directory exists from boot
    /// on its disk filesystem, and its root dentry and inode are cached and pinned.
    pub(crate) fn boot_trees(&mut self) -> Result<(), String> {
        let linux24 = self.machine.kernel == memtwin_machine::KernelProfile::Linux24;
        let dname = if linux24 { "dentry_cache" } else { "dentry" };
        self.vfs.dentry_cache = self.mm.slab.find(dname).ok_or("no dentry slab cache")?;
        let trees = self.machine.trees.clone();
        for spec in trees {
            self.add_tree(spec, None, 0)?;
        }
        Ok(())
    }

    /// Put a generated tree on a disk filesystem (at boot for `[[tree]]`, or later for a
    /// file set a benchmark creates): its super block, its root dentry and inode (pinned),
    /// and the VFS shrinkers if it is the first. `size_mix`: a file-size distribution
    /// (size, percent); `symlinks_per_dir`: the last entries of each leaf directory are
    /// symbolic links. Returns the super block's index.
    pub fn add_tree(&mut self, spec: memtwin_machine::TreeSpec, size_mix: Option<Vec<(u64, u32)>>, symlinks_per_dir: u64) -> Result<usize, String> {
        {
            let at = super::normalize("/", &spec.at);
            let Some(mi) = self.fs.mount_of(&at) else {
                return Err(format!("tree at {at}: no filesystem is mounted there"));
            };
            let m = &self.fs.mounts[mi as usize];
            let Some(dev) = m.dev else {
                return Err(format!("tree at {at}: {} is tmpfs; a generated tree lives on a disk filesystem (ext3, ext4, xfs)", m.at));
            };
            // The filesystem's inode cache (ext4_inode_cache, ext3_inode_cache; the generic
            // inode_cache where the era has no such cache).
            let fs_cache = format!("{}_inode_cache", m.fstype);
            self.vfs.inode_cache = match self.mm.slab.find(&fs_cache) {
                Some(c) => c,
                None => self.mm.slab.find("inode_cache").ok_or("no inode slab cache")?,
            };
            if self.vfs.tree_of(&at).is_some() {
                return Err(format!("tree at {at}: another tree already covers it"));
            }
            self.fs.add_boot_dir(&at);
            let dev_bytes = self.block.devs[dev as usize].disk.size_bytes;
            let mut tree = GenTree::new(memtwin_machine::TreeSpec { at: at.clone(), ..spec.clone() }, dev_bytes);
            tree.size_mix = size_mix;
            tree.symlinks_per_dir = symlinks_per_dir;
            let inodes = tree.spec.files + tree.n_dirs;
            self.fs.mounts[mi as usize].inodes_used += inodes;
            let bytes = match &tree.size_mix {
                None => tree.spec.files * tree.spec.file_size.div_ceil(4096) * 4096,
                Some(mix) => {
                    let mean: f64 = mix.iter().map(|&(sz, pct)| sz.div_ceil(4096) as f64 * 4096.0 * pct as f64 / 100.0).sum();
                    (mean * tree.spec.files as f64) as u64
                }
            };
            self.fs.mounts[mi as usize].used += bytes;
            let mut sb = SuperBlock {
                mount: mi,
                dev: Some(dev),
                dcache: super::dcache::Dcache::new(),
                icache: super::inode::Icache::new(),
                tree: Some(tree),
                root: NIL,
                dentry_lru_lock: memtwin_engine::LockQueue::new(memtwin_engine::LockKind::Spin),
                inode_lru_lock: memtwin_engine::LockQueue::new(memtwin_engine::LockKind::Spin),
                d_obj: Vec::new(),
                i_obj: Vec::new(),
                i_alias: Vec::new(),
            };
            // The root dentry and inode: pinned for the life of the mount.
            let root_ino = sb.tree.as_ref().unwrap().ino_of(Node::Dir { depth: 0, idx: 0 });
            let root = sb.dcache.d_alloc(NIL, 0);
            let ri = sb.icache.alloc(root_ino as u32);
            sb.dcache.d_instantiate(root, ri);
            sb.root = root;
            let dh = self.mm.kmem_cache_alloc(self.vfs.dentry_cache).ok_or("no memory for the tree's root dentry")?;
            let ih = self.mm.kmem_cache_alloc(self.vfs.inode_cache).ok_or("no memory for the tree's root inode")?;
            set_obj(&mut sb.d_obj, root, dh);
            set_obj(&mut sb.i_obj, ri, ih);
            let idx = self.vfs.sbs.len() as u16;
            self.vfs.sbs.push(sb);
            use crate::mm::shrinker::{ShrinkerKind, DEFAULT_SEEKS};
            if self.vfs.era.global_lru_locks {
                // 2.6.39: the two global VFS shrinkers (dcache_shrinker, icache_shrinker),
                // registered once.
                if idx == 0 {
                    self.register_shrinker(ShrinkerKind::Dcache, "dcache", DEFAULT_SEEKS);
                    self.register_shrinker(ShrinkerKind::Icache, "icache", DEFAULT_SEEKS);
                }
            } else {
                // 3.1+: one per super block (alloc_super's s_shrink: super_cache_scan).
                self.register_shrinker(ShrinkerKind::SuperBlock(idx), "sb-tree", DEFAULT_SEEKS);
            }
            Ok(idx as usize)
        }
    }

    /// Free the slab objects of freed dentry slots and inode slots; slab pages given back.
    fn vfs_free_objs(&mut self, sb: usize, dentries: &[u32], inodes: &[u32]) -> u64 {
        let mut pages = 0;
        for &d in dentries {
            let s = &self.vfs.sbs[sb];
            let (h, m) = (ObjHandle::from_raw(s.d_obj[d as usize]), s.dcache.memcg(d));
            pages += self.vfs_free_obj(h, m);
        }
        for &i in inodes {
            let s = &self.vfs.sbs[sb];
            let (h, m) = (ObjHandle::from_raw(s.i_obj[i as usize]), s.icache.memcg(i));
            pages += self.vfs_free_obj(h, m);
        }
        pages
    }

    /// d_free of a hashed dentry, destroy_inode: after an RCU grace period where the era
    /// has one (rcu.rs; the pages then freed are not this task's reclaim progress: 0 here),
    /// at once on 2.4.
    pub(crate) fn vfs_free_obj(&mut self, h: ObjHandle, m: LruMemcg) -> u64 {
        if self.vfs.era.rcu_free {
            self.call_rcu_free(h, m);
            0
        } else {
            self.kmem_cache_free_memcg(h, m)
        }
    }

    // ---- Buffer cache ----------------------------------------------------------------------

    /// sb_bread of the metadata block at byte `pos` of device `dev`: found in the block
    /// device's page cache (Buffers), or read into it (the task sleeps for the read).
    fn vfs_bread(&mut self, tid: TaskId, dev: u32, pos: u64) -> Result<(), Step> {
        let m = self.block.devs[dev as usize].mapping;
        let index = pos / PAGE_SIZE;
        match self.mm.slot(m, index) {
            Slot::Page(p) if !self.mm.pages.locked(p) => {
                // __getblk: the block's buffer head (the page's first use through the
                // buffer cache; 2.4's and 2.6.39's block_read_full_page attached it already).
                self.attach_page_buffers(Some(tid), p)?;
                self.mark_page_accessed(p);
                self.charge_sys(tid, self.machine.cpu_model.page_cache_ns);
                Ok(())
            }
            Slot::Page(p) => Err(self.folio_wait_locked(tid, m, index, p)),
            _ => {
                self.charge_sys(tid, self.machine.cpu_model.page_cache_ns);
                self.fault_read(tid, m, index, 1, index + 1, index, None)
            }
        }
    }

    /// The inode-table block at byte `pos` for an inode being read (ext3_iget /
    /// __ext4_get_inode_loc). ext4 reads a block it does not have with the rest of its
    /// aligned window of inode_readahead_blks (32) blocks, up to the end of the used inode
    /// table (`while (b <= end) ext4_sb_breadahead_unmovable(sb, b++)` under one plug: one
    /// request); ext3 reads the one block.
    fn vfs_read_inode_block(&mut self, tid: TaskId, sb: usize, dev: u32, pos: u64) -> Result<(), Step> {
        let mount = self.vfs.sbs[sb].mount;
        let m = self.block.devs[dev as usize].mapping;
        let index = pos / PAGE_SIZE;
        if self.fs.mounts[mount as usize].fstype != "ext4" || matches!(self.mm.slot(m, index), Slot::Page(_)) {
            return self.vfs_bread(tid, dev, pos);
        }
        let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
        let table = t.itable_base / PAGE_SIZE;
        // The used inode table: up to the block of the tree's last inode.
        let used_end = t.itable_pos(t.first_ino + t.n_dirs + t.spec.files - 1) / PAGE_SIZE + 1;
        let start = (index & !(EXT4_INODE_READAHEAD_BLKS - 1)).max(table);
        let end = (start + EXT4_INODE_READAHEAD_BLKS).min(used_end);
        self.charge_sys(tid, self.machine.cpu_model.page_cache_ns);
        self.fault_read(tid, m, start, end - start + 1, u64::MAX, index, None)
    }

    // ---- Dentries and inodes ---------------------------------------------------------------

    /// dput, then iput of the inodes whose dentry reference went with it. The LRU list
    /// operations on the way take the era's LRU lock in the task's time: 2.6.39
    /// fs/dcache.c dput -> dentry_lru_add (the global dcache_lru_lock, when the dentry is
    /// not listed yet: the LRU is lazy since 2.6.38, a cached dentry stays listed while in
    /// use), dentry_kill -> dentry_lru_del, fs/inode.c iput_final -> inode_lru_list_add
    /// (the global inode_lru_lock, at every final iput of a cached inode); 6.x d_lru_add /
    /// d_lru_del and __inode_add_lru -> list_lru_add (the super block's list_lru lock).
    fn vfs_dput(&mut self, tid: TaskId, sb: usize, d: u32) {
        let mut k = Killed::default();
        let rule = self.vfs.era.dput;
        self.vfs.sbs[sb].dcache.dput(d, rule, &mut k);
        let dentry_ops = k.lru_ops;
        self.vfs_finish_kills(sb, k);
        let inode_ops = std::mem::take(&mut self.vfs.iput_lru_ops);
        if dentry_ops + inode_ops > 0 {
            self.vfs_put_lru_locks(tid, sb, dentry_ops, inode_ops);
        }
    }

    /// `dentries` then `inodes` acquisitions of the LRU locks by task `tid`, each held for
    /// one list operation (`lru_hold`), asked for at the time of the task's step (the
    /// queue is served in the order of the steps); the wait is spun (spinlocks) and so is
    /// system time.
    fn vfs_put_lru_locks(&mut self, tid: TaskId, sb: usize, dentries: u32, inodes: u32) {
        let hold = self.vfs.cost.lru_hold;
        for (n, inode) in [(dentries, false), (inodes, true)] {
            for _ in 0..n {
                let wait = self.vfs_lru_lock(sb, inode, 0, hold);
                self.charge_sys(tid, wait + hold);
                self.vfs.stats.put_lru_ns += wait + hold;
                self.vfs.stats.put_lru_locks += 1;
                self.vfs.stats.put_lru_wait_ns += wait;
            }
        }
    }

    fn vfs_finish_kills(&mut self, sb: usize, k: Killed) -> u64 {
        let rule = self.vfs.era.iput;
        let mut evicted = Vec::new();
        for i in k.iput {
            let nrpages = self.vfs.sbs[sb].icache.mapping(i).map_or(0, |m| self.mm.mappings[m as usize].nrpages);
            let mapping = self.vfs.sbs[sb].icache.mapping(i);
            if self.vfs.sbs[sb].icache.iput(i, rule, nrpages).is_some() {
                if let Some(m) = mapping {
                    self.vfs_release_mapping(m);
                }
                evicted.push(i);
            } else if self.vfs.sbs[sb].icache.i_count(i) == 0 && (rule == IputRule::Referenced || nrpages == 0) {
                // iput_final kept it cached: 2.6.39 inode_lru_list_add takes inode_lru_lock
                // whether or not the inode is listed; 6.x __inode_add_lru's list_lru_add
                // takes the list's lock for an inode without pages (mapping_shrinkable).
                self.vfs.iput_lru_ops += 1;
            }
        }
        self.vfs_free_objs(sb, &k.freed, &evicted)
    }

    /// Drop every page of a freed inode's mapping (truncate_inode_pages) and the mapping.
    fn vfs_release_mapping(&mut self, m: u32) -> u64 {
        let n = self.invalidate_mapping_pages(m);
        if self.mm.mappings[m as usize].nrpages == 0 {
            self.mm.release_mapping(m);
        }
        n
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
        let s = &mut self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
        let ord = t.parse_name(depth, name);
        let key = match ord {
            Some(o) if o < u32::MAX as u64 / 2 => o as NameKey,
            _ => s.dcache.intern(name),
        };
        self.vfs_lookup_key(tid, sb, dir, depth, idx, ord, key)
    }

    /// `vfs_lookup_one` of a name already parsed: its ordinal in the directory (if it is
    /// a generated name) and its key.
    #[allow(clippy::too_many_arguments)]
    fn vfs_lookup_key(&mut self, tid: TaskId, sb: usize, dir: u32, depth: u32, idx: u64, ord: Option<u64>, key: NameKey) -> VfsOp<u32> {
        self.vfs.stats.lookups += 1;
        let cost = self.vfs.cost;
        let s = &mut self.vfs.sbs[sb];
        let t = s.tree.as_ref().unwrap();
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
            if let Err(step) = self.vfs_read_inode_block(tid, sb, dev, pos) {
                self.vfs.stats.itable_block_reads += 1;
                return Err(step.into());
            }
        }
        let new_inode = (ino.is_some() && cached.is_none()) as u64;
        // d_alloc and alloc_inode: slab objects, which may wait for memory (and, charged
        // to the task's cgroup, for its reclaim).
        let ih = if new_inode == 1 { Some(self.kmem_cache_alloc_memcg(tid, self.vfs.inode_cache)?) } else { None };
        let (dh, dm) = match self.kmem_cache_alloc_memcg(tid, self.vfs.dentry_cache) {
            Ok(x) => x,
            Err(step) => {
                if let Some((h, m)) = ih {
                    self.kmem_cache_free_memcg(h, m);
                }
                return Err(step.into());
            }
        };
        self.vfs.stats.lookup_misses += 1;
        let s = &mut self.vfs.sbs[sb];
        let d = s.dcache.d_alloc(dir, key);
        s.dcache.set_memcg(d, dm);
        if let Some(i) = ino {
            let ii = match cached {
                Some(ii) => {
                    s.icache.iget(ii);
                    ii
                }
                None => s.icache.alloc(i as u32),
            };
            if let Some((h, m)) = ih {
                set_obj(&mut s.i_obj, ii, h);
                s.icache.set_memcg(ii, m);
            }
            s.dcache.d_instantiate(d, ii);
            if s.i_alias.len() <= ii as usize {
                s.i_alias.resize(ii as usize + 1, NIL);
            }
            s.i_alias[ii as usize] = d;
        }
        set_obj(&mut s.d_obj, d, dh);
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
                    self.vfs_dput(tid, sb, cur);
                    return Err(e);
                }
            };
            self.vfs_dput(tid, sb, cur);
            if self.vfs.sbs[sb].dcache.inode(next).is_none() {
                self.vfs_dput(tid, sb, next);
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
        // A cached inode with a hashed alias: exportfs_decode_fh -> ext3_fh_to_dentry ->
        // ext3_nfs_get_inode (iget) -> d_obtain_alias -> d_find_any_alias, accepted as it
        // is (nfsd_acceptable with no_subtree_check, the default): its ancestors are not
        // walked.
        if let Some(i) = s.icache.find(fh.ino as u32) {
            if let Some(&d) = s.i_alias.get(i as usize) {
                if d != NIL && s.dcache.inode(d) == Some(i) && s.dcache.flags(d) & super::dcache::DCACHE_UNHASHED == 0 {
                    self.vfs.sbs[sb].dcache.dget(d);
                    self.charge_sys(tid, self.vfs.cost.lookup_hit);
                    return Ok((sb, d));
                }
            }
        }
        // The ancestry as (depth, index, ordinal) steps from the root (at most 64 levels).
        let mut chain = [(0u32, 0u64, 0u64); 64];
        let mut len = 0;
        let mut n = node;
        while let Some((depth, idx, ord)) = parent_of_node(t, n) {
            chain[len] = (depth, idx, ord);
            len += 1;
            n = Node::Dir { depth, idx };
        }
        let before = self.tasks[tid as usize].pending_sys;
        let locks_before = self.vfs.stats.put_lru_ns;
        let misses = self.vfs.stats.lookup_misses;
        let root = self.vfs.sbs[sb].root;
        self.vfs.sbs[sb].dcache.dget(root);
        let mut cur = root;
        for &(depth, idx, ord) in chain[..len].iter().rev() {
            let next = match self.vfs_lookup_key(tid, sb, cur, depth, idx, Some(ord), ord as NameKey) {
                Ok(d) => d,
                Err(e) => {
                    self.vfs_dput(tid, sb, cur);
                    return Err(e);
                }
            };
            self.vfs_dput(tid, sb, cur);
            if self.vfs.sbs[sb].dcache.inode(next).is_none() {
                self.vfs_dput(tid, sb, next);
                return Err(Errno::ENOENT.into());
            }
            cur = next;
        }
        let d = cur;
        if self.vfs.stats.lookup_misses == misses {
            // All cached: d_find_alias, not a walk.
            // The LRU lock round trips of the walk's puts are charged as they were.
            self.tasks[tid as usize].pending_sys = before + self.vfs.cost.lookup_hit + (self.vfs.stats.put_lru_ns - locks_before);
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
                Stat { kind: FileKind::Directory, size: blocks * 4096, blocks: blocks * 8, nlink: 2 + sub, mode: 0o40755, ino, mount: s.mount, times: [0; 4] }
            }
            Some(Node::File(f)) if t.is_symlink(f) => {
                // A fast symlink: the target lives in the inode (no data block).
                let size = symlink_target(t, f).len() as u64;
                Stat { kind: FileKind::Regular, size, blocks: 0, nlink: 1, mode: 0o120777, ino, mount: s.mount, times: [0; 4] }
            }
            Some(Node::File(f)) => {
                let size = t.file_size(f);
                Stat { kind: FileKind::Regular, size, blocks: size.div_ceil(4096) * 8, nlink: 1, mode: 0o100644, ino, mount: s.mount, times: [0; 4] }
            }
            None => Stat { kind: FileKind::Regular, size: 0, blocks: 0, nlink: 1, mode: 0o100644, ino, mount: s.mount, times: [0; 4] },
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
        self.vfs_dput(tid, sb, d);
        Ok(Fh { sb: sb as u32, ino })
    }

    /// stat(2) of a path inside a tree: the walk, then getattr.
    pub fn vfs_stat(&mut self, tid: TaskId, path: &str) -> VfsOp<Stat> {
        let path = super::normalize("/", path);
        let Some((sb, rest)) = self.vfs.tree_of(&path) else { return Err(Errno::ENOENT.into()) };
        let rest = rest.to_string();
        let d = self.vfs_walk(tid, sb, &rest)?;
        Ok(self.vfs_getattr_put(tid, sb, d, 0))
    }

    /// LOOKUP: `name` in directory `dir` (lookup_one_len); the child's handle.
    pub fn vfs_lookup(&mut self, tid: TaskId, dir: Fh, name: &str) -> VfsOp<Fh> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let c = match self.vfs_lookup_one(tid, sb, d, name) {
            Ok(c) => c,
            Err(e) => {
                self.vfs_dput(tid, sb, d);
                return Err(e);
            }
        };
        self.vfs_dput(tid, sb, d);
        let s = &self.vfs.sbs[sb];
        let r = s.dcache.inode(c).map(|i| Fh { sb: sb as u32, ino: s.icache.ino(i) as u64 });
        self.vfs_dput(tid, sb, c);
        r.ok_or(Errno::ENOENT.into())
    }

    /// GETATTR (vfs_getattr of the handle's inode).
    pub fn vfs_getattr(&mut self, tid: TaskId, fh: Fh) -> VfsOp<Stat> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        Ok(self.vfs_getattr_put(tid, sb, d, 0))
    }

    /// fstatat(dirfd, name): the lookup of one name in an open directory, then getattr
    /// (what du, ls -l and find -printf do for every entry).
    pub fn vfs_statat(&mut self, tid: TaskId, dir: Fh, name: &str) -> VfsOp<Stat> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let c = self.vfs_lookup_one(tid, sb, d, name);
        self.vfs_dput(tid, sb, d);
        let c = c?;
        if self.vfs.sbs[sb].dcache.inode(c).is_none() {
            self.vfs_dput(tid, sb, c);
            return Err(Errno::ENOENT.into());
        }
        let syscall = self.vfs.cost.syscall;
        Ok(self.vfs_getattr_put(tid, sb, c, syscall))
    }

    /// getattr of a held dentry's inode, then the dentry's reference dropped: the common
    /// tail of stat, GETATTR and fstatat (`extra`: CPU before it, e.g. the syscall entry).
    fn vfs_getattr_put(&mut self, tid: TaskId, sb: usize, d: u32, extra: Ns) -> Stat {
        self.vfs.stats.getattrs += 1;
        let st = self.vfs_stat_of(sb, d);
        self.charge_sys(tid, extra + self.vfs.cost.getattr);
        self.vfs_dput(tid, sb, d);
        st
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
            self.vfs_dput(tid, sb, d);
            return Err(Errno::EISDIR.into());
        };
        let i = self.vfs.sbs[sb].dcache.inode(d).unwrap();
        let m = match self.vfs.sbs[sb].icache.mapping(i) {
            Some(m) => m,
            None => {
                let dev = self.vfs.sbs[sb].dev;
                let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
                // File data: contiguous extents after the metadata regions, wrapping (each
                // file a slot of the largest generated size).
                let size = t.max_generated_size().div_ceil(4096) * 4096;
                let base = (f * size.max(4096)) % (t.dev_bytes / 2).max(4096);
                let m = self.mm.new_mapping(MappingKind::File, dev, base);
                self.vfs.sbs[sb].icache.set_mapping(i, m);
                m
            }
        };
        self.charge_sys(tid, self.vfs.cost.syscall);
        self.vfs_dput(tid, sb, d);
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
                Slot::Page(p) => return Err(self.folio_wait_locked(tid, m, index, p).into()),
                _ => {
                    let ra = self.vfs.sbs[fh.sb as usize]
                        .dev
                        .map_or(1, |d| (self.block.devs[d as usize].disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE).max(1));
                    self.fault_read(tid, m, index, ra, eof, index, None)?;
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
            self.vfs_dput(tid, sb, d);
            return Err(Errno::ENOTDIR.into());
        };
        self.vfs_dput(tid, sb, d);
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

    /// READDIRPLUS (nfsd3_proc_readdirplus): up to `count` entries from `cookie`, and for
    /// each its file handle and attributes (encode_entry_plus -> compose_entry_fh:
    /// lookup_one_len under the directory, then getattr), so every entry's dentry and inode
    /// are cached. Returns the entries and the next cookie.
    pub fn vfs_readdirplus(&mut self, tid: TaskId, dir: Fh, cookie: u64, count: u64) -> VfsOp<(Vec<DirEntry>, Option<u64>)> {
        let (entries, next) = self.vfs_readdir(tid, dir, cookie, count)?;
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let Some(Node::Dir { depth, idx }) = self.dentry_node(sb, d) else {
            self.vfs_dput(tid, sb, d);
            return Err(Errno::ENOTDIR.into());
        };
        let first = self.vfs.sbs[sb].tree.as_ref().unwrap().children(depth, idx).0;
        for e in &entries {
            let node = self.vfs.sbs[sb].tree.as_ref().unwrap().node_of(e.ino);
            let ord = match node {
                Some(Node::File(f)) => f - first,
                Some(Node::Dir { idx: i, .. }) => i - first,
                None => continue,
            };
            match self.vfs_lookup_key(tid, sb, d, depth, idx, Some(ord), ord as NameKey) {
                Ok(c) if self.vfs.sbs[sb].dcache.inode(c).is_some() => {
                    self.vfs_getattr_put(tid, sb, c, 0);
                }
                Ok(c) => self.vfs_dput(tid, sb, c),
                Err(VfsErr::Errno(_)) => {}
                Err(w) => {
                    self.vfs_dput(tid, sb, d);
                    return Err(w);
                }
            }
        }
        self.vfs_dput(tid, sb, d);
        Ok((entries, next))
    }

    /// REMOVE: unlink `name` from `dir` (vfs_unlink -> d_delete): the dentry turns negative
    /// if no one else holds it; the inode is evicted at its last iput.
    pub fn vfs_unlink(&mut self, tid: TaskId, dir: Fh, name: &str) -> VfsOp<()> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let c = match self.vfs_lookup_one(tid, sb, d, name) {
            Ok(c) => c,
            Err(e) => {
                self.vfs_dput(tid, sb, d);
                return Err(e);
            }
        };
        self.vfs_dput(tid, sb, d);
        let Some(node) = self.dentry_node(sb, c) else {
            self.vfs_dput(tid, sb, c);
            return Err(Errno::ENOENT.into());
        };
        let Node::File(f) = node else {
            self.vfs_dput(tid, sb, c);
            return Err(Errno::EISDIR.into());
        };
        let s = &mut self.vfs.sbs[sb];
        s.tree.as_mut().unwrap().removed.insert(f);
        let i = s.dcache.inode(c).unwrap();
        s.icache.set_unlinked(i);
        let m = &mut self.fs.mounts[s.mount as usize];
        m.inodes_used -= 1;
        if let Some(ii) = s.dcache.d_delete(c) {
            self.vfs_finish_kills(sb, Killed { iput: vec![ii], ..Default::default() });
        }
        self.charge_sys(tid, self.vfs.cost.syscall + self.vfs.cost.free_obj);
        self.vfs_dput(tid, sb, c);
        Ok(())
    }

    /// The file a handle names, with its dentry held (regular files and symlinks).
    fn vfs_fh_file(&mut self, tid: TaskId, fh: Fh) -> VfsOp<(usize, u32, u64)> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        match self.dentry_node(sb, d) {
            Some(Node::File(f)) => Ok((sb, d, f)),
            _ => {
                self.vfs_dput(tid, sb, d);
                Err(Errno::EISDIR.into())
            }
        }
    }

    /// Dirty a metadata block (an inode-table or directory block) in the block device's
    /// page cache, as ext3's journalled metadata update leaves it for writeback: read it
    /// first if it is not cached (sb_bread), then mark_buffer_dirty.
    fn vfs_dirty_meta(&mut self, tid: TaskId, dev: u32, pos: u64) -> Result<(), Step> {
        self.vfs_bread(tid, dev, pos)?;
        let m = self.block.devs[dev as usize].mapping;
        if let Slot::Page(p) = self.mm.slot(m, pos / PAGE_SIZE) {
            self.set_page_dirty(tid, p);
        }
        Ok(())
    }

    /// WRITE of `len` bytes at `offset` (nfsd_write -> vfs_writev -> generic_perform_write):
    /// page-cache pages allocated or found, copied into and dirtied; the file grows if
    /// the write ends past its size (the inode's block marked dirty). Returns the bytes
    /// written. The data reaches the disk by writeback, or by COMMIT.
    pub fn vfs_write(&mut self, tid: TaskId, fh: Fh, offset: u64, len: u64) -> VfsOp<u64> {
        let (sb, d, f) = self.vfs_fh_file(tid, fh)?;
        self.vfs_dput(tid, sb, d);
        let m = self.vfs_open(tid, fh)?;
        let len = len.min(NFSSVC_MAXBLKSIZE);
        let end = offset + len;
        let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
        if end > t.max_generated_size().div_ceil(4096) * 4096 {
            return Err(Errno::EFBIG.into());
        }
        let copy_bw = self.machine.cpu_model.copy_bw;
        let mount = self.vfs.sbs[sb].mount;
        let buffers = crate::fs::buffer::fs_write_buffers(self.machine.kernel, &self.fs.mounts[mount as usize].fstype);
        let mut at = offset;
        while at < end {
            let index = at / PAGE_SIZE;
            let chunk = (PAGE_SIZE - at % PAGE_SIZE).min(end - at);
            let p = match self.mm.slot(m, index) {
                Slot::Page(p) => p,
                _ => {
                    let p = self.page_cache_alloc(tid)?;
                    self.filemap_add_page(m, index, p, false);
                    p
                }
            };
            if self.mm.pages.locked(p) {
                let t = self.block.read_completion(m, index).unwrap_or(self.now + 1).max(self.now + 1);
                return Err(Step::SleepUntil { t, io: true }.into());
            }
            self.charge_sys(tid, self.machine.cpu_model.page_cache_ns + (chunk as f64 / copy_bw * 1e9) as Ns);
            if buffers {
                self.attach_page_buffers(Some(tid), p)?;
            }
            self.write_mark_accessed(p);
            self.set_page_dirty(tid, p);
            at += chunk;
        }
        let t = self.vfs.sbs[sb].tree.as_mut().unwrap();
        if end > t.file_size(f) {
            t.sizes.insert(f, end);
            // i_size changed: ext3_mark_inode_dirty (the inode-table block).
            let pos = t.itable_pos(t.ino_of(Node::File(f)));
            let dev = self.vfs.sbs[sb].dev.unwrap();
            let _ = self.vfs_dirty_meta(tid, dev, pos);
        }
        Ok(len)
    }

    /// COMMIT (nfsd_commit -> vfs_fsync_range): write the file's dirty pages and wait for
    /// them. Ok(None) when nothing is left to write, Ok(Some(t)) to wait until t and call
    /// again.
    pub fn vfs_commit(&mut self, tid: TaskId, fh: Fh) -> VfsOp<Option<Ns>> {
        let (sb, d, _f) = self.vfs_fh_file(tid, fh)?;
        let i = self.vfs.sbs[sb].dcache.inode(d).unwrap();
        let m = self.vfs.sbs[sb].icache.mapping(i);
        self.charge_sys(tid, self.vfs.cost.syscall);
        self.vfs_dput(tid, sb, d);
        let Some(m) = m else { return Ok(None) };
        self.filemap_fdatawrite(m, Some(tid));
        Ok(self.block.writeback_completion(m).filter(|&t| t > self.now))
    }

    /// SETATTR (nfsd_setattr -> notify_change): a size changes the file (truncate: its
    /// pages past the end dropped), other attributes only the inode; either way the inode
    /// is dirtied (its inode-table block). Returns the new attributes.
    pub fn vfs_setattr(&mut self, tid: TaskId, fh: Fh, size: Option<u64>) -> VfsOp<Stat> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        let node = self.dentry_node(sb, d);
        let dev = self.vfs.sbs[sb].dev.unwrap();
        let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
        let ino = node.map(|n| t.ino_of(n)).unwrap_or(0);
        let pos = t.itable_pos(ino.max(1));
        let cap = t.max_generated_size().div_ceil(4096) * 4096;
        if let Err(step) = self.vfs_dirty_meta(tid, dev, pos) {
            self.vfs_dput(tid, sb, d);
            return Err(step.into());
        }
        if let (Some(sz), Some(Node::File(f))) = (size, node) {
            if sz > cap {
                self.vfs_dput(tid, sb, d);
                return Err(Errno::EFBIG.into());
            }
            let i = self.vfs.sbs[sb].dcache.inode(d).unwrap();
            if let Some(m) = self.vfs.sbs[sb].icache.mapping(i) {
                self.truncate_mapping(m, sz.div_ceil(PAGE_SIZE));
            }
            self.vfs.sbs[sb].tree.as_mut().unwrap().sizes.insert(f, sz);
        }
        Ok(self.vfs_getattr_put(tid, sb, d, self.vfs.cost.syscall))
    }

    /// READLINK (nfsd_readlink -> generic_readlink): the target of a fast symlink, copied
    /// from the inode; EINVAL for anything else, as readlink(2) says.
    pub fn vfs_readlink(&mut self, tid: TaskId, fh: Fh) -> VfsOp<String> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        let node = self.dentry_node(sb, d);
        self.vfs_dput(tid, sb, d);
        let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
        match node {
            Some(Node::File(f)) if t.is_symlink(f) => {
                let target = symlink_target(t, f);
                self.charge_sys(tid, self.vfs.cost.getattr);
                Ok(target)
            }
            _ => Err(Errno::EINVAL.into()),
        }
    }

    /// FSSTAT (nfsd_statfs -> vfs_statfs): the super block's counters, no I/O.
    pub fn vfs_statfs(&mut self, tid: TaskId, fh: Fh) -> VfsOp<(u64, u64)> {
        let (sb, d) = self.vfs_fh_dentry(tid, fh)?;
        self.vfs_dput(tid, sb, d);
        let mi = self.vfs.sbs[sb].mount as usize;
        self.charge_sys(tid, self.vfs.cost.getattr);
        let m = &self.fs.mounts[mi];
        Ok((m.used, m.inodes_used))
    }

    /// CREATE of `name` in a leaf directory (nfsd_create_v3 -> vfs_create -> ext3_create):
    /// the name must be one of the directory's generated names whose file was removed (a
    /// generated directory's entries are its generated names); the file comes back empty.
    /// Creating an existing name is EEXIST (the NFSv3 GUARDED mode), another name
    /// EOPNOTSUPP. The directory block and the new inode's inode-table block are dirtied,
    /// and the new dentry and inode come from the slab.
    pub fn vfs_create(&mut self, tid: TaskId, dir: Fh, name: &str) -> VfsOp<Fh> {
        let (sb, d) = self.vfs_fh_dentry(tid, dir)?;
        let Some(Node::Dir { depth, idx }) = self.dentry_node(sb, d) else {
            self.vfs_dput(tid, sb, d);
            return Err(Errno::ENOTDIR.into());
        };
        let t = self.vfs.sbs[sb].tree.as_ref().unwrap();
        let leaf = depth == t.leaf_depth();
        let file = t.parse_name(depth, name).filter(|_| leaf).and_then(|o| {
            let (first, n) = t.children(depth, idx);
            (o < n).then_some(first + o)
        });
        let Some(f) = file else {
            self.vfs_dput(tid, sb, d);
            return Err(Errno::EOPNOTSUPP.into());
        };
        if !t.removed.contains(&f) {
            self.vfs_dput(tid, sb, d);
            return Err(Errno::EEXIST.into());
        }
        // The directory entry's block and the new inode's block (ext3_add_entry,
        // ext3_new_inode).
        let dev = self.vfs.sbs[sb].dev.unwrap();
        let [dblk, _] = t.lookup_blocks(depth, idx, f % t.spec.files_per_dir);
        let iblk = t.itable_pos(t.ino_of(Node::File(f)));
        for pos in dblk.into_iter().chain(Some(iblk)) {
            if let Err(step) = self.vfs_dirty_meta(tid, dev, pos) {
                self.vfs_dput(tid, sb, d);
                return Err(step.into());
            }
        }
        // The negative dentry, if one is cached, is unhashed first: the lookup below makes
        // a positive one (d_instantiate of the new inode).
        let s = &mut self.vfs.sbs[sb];
        let t = s.tree.as_mut().unwrap();
        t.removed.remove(&f);
        t.sizes.insert(f, 0);
        let key = (f % t.spec.files_per_dir) as NameKey;
        if let Some(neg) = s.dcache.d_lookup(d, key) {
            if s.dcache.inode(neg).is_none() {
                s.dcache.dget(neg);
                s.dcache.d_drop(neg);
                self.vfs_dput(tid, sb, neg);
            }
        }
        self.fs.mounts[self.vfs.sbs[sb].mount as usize].inodes_used += 1;
        let c = self.vfs_lookup_one(tid, sb, d, name);
        self.vfs_dput(tid, sb, d);
        let c = c?;
        let s = &self.vfs.sbs[sb];
        let fh = s.dcache.inode(c).map(|i| Fh { sb: sb as u32, ino: s.icache.ino(i) as u64 });
        self.charge_sys(tid, self.vfs.cost.syscall);
        self.vfs_dput(tid, sb, c);
        fh.ok_or(Errno::ENOENT.into())
    }

    // ---- Shrinkers -------------------------------------------------------------------------

    /// The shrinkers' count (2.6.39 shrink_dcache_memory / shrink_icache_memory with
    /// nr_to_scan 0; 6.x super_cache_count): unused objects scaled by vfs_cache_pressure.
    pub fn vfs_shrink_count(&self) -> (u64, u64) {
        let (d, i) = self.vfs.nr_unused();
        (self.vfs_pressure_ratio(d), self.vfs_pressure_ratio(i))
    }

    /// CPU time and lock wait the VFS shrinkers spent since the last call (for the reclaim
    /// path that ran them).
    pub fn vfs_take_shrink_cost(&mut self) -> (Ns, Ns) {
        std::mem::take(&mut self.vfs.shrink_cost)
    }

    /// How many LRU entries a dentry walk run now by `tid` visits before it looks at
    /// need_resched again (2.6.39's cond_resched_lock after each entry; need_resched is
    /// set by the scheduler tick's check_preempt_tick once the task's slice is used and a
    /// task waits for its CPU): what is left of its time slice, at most one tick, at
    /// `lru_hold` per entry, less the time it will spin for the lock first, at least one
    /// entry. There the reclaim path gives its CPU up if a task waits and its slice is used
    /// (`Kernel::burst_done`) and otherwise walks on; either way the walk takes the lock
    /// again behind whoever queued on it meanwhile (2.6.39 keeps the lock while
    /// need_resched stays clear, its waiters spinning; the model lets them through, so
    /// they wait at most a tick). Eras whose walk counts every entry it visits (3.12+)
    /// stop within their batch: no limit.
    pub fn dcache_walk_limit(&self, tid: Option<TaskId>) -> Option<u64> {
        let tid = tid?;
        if self.vfs.era.dcache_prune != PruneBudget::Unreferenced || !self.vfs.era.global_lru_locks {
            return None;
        }
        let spin = self.shrink.locks[ShrinkLock::DcacheLru as usize].free_at.saturating_sub(self.now);
        let hold = self.vfs.cost.lru_hold.max(1);
        let left = match self.sched.slice_left(tid) {
            0 => memtwin_engine::sched::TICK_NS,
            n => n.min(memtwin_engine::sched::TICK_NS),
        };
        Some((left.saturating_sub(spin) / hold).max(1))
    }

    /// Take an LRU lock for `hold` after `busy` ns of this call's own work: the 2.6.39
    /// global lock of the shrinker framework, or the super block's list_lru lock.
    fn vfs_lru_lock(&mut self, sb: usize, inode: bool, busy: Ns, hold: Ns) -> Ns {
        let at = self.now + busy;
        let grant = if self.vfs.era.global_lru_locks {
            let which = if inode { ShrinkLock::InodeLru } else { ShrinkLock::DcacheLru };
            self.shrink.lock(which).acquire_from(self.now, at, hold)
        } else if inode {
            self.vfs.sbs[sb].inode_lru_lock.acquire_from(self.now, at, hold)
        } else {
            self.vfs.sbs[sb].dentry_lru_lock.acquire_from(self.now, at, hold)
        };
        grant - at
    }

    /// prune_dcache_sb: up to `nr` dentries of super block `sb` from the tail of cgroup
    /// `memcg`'s LRU list (the root's: every dentry where nothing is charged to cgroups).
    pub fn shrink_dcache_sb(&mut self, sb: usize, memcg: LruMemcg, nr: u64, out: &mut ShrinkOutcome) {
        let cost = self.vfs.cost;
        let mut k = Killed::default();
        let budget = self.vfs.era.dcache_prune;
        // 2.6.39's walk calls cond_resched_lock(&dcache_lru_lock) after each entry: the
        // lock is given up when this CPU must reschedule (spin_needbreak is 0 without
        // CONFIG_PREEMPT), which the reclaim path running the walk turns into a visit
        // limit (`Kernel::dcache_walk_limit`); the walk goes on in its next step.
        let limit = self.vfs.walk_limit.unwrap_or(u64::MAX);
        let r = self.vfs.sbs[sb].dcache.prune_upto(memcg, nr, budget, limit, &mut k);
        if r.cut {
            out.left += nr - r.spent;
        }
        let hold = r.scanned * cost.lru_hold;
        let wait = self.vfs_lru_lock(sb, false, out.cpu_ns, hold);
        out.lock_wait_ns += wait;
        out.cpu_ns += wait + hold + r.freed * cost.free_obj;
        out.scanned += r.scanned;
        out.freed += r.freed;
        self.vfs.stats.dentries_pruned += r.freed;
        // 2.6.39 shrink_dentry_list -> try_prune_one_dentry -> dentry_kill ->
        // dentry_lru_del: each victim is still on the pass's private list, so
        // dcache_lru_lock is taken again for it (6.x's d_shrink_del takes no LRU lock).
        let dentry_ops = k.lru_ops + if self.vfs.era.global_lru_locks { r.victims as u32 } else { 0 };
        out.pages_freed += self.vfs_finish_kills(sb, k);
        // The kills' own list operations, each a round trip on the LRU lock: ancestors
        // killed while listed (dentry_kill -> dentry_lru_del) and the freed dentries'
        // inodes put on the inode LRU (dentry_iput -> iput_final -> inode_lru_list_add).
        let inode_ops = std::mem::take(&mut self.vfs.iput_lru_ops);
        for (n, inode) in [(dentry_ops, false), (inode_ops, true)] {
            for _ in 0..n {
                let wait = self.vfs_lru_lock(sb, inode, out.cpu_ns, cost.lru_hold);
                out.lock_wait_ns += wait;
                out.cpu_ns += wait + cost.lru_hold;
            }
        }
    }

    /// prune_icache (2.6.39, per super block share) / prune_icache_sb (6.x): up to `nr`
    /// inodes from the LRU's tail, under the LRU lock; page cache of unused inodes
    /// invalidated (pginodesteal / kswapd_inodesteal); freed inodes disposed of outside
    /// the lock (dispose_list).
    pub fn shrink_icache_sb(&mut self, sb: usize, memcg: LruMemcg, nr: u64, kswapd: bool, out: &mut ShrinkOutcome) {
        let cost = self.vfs.cost;
        let rule = self.vfs.era.iput;
        let mut ic = std::mem::take(&mut self.vfs.sbs[sb].icache);
        let mut freed = Vec::new();
        let mut inval = |m: u32| self.invalidate_mapping_pages(m);
        let r = ic.prune(memcg, nr, rule, &mut inval, &mut freed);
        self.vfs.sbs[sb].icache = ic;
        if r.reap > 0 {
            self.count_inodesteal(kswapd, r.reap);
        }
        let mut slots = Vec::with_capacity(freed.len());
        for (i, m) in freed {
            if m != NIL {
                self.vfs_release_mapping(m);
            }
            slots.push(i);
        }
        // The walk holds the LRU lock; an inode with page cache is invalidated with the lock
        // dropped and the lock is taken again after it (prune_icache: `spin_unlock(&
        // inode_lru_lock); ... invalidate_mapping_pages ...; spin_lock(&inode_lru_lock)`;
        // 6.x inode_lru_isolate's LRU_RETRY path alike).
        let hold = r.scanned * cost.lru_hold;
        let wait = self.vfs_lru_lock(sb, true, out.cpu_ns, hold);
        out.lock_wait_ns += wait;
        out.cpu_ns += wait + hold + r.freed * cost.free_obj;
        out.cpu_ns += r.reap * self.machine.cpu_model.page_cache_ns;
        for _ in 0..r.reaped_inodes {
            let wait = self.vfs_lru_lock(sb, true, out.cpu_ns, cost.lru_hold);
            out.lock_wait_ns += wait;
            out.cpu_ns += wait + cost.lru_hold;
        }
        out.scanned += r.scanned;
        out.freed += r.freed;
        self.vfs.stats.inodes_pruned += r.freed;
        out.pages_freed += self.vfs_free_objs(sb, &[], &slots) + r.reap;
    }

    /// 2.6.39 shrink_dcache_memory -> prune_dcache: each super block prunes its share
    /// (unused / prune_ratio + 1) under the global dcache_lru_lock.
    pub fn shrink_dcache(&mut self, nr: u64) -> ShrinkOutcome {
        let mut out = ShrinkOutcome::default();
        let total: u64 = self.vfs.sbs.iter().map(|s| s.dcache.nr_unused).sum();
        if total == 0 || nr == 0 {
            return out;
        }
        let prune_ratio = if nr >= total { 1 } else { total / nr };
        for sb in 0..self.vfs.sbs.len() {
            let unused = self.vfs.sbs[sb].dcache.nr_unused;
            let share = if prune_ratio == 1 { unused } else { unused / prune_ratio + 1 };
            if out.left > 0 {
                // A walk was cut: the super blocks after it are pruned when it resumes
                // (their shares are part of the count left).
                out.left += share;
            } else if unused > 0 {
                self.shrink_dcache_sb(sb, 0, share, &mut out);
            }
        }
        self.vfs.walk_left = out.left;
        self.note_shrink(&out);
        out
    }

    /// 2.6.39 shrink_icache_memory -> prune_icache: iprune_sem for read, then the inode
    /// LRU (global in 2.6.39: each super block's share of it here).
    pub fn shrink_icache(&mut self, kswapd: bool, nr: u64) -> ShrinkOutcome {
        let mut out = ShrinkOutcome::default();
        let total: u64 = self.vfs.sbs.iter().map(|s| s.icache.nr_unused).sum();
        if total == 0 || nr == 0 {
            return out;
        }
        self.vfs.iprune_sem_readers += 1;
        for sb in 0..self.vfs.sbs.len() {
            let unused = self.vfs.sbs[sb].icache.nr_unused;
            let share = (nr * unused).div_ceil(total);
            if share > 0 {
                self.shrink_icache_sb(sb, 0, share, kswapd, &mut out);
            }
        }
        self.vfs.iprune_sem_readers -= 1;
        self.note_shrink(&out);
        out
    }

    /// 6.x super_cache_scan for cgroup `memcg` (sc->memcg): nr_to_scan split between
    /// its dentries and inodes in proportion to their counts on its lists
    /// (list_lru_shrink_count, mult_frac), dentries first (they pin inodes).
    pub fn super_cache_scan(&mut self, sb: usize, memcg: LruMemcg, nr: u64, kswapd: bool) -> ShrinkOutcome {
        let mut out = ShrinkOutcome::default();
        let s = &self.vfs.sbs[sb];
        let (d, i) = (s.dcache.nr_unused_memcg(memcg), s.icache.nr_unused_memcg(memcg));
        let total = d + i + 1;
        let (nd, ni) = (nr * d / total, nr * i / total);
        self.shrink_dcache_sb(sb, memcg, nd, &mut out);
        self.shrink_icache_sb(sb, memcg, ni, kswapd, &mut out);
        self.note_shrink(&out);
        out
    }

    fn note_shrink(&mut self, out: &ShrinkOutcome) {
        self.vfs.shrink_cost.0 += out.cpu_ns;
        self.vfs.shrink_cost.1 += out.lock_wait_ns;
    }
}

#[cfg(test)]
mod tests;
