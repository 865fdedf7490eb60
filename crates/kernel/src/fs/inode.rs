//! The inode cache (fs/inode.c): one `Icache` per super block. An inode is found by its
//! number in the inode hash (iget_locked / find_inode_fast); i_count counts its users —
//! every dentry alias holds one, as does an open file — and an inode with i_count 0 sits on
//! the LRU until the shrinker frees it. An unused inode may still have page-cache pages:
//! 2.6.39's prune_icache invalidates them to free the inode (pginodesteal,
//! kswapd_inodesteal); since 5.16 such an inode is kept off the LRU (mapping_shrinkable),
//! so its pages pin it until page reclaim takes them.
//!
//! Indexed by u32 slot: 25 host bytes per cached inode (number and hash chain together,
//! i_count, the page-cache mapping, state, bucket and ring slot). The LRU is a ring with
//! lazy removal of inodes that came back into use, as the kernel's i_lru is.

use crate::mm::list_lru::{ListLru, LruMemcg};

pub const NIL: u32 = u32::MAX;

/// I_REFERENCED: used since the shrinker last looked; one more pass.
pub const I_REFERENCED: u8 = 1;
/// On the LRU (`!list_empty(&inode->i_lru)`).
const I_LRU: u8 = 2;
/// Its last link is gone: evicted at the last iput, never cached.
pub const I_UNLINKED: u8 = 4;
/// Freed while on the ring (slot returned when the scan passes it).
const I_DEAD: u8 = 8;
const I_FREE: u8 = 16;

/// How iput_final lists an unused inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IputRule {
    /// 2.6.39 iput_final: `i_state |= I_REFERENCED; inode_lru_list_add(inode)`, pages or not.
    Referenced,
    /// 6.x: inode_lru_list_add sets I_REFERENCED only if it is already listed, and
    /// __inode_add_lru lists it only when mapping_shrinkable (no page-cache pages).
    ReferencedIfListedNoPages,
}

/// What one prune pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IpruneResult {
    pub scanned: u64,
    pub freed: u64,
    pub rotated: u64,
    /// Page-cache pages invalidated to free inodes (pginodesteal / kswapd_inodesteal).
    pub reap: u64,
    /// Inodes whose pages were invalidated (each with the LRU lock dropped and retaken).
    pub reaped_inodes: u64,
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(8))]
struct InodeHash {
    ino: u32,
    hnext: u32,
}

#[derive(Default)]
pub struct Icache {
    /// The inode number and the hash chain's next, together: what find_inode_fast reads
    /// at each probe, one host memory access.
    h: Vec<InodeHash>,
    count: Vec<u32>,
    mapping: Vec<u32>,
    state: Vec<u8>,
    buckets: Vec<u32>,
    /// i_lru: the super block's s_inode_lru, one list per cgroup the inodes are charged to.
    lru: ListLru,
    free_head: u32,
    /// inodes_stat.nr_inodes and nr_unused.
    pub nr_inodes: u64,
    pub nr_unused: u64,
}

impl Icache {
    pub fn new() -> Icache {
        Icache { free_head: NIL, buckets: vec![NIL; 64], lru: ListLru::new(), ..Default::default() }
    }

    pub const HOST_BYTES_PER_INODE: usize = 4 * 3 + 1 + 4 + 4 + 4;

    #[inline]
    fn hash(&self, ino: u32) -> usize {
        // hash(sb, hashval): a multiplicative hash of the inode number.
        let h = (ino as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h ^ (h >> 31)) as usize) & (self.buckets.len() - 1)
    }

    fn rehash(&mut self) {
        self.buckets = vec![NIL; self.buckets.len() * 2];
        for i in 0..self.h.len() as u32 {
            if self.state[i as usize] & (I_FREE | I_DEAD) == 0 {
                let b = self.hash(self.h[i as usize].ino);
                self.h[i as usize].hnext = self.buckets[b];
                self.buckets[b] = i;
            }
        }
    }

    /// find_inode_fast: the cached inode numbered `ino`. Takes no reference.
    pub fn find(&self, ino: u32) -> Option<u32> {
        let mut i = self.buckets[self.hash(ino)];
        while i != NIL {
            if self.h[i as usize].ino == ino {
                return Some(i);
            }
            i = self.h[i as usize].hnext;
        }
        None
    }

    /// Hints for the host (change nothing): `find(ino)` reads the hash bucket, then the
    /// first entry of its chain; asked for in that order a while before the lookup, both
    /// are cached when it comes.
    #[inline]
    pub fn prefetch_bucket(&self, ino: u32) {
        crate::mm::xarray::prefetch(self.buckets.as_ptr().wrapping_add(self.hash(ino)));
    }
    /// The chain's first entry, asked for; returned (the inode `find` would see first).
    #[inline]
    pub fn prefetch_chain(&self, ino: u32) -> Option<u32> {
        let first = self.buckets[self.hash(ino)];
        if (first as usize) < self.h.len() {
            crate::mm::xarray::prefetch(self.h.as_ptr().wrapping_add(first as usize));
            return Some(first);
        }
        None
    }

    /// iget_locked's allocation (alloc_inode + insert into the hash), i_count 1.
    pub fn alloc(&mut self, ino: u32) -> u32 {
        if self.nr_inodes as usize >= self.buckets.len() {
            self.rehash();
        }
        let i = if self.free_head != NIL {
            let i = self.free_head;
            self.free_head = self.h[i as usize].hnext;
            let s = i as usize;
            self.h[s].ino = ino;
            self.count[s] = 1;
            self.mapping[s] = NIL;
            self.state[s] = 0;
            i
        } else {
            self.h.push(InodeHash { ino, hnext: NIL });
            self.count.push(1);
            self.mapping.push(NIL);
            self.state.push(0);
            (self.h.len() - 1) as u32
        };
        let b = self.hash(ino);
        self.h[i as usize].hnext = self.buckets[b];
        self.buckets[b] = i;
        self.nr_inodes += 1;
        i
    }

    /// Host bytes the cache takes now (its arrays' capacity, the hash and the ring).
    pub fn host_bytes(&self) -> usize {
        self.h.capacity() * std::mem::size_of::<InodeHash>() + self.count.capacity() * (4 + 4 + 1) + self.buckets.capacity() * 4 + self.lru.host_bytes()
    }

    pub fn ino(&self, i: u32) -> u32 {
        self.h[i as usize].ino
    }
    pub fn i_count(&self, i: u32) -> u32 {
        self.count[i as usize]
    }
    pub fn state(&self, i: u32) -> u8 {
        self.state[i as usize]
    }
    pub fn mapping(&self, i: u32) -> Option<u32> {
        match self.mapping[i as usize] {
            NIL => None,
            m => Some(m),
        }
    }
    pub fn set_mapping(&mut self, i: u32, m: u32) {
        self.mapping[i as usize] = m;
    }
    pub fn set_unlinked(&mut self, i: u32) {
        self.state[i as usize] |= I_UNLINKED;
    }
    pub fn lru_len(&self) -> usize {
        self.lru.ring_len_total()
    }
    /// Inodes on cgroup `m`'s LRU list (list_lru_shrink_count).
    pub fn nr_unused_memcg(&self, m: LruMemcg) -> u64 {
        self.lru.count(m)
    }
    /// The cgroup an inode's slab object is charged to (0: the root, or not charged).
    pub fn memcg(&self, i: u32) -> LruMemcg {
        self.lru.memcg_of(i)
    }
    /// Record the cgroup a new inode's object was charged to (after `alloc`).
    pub fn set_memcg(&mut self, i: u32, m: LruMemcg) {
        self.lru.set_memcg(i, m);
    }
    /// A removed cgroup's inodes become its parent's (memcg_reparent_list_lrus).
    pub fn reparent(&mut self, from: LruMemcg, to: LruMemcg) {
        self.lru.reparent(from, to);
    }

    /// __iget: one more user. A listed inode stays listed (removed lazily).
    pub fn iget(&mut self, i: u32) {
        self.count[i as usize] += 1;
    }

    /// iput: at the last reference an unlinked inode is evicted (returned: the caller frees
    /// its pages and data); a linked one stays cached on the LRU per `rule`. `nrpages`: the
    /// pages its mapping holds.
    pub fn iput(&mut self, i: u32, rule: IputRule, nrpages: u64) -> Option<u32> {
        let s = i as usize;
        debug_assert!(self.count[s] > 0);
        self.count[s] -= 1;
        if self.count[s] > 0 {
            return None;
        }
        if self.state[s] & I_UNLINKED != 0 {
            // generic_drop_inode: i_nlink == 0 -> evict.
            self.evict(i);
            return Some(i);
        }
        match rule {
            IputRule::Referenced => {
                self.state[s] |= I_REFERENCED;
                self.lru_add(i);
            }
            IputRule::ReferencedIfListedNoPages => {
                if self.state[s] & I_LRU != 0 {
                    self.state[s] |= I_REFERENCED;
                } else if nrpages == 0 {
                    self.lru_add(i);
                }
            }
        }
        None
    }

    /// inode_add_lru when a kept-off inode's last page leaves the page cache (6.x:
    /// page_cache_delete -> mapping_shrinkable -> inode_add_lru).
    pub fn add_lru_if_unused(&mut self, i: u32) {
        if self.count[i as usize] == 0 && self.state[i as usize] & (I_DEAD | I_FREE) == 0 {
            self.lru_add(i);
        }
    }

    fn lru_add(&mut self, i: u32) {
        let s = &mut self.state[i as usize];
        if *s & I_LRU == 0 {
            *s |= I_LRU;
            self.lru.add(i);
            self.nr_unused += 1;
        }
    }

    fn unhash(&mut self, i: u32) {
        let b = self.hash(self.h[i as usize].ino);
        let mut at = self.buckets[b];
        if at == i {
            self.buckets[b] = self.h[i as usize].hnext;
            return;
        }
        while at != NIL {
            let nx = self.h[at as usize].hnext;
            if nx == i {
                self.h[at as usize].hnext = self.h[i as usize].hnext;
                return;
            }
            at = nx;
        }
    }

    /// evict + destroy_inode: out of the hash, the slot freed (or left for the ring scan).
    fn evict(&mut self, i: u32) {
        self.unhash(i);
        let s = i as usize;
        self.mapping[s] = NIL;
        if self.state[s] & I_LRU != 0 {
            self.nr_unused -= 1;
            self.lru.uncount(i);
            self.state[s] = I_DEAD;
        } else {
            self.release(i);
        }
        self.nr_inodes -= 1;
    }

    fn release(&mut self, i: u32) {
        self.state[i as usize] = I_FREE;
        self.h[i as usize].hnext = self.free_head;
        self.free_head = i;
    }

    /// prune_icache (2.6.39) / prune_icache_sb -> inode_lru_isolate (6.x): scan up to `nr`
    /// inodes from the LRU's tail. In use: dropped from the list. I_REFERENCED: cleared,
    /// moved to the head. With pages: `invalidate` drops them (returns how many), and the
    /// iput that follows marks it referenced again (2.6.39 iput_final), so it stays at the
    /// tail to be rotated by the next step and freed on a later pass. Else freed: its slot
    /// and mapping (NIL if none) are pushed to `freed` for the caller to release.
    pub fn prune(
        &mut self,
        memcg: LruMemcg,
        nr: u64,
        rule: IputRule,
        invalidate: &mut dyn FnMut(u32) -> u64,
        freed: &mut Vec<(u32, u32)>,
    ) -> IpruneResult {
        let mut r = IpruneResult::default();
        while r.scanned < nr {
            let Some(i) = self.lru.pop_back(memcg) else { break };
            let s = i as usize;
            if self.state[s] & I_DEAD != 0 {
                self.release(i);
                continue;
            }
            r.scanned += 1;
            if self.count[s] > 0 || self.state[s] & I_UNLINKED != 0 {
                self.state[s] &= !I_LRU;
                self.nr_unused -= 1;
                self.lru.uncount(i);
                continue;
            }
            if self.state[s] & I_REFERENCED != 0 {
                self.state[s] &= !I_REFERENCED;
                self.lru.rotate(i);
                r.rotated += 1;
                continue;
            }
            if self.mapping[s] != NIL {
                let reap = invalidate(self.mapping[s]);
                if reap > 0 {
                    r.reap += reap;
                    r.reaped_inodes += 1;
                    // __iget ... iput: iput_final sets I_REFERENCED again (2.6.39); then
                    // `inode != list_entry(inode_lru.next)`: it is at the tail, not the
                    // head, so the loop continues without freeing it. 6.x returns
                    // LRU_RETRY: the walk sees it again at once, now without pages.
                    if rule == IputRule::Referenced {
                        self.state[s] |= I_REFERENCED;
                    }
                    self.lru.requeue_tail(i);
                    continue;
                }
            }
            freed.push((i, self.mapping[s]));
            self.state[s] &= !I_LRU;
            self.nr_unused -= 1;
            self.lru.uncount(i);
            self.unhash(i);
            self.mapping[s] = NIL;
            self.release(i);
            self.nr_inodes -= 1;
            r.freed += 1;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: IputRule = IputRule::Referenced;

    #[test]
    fn pinned_inode_is_not_freed() {
        let mut c = Icache::new();
        let a = c.alloc(100);
        let b = c.alloc(101);
        assert_eq!(c.find(101), Some(b));
        c.iput(a, R, 0);
        c.iput(b, R, 0);
        c.iget(b); // a dentry took it again
        let mut inv = |_m: u32| 0;
        let mut fm = Vec::new();
        // Pass 1: b (in use) is dropped from the list, a rotated.
        let r = c.prune(0, 2, R, &mut inv, &mut fm);
        assert_eq!((r.scanned, r.rotated, r.freed), (2, 1, 0));
        let r = c.prune(0, 2, R, &mut inv, &mut fm);
        assert_eq!(r.freed, 1);
        assert_eq!(c.find(100), None);
        assert_eq!(c.find(101), Some(b));
        assert_eq!(c.nr_inodes, 1);
    }

    #[test]
    fn page_steal_2_6_39() {
        let mut c = Icache::new();
        let a = c.alloc(7);
        c.set_mapping(a, 42);
        c.iput(a, R, 3);
        let mut pages = 3u64;
        let mut inv = |m: u32| {
            assert_eq!(m, 42);
            std::mem::take(&mut pages)
        };
        let mut fm = Vec::new();
        // Rotated (referenced), then its pages stolen, then rotated again (iput_final's
        // I_REFERENCED), then freed.
        let r = c.prune(0, 3, R, &mut inv, &mut fm);
        assert_eq!((r.rotated, r.reap, r.freed), (2, 3, 0));
        let r = c.prune(0, 1, R, &mut inv, &mut fm);
        assert_eq!(r.freed, 1);
        assert_eq!(fm, vec![(a, 42)]);
    }

    #[test]
    fn pages_keep_inode_off_lru_6x() {
        let mut c = Icache::new();
        let a = c.alloc(7);
        c.set_mapping(a, 42);
        c.iput(a, IputRule::ReferencedIfListedNoPages, 5);
        assert_eq!(c.lru_len(), 0);
        assert_eq!(c.nr_unused, 0);
        c.add_lru_if_unused(a);
        assert_eq!(c.nr_unused, 1);
        let mut inv = |_m: u32| 0;
        let mut fm = Vec::new();
        // Listed once, never referenced: freed by the first look.
        let r = c.prune(0, 1, IputRule::ReferencedIfListedNoPages, &mut inv, &mut fm);
        assert_eq!(r.freed, 1);
    }

    #[test]
    fn unlinked_inode_evicted_at_last_iput() {
        let mut c = Icache::new();
        let a = c.alloc(9);
        c.iget(a);
        c.set_unlinked(a);
        assert_eq!(c.iput(a, R, 0), None);
        assert_eq!(c.iput(a, R, 0), Some(a));
        assert_eq!(c.find(9), None);
        assert_eq!(c.nr_inodes, 0);
    }
}
