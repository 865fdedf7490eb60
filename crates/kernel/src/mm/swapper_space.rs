//! The swap cache's trees (mm/swap_state.c `swapper_spaces`), kept as counts of the nodes
//! they hold: the radix_tree_node objects the swap cache takes from the slab.
//!
//! The model finds a swap-cache page through its mapping (`AddressSpace::swap_cache`); the
//! kernel finds it by its swap entry in an address space of its own, whose tree holds an
//! entry per swap slot with a page in the swap cache and, since 5.9, a shadow entry per slot
//! whose page was evicted to it (workingset_eviction of an anonymous or shmem page: the
//! shadow stays until the page comes back or the slot is freed, clear_shadow_from_swap_cache).
//! The nodes follow from which indices hold an entry, as for any tree (`radix_tree`): a leaf
//! per 64 indices in use, a node per 64 nodes above, up to the height the largest index
//! needs; the index and the number of trees depend on the era:
//!
//! * 2.6 to 3.8: one `swapper_space` for all areas, indexed by the swap entry's value,
//!   `swp_entry(type, offset).val` = type << 59 | offset on x86-64 (SWP_TYPE_SHIFT =
//!   BITS_PER_LONG - MAX_SWAPFILES_SHIFT): the second area's entries start at 2^59, ten
//!   levels up. (3.9 to 4.10 give each area a tree of its own, still by entry value; no
//!   profile is of those eras.)
//! * 4.11+ ("mm, swap: split swap cache into 64MB trunks"): `swapper_spaces[type]`, one
//!   address space per SWAP_ADDRESS_SPACE_PAGES (2^14 slots, 64 MiB) of each area, each
//!   indexed by the full swap offset (`swp_offset`), so a trunk past the first hangs three or
//!   more levels down from its root.
//! * 2.4: the swap cache is in the page-cache hash table: no tree, no nodes.
//!
//! Offset 0 of an area is its header: a slot's offset is its place in the area plus one.
//! The swap cache's trees are not XA_FLAGS_ACCOUNT (init_swap_address_space): their nodes
//! are nobody's cgroup's. Their shadow-only leaves are counted (`shadow_leaves`) but are not
//! on the shadow-node list, so not in `workingset_nodes` and never trimmed by the shadow
//! shrinker: the swap cache's updates call workingset_update_node only from 6.3 ("swap_state:
//! update shadow_nodes for anonymous page"), and the 6.x profile follows 6.1 (a real 6.1
//! guest shows workingset_nodes 0 with 760 MB of shmem swapped out:
//! validation/qemu-6.1/swap-cache-nodes/).

use super::xarray::XA_CHUNK_SHIFT;

/// SWAP_ADDRESS_SPACE_SHIFT: slots per swap-cache address space (4.11+), as a shift.
pub const SWAP_ADDRESS_SPACE_SHIFT: u32 = 14;
/// SWP_TYPE_SHIFT on x86-64 (2.6): an entry's value puts the area above this bit.
pub const SWP_TYPE_SHIFT: u32 = 59;
/// Levels kept as dense counts per area: offsets are below 2^32, so from level 5 up (a
/// node spans 2^36 indices) an area's entries share one node per level.
const DENSE_LEVELS: usize = 5;

/// How the era lays the swap cache out in trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SwapperLayout {
    /// 2.4: the page-cache hash table.
    #[default]
    NoTree,
    /// 2.6 .. 3.8: one tree, index type << 59 | offset.
    OneTree,
    /// 4.11+: a tree per 2^14 slots of an area, index offset.
    Trunks,
}

/// One swap area's entries, counted per node of the levels below DENSE_LEVELS.
#[derive(Clone, Debug, Default)]
struct AreaCounts {
    /// First global slot (offset 1), and the area's slots.
    start: u32,
    pages: u64,
    /// counts[0][g]: entries of leaf g (offsets 64g .. 64g + 63); counts[l][g] for l > 0:
    /// non-empty children of the level-l node over offsets (g << 6(l+1)) ...
    counts: [Vec<u8>; DENSE_LEVELS],
    /// Non-empty nodes per level, over the whole area.
    nonempty: [u64; DENSE_LEVELS],
    /// Pages (not shadows) per leaf.
    leaf_pages: Vec<u8>,
    entries: u64,
    /// OneTree's nodes of the levels above: none. Trunks: per trunk, non-empty leaves and
    /// level-1 nodes, and the nodes of its tree as last counted.
    trunk_leaves: Vec<u16>,
    trunk_l1: Vec<u8>,
    trunk_entries: Vec<u32>,
    trunk_nodes: Vec<u32>,
}

/// The swap cache's trees of every swap area.
#[derive(Clone, Debug, Default)]
pub struct SwapperSpaces {
    layout: SwapperLayout,
    /// Evicted swap-backed pages leave shadow entries in the swap cache (5.9+).
    shadows: bool,
    /// Per global slot: in a tree, and a page (not a shadow) there.
    present: Vec<u64>,
    page: Vec<u64>,
    areas: Vec<AreaCounts>,
    /// Nodes of all the trees now, and as last taken for the slab.
    nodes: u64,
    taken: u64,
    /// Leaves holding only shadow entries.
    shadow_leaves: u64,
    /// Slots with a page (the page bits set).
    nr_pages: u64,
}

#[inline]
fn bit(v: &[u64], s: u32) -> bool {
    v[(s >> 6) as usize] >> (s & 63) & 1 != 0
}
#[inline]
fn set_bit(v: &mut [u64], s: u32, on: bool) {
    let w = &mut v[(s >> 6) as usize];
    if on {
        *w |= 1 << (s & 63);
    } else {
        *w &= !(1 << (s & 63));
    }
}

/// The height of a tree whose largest index is `max`: the levels a walk from the root
/// takes (0 for a lone entry at index 0, kept in the root pointer; 11 past 2^60).
#[inline]
fn height_for(max: u64) -> u32 {
    let mut h = 0;
    while XA_CHUNK_SHIFT * h < 64 && (max >> (XA_CHUNK_SHIFT * h)) > 0 {
        h += 1;
    }
    h
}

impl SwapperSpaces {
    /// The era's layout; `shadows`: evicted pages leave shadow entries (anon workingset).
    pub fn configure(&mut self, layout: SwapperLayout, shadows: bool) {
        self.layout = layout;
        self.shadows = shadows && layout != SwapperLayout::NoTree;
    }
    pub fn layout(&self) -> SwapperLayout {
        self.layout
    }

    /// A swap area of `pages` slots from global slot `start` (swapon).
    pub fn add_area(&mut self, start: u32, pages: u64) {
        let end = start as usize + pages as usize;
        let words = end.div_ceil(64);
        self.present.resize(words, 0);
        self.page.resize(words, 0);
        if self.layout == SwapperLayout::NoTree {
            self.areas.push(AreaCounts { start, pages, ..Default::default() });
            return;
        }
        let max_off = pages; // offsets 1 ..= pages
        let mut a = AreaCounts { start, pages, ..Default::default() };
        for l in 0..DENSE_LEVELS {
            a.counts[l] = vec![0; (max_off >> (XA_CHUNK_SHIFT * (l as u32 + 1))) as usize + 1];
        }
        a.leaf_pages = vec![0; a.counts[0].len()];
        if self.layout == SwapperLayout::Trunks {
            let trunks = (max_off >> SWAP_ADDRESS_SPACE_SHIFT) as usize + 1;
            a.trunk_leaves = vec![0; trunks];
            a.trunk_l1 = vec![0; trunks];
            a.trunk_entries = vec![0; trunks];
            a.trunk_nodes = vec![0; trunks];
        }
        self.areas.push(a);
    }

    fn area_of(&self, slot: u32) -> usize {
        self.areas.iter().rposition(|a| a.start <= slot).unwrap_or(0)
    }

    /// Nodes of the swap cache's trees (radix_tree_node objects they need).
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
    /// Leaves holding only shadow entries (on the shadow-node list from 6.3).
    pub fn shadow_leaves(&self) -> u64 {
        self.shadow_leaves
    }
    /// Nodes gained (or lost) since the last call.
    pub fn take_delta(&mut self) -> i64 {
        let d = self.nodes as i64 - self.taken as i64;
        self.taken = self.nodes;
        d
    }

    /// Slot `slot` has (or no longer has) a page in the swap cache.
    pub fn set_page(&mut self, slot: u32, on: bool, shadow: bool) {
        if self.layout == SwapperLayout::NoTree || (slot >> 6) as usize >= self.page.len() {
            return;
        }
        if bit(&self.page, slot) != on {
            self.update(slot, on, shadow);
        }
    }
    /// The slot's shadow changed (stored, cleared, or the slot freed): `shadow` says
    /// whether the slot now keeps one.
    pub fn set_shadow(&mut self, slot: u32, shadow: bool) {
        if self.layout == SwapperLayout::NoTree || (slot >> 6) as usize >= self.page.len() {
            return;
        }
        let page = bit(&self.page, slot);
        self.update(slot, page, shadow);
    }

    /// The slot holds a page (`page`) or keeps a shadow (`shadow`): its entry and the nodes.
    fn update(&mut self, slot: u32, page: bool, shadow: bool) {
        let want = page || (self.shadows && shadow);
        let was = bit(&self.present, slot);
        let was_page = bit(&self.page, slot);
        set_bit(&mut self.page, slot, page);
        set_bit(&mut self.present, slot, want);
        let ai = self.area_of(slot);
        let off = (slot - self.areas[ai].start) as u64 + 1;
        let leaf = (off >> XA_CHUNK_SHIFT) as usize;
        {
            // The leaf's shadow-only state before and after.
            let a = &self.areas[ai];
            let before = a.counts[0][leaf] > 0 && a.leaf_pages[leaf] == 0;
            let a = &mut self.areas[ai];
            if page != was_page {
                if page {
                    a.leaf_pages[leaf] += 1;
                    self.nr_pages += 1;
                } else {
                    a.leaf_pages[leaf] -= 1;
                    self.nr_pages -= 1;
                }
            }
            if want != was {
                self.count(ai, off, want);
            }
            let a = &self.areas[ai];
            let after = a.counts[0][leaf] > 0 && a.leaf_pages[leaf] == 0;
            if self.shadows {
                self.shadow_leaves = self.shadow_leaves + after as u64 - before as u64;
            }
        }
    }

    /// An entry at offset `off` of area `ai` comes (`add`) or goes: the counts up the
    /// levels, and the nodes of its tree.
    fn count(&mut self, ai: usize, off: u64, add: bool) {
        let trunk = (off >> SWAP_ADDRESS_SPACE_SHIFT) as usize;
        let a = &mut self.areas[ai];
        if add {
            a.entries += 1;
        } else {
            a.entries -= 1;
        }
        for l in 0..DENSE_LEVELS {
            let g = (off >> (XA_CHUNK_SHIFT * (l as u32 + 1))) as usize;
            let c = &mut a.counts[l][g];
            // A node becomes non-empty (or empty): its parent gains (or loses) a child.
            let edge = if add {
                *c += 1;
                *c == 1
            } else {
                *c -= 1;
                *c == 0
            };
            if !edge {
                break;
            }
            if add {
                a.nonempty[l] += 1;
            } else {
                a.nonempty[l] -= 1;
            }
            if self.layout == SwapperLayout::Trunks {
                match (l, add) {
                    (0, true) => a.trunk_leaves[trunk] += 1,
                    (0, false) => a.trunk_leaves[trunk] -= 1,
                    (1, true) => a.trunk_l1[trunk] += 1,
                    (1, false) => a.trunk_l1[trunk] -= 1,
                    _ => {}
                }
            }
        }
        match self.layout {
            SwapperLayout::NoTree => {}
            SwapperLayout::Trunks => {
                let a = &mut self.areas[ai];
                if add {
                    a.trunk_entries[trunk] += 1;
                } else {
                    a.trunk_entries[trunk] -= 1;
                }
                let n = trunk_nodes(a, trunk);
                let old = std::mem::replace(&mut a.trunk_nodes[trunk], n);
                self.nodes = self.nodes + n as u64 - old as u64;
            }
            SwapperLayout::OneTree => self.nodes = self.one_tree_nodes(),
        }
    }

    /// Nodes of the one tree of 2.6 over every area's entries (index type << 59 |
    /// offset): each area's own nodes up to the level where its entries share a node,
    /// then one node per area and level while the areas' prefixes differ, then the nodes
    /// they share, up to the root of the height the largest index needs.
    fn one_tree_nodes(&self) -> u64 {
        let Some(top) = self.areas.iter().rposition(|a| a.entries > 0) else { return 0 };
        let h = if top == 0 {
            // The first area alone: the height its largest offset needs, found as the
            // lowest level whose only non-empty node is the first (offset 0 is the area's
            // header and never holds an entry, so a lone leaf 0 still needs its node).
            let a = &self.areas[0];
            (0..DENSE_LEVELS).find(|&l| a.nonempty[l] == (a.counts[l][0] > 0) as u64).map_or(DENSE_LEVELS as u32 + 1, |l| l as u32 + 1)
        } else {
            // Offsets are below 2^32: the area's type bits set the height.
            height_for((top as u64) << SWP_TYPE_SHIFT | 1)
        };
        let mut nodes = 0;
        for l in 0..h {
            let shift = XA_CHUNK_SHIFT * (l + 1);
            let mut prev = None;
            for (t, a) in self.areas.iter().enumerate().filter(|(_, a)| a.entries > 0) {
                if (l as usize) < DENSE_LEVELS {
                    // Areas' nodes at this level are disjoint (their prefixes differ below
                    // bit 59).
                    nodes += a.nonempty[l as usize];
                } else {
                    // One node per distinct prefix of the areas in use (in type order).
                    let base = (t as u64) << SWP_TYPE_SHIFT;
                    let g = if shift >= 64 { 0 } else { base >> shift };
                    if prev != Some(g) {
                        nodes += 1;
                        prev = Some(g);
                    }
                }
            }
        }
        nodes
    }

    /// Slots with a page in the swap cache (SwapCached, as the mappings count it).
    pub fn nr_pages(&self) -> u64 {
        self.nr_pages
    }

    /// Recount the trees from the per-slot bits: the counts kept as slots change agree.
    pub fn check(&self) -> Result<(), String> {
        if self.layout == SwapperLayout::NoTree {
            return Ok(());
        }
        let mut fresh = SwapperSpaces { layout: self.layout, shadows: self.shadows, ..Default::default() };
        for a in &self.areas {
            fresh.add_area(a.start, a.pages);
        }
        for (w, &bits) in self.present.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let s = (w * 64) as u32 + b.trailing_zeros();
                b &= b - 1;
                let page = bit(&self.page, s);
                if !page && !self.shadows {
                    return Err(format!("swap slot {s}: a shadow entry in an era without them"));
                }
                fresh.update(s, page, !page);
            }
            if self.page[w] & !bits != 0 {
                return Err(format!("swap slots {}..: a page in the swap cache without an entry", w * 64));
            }
        }
        if fresh.nr_pages != self.page.iter().map(|w| w.count_ones() as u64).sum::<u64>() || fresh.nr_pages != self.nr_pages {
            return Err(format!("swap cache trees: {} pages counted, {} recounted", self.nr_pages, fresh.nr_pages));
        }
        if fresh.nodes != self.nodes || fresh.shadow_leaves != self.shadow_leaves {
            return Err(format!(
                "swap cache trees: {} nodes and {} shadow leaves counted, {} and {} recounted",
                self.nodes, self.shadow_leaves, fresh.nodes, fresh.shadow_leaves
            ));
        }
        Ok(())
    }
}

/// Nodes of trunk `t`'s tree (4.11+): its leaves and level-1 nodes, and one node per
/// level above up to the root, whose height the trunk's largest index sets (index =
/// offset, so a trunk past the first is at least three levels high).
fn trunk_nodes(a: &AreaCounts, t: usize) -> u32 {
    if a.trunk_entries[t] == 0 {
        return 0;
    }
    let base = (t as u64) << SWAP_ADDRESS_SPACE_SHIFT;
    let h = if t == 0 {
        // Trunk 0 (offsets below 2^14, which a level-2 node spans): by its largest offset.
        let leaves_above_0 = a.trunk_leaves[0] as u32 - (a.counts[0][0] > 0) as u32;
        let l1_above_0 = a.trunk_l1[0] as u32 - (a.counts[1][0] > 0) as u32;
        if l1_above_0 > 0 {
            3
        } else if leaves_above_0 > 0 {
            2
        } else {
            1
        }
    } else {
        height_for(base)
    };
    let mut n = 0;
    for l in 0..h {
        n += match l {
            0 => a.trunk_leaves[t] as u32,
            1 => a.trunk_l1[t] as u32,
            _ => 1,
        };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spaces(layout: SwapperLayout, areas: &[u64]) -> SwapperSpaces {
        let mut s = SwapperSpaces::default();
        s.configure(layout, true);
        let mut start = 0;
        for &p in areas {
            s.add_area(start, p);
            start += p as u32;
        }
        s
    }

    #[test]
    fn a_trunk_holds_a_leaf_per_64_slots_and_the_levels_above_its_offset() {
        let mut s = spaces(SwapperLayout::Trunks, &[1 << 20]);
        // Offset 1 (slot 0): one leaf, the root.
        s.set_page(0, true, false);
        assert_eq!(s.nodes(), 1);
        // Offset 64: a second leaf under a level-1 root.
        s.set_page(63, true, false);
        assert_eq!(s.nodes(), 3);
        // Offset 4096: a level-2 root over two level-1 nodes.
        s.set_page(4095, true, false);
        assert_eq!(s.nodes(), 3 + 1 + 1 + 1);
        // Trunk 1 (offset 16384): its own tree, three levels to its one entry.
        s.set_page(16383, true, false);
        assert_eq!(s.nodes(), 6 + 3);
        // Trunk 16 (offset 262144): four levels.
        s.set_page((16 << 14) - 1, true, false);
        assert_eq!(s.nodes(), 9 + 4);
        // Gone again, down to nothing.
        for slot in [0, 63, 4095, 16383, (16 << 14) - 1] {
            s.set_page(slot, false, false);
        }
        assert_eq!(s.nodes(), 0);
        assert!(s.check().is_ok());
    }

    #[test]
    fn shadows_keep_their_leaf_and_count_as_shadow_leaves() {
        let mut s = spaces(SwapperLayout::Trunks, &[4096]);
        for slot in 0..64 {
            s.set_page(slot, true, false);
        }
        assert_eq!(s.shadow_leaves(), 0);
        // Evicted: the shadows replace the pages of the first leaf (offsets 1..63).
        for slot in 0..63 {
            s.set_page(slot, false, true);
        }
        assert_eq!(s.nodes(), 3, "offset 64 is in the second leaf");
        assert_eq!(s.shadow_leaves(), 1);
        // The slots are freed: the shadows go with them.
        for slot in 0..63 {
            s.set_shadow(slot, false);
        }
        assert_eq!(s.nodes(), 2, "a lone entry at offset 64 still needs its leaf under a root");
        assert_eq!(s.shadow_leaves(), 0);
        assert!(s.check().is_ok());
    }

    #[test]
    fn without_shadow_entries_an_evicted_page_leaves_nothing() {
        let mut s = SwapperSpaces::default();
        s.configure(SwapperLayout::Trunks, false);
        s.add_area(0, 4096);
        s.set_page(5, true, false);
        assert_eq!(s.nodes(), 1);
        s.set_page(5, false, true);
        assert_eq!(s.nodes(), 0);
        assert_eq!(s.shadow_leaves(), 0);
    }

    #[test]
    fn the_2_6_tree_puts_a_second_area_ten_levels_up() {
        let mut s = spaces(SwapperLayout::OneTree, &[1 << 16, 1 << 16]);
        s.set_page(100, true, false); // area 0, offset 101: leaf 1 under a level-1 root
        assert_eq!(s.nodes(), 2);
        s.set_page(1 << 16, true, false); // area 1, offset 1: index 2^59 + 1
        // Height 10: area 0's leaf and its chain of nodes up to level 8, area 1's the same,
        // and the shared root at level 9.
        assert_eq!(s.nodes(), 9 + 9 + 1);
        s.set_page(100, false, false);
        assert_eq!(s.nodes(), 9 + 1);
        assert!(s.check().is_ok());
    }

    /// The nodes of trees holding `entries` (absolute indices per tree), by definition: the
    /// height the largest index needs, and at each level below it one node per distinct
    /// prefix of the indices.
    fn nodes_by_definition(trees: &std::collections::BTreeMap<u64, Vec<u64>>) -> u64 {
        let mut n = 0;
        for idx in trees.values().filter(|v| !v.is_empty()) {
            let h = height_for(*idx.iter().max().unwrap());
            for l in 0..h {
                let shift = XA_CHUNK_SHIFT * (l + 1);
                let mut g: Vec<u64> = idx.iter().map(|&i| if shift >= 64 { 0 } else { i >> shift }).collect();
                g.sort_unstable();
                g.dedup();
                n += g.len() as u64;
            }
        }
        n
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// After any sequence of pages and shadows coming and going, the counted nodes and
        /// shadow-only leaves are those of the trees the entries define.
        #[test]
        fn counted_nodes_match_the_trees(
            one_tree in proptest::bool::ANY,
            sizes in proptest::collection::vec(1u64..40_000, 1..4),
            ops in proptest::collection::vec((0u32..120_000, 0u8..3), 1..300),
        ) {
            let layout = if one_tree { SwapperLayout::OneTree } else { SwapperLayout::Trunks };
            let mut s = spaces(layout, &sizes);
            let total: u64 = sizes.iter().sum();
            let mut state = vec![0u8; total as usize]; // 0 nothing, 1 page, 2 shadow
            for (slot, op) in ops {
                let slot = slot % total as u32;
                match op {
                    0 => { s.set_page(slot, true, false); state[slot as usize] = 1; }
                    1 => { let had = state[slot as usize] != 0; s.set_page(slot, false, had); if had { state[slot as usize] = 2; } }
                    _ => { s.set_shadow(slot, false); if state[slot as usize] == 2 { state[slot as usize] = 0; } }
                }
                let mut trees: std::collections::BTreeMap<u64, Vec<u64>> = Default::default();
                let mut leaves: std::collections::BTreeMap<(u64, u64), (u32, u32)> = Default::default();
                let mut start = 0u64;
                for (t, &p) in sizes.iter().enumerate() {
                    for o in 1..=p {
                        let st = state[(start + o - 1) as usize];
                        if st == 0 {
                            continue;
                        }
                        let (key, index) = match layout {
                            SwapperLayout::OneTree => (0, (t as u64) << SWP_TYPE_SHIFT | o),
                            _ => ((t as u64) << 32 | o >> SWAP_ADDRESS_SPACE_SHIFT, o),
                        };
                        trees.entry(key).or_default().push(index);
                        let e = leaves.entry((t as u64, o >> 6)).or_default();
                        e.0 += 1;
                        e.1 += (st == 1) as u32;
                    }
                    start += p;
                }
                proptest::prop_assert_eq!(s.nodes(), nodes_by_definition(&trees));
                let shadow_leaves = leaves.values().filter(|&&(e, p)| e > 0 && p == 0).count() as u64;
                proptest::prop_assert_eq!(s.shadow_leaves(), shadow_leaves);
            }
            proptest::prop_assert!(s.check().is_ok());
        }
    }

    #[test]
    fn no_tree_before_2_6() {
        let mut s = spaces(SwapperLayout::NoTree, &[4096]);
        s.set_page(1, true, false);
        assert_eq!(s.nodes(), 0);
    }
}
