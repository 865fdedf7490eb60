//! The dentry cache (fs/dcache.c): one `Dcache` per super block. Dentries are positive
//! (they name an inode) or negative (a name known not to exist); they live in a hash by
//! (parent, name) and, once unused, on the super block's d_lru. A dentry pins its parent
//! (d_parent holds a reference) and its inode (the i_count a dentry alias holds), so a
//! directory with cached children and an inode with a cached name are never freed first.
//!
//! Storage is indexed by a u32 slot: 29 host bytes per cached dentry (a 16-byte record of
//! parent, name, inode and hash chain, which a lookup reads together; d_count, flags, its
//! hash bucket and its place on the LRU ring). A name is a `NameKey`: the ordinal of an
//! entry of a generated directory, or an interned string.
//!
//! The LRU is a ring of slots, head at the front: the kernel removes in-use dentries from
//! d_lru lazily (the shrinker finds them there and drops them, dentry_lru_isolate /
//! shrink_dentry_list), so a ring with a flag is exactly its list. A dentry killed while
//! it is on the ring keeps its slot until the scan passes it, so a ring entry never names
//! a reused slot.

use crate::mm::list_lru::{ListLru, LruMemcg};
use std::collections::HashMap;

pub const NIL: u32 = u32::MAX;

/// DCACHE_REFERENCED: used since the shrinker last looked; gets one more pass.
pub const DCACHE_REFERENCED: u8 = 1;
/// On d_lru (DCACHE_LRU_LIST in 6.x; `!list_empty(&dentry->d_lru)` in 2.6.39).
pub const DCACHE_LRU_LIST: u8 = 2;
/// Unhashed (d_drop): invisible to lookups, freed at its last dput.
pub const DCACHE_UNHASHED: u8 = 4;
/// Freed while on the ring: the slot is returned when the LRU scan passes it.
const DCACHE_DEAD: u8 = 8;
/// The slot is free.
const DCACHE_FREE: u8 = 16;

/// A name within a directory: a generated entry's ordinal, or (top bit set) an interned
/// string's id.
pub type NameKey = u32;
pub const NAME_INTERNED: u32 = 1 << 31;

/// How dput treats DCACHE_REFERENCED: 2.6.39's dput sets it on every final put; 6.x's
/// retain_dentry adds an unlisted dentry to the LRU without it and sets it only on a later
/// put while the dentry is still listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DputRule {
    AlwaysReferenced,
    ReferencedIfListed,
}

/// What a prune pass's count counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruneBudget {
    /// 2.4 prune_dcache: as `Unreferenced`, but a referenced dentry is list_add()ed back
    /// to the head at once, so a pass that has cleared every flag goes on to free from the
    /// tail.
    UnreferencedRequeued,
    /// 2.6.38 .. 3.11 __shrink_dcache_sb / prune_dcache_sb: only the
    /// dentries taken for the dispose list count (`if (!--count) break` in the else branch);
    /// a DCACHE_REFERENCED one is moved to a private list and costs the count nothing, so a
    /// pass walks on, under the LRU lock, until it has found `count` without the flag or the
    /// list is empty.
    Unreferenced,
    /// 3.12+ list_lru_walk(dentry_lru_isolate): nr_to_walk counts every entry visited,
    /// rotated ones included.
    Visited,
}

/// What a prune pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PruneResult {
    /// LRU entries looked at (each costs a hold of the LRU lock), rotated ones included.
    pub scanned: u64,
    /// Dentries freed (ancestors freed with them included).
    pub freed: u64,
    /// Given a second chance (DCACHE_REFERENCED cleared, rotated to the head).
    pub rotated: u64,
    /// Unused entries taken off the LRU to be freed (their ancestors not counted).
    pub victims: u64,
    /// What the count `nr` counted (entries visited or taken, per the budget).
    pub spent: u64,
    /// The walk stopped at its visit limit before `nr` was spent or the list ran out
    /// (2.6.39's cond_resched_lock gave the lock up; the caller walks on later).
    pub cut: bool,
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct DentryRec {
    parent: u32,
    name: NameKey,
    inode: u32,
    hnext: u32,
}

#[derive(Default)]
pub struct Dcache {
    /// What a hash lookup reads (d_parent, d_name, d_inode, the chain's next), together in
    /// one 16-byte record: a probe costs one host memory access, not one per field.
    e: Vec<DentryRec>,
    count: Vec<u32>,
    flags: Vec<u8>,
    buckets: Vec<u32>,
    /// d_lru: the super block's s_dentry_lru, one list per cgroup the dentries are
    /// charged to.
    lru: ListLru,
    /// Free slots, linked through `hnext`.
    free_head: u32,
    /// dentry_stat.nr_dentry and nr_unused (dentries on the LRU with d_count 0... as the
    /// kernel counts them: on the LRU).
    pub nr_dentry: u64,
    pub nr_unused: u64,
    pub nr_negative: u64,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    /// A prune pass's private list of second-chance entries (kept to reuse its buffer).
    referenced: Vec<u32>,
}

/// Inodes whose last dentry reference went away (the caller iputs them), and the slots of
/// the dentries freed (the caller frees their slab objects).
#[derive(Default, Debug)]
pub struct Killed {
    pub iput: Vec<u32>,
    pub freed: Vec<u32>,
    /// LRU list operations that take the LRU lock in the kernel: a dentry put on the LRU
    /// by dput (dentry_lru_add / d_lru_add) and a listed dentry killed (dentry_lru_del /
    /// d_lru_del in dentry_kill).
    pub lru_ops: u32,
}

impl Dcache {
    pub fn new() -> Dcache {
        Dcache { free_head: NIL, buckets: vec![NIL; 64], lru: ListLru::new(), ..Default::default() }
    }

    /// Host bytes per cached dentry (the lookup record, d_count, flags, bucket and ring slot).
    pub const HOST_BYTES_PER_DENTRY: usize = std::mem::size_of::<DentryRec>() + 4 + 1 + 4 + 4;

    pub fn intern(&mut self, s: &str) -> NameKey {
        if let Some(&i) = self.name_ids.get(s) {
            return i | NAME_INTERNED;
        }
        let i = self.names.len() as u32;
        self.names.push(s.to_string());
        self.name_ids.insert(s.to_string(), i);
        i | NAME_INTERNED
    }

    pub fn interned(&self, k: NameKey) -> Option<&str> {
        if k & NAME_INTERNED == 0 {
            return None;
        }
        self.names.get((k & !NAME_INTERNED) as usize).map(|s| s.as_str())
    }

    #[inline]
    fn hash(&self, parent: u32, name: NameKey) -> usize {
        // d_hash: hash of the parent pointer and the name's hash, folded to the table.
        let h = (parent as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (name as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        ((h ^ (h >> 29)) as usize) & (self.buckets.len() - 1)
    }

    fn rehash(&mut self) {
        let n = self.buckets.len() * 2;
        self.buckets = vec![NIL; n];
        for d in 0..self.e.len() as u32 {
            if self.flags[d as usize] & (DCACHE_FREE | DCACHE_DEAD | DCACHE_UNHASHED) == 0 {
                let b = self.hash(self.e[d as usize].parent, self.e[d as usize].name);
                self.e[d as usize].hnext = self.buckets[b];
                self.buckets[b] = d;
            }
        }
    }

    /// Hints for the host (change nothing): `d_lookup(parent, name)`'s hash bucket, and a
    /// dentry's record and flags.
    #[inline]
    pub fn prefetch_lookup(&self, parent: u32, name: NameKey) {
        crate::mm::xarray::prefetch(self.buckets.as_ptr().wrapping_add(self.hash(parent, name)));
    }
    #[inline]
    pub fn prefetch_dentry(&self, d: u32) {
        if (d as usize) < self.e.len() {
            crate::mm::xarray::prefetch(self.e.as_ptr().wrapping_add(d as usize));
            crate::mm::xarray::prefetch(self.flags.as_ptr().wrapping_add(d as usize));
        }
    }

    /// d_lookup: the hashed dentry for `name` in `parent`. Takes no reference.
    pub fn d_lookup(&self, parent: u32, name: NameKey) -> Option<u32> {
        let mut d = self.buckets[self.hash(parent, name)];
        while d != NIL {
            let i = d as usize;
            if self.e[i].parent == parent && self.e[i].name == name {
                return Some(d);
            }
            d = self.e[i].hnext;
        }
        None
    }

    /// d_alloc + d_add: a new hashed dentry with one reference (the caller's), holding a
    /// reference on its parent; negative until `d_instantiate`. `parent` NIL makes a root.
    pub fn d_alloc(&mut self, parent: u32, name: NameKey) -> u32 {
        if self.nr_dentry as usize >= self.buckets.len() {
            self.rehash();
        }
        let d = if self.free_head != NIL {
            let d = self.free_head;
            self.free_head = self.e[d as usize].hnext;
            let i = d as usize;
            self.e[i].parent = parent;
            self.e[i].name = name;
            self.e[i].inode = NIL;
            self.count[i] = 1;
            self.flags[i] = 0;
            d
        } else {
            let d = self.e.len() as u32;
            self.e.push(DentryRec { parent, name, inode: NIL, hnext: NIL });
            self.count.push(1);
            self.flags.push(0);
            d
        };
        if parent != NIL {
            self.count[parent as usize] += 1;
        }
        let b = self.hash(parent, name);
        self.e[d as usize].hnext = self.buckets[b];
        self.buckets[b] = d;
        self.nr_dentry += 1;
        self.nr_negative += 1;
        d
    }

    /// d_instantiate: the dentry now names `inode` (the caller passes its reference on it).
    pub fn d_instantiate(&mut self, d: u32, inode: u32) {
        debug_assert_eq!(self.e[d as usize].inode, NIL);
        self.e[d as usize].inode = inode;
        self.nr_negative -= 1;
    }

    pub fn inode(&self, d: u32) -> Option<u32> {
        match self.e[d as usize].inode {
            NIL => None,
            i => Some(i),
        }
    }
    pub fn parent(&self, d: u32) -> u32 {
        self.e[d as usize].parent
    }
    pub fn name(&self, d: u32) -> NameKey {
        self.e[d as usize].name
    }
    pub fn d_count(&self, d: u32) -> u32 {
        self.count[d as usize]
    }
    pub fn flags(&self, d: u32) -> u8 {
        self.flags[d as usize]
    }
    pub fn lru_len(&self) -> usize {
        self.lru.ring_len_total()
    }
    /// Dentries on cgroup `m`'s LRU list (list_lru_shrink_count).
    pub fn nr_unused_memcg(&self, m: LruMemcg) -> u64 {
        self.lru.count(m)
    }
    /// The cgroup a dentry's slab object is charged to (0: the root, or not charged).
    pub fn memcg(&self, d: u32) -> LruMemcg {
        self.lru.memcg_of(d)
    }
    /// Record the cgroup a new dentry's object was charged to (after `d_alloc`).
    pub fn set_memcg(&mut self, d: u32, m: LruMemcg) {
        self.lru.set_memcg(d, m);
    }
    /// A removed cgroup's dentries become its parent's (memcg_reparent_list_lrus).
    pub fn reparent(&mut self, from: LruMemcg, to: LruMemcg) {
        self.lru.reparent(from, to);
    }
    /// The cgroups with LRU entries.
    pub fn lru_memcgs(&self) -> Vec<LruMemcg> {
        self.lru.memcgs()
    }

    /// dget: one more reference. An unused dentry stays on d_lru (removed lazily).
    pub fn dget(&mut self, d: u32) {
        self.count[d as usize] += 1;
    }

    /// dput (2.6.39 fs/dcache.c dput; 6.x retain_dentry/fast_dput): at the last reference
    /// a hashed dentry stays cached on the LRU; an unhashed one is killed, and with it every
    /// ancestor whose last reference that was.
    pub fn dput(&mut self, d: u32, rule: DputRule, out: &mut Killed) {
        let i = d as usize;
        debug_assert!(self.count[i] > 0);
        self.count[i] -= 1;
        if self.count[i] > 0 {
            return;
        }
        if self.flags[i] & DCACHE_UNHASHED != 0 {
            self.kill_chain(d, rule, out);
            return;
        }
        match rule {
            DputRule::AlwaysReferenced => {
                self.flags[i] |= DCACHE_REFERENCED;
                out.lru_ops += self.lru_add(d) as u32;
            }
            DputRule::ReferencedIfListed => {
                if self.flags[i] & DCACHE_LRU_LIST == 0 {
                    out.lru_ops += self.lru_add(d) as u32;
                } else {
                    self.flags[i] |= DCACHE_REFERENCED;
                }
            }
        }
    }

    /// dentry_lru_add: at the head, counted unused. Whether it was added (2.6.39 takes
    /// dcache_lru_lock only then: `if (list_empty(&dentry->d_lru)) spin_lock(...)`).
    fn lru_add(&mut self, d: u32) -> bool {
        let f = &mut self.flags[d as usize];
        if *f & DCACHE_LRU_LIST == 0 {
            *f |= DCACHE_LRU_LIST;
            self.lru.add(d);
            self.nr_unused += 1;
            return true;
        }
        false
    }

    /// d_drop: unhash (lookups no longer find it); freed at its last dput.
    pub fn d_drop(&mut self, d: u32) {
        let i = d as usize;
        if self.flags[i] & DCACHE_UNHASHED != 0 {
            return;
        }
        self.flags[i] |= DCACHE_UNHASHED;
        let b = self.hash(self.e[i].parent, self.e[i].name);
        let mut at = self.buckets[b];
        if at == d {
            self.buckets[b] = self.e[i].hnext;
            return;
        }
        while at != NIL {
            let nx = self.e[at as usize].hnext;
            if nx == d {
                self.e[at as usize].hnext = self.e[i].hnext;
                return;
            }
            at = nx;
        }
    }

    /// d_delete (unlink): the only user turns the dentry negative in place (it stays cached
    /// and answers the next lookup with ENOENT); otherwise it is unhashed. Returns the inode
    /// whose dentry reference the caller must iput.
    pub fn d_delete(&mut self, d: u32) -> Option<u32> {
        let i = d as usize;
        let ino = self.inode(d)?;
        if self.count[i] == 1 {
            // dentry_unlink_inode.
            self.e[i].inode = NIL;
            self.nr_negative += 1;
        } else {
            self.d_drop(d);
        }
        Some(ino)
    }

    /// dentry_kill of an unreferenced dentry: unhash, give back its inode reference (the
    /// caller iputs), leave the LRU, free. Returns its parent (NIL for a root), whose
    /// reference the caller still holds.
    fn dentry_kill(&mut self, d: u32, out: &mut Killed) -> u32 {
        let i = d as usize;
        debug_assert_eq!(self.count[i], 0);
        let parent = self.e[i].parent;
        self.d_drop(d);
        match self.inode(d) {
            Some(ino) => out.iput.push(ino),
            None => self.nr_negative -= 1,
        }
        self.e[i].inode = NIL;
        if self.flags[i] & DCACHE_LRU_LIST != 0 {
            // dentry_lru_del under the LRU lock (the slot itself leaves the ring lazily).
            out.lru_ops += 1;
            self.nr_unused -= 1;
            self.lru.uncount(d);
            self.flags[i] = DCACHE_DEAD;
        } else {
            self.release(d);
        }
        self.nr_dentry -= 1;
        out.freed.push(d);
        parent
    }

    /// dput's kill_it: the dentry goes, then its parent is put as any other reference.
    fn kill_chain(&mut self, d: u32, rule: DputRule, out: &mut Killed) {
        let parent = self.dentry_kill(d, out);
        if parent != NIL {
            self.dput(parent, rule, out);
        }
    }

    /// The shrinker's kill: the dentry, then each ancestor whose last reference it held
    /// (2.6.39 try_prune_one_dentry's "prune ancestors" loop; 6.x shrink_dentry_list's
    /// `while (dentry && !lockref_put_or_lock(...)) dentry = dentry_kill(dentry)`).
    fn prune_one(&mut self, d: u32, out: &mut Killed) {
        let mut parent = self.dentry_kill(d, out);
        while parent != NIL {
            let p = parent as usize;
            self.count[p] -= 1;
            if self.count[p] > 0 {
                return;
            }
            parent = self.dentry_kill(parent, out);
        }
    }

    /// A hint for the host (changes nothing): the entries a prune walk takes next are
    /// scattered over a large table, and killing one reads its record, flags and count and
    /// then its hash bucket (d_drop), each a memory latency after the last. Asked for
    /// ahead, in two stages (the bucket needs the record to be hashed), they overlap.
    #[inline]
    fn prefetch_prune_ahead(&self, memcg: LruMemcg) {
        const RECORD_AHEAD: usize = 8;
        const BUCKET_AHEAD: usize = 4;
        use crate::mm::xarray::prefetch;
        if let Some(d) = self.lru.nth_back(memcg, RECORD_AHEAD) {
            let i = d as usize;
            if i < self.e.len() {
                prefetch(self.e.as_ptr().wrapping_add(i));
                prefetch(self.flags.as_ptr().wrapping_add(i));
                prefetch(self.count.as_ptr().wrapping_add(i));
            }
        }
        if let Some(d) = self.lru.nth_back(memcg, BUCKET_AHEAD) {
            if let Some(e) = self.e.get(d as usize) {
                prefetch(self.buckets.as_ptr().wrapping_add(self.hash(e.parent, e.name)));
            }
        }
    }

    fn release(&mut self, d: u32) {
        self.flags[d as usize] = DCACHE_FREE;
        self.e[d as usize].hnext = self.free_head;
        self.free_head = d;
    }

    /// Prune from the LRU's tail: prune_dcache / __shrink_dcache_sb / prune_dcache_sb
    /// (2.4 .. 3.11) and prune_dcache_sb -> list_lru_shrink_walk(dentry_lru_isolate)
    /// (3.12+); `budget` says what the count `nr` counts. DCACHE_REFERENCED: cleared, moved
    /// to the head. In use: dropped from the list (2.6.39: taken for the dispose list, where
    /// shrink_dentry_list drops it; 6.x: LRU_REMOVED at once). Else freed with the ancestors
    /// it was the last to pin. Inodes to iput go to `out`.
    pub fn prune(&mut self, nr: u64, budget: PruneBudget, out: &mut Killed) -> PruneResult {
        self.prune_upto(0, nr, budget, u64::MAX, out)
    }

    /// `prune`, visiting at most `max_visit` live entries: a walk that reaches the limit
    /// stops with `cut` set and what it has not spent of `nr` left for a later call. The
    /// entries it gave a second chance rejoin the head at once (2.6.39 keeps them on the
    /// walker's private list until its whole walk ends: a walk that resumes never reaches
    /// them either way, another walker could take them only after the rest of the list).
    pub fn prune_upto(&mut self, memcg: LruMemcg, nr: u64, budget: PruneBudget, max_visit: u64, out: &mut Killed) -> PruneResult {
        let mut r = PruneResult::default();
        let freed0 = out.freed.len() as u64;
        // Second-chance entries rejoin the head after the pass in their old order (2.6.39
        // list_move()s each to a `referenced` list and splices it back at the head; 6.x's
        // LRU_ROTATE moves each to the young end at once: the same order once the pass
        // ends, since a pass of at most the list's length never reaches its rotations).
        let mut referenced = std::mem::take(&mut self.referenced);
        referenced.clear();
        let mut taken = 0;
        loop {
            let spent = if budget == PruneBudget::Visited { r.scanned } else { taken };
            if spent >= nr {
                break;
            }
            if r.scanned >= max_visit {
                r.cut = true;
                break;
            }
            self.prefetch_prune_ahead(memcg);
            let Some(d) = self.lru.pop_back(memcg) else {
                if budget == PruneBudget::UnreferencedRequeued && !referenced.is_empty() {
                    for &d in referenced.iter() {
                        self.lru.rotate(d);
                    }
                    referenced.clear();
                    continue;
                }
                break;
            };
            let i = d as usize;
            if self.flags[i] & DCACHE_DEAD != 0 {
                // Killed while listed: its slot is free now. Not a scan of a live entry.
                self.release(d);
                continue;
            }
            r.scanned += 1;
            // 6.x's dentry_lru_isolate tests d_count first; 2.6.39's walk tests only the
            // flag, and an in-use dentry without it counts as taken. (2.4 removes a dentry
            // from the list when it is used again: the model's lazily listed one is no
            // entry of that list and costs nothing.)
            let in_use = self.count[i] > 0;
            if in_use && budget != PruneBudget::Unreferenced {
                self.flags[i] &= !DCACHE_LRU_LIST;
                self.nr_unused -= 1;
                self.lru.uncount(d);
                continue;
            }
            if self.flags[i] & DCACHE_REFERENCED != 0 {
                self.flags[i] &= !DCACHE_REFERENCED;
                referenced.push(d);
                r.rotated += 1;
                continue;
            }
            taken += 1;
            self.flags[i] &= !DCACHE_LRU_LIST;
            self.nr_unused -= 1;
            self.lru.uncount(d);
            if in_use {
                continue;
            }
            r.victims += 1;
            self.prune_one(d, out);
        }
        for &d in referenced.iter() {
            self.lru.rotate(d);
        }
        self.referenced = referenced;
        r.freed = out.freed.len() as u64 - freed0;
        r.spent = if budget == PruneBudget::Visited { r.scanned } else { taken };
        r
    }

    /// Every dentry on the LRU with no users, and the ancestors they pin (shrink_dcache_sb
    /// for drop_caches: repeated passes until nothing more goes).
    pub fn shrink_all(&mut self, out: &mut Killed) -> PruneResult {
        let mut total = PruneResult::default();
        loop {
            // Referenced flags do not protect against drop_caches: drop_slab loops until
            // a pass frees (almost) nothing, and each pass clears the flags it finds.
            let (mut freed, mut rotated) = (0, 0);
            for m in self.lru.memcgs() {
                let r = self.prune_upto(m, self.lru.ring_len(m) as u64, PruneBudget::Visited, u64::MAX, out);
                total.scanned += r.scanned;
                total.freed += r.freed;
                total.rotated += r.rotated;
                freed += r.freed;
                rotated += r.rotated;
            }
            if freed == 0 && rotated == 0 {
                return total;
            }
        }
    }

    /// Host bytes the cache takes now (its arrays' capacity, the hash and the ring).
    pub fn host_bytes(&self) -> usize {
        self.e.capacity() * std::mem::size_of::<DentryRec>() + self.count.capacity() * 5 + self.buckets.capacity() * 4 + self.lru.host_bytes()
    }

    /// Live dentries (for tests and invariants).
    pub fn live(&self) -> u64 {
        self.nr_dentry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: DputRule = DputRule::AlwaysReferenced;
    const V: PruneBudget = PruneBudget::Visited;

    fn tree() -> (Dcache, u32, u32, u32) {
        let mut c = Dcache::new();
        let root = c.d_alloc(NIL, 0);
        c.d_instantiate(root, 0);
        let dir = c.d_alloc(root, 1);
        c.d_instantiate(dir, 1);
        let f = c.d_alloc(dir, 2);
        c.d_instantiate(f, 2);
        (c, root, dir, f)
    }

    #[test]
    fn lookup_and_parent_pinning() {
        let (mut c, root, dir, f) = tree();
        assert_eq!(c.d_lookup(dir, 2), Some(f));
        assert_eq!(c.d_lookup(root, 2), None);
        // dir: its creator's reference plus the child's.
        assert_eq!(c.d_count(dir), 2);
        let mut k = Killed::default();
        c.dput(dir, R, &mut k);
        c.dput(f, R, &mut k);
        // dir keeps its child's reference: only the file is unused.
        assert_eq!((c.nr_unused, c.lru_len()), (1, 1));
        c.dget(f);
        // In use again but still listed (lazy removal): the scan drops it from the list.
        let r = c.prune(1, V, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (1, 0, 0));
        assert_eq!(c.nr_unused, 0);
        c.dput(f, R, &mut k);
        // The file gets its second chance.
        let r = c.prune(1, V, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (1, 1, 0));
        // Then it goes, and its parent with it (the last pin).
        let r = c.prune(1, V, &mut k);
        assert_eq!(r.freed, 2);
        assert_eq!(k.iput, vec![2, 1]);
        assert_eq!(c.d_lookup(root, 1), None);
        assert_eq!(c.live(), 1);
    }

    /// A root with four children, each put once (2.6.39's dput: all referenced, listed
    /// oldest first).
    fn four_referenced() -> (Dcache, u32, Vec<u32>) {
        let mut c = Dcache::new();
        let root = c.d_alloc(NIL, 0);
        let mut k = Killed::default();
        let ds: Vec<u32> = (1..=4).map(|n| c.d_alloc(root, n)).collect();
        for &d in &ds {
            c.dput(d, R, &mut k);
        }
        (c, root, ds)
    }

    #[test]
    fn second_chance_order() {
        let (mut c, root, ds) = four_referenced();
        let mut k = Killed::default();
        // All referenced: the first pass frees nothing and clears every flag.
        let r = c.prune(4, V, &mut k);
        assert_eq!((r.rotated, r.freed), (4, 0));
        // Touch the newest-but-one again: it is referenced once more.
        c.dget(ds[1]);
        c.dput(ds[1], R, &mut k);
        // Order is kept: the oldest goes first, ds[1] survives the pass.
        let r = c.prune(1, V, &mut k);
        assert_eq!(r.freed, 1);
        assert_eq!(c.d_lookup(root, 1), None);
        assert_eq!(c.d_lookup(root, 3), Some(ds[2]));
        let r = c.prune(3, V, &mut k);
        assert_eq!(r.freed, 2);
        assert_eq!(c.d_lookup(root, 2), Some(ds[1]));
        // The root and ds[1] are left, both negative.
        assert_eq!(c.nr_negative, 2);
    }

    /// A 2.6.39 walk with a visit limit stops there (cond_resched_lock gave the lock up)
    /// with its count unspent; a second call walks on from where it stopped and ends as one
    /// unlimited walk would have.
    #[test]
    fn a_walk_cut_at_its_visit_limit_resumes_where_it_stopped() {
        let mut k = Killed::default();
        let (mut c, _, ds) = four_referenced();
        let r = c.prune_upto(0, 1, PruneBudget::Unreferenced, 3, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed, r.spent, r.cut), (3, 3, 0, 0, true));
        let r = c.prune_upto(0, 1 - r.spent, PruneBudget::Unreferenced, 3, &mut k);
        assert_eq!((r.scanned, r.rotated, r.spent, r.cut), (2, 1, 1, false), "the fourth, then a cleared one");
        assert_eq!(r.freed, 1);
        assert_eq!(c.d_lookup(0, 1), None, "the oldest goes, as in one walk");
        assert_eq!(c.d_lookup(0, 2), Some(ds[1]));
        // Without a limit nothing is cut.
        let (mut c, _, _) = four_referenced();
        let r = c.prune_upto(0, 1, PruneBudget::Unreferenced, u64::MAX, &mut k);
        assert_eq!((r.scanned, r.spent, r.cut), (4, 0, false));
    }

    /// 2.4 .. 3.11 count only the dentries a pass takes: it walks past referenced ones
    /// (clearing their flags) until it has its count, under the LRU lock. 3.12+'s
    /// list_lru_walk counts every entry it visits.
    #[test]
    fn prune_budget_per_era() {
        let fresh = || {
            let (c, _, ds) = four_referenced();
            (c, ds)
        };
        let mut k = Killed::default();
        // All four referenced.
        let (mut c, _) = fresh();
        let r = c.prune(1, V, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (1, 1, 0));
        let (mut c, _) = fresh();
        let r = c.prune(1, PruneBudget::Unreferenced, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (4, 4, 0), "2.6.39 walks the whole list");
        let r = c.prune(1, PruneBudget::Unreferenced, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (1, 0, 1), "then finds cleared entries at the tail");
        let (mut c, ds) = fresh();
        let r = c.prune(1, PruneBudget::UnreferencedRequeued, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (5, 4, 1), "2.4 walks on into the requeued entries");
        assert_eq!(c.d_lookup(0, 1), None, "the oldest goes");
        assert_eq!(c.d_lookup(0, 2), Some(ds[1]));
        // The two oldest used again: 2.6.39 passes them and takes the third.
        let (mut c, ds) = fresh();
        c.prune(4, V, &mut k);
        for &d in &ds[..2] {
            c.dget(d);
            c.dput(d, R, &mut k);
        }
        let r = c.prune(1, PruneBudget::Unreferenced, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (3, 2, 1));
        assert_eq!(c.d_lookup(0, 3), None);
        // An in-use dentry without the flag counts as taken on 2.6.39 and is only dropped
        // from the list.
        let (mut c, ds) = fresh();
        c.prune(4, V, &mut k);
        c.dget(ds[0]);
        let r = c.prune(1, PruneBudget::Unreferenced, &mut k);
        assert_eq!((r.scanned, r.rotated, r.freed), (1, 0, 0));
        assert_eq!(c.nr_unused, 3);
    }

    #[test]
    fn era_dput_rules() {
        let mut c = Dcache::new();
        let root = c.d_alloc(NIL, 0);
        let d = c.d_alloc(root, 7);
        let mut k = Killed::default();
        c.dput(d, DputRule::ReferencedIfListed, &mut k);
        assert_eq!(c.flags(d) & DCACHE_REFERENCED, 0);
        // 6.x: not referenced after one use, freed by the first pass.
        assert_eq!(c.prune(1, V, &mut k).freed, 1);
        let d = c.d_alloc(root, 7);
        c.dput(d, DputRule::ReferencedIfListed, &mut k);
        c.dget(d);
        c.dput(d, DputRule::ReferencedIfListed, &mut k);
        assert_ne!(c.flags(d) & DCACHE_REFERENCED, 0);
    }

    #[test]
    fn negative_dentries_and_unlink() {
        let (mut c, _root, dir, f) = tree();
        let mut k = Killed::default();
        let neg = c.d_alloc(dir, 99);
        assert_eq!(c.nr_negative, 1);
        c.dput(neg, R, &mut k);
        assert_eq!(c.d_lookup(dir, 99), Some(neg));
        assert_eq!(c.inode(neg), None);
        // Unlink with one user: the dentry becomes negative in place.
        assert_eq!(c.d_delete(f), Some(2));
        assert_eq!(c.inode(f), None);
        assert_eq!(c.nr_negative, 2);
        // With two users it is unhashed instead, and freed at the last dput.
        let g = c.d_alloc(dir, 3);
        c.d_instantiate(g, 3);
        c.dget(g);
        assert_eq!(c.d_delete(g), Some(3));
        assert_eq!(c.d_lookup(dir, 3), None);
        c.dput(g, R, &mut k);
        assert_eq!(c.live(), 5);
        c.dput(g, R, &mut k);
        assert_eq!(c.live(), 4);
        assert_eq!(k.iput, vec![3]);
    }

    #[test]
    fn killed_on_ring_slot_not_reused_until_passed() {
        let mut c = Dcache::new();
        let root = c.d_alloc(NIL, 0);
        let mut k = Killed::default();
        let d = c.d_alloc(root, 1);
        c.dput(d, R, &mut k);
        c.dget(d);
        c.d_drop(d);
        c.dput(d, R, &mut k);
        // Freed, but its slot waits for the scan.
        let e = c.d_alloc(root, 2);
        assert_ne!(e, d);
        let r = c.prune(10, V, &mut k);
        assert_eq!(r.scanned, 0);
        assert_eq!(c.d_alloc(root, 3), d);
    }

    #[test]
    fn host_bytes_per_dentry() {
        assert!(Dcache::HOST_BYTES_PER_DENTRY <= 32);
    }
}
