//! The VFS's per-super-block state and its era: super blocks with their dentry and inode
//! caches, lazily generated file trees, the caches' slab objects, the locks the
//! shrinkers take, and the cost of each operation in CPU time derived from the machine's
//! cost model (docs/vfs.md).

use super::dcache::{Dcache, DputRule, PruneBudget};
use super::inode::{Icache, IputRule};
use memtwin_engine::{LockQueue, Ns};
use memtwin_machine::{CpuModel, KernelProfile, TreeSpec};

/// Era rules of the VFS caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VfsEra {
    pub dput: DputRule,
    pub iput: IputRule,
    /// 2.6.39: one global dcache_lru_lock and inode_lru_lock (and iprune_sem) for every
    /// super block; 3.12+: each super block's list_lru has a lock per NUMA node.
    pub global_lru_locks: bool,
    /// What the dcache shrinker's count counts (2.4 .. 3.11: dentries taken; 3.12+:
    /// entries visited).
    pub dcache_prune: PruneBudget,
    /// A hashed dentry and an inode are freed after an RCU grace period (d_free ->
    /// call_rcu, destroy_inode -> call_rcu: 2.6.x / 2.6.38+, rcu.rs); 2.4 frees both at
    /// once.
    pub rcu_free: bool,
}

impl VfsEra {
    pub fn of(k: KernelProfile) -> VfsEra {
        match k {
            KernelProfile::Linux2639 => VfsEra {
                dput: DputRule::AlwaysReferenced,
                iput: IputRule::Referenced,
                global_lru_locks: true,
                dcache_prune: PruneBudget::Unreferenced,
                rcu_free: true,
            },
            KernelProfile::Linux24 => VfsEra {
                dput: DputRule::AlwaysReferenced,
                iput: IputRule::Referenced,
                global_lru_locks: true,
                dcache_prune: PruneBudget::UnreferencedRequeued,
                rcu_free: false,
            },
            _ => VfsEra {
                dput: DputRule::ReferencedIfListed,
                iput: IputRule::ReferencedIfListedNoPages,
                global_lru_locks: false,
                dcache_prune: PruneBudget::Visited,
                rcu_free: true,
            },
        }
    }
}

/// CPU cost of the VFS's steps, from the machine's cost model (docs/vfs.md derives each).
#[derive(Clone, Copy, Debug)]
pub struct VfsCost {
    /// d_lookup of one component that hits: the hash bucket and the dentry (2 misses).
    pub lookup_hit: Ns,
    /// d_alloc + d_add: a slab object, its 192 bytes initialised, linked into the hash.
    pub d_alloc: Ns,
    /// iget_locked + the filesystem's read_inode from its buffer: the inode object
    /// (~1 KiB) initialised from the 256-byte raw inode.
    pub inode_init: Ns,
    /// vfs_getattr + cp_new_stat: read the inode, copy struct stat out.
    pub getattr: Ns,
    /// A directory entry parsed by readdir and passed to filldir.
    pub readdir_entry: Ns,
    /// Hold time of an LRU lock per object the shrinker looks at (list unlink and the
    /// neighbours' pointers, the object's own lock): 2 misses.
    pub lru_hold: Ns,
    /// Work per freed object outside the LRU lock (unhash, iput/evict, slab free): 3 misses.
    pub free_obj: Ns,
    pub syscall: Ns,
}

impl VfsCost {
    pub fn of(c: &CpuModel) -> VfsCost {
        let miss = c.cache_miss_ns;
        let copy = |bytes: f64| (bytes / c.copy_bw * 1e9) as Ns;
        VfsCost {
            lookup_hit: 2 * miss,
            d_alloc: 2 * miss + copy(DENTRY_SIZE as f64),
            inode_init: 3 * miss + copy(1024.0),
            getattr: c.syscall_ns + miss + copy(144.0),
            readdir_entry: copy(2.0 * 24.0) + miss / 8,
            lru_hold: 2 * miss,
            free_obj: 3 * miss,
            syscall: c.syscall_ns,
        }
    }
}

/// struct dentry on x86_64 (2.6.39 and 6.x alike): 192 bytes.
pub const DENTRY_SIZE: u64 = 192;

/// The shape of a generated tree: directory levels and on-disk layout.
#[derive(Clone, Debug)]
pub struct GenTree {
    pub spec: TreeSpec,
    /// Directories at each depth below the tree's root (levels[0] = 1).
    pub levels: Vec<u64>,
    level_off: Vec<u64>,
    pub n_dirs: u64,
    /// Inode number of the tree's root; directories follow in level order, then files.
    pub first_ino: u64,
    /// On-disk inode size (mke2fs's default since 2008: 256 bytes) and block size.
    pub inode_size: u64,
    pub block_size: u64,
    /// Device byte offsets of the inode tables and of the directory blocks, and the size
    /// of the region they wrap in.
    pub itable_base: u64,
    pub dir_base: u64,
    pub dev_bytes: u64,
    /// Files unlinked and created since boot (a small overlay; the generated part is never
    /// stored).
    pub removed: std::collections::BTreeSet<u64>,
    /// Sizes changed since boot by writes, truncation or creation (overlay).
    pub sizes: std::collections::BTreeMap<u64, u64>,
    /// A file-size distribution (size, percent) drawn per file from the seed instead of
    /// one size for every file (the file sets `sfs` creates).
    pub size_mix: Option<Vec<(u64, u32)>>,
    /// The last `symlinks_per_dir` entries of each leaf directory are symbolic links
    /// (fast symlinks: the target is in the inode), 0 for none.
    pub symlinks_per_dir: u64,
}

/// A node of a generated tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    Dir { depth: u32, idx: u64 },
    File(u64),
}

impl GenTree {
    pub fn new(spec: TreeSpec, dev_bytes: u64) -> GenTree {
        let leaves = spec.files.div_ceil(spec.files_per_dir);
        let mut levels = vec![leaves];
        while *levels.last().unwrap() > 1 {
            let up = levels.last().unwrap().div_ceil(spec.dirs_per_dir);
            levels.push(up);
        }
        levels.reverse();
        let mut level_off = Vec::with_capacity(levels.len());
        let mut n = 0;
        for &l in &levels {
            level_off.push(n);
            n += l;
        }
        // Metadata regions: inode tables from 1/64 into the device (after the first
        // groups' data), directory blocks from halfway; both wrap inside the device.
        GenTree {
            spec,
            levels,
            level_off,
            n_dirs: n,
            first_ino: 12,
            inode_size: 256,
            block_size: 4096,
            itable_base: dev_bytes / 64,
            dir_base: dev_bytes / 2,
            dev_bytes,
            removed: Default::default(),
            sizes: Default::default(),
            size_mix: None,
            symlinks_per_dir: 0,
        }
    }

    pub fn leaf_depth(&self) -> u32 {
        (self.levels.len() - 1) as u32
    }

    pub fn ino_of(&self, n: Node) -> u64 {
        match n {
            Node::Dir { depth, idx } => self.first_ino + self.level_off[depth as usize] + idx,
            Node::File(i) => self.first_ino + self.n_dirs + i,
        }
    }

    pub fn node_of(&self, ino: u64) -> Option<Node> {
        let r = ino.checked_sub(self.first_ino)?;
        if r < self.n_dirs {
            let depth = self.level_off.partition_point(|&o| o <= r) - 1;
            return Some(Node::Dir { depth: depth as u32, idx: r - self.level_off[depth] });
        }
        let f = r - self.n_dirs;
        (f < self.spec.files && !self.removed.contains(&f)).then_some(Node::File(f))
    }

    /// Entries of a directory: (first child, count); files at the leaf level, else dirs.
    pub fn children(&self, depth: u32, idx: u64) -> (u64, u64) {
        if depth == self.leaf_depth() {
            let first = idx * self.spec.files_per_dir;
            (first, self.spec.files_per_dir.min(self.spec.files - first))
        } else {
            let first = idx * self.spec.dirs_per_dir;
            (first, self.spec.dirs_per_dir.min(self.levels[depth as usize + 1] - first))
        }
    }

    /// The name of entry `ord` of a directory at `depth`.
    pub fn child_name(&self, depth: u32, ord: u64) -> String {
        if depth == self.leaf_depth() { format!("f{ord}") } else { format!("d{ord}") }
    }

    /// The length of `child_name(depth, ord)`: the letter and the ordinal's decimal digits.
    pub fn child_name_len(ord: u64) -> u64 {
        1 + ord.checked_ilog10().unwrap_or(0) as u64 + 1
    }

    /// The ordinal a name stands for in a directory at `depth`, if it is one of the
    /// generated names in canonical form (no leading zeros).
    pub fn parse_name(&self, depth: u32, name: &str) -> Option<u64> {
        let want = if depth == self.leaf_depth() { 'f' } else { 'd' };
        let digits = name.strip_prefix(want)?;
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    /// The child node for ordinal `ord` of directory (depth, idx), if it exists.
    pub fn child(&self, depth: u32, idx: u64, ord: u64) -> Option<Node> {
        let (first, n) = self.children(depth, idx);
        if ord >= n {
            return None;
        }
        if depth == self.leaf_depth() {
            let f = first + ord;
            (!self.removed.contains(&f)).then_some(Node::File(f))
        } else {
            Some(Node::Dir { depth: depth + 1, idx: first + ord })
        }
    }

    /// ext3/ext4 directory entry: 8 bytes + the name, rounded to 4 (EXT3_DIR_REC_LEN).
    fn rec_len(name_len: u64) -> u64 {
        (8 + name_len + 3) & !3
    }

    /// Directory blocks of (depth, idx): "." and ".." plus its entries.
    pub fn dir_blocks(&self, depth: u32, idx: u64) -> u64 {
        let (first, n) = self.children(depth, idx);
        let name_len = Self::child_name_len(first + n.max(1) - 1);
        (24 + n * Self::rec_len(name_len)).div_ceil(self.block_size).max(1)
    }

    /// Device offset of block `b` of a directory. Directories are laid out in level order,
    /// each with room for the largest directory of its level.
    pub fn dir_block_pos(&self, depth: u32, idx: u64, b: u64) -> u64 {
        let per = self.dir_blocks(depth, 0).max(1);
        let dir = self.level_off[depth as usize] + idx;
        let region = self.dev_bytes / 2;
        let off = (dir * per + b) * self.block_size;
        self.dir_base + (off % region.max(self.block_size)) / self.block_size * self.block_size
    }

    /// The directory blocks ext3_find_entry reads to find entry `ord`: with dir_index, the
    /// htree root (block 0) and the leaf the name hashes to (dx_probe); a one-block
    /// directory is just that block.
    pub fn lookup_blocks(&self, depth: u32, idx: u64, name_hash: u64) -> [Option<u64>; 2] {
        let nb = self.dir_blocks(depth, idx);
        let root = Some(self.dir_block_pos(depth, idx, 0));
        if nb == 1 {
            return [root, None];
        }
        [root, Some(self.dir_block_pos(depth, idx, 1 + name_hash % (nb - 1)))]
    }

    /// Device offset of the inode-table block holding inode `ino` (ext3_get_inode_loc).
    pub fn itable_pos(&self, ino: u64) -> u64 {
        let per = self.block_size / self.inode_size;
        let region = self.dev_bytes / 2 - self.itable_base;
        let off = ((ino - 1) / per) * self.block_size;
        self.itable_base + (off % region.max(self.block_size)) / self.block_size * self.block_size
    }

    /// A file's size: what a write, truncation or creation left, else the generated size:
    /// the declared size, or one drawn from the tree's size distribution by the file's
    /// number and the seed.
    pub fn file_size(&self, file: u64) -> u64 {
        if let Some(&s) = self.sizes.get(&file) {
            return s;
        }
        self.generated_size(file)
    }

    /// The size a file was generated with.
    pub fn generated_size(&self, file: u64) -> u64 {
        match &self.size_mix {
            None => self.spec.file_size,
            Some(mix) => {
                let mut h = (file ^ self.spec.seed.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                h ^= h >> 29;
                let mut x = (h % 100) as u32;
                for &(size, pct) in mix {
                    if x < pct {
                        return size;
                    }
                    x -= pct;
                }
                mix.last().map_or(self.spec.file_size, |m| m.0)
            }
        }
    }

    /// The mean size of its files as generated (the size mix's weighted mean).
    pub fn mean_generated_size(&self) -> f64 {
        match &self.size_mix {
            Some(m) if m.iter().any(|x| x.1 > 0) => {
                m.iter().map(|&(s, p)| s as f64 * p as f64).sum::<f64>() / m.iter().map(|x| x.1 as f64).sum::<f64>()
            }
            _ => self.spec.file_size as f64,
        }
    }

    /// The largest size a file of this tree is generated with (its data slot on disk).
    pub fn max_generated_size(&self) -> u64 {
        self.size_mix.as_ref().map_or(self.spec.file_size, |m| m.iter().map(|x| x.0).max().unwrap_or(4096))
    }

    /// File `f`'s inode number, its directory's, and its ordinal in that directory.
    pub fn file_place(&self, f: u64) -> (u64, u64, u64) {
        let per = self.spec.files_per_dir;
        let dir = Node::Dir { depth: self.leaf_depth(), idx: f / per };
        (self.ino_of(Node::File(f)), self.ino_of(dir), f % per)
    }

    /// Whether a file is a symbolic link (the last entries of a leaf directory).
    pub fn is_symlink(&self, file: u64) -> bool {
        let per = self.spec.files_per_dir;
        self.symlinks_per_dir > 0 && file % per >= per - self.symlinks_per_dir.min(per)
    }
}

/// A mounted filesystem's VFS state.
pub struct SuperBlock {
    pub mount: u32,
    pub dev: Option<u32>,
    pub dcache: Dcache,
    pub icache: Icache,
    pub tree: Option<GenTree>,
    /// The tree's root dentry (pinned for the life of the mount).
    pub root: u32,
    /// 6.x: the per-node locks of s_dentry_lru and s_inode_lru (one node modelled).
    pub dentry_lru_lock: LockQueue,
    pub inode_lru_lock: LockQueue,
    /// The slab object of each dentry and inode slot (mm/slab.rs handles).
    pub d_obj: Vec<u64>,
    pub i_obj: Vec<u64>,
    /// The dentry that names each inode slot (its alias: one per inode in generated
    /// trees), for d_obtain_alias; checked against the dentry before use.
    pub i_alias: Vec<u32>,
}

/// Counters of what the VFS did (for tests and the docs' derivations).
#[derive(Clone, Debug, Default)]
pub struct VfsStats {
    pub lookups: u64,
    pub lookup_misses: u64,
    pub negative_hits: u64,
    pub getattrs: u64,
    pub dir_block_reads: u64,
    pub itable_block_reads: u64,
    pub dentries_pruned: u64,
    pub inodes_pruned: u64,
    /// The LRU lock taken by dput and iput on a task's own path (a dentry put on or taken
    /// off the LRU, an inode put on it): acquisitions and the time spent waiting for it.
    pub put_lru_locks: u64,
    pub put_lru_wait_ns: u64,
    /// CPU those acquisitions cost (waits and holds).
    pub put_lru_ns: u64,
}

pub struct Vfs {
    pub era: VfsEra,
    pub cost: VfsCost,
    pub sbs: Vec<SuperBlock>,
    /// 2.6.39's global dcache_lru_lock and inode_lru_lock are the shrinker framework's
    /// (`ShrinkLock`); iprune_sem is taken for read by every pruner (readers never wait
    /// for each other), so only its holders are counted here.
    pub iprune_sem_readers: u64,
    /// The slab caches of dentries and of the filesystem's inodes (dentry,
    /// ext3_inode_cache / ext4_inode_cache), set at boot.
    pub dentry_cache: u16,
    pub inode_cache: u16,
    pub stats: VfsStats,
    /// CPU time and lock wait of the shrinker calls since the reclaim path last took them
    /// (`Kernel::vfs_take_shrink_cost`).
    pub shrink_cost: (Ns, Ns),
    /// Final iputs since the caller last took them that put an inode on the LRU under its
    /// lock (`Kernel::vfs_finish_kills`).
    pub iput_lru_ops: u32,
    /// The most LRU entries a dentry walk may visit before it gives the LRU lock up (set
    /// by a timed reclaim path for one step; None: no limit), and the count the last cut
    /// walk left unspent (`Kernel::shrink_dcache`).
    pub walk_limit: Option<u64>,
    pub walk_left: u64,
}

impl Vfs {
    pub fn new(k: KernelProfile, cpu: &CpuModel) -> Vfs {
        Vfs {
            era: VfsEra::of(k),
            cost: VfsCost::of(cpu),
            sbs: Vec::new(),
            iprune_sem_readers: 0,
            dentry_cache: 0,
            inode_cache: 0,
            stats: VfsStats::default(),
            shrink_cost: (0, 0),
            iput_lru_ops: 0,
            walk_limit: None,
            walk_left: 0,
        }
    }

    /// Unused dentries and inodes of every super block (what the shrinkers count).
    pub fn nr_unused(&self) -> (u64, u64) {
        self.sbs.iter().fold((0, 0), |(d, i), s| (d + s.dcache.nr_unused, i + s.icache.nr_unused))
    }

    /// The super block a path is in, with the path's components below the tree's root.
    pub fn tree_of<'a>(&self, path: &'a str) -> Option<(usize, &'a str)> {
        for (i, sb) in self.sbs.iter().enumerate() {
            let Some(t) = &sb.tree else { continue };
            let at = t.spec.at.as_str();
            if path == at {
                return Some((i, ""));
            }
            if let Some(rest) = path.strip_prefix(at) {
                if let Some(rest) = rest.strip_prefix('/') {
                    return Some((i, rest));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(files: u64, per: u64, fan: u64) -> TreeSpec {
        TreeSpec { at: "/export".into(), files, files_per_dir: per, dirs_per_dir: fan, file_size: 4096, seed: 1 }
    }

    #[test]
    fn child_name_len_is_the_names_length() {
        let t = GenTree::new(spec(1000, 10, 4), 1 << 30);
        for ord in [0, 1, 9, 10, 99, 100, 101, 999, 1000, 123_456_789, u64::MAX] {
            for depth in [0, t.leaf_depth()] {
                assert_eq!(GenTree::child_name_len(ord), t.child_name(depth, ord).len() as u64, "{ord}");
            }
        }
    }

    #[test]
    fn tree_shape_and_inode_numbers() {
        let t = GenTree::new(spec(1000, 10, 4), 1 << 30);
        // 100 leaf directories under ceil(100/4)=25, 7, 2, 1.
        assert_eq!(t.levels, vec![1, 2, 7, 25, 100]);
        assert_eq!(t.n_dirs, 135);
        let leaf = t.leaf_depth();
        assert_eq!(t.children(leaf, 99), (990, 10));
        assert_eq!(t.file_place(995), (t.ino_of(Node::File(995)), t.ino_of(Node::Dir { depth: leaf, idx: 99 }), 5));
        assert_eq!(t.children(3, 24), (96, 4));
        assert_eq!(t.children(1, 1), (4, 3));
        for n in [Node::Dir { depth: 0, idx: 0 }, Node::Dir { depth: 3, idx: 5 }, Node::File(0), Node::File(999)] {
            assert_eq!(t.node_of(t.ino_of(n)), Some(n));
        }
        assert_eq!(t.node_of(t.ino_of(Node::File(999)) + 1), None);
        assert_eq!(t.parse_name(leaf, "f7"), Some(7));
        assert_eq!(t.parse_name(leaf, "f07"), None);
        assert_eq!(t.parse_name(leaf, "d7"), None);
        assert_eq!(t.child(leaf, 99, 9), Some(Node::File(999)));
        assert_eq!(t.child(leaf, 99, 10), None);
    }

    #[test]
    fn ext3_geometry() {
        let t = GenTree::new(spec(3000, 1000, 30), 1 << 30);
        let leaf = t.leaf_depth();
        // 1000 names "f0".."f999" of 12-byte records (8 + up to 4 chars): 12024 bytes, 3 blocks.
        assert_eq!(t.dir_blocks(leaf, 0), 3);
        // 16 inodes of 256 bytes per 4 KiB block: consecutive inodes share blocks.
        let a = t.itable_pos(t.ino_of(Node::File(4)));
        assert_eq!(a, t.itable_pos(t.ino_of(Node::File(5))));
        assert_ne!(a, t.itable_pos(t.ino_of(Node::File(40))));
        let [r, l] = t.lookup_blocks(leaf, 0, 17);
        assert_eq!(r, Some(t.dir_block_pos(leaf, 0, 0)));
        assert!(l.is_some());
    }
}
