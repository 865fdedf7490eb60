//! list_lru (mm/list_lru.c): the LRU lists of the objects reclaim frees through shrinkers
//! (dentries, inodes), one list per memory cgroup once the objects are charged to cgroups
//! (memcg-aware list_lru, 4.0+). An item goes on the list of the cgroup its slab object is
//! charged to (list_lru_add -> mem_cgroup_from_slab_obj), and a shrinker called for a
//! cgroup walks that cgroup's list only (list_lru_shrink_walk with sc->memcg); global
//! reclaim visits every cgroup's list in turn (shrink_node_memcgs -> shrink_slab).
//!
//! Items are u32 slots of their owner's tables (the dentry cache, the inode cache), which
//! keeps their state: whether an item is listed is the owner's flag, and items leave a list
//! lazily, so a list is a ring of slots with the head at the front. Each list counts the
//! items its owner has listed (nr_items). Until an item is charged to a cgroup other than
//! the root the per-item cgroup table is not allocated: 2 host bytes per item after that.

use std::collections::VecDeque;

/// A cgroup's index for list selection (its `MemcgId`; 0 is the root and uncharged items).
pub type LruMemcg = u16;

#[derive(Default)]
pub struct ListLru {
    lists: Vec<VecDeque<u32>>,
    nr_items: Vec<u64>,
    memcg: Vec<LruMemcg>,
}

impl ListLru {
    pub fn new() -> ListLru {
        ListLru { lists: vec![VecDeque::new()], nr_items: vec![0], memcg: Vec::new() }
    }

    /// The cgroup whose list item `item` goes on.
    #[inline]
    pub fn memcg_of(&self, item: u32) -> LruMemcg {
        self.memcg.get(item as usize).copied().unwrap_or(0)
    }

    /// Record the cgroup of a newly allocated item (its slab object's charge).
    pub fn set_memcg(&mut self, item: u32, m: LruMemcg) {
        let i = item as usize;
        if i >= self.memcg.len() {
            if m == 0 {
                return;
            }
            self.memcg.resize(i + 1, 0);
        }
        self.memcg[i] = m;
    }

    fn list(&mut self, m: LruMemcg) -> &mut VecDeque<u32> {
        let m = m as usize;
        if m >= self.lists.len() {
            self.lists.resize_with(m + 1, VecDeque::new);
            self.nr_items.resize(m + 1, 0);
        }
        &mut self.lists[m]
    }

    /// list_lru_add: at the head of its cgroup's list, counted.
    pub fn add(&mut self, item: u32) {
        let m = self.memcg_of(item);
        self.list(m).push_front(item);
        self.nr_items[m as usize] += 1;
    }

    /// The owner took a listed item off (list_lru_del, or isolated by a walk).
    #[inline]
    pub fn uncount(&mut self, item: u32) {
        let m = self.memcg_of(item) as usize;
        debug_assert!(self.nr_items[m] > 0);
        self.nr_items[m] -= 1;
    }

    /// The next entry from the tail of cgroup `m`'s ring (a walk's step; the owner
    /// decides whether the entry is still listed).
    #[inline]
    pub fn pop_back(&mut self, m: LruMemcg) -> Option<u32> {
        self.lists.get_mut(m as usize)?.pop_back()
    }

    /// The item `k` places from the tail of cgroup `m`'s list (0: the next `pop_back`).
    #[inline]
    pub fn nth_back(&self, m: LruMemcg, k: usize) -> Option<u32> {
        let l = self.lists.get(m as usize)?;
        l.len().checked_sub(k + 1).map(|i| l[i])
    }

    /// Back to the head (LRU_ROTATE) without changing the count.
    #[inline]
    pub fn rotate(&mut self, item: u32) {
        let m = self.memcg_of(item);
        self.list(m).push_front(item);
    }

    /// Back to the tail (seen again by the walk: LRU_RETRY) without changing the count.
    #[inline]
    pub fn requeue_tail(&mut self, item: u32) {
        let m = self.memcg_of(item);
        self.list(m).push_back(item);
    }

    /// list_lru_shrink_count: items on cgroup `m`'s list.
    #[inline]
    pub fn count(&self, m: LruMemcg) -> u64 {
        self.nr_items.get(m as usize).copied().unwrap_or(0)
    }

    /// Entries on cgroup `m`'s ring (items not yet passed by a walk included).
    pub fn ring_len(&self, m: LruMemcg) -> usize {
        self.lists.get(m as usize).map_or(0, |l| l.len())
    }

    /// Entries on every ring.
    pub fn ring_len_total(&self) -> usize {
        self.lists.iter().map(|l| l.len()).sum()
    }

    /// The cgroups whose rings have entries.
    pub fn memcgs(&self) -> Vec<LruMemcg> {
        (0..self.lists.len()).filter(|&m| !self.lists[m].is_empty()).map(|m| m as LruMemcg).collect()
    }

    /// memcg_reparent_list_lrus: a removed cgroup's list joins its parent's (spliced at the
    /// head, list_splice_init) and its items are the parent's from now on (their objects'
    /// charges were reparented with the obj_cgroup).
    pub fn reparent(&mut self, from: LruMemcg, to: LruMemcg) {
        if from as usize >= self.lists.len() && !self.memcg.contains(&from) {
            return;
        }
        for m in self.memcg.iter_mut() {
            if *m == from {
                *m = to;
            }
        }
        if (from as usize) < self.lists.len() {
            let mut src = std::mem::take(&mut self.lists[from as usize]);
            let n = std::mem::take(&mut self.nr_items[from as usize]);
            let dst = self.list(to);
            // list_splice_init(src, dst): src's entries, in order, before dst's first.
            while let Some(x) = src.pop_back() {
                dst.push_front(x);
            }
            self.nr_items[to as usize] += n;
        }
    }

    /// Host bytes: the rings and the per-item cgroup table.
    pub fn host_bytes(&self) -> usize {
        self.lists.iter().map(|l| l.capacity() * 4).sum::<usize>() + self.memcg.capacity() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_go_on_their_cgroups_list_and_reparent_to_the_head() {
        let mut l = ListLru::new();
        l.set_memcg(1, 3);
        l.set_memcg(2, 3);
        l.add(0);
        l.add(1);
        l.add(2);
        assert_eq!((l.count(0), l.count(3)), (1, 2));
        // Oldest first from the tail.
        assert_eq!(l.pop_back(3), Some(1));
        l.rotate(1);
        assert_eq!(l.count(3), 2, "a rotation keeps the count");
        l.add(4);
        l.reparent(3, 0);
        assert_eq!((l.count(0), l.count(3)), (4, 0));
        assert_eq!(l.memcg_of(1), 0);
        // The child's list went in front of the parent's entries, in its own order.
        let order: Vec<u32> = std::iter::from_fn(|| l.pop_back(0)).collect();
        assert_eq!(order, vec![0, 4, 2, 1]);
    }

    #[test]
    fn the_cgroup_table_is_allocated_only_for_charged_items() {
        let mut l = ListLru::new();
        l.set_memcg(1000, 0);
        assert_eq!(l.host_bytes(), 0);
        l.set_memcg(10, 2);
        assert_eq!(l.memcg_of(10), 2);
        assert_eq!(l.memcg_of(11), 0);
    }
}
