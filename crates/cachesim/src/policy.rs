//! The cache policies. Each one follows libCacheSim's definition of the same name
//! (libCacheSim/cache/cache.c `cache_get_base` and cache/eviction/{LRU,FIFO,Clock,S3FIFO}.c),
//! so that the same trace and capacity give the same hits and misses:
//!
//! * a request is a hit if its id is cached; a miss inserts it, after evicting until
//!   `occupied + size <= capacity` (capacity and occupancy in bytes, each object weighs its
//!   size: 4 KiB pages when the trace has no sizes);
//! * an object larger than the capacity is not inserted (`cache_can_insert_default`).
//!
//! Objects live in one arena of index-linked nodes (struct of arrays); the queues are
//! intrusive doubly-linked lists over it ("head" is the newest end, eviction takes the tail).
//! After warm-up nothing is allocated per request: freed nodes are reused.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const NIL: u32 = u32::MAX;

/// A 64-bit mixer (splitmix64's finaliser) for object ids: ids are often dense small
/// integers, which an identity hash would cluster.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type IdMap = HashMap<u64, u32, BuildHasherDefault<IdHasher>>;

/// Ids below this are indexed by a direct table (ids of page traces are mostly small dense
/// integers); larger ids by a hash map.
const DIRECT_IDS: u64 = 1 << 24;

/// A hint to the host CPU that the cache line at `p` will be read soon (no effect on
/// results; nothing on targets without the instruction).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Object id -> node: a direct table for ids below `DIRECT_IDS` (grown to the largest id
/// seen; zeroed, so the host commits it only where ids fall), a hash map above.
#[derive(Default)]
struct IdIndex {
    /// node + 1, 0 = absent.
    direct: Vec<u32>,
    map: IdMap,
}

impl IdIndex {
    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        if id < DIRECT_IDS {
            match self.direct.get(id as usize) {
                Some(&v) if v != 0 => Some(v - 1),
                _ => None,
            }
        } else {
            self.map.get(&id).copied()
        }
    }
    #[inline]
    fn insert(&mut self, id: u64, n: u32) {
        if id < DIRECT_IDS {
            let i = id as usize;
            if i >= self.direct.len() {
                let len = (i + 1).next_power_of_two().max(1 << 12).min(DIRECT_IDS as usize);
                self.direct.resize(len, 0);
            }
            self.direct[i] = n + 1;
        } else {
            self.map.insert(id, n);
        }
    }
    #[inline]
    fn remove(&mut self, id: u64) {
        if id < DIRECT_IDS {
            if let Some(v) = self.direct.get_mut(id as usize) {
                *v = 0;
            }
        } else {
            self.map.remove(&id);
        }
    }
    #[inline]
    fn prefetch(&self, id: u64) {
        if (id as usize) < self.direct.len() {
            prefetch(self.direct.as_ptr().wrapping_add(id as usize));
        }
    }
}

/// One queue over the arena: its ends, object count and bytes.
#[derive(Clone, Copy, Debug)]
struct Queue {
    head: u32,
    tail: u32,
    len: u64,
    bytes: u64,
}

impl Queue {
    const EMPTY: Queue = Queue { head: NIL, tail: NIL, len: 0, bytes: 0 };
}

/// What a hit reads and writes of a node, together in one 16-byte record (one host cache
/// line): its id and its queue links. `prev` points towards the head (newer), `next`
/// towards the tail (older), as libCacheSim's `queue.prev`/`queue.next`.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Rec {
    id: u64,
    prev: u32,
    next: u32,
}

/// The node arena: the records, and the fields only insertion and eviction use, as arrays.
#[derive(Default)]
struct Nodes {
    rec: Vec<Rec>,
    size: Vec<u32>,
    /// CLOCK's reference bit / S3-FIFO's access counter.
    freq: Vec<u8>,
    /// S3-FIFO: which queue the node is on.
    queue: Vec<u8>,
    free: Vec<u32>,
}

impl Nodes {
    fn with_capacity(n: usize) -> Nodes {
        Nodes {
            rec: Vec::with_capacity(n),
            size: Vec::with_capacity(n),
            freq: Vec::with_capacity(n),
            queue: Vec::with_capacity(n),
            free: Vec::new(),
        }
    }

    #[inline]
    fn alloc(&mut self, id: u64, size: u32) -> u32 {
        if let Some(n) = self.free.pop() {
            let i = n as usize;
            self.rec[i] = Rec { id, prev: NIL, next: NIL };
            self.size[i] = size;
            self.freq[i] = 0;
            self.queue[i] = 0;
            return n;
        }
        let n = self.rec.len() as u32;
        self.rec.push(Rec { id, prev: NIL, next: NIL });
        self.size.push(size);
        self.freq.push(0);
        self.queue.push(0);
        n
    }

    #[inline]
    fn release(&mut self, n: u32) {
        self.free.push(n);
    }

    /// prepend_obj_to_head
    #[inline]
    fn push_head(&mut self, q: &mut Queue, n: u32) {
        let i = n as usize;
        self.rec[i].prev = NIL;
        self.rec[i].next = q.head;
        if q.head != NIL {
            self.rec[q.head as usize].prev = n;
        } else {
            q.tail = n;
        }
        q.head = n;
        q.len += 1;
        q.bytes += self.size[i] as u64;
    }

    /// remove_obj_from_list
    #[inline]
    fn unlink(&mut self, q: &mut Queue, n: u32) {
        let i = n as usize;
        let (p, nx) = (self.rec[i].prev, self.rec[i].next);
        if p != NIL {
            self.rec[p as usize].next = nx;
        } else {
            q.head = nx;
        }
        if nx != NIL {
            self.rec[nx as usize].prev = p;
        } else {
            q.tail = p;
        }
        self.rec[i].prev = NIL;
        self.rec[i].next = NIL;
        q.len -= 1;
        q.bytes -= self.size[i] as u64;
    }

    /// move_obj_to_head: unlink and push at the head; the queue's length and bytes do
    /// not change, so the node's size is not read.
    #[inline]
    fn move_to_head(&mut self, q: &mut Queue, n: u32) {
        if q.head == n {
            return;
        }
        let i = n as usize;
        let Rec { prev: p, next: nx, .. } = self.rec[i];
        // n is not the head, so it has a newer neighbour.
        self.rec[p as usize].next = nx;
        if nx != NIL {
            self.rec[nx as usize].prev = p;
        } else {
            q.tail = p;
        }
        let r = &mut self.rec[i];
        r.prev = NIL;
        r.next = q.head;
        self.rec[q.head as usize].prev = n;
        q.head = n;
    }
    /// A hint that `n`'s record and its neighbours' will be wanted soon.
    #[inline]
    fn prefetch(&self, n: u32) {
        prefetch(self.rec.as_ptr().wrapping_add(n as usize));
    }
}

/// The policies memtwin simulates (besides the kernel model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    Lru,
    Fifo,
    Clock,
    S3Fifo,
}

impl PolicyKind {
    pub const NAMES: &'static str = "lru, fifo, clock, s3fifo";

    pub fn parse(s: &str) -> Option<PolicyKind> {
        Some(match s.to_ascii_lowercase().as_str() {
            "lru" => PolicyKind::Lru,
            "fifo" => PolicyKind::Fifo,
            "clock" => PolicyKind::Clock,
            "s3fifo" | "s3-fifo" => PolicyKind::S3Fifo,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Fifo => "fifo",
            PolicyKind::Clock => "clock",
            PolicyKind::S3Fifo => "s3fifo",
        }
    }
}

/// A cache of `capacity` bytes under one policy.
pub struct Cache {
    kind: PolicyKind,
    capacity: u64,
    nodes: Nodes,
    map: IdIndex,
    /// LRU, FIFO, CLOCK: the one queue. S3-FIFO: the small FIFO.
    q: Queue,
    /// S3-FIFO only.
    main: Queue,
    ghost: Queue,
    small_cap: u64,
    main_cap: u64,
    ghost_cap: u64,
    /// S3-FIFO: the cache has evicted once (until then, a full small queue sends new
    /// objects to main).
    has_evicted: bool,
}

const IN_SMALL: u8 = 0;
const IN_MAIN: u8 = 1;
const IN_GHOST: u8 = 2;

/// S3-FIFO's defaults in libCacheSim: "fifo-size-ratio=0.10,ghost-size-ratio=0.90,
/// move-to-main-threshold=2".
const S3FIFO_SMALL_RATIO: f64 = 0.10;
const S3FIFO_GHOST_RATIO: f64 = 0.90;
const S3FIFO_MOVE_TO_MAIN: u8 = 2;

impl Cache {
    /// A cache of `capacity` bytes. `expect_objects` sizes the tables up front.
    pub fn new(kind: PolicyKind, capacity: u64, expect_objects: usize) -> Cache {
        // S3FIFO_init: the small queue is `(int64_t)cache_size * ratio` (a double,
        // truncated), the main queue the rest, the ghost `(int64_t)(cache_size * 0.9)`.
        let small_cap = (capacity as f64 * S3FIFO_SMALL_RATIO) as u64;
        let ghost_cap = (capacity as f64 * S3FIFO_GHOST_RATIO) as u64;
        let n = if kind == PolicyKind::S3Fifo { expect_objects * 2 } else { expect_objects };
        let mut map = IdIndex::default();
        map.map.reserve(n.min(1 << 16));
        Cache {
            kind,
            capacity,
            nodes: Nodes::with_capacity(n),
            map,
            q: Queue::EMPTY,
            main: Queue::EMPTY,
            ghost: Queue::EMPTY,
            small_cap,
            main_cap: capacity - small_cap,
            ghost_cap,
            has_evicted: false,
        }
    }

    pub fn kind(&self) -> PolicyKind {
        self.kind
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes and objects cached now (S3-FIFO: small + main; ghosts hold no data).
    pub fn occupied(&self) -> (u64, u64) {
        (self.q.bytes + self.main.bytes, self.q.len + self.main.len)
    }

    /// Hints for a request that comes soon (they change no result): its index entry
    /// (stage 1), its node once the entry has arrived (stage 2), its queue neighbours
    /// once the node has (stage 3). `simulate` issues them a few requests ahead, so that
    /// the host's memory latency overlaps instead of adding up.
    #[inline]
    pub fn prefetch_index(&self, id: u64) {
        self.map.prefetch(id);
    }
    #[inline]
    pub fn prefetch_node(&self, id: u64) {
        if let Some(n) = self.map.get(id) {
            self.nodes.prefetch(n);
        }
    }
    #[inline]
    pub fn prefetch_neighbours(&self, id: u64) {
        if let Some(n) = self.map.get(id) {
            let r = self.nodes.rec[n as usize];
            if r.prev != NIL {
                self.nodes.prefetch(r.prev);
            }
            if r.next != NIL {
                self.nodes.prefetch(r.next);
            }
        }
    }

    /// One request; true on a hit.
    #[inline]
    pub fn get(&mut self, id: u64, size: u32) -> bool {
        match self.kind {
            PolicyKind::Lru => self.get_queue::<true, false>(id, size),
            PolicyKind::Fifo => self.get_queue::<false, false>(id, size),
            PolicyKind::Clock => self.get_queue::<false, true>(id, size),
            PolicyKind::S3Fifo => self.get_s3fifo(id, size),
        }
    }

    /// LRU (hit: move to head), FIFO (hit: nothing), CLOCK with a 1-bit counter (hit: set
    /// the bit; Clock_find caps freq at max_freq = 1).
    #[inline]
    fn get_queue<const LRU: bool, const CLOCK: bool>(&mut self, id: u64, size: u32) -> bool {
        if let Some(n) = self.map.get(id) {
            if LRU {
                self.nodes.move_to_head(&mut self.q, n);
            }
            if CLOCK {
                self.nodes.freq[n as usize] = 1;
            }
            return true;
        }
        let size64 = size as u64;
        if size64 > self.capacity {
            return false;
        }
        while self.q.bytes + size64 > self.capacity {
            let mut t = self.q.tail;
            if CLOCK {
                // Clock_evict: a tail object with its bit set loses it and goes to the
                // head; the first one without is evicted.
                while self.nodes.freq[t as usize] >= 1 {
                    self.nodes.freq[t as usize] -= 1;
                    self.nodes.move_to_head(&mut self.q, t);
                    t = self.q.tail;
                }
            }
            self.nodes.unlink(&mut self.q, t);
            self.map.remove(self.nodes.rec[t as usize].id);
            self.nodes.release(t);
            // The next eviction unlinks the new tail from its newer neighbour and drops
            // the tail's index entry: ask for both now.
            let nt = self.q.tail;
            if nt != NIL {
                let r = self.nodes.rec[nt as usize];
                if r.prev != NIL {
                    self.nodes.prefetch(r.prev);
                }
                self.map.prefetch(r.id);
            }
        }
        let n = self.nodes.alloc(id, size);
        self.nodes.push_head(&mut self.q, n);
        self.map.insert(id, n);
        false
    }

    /// S3-FIFO (S3FIFO.c in its December 2024 form, which the libcachesim 0.3.5 Python
    /// package runs): new objects enter a small FIFO; one read at least twice there moves to
    /// the main FIFO when it reaches the small queue's tail, others leave it for a ghost FIFO
    /// of ids; a miss whose id is in the ghost goes straight to main. Main is a FIFO with
    /// reinsertion: an object with a count is reinserted with the count less one (counts
    /// capped at 3). Until the cache first evicts, new objects go to main once the small
    /// queue is full.
    fn get_s3fifo(&mut self, id: u64, size: u32) -> bool {
        // S3FIFO_find
        let mut hit_on_ghost = false;
        if let Some(n) = self.map.get(id) {
            let i = n as usize;
            match self.nodes.queue[i] {
                IN_SMALL | IN_MAIN => {
                    self.nodes.freq[i] = self.nodes.freq[i].saturating_add(1);
                    return true;
                }
                _ => {
                    self.nodes.unlink(&mut self.ghost, n);
                    self.map.remove(id);
                    self.nodes.release(n);
                    hit_on_ghost = true;
                }
            }
        }
        let size64 = size as u64;
        // S3FIFO_can_insert
        if size64 > self.small_cap {
            return false;
        }
        // cache_get_base's eviction loop over small + main.
        while self.q.bytes + self.main.bytes + size64 > self.capacity {
            self.has_evicted = true;
            if self.main.bytes > self.main_cap || self.q.bytes == 0 {
                self.s3fifo_evict_main();
            } else {
                self.s3fifo_evict_small();
            }
        }
        // S3FIFO_insert
        if hit_on_ghost {
            let n = self.nodes.alloc(id, size);
            self.nodes.queue[n as usize] = IN_MAIN;
            self.nodes.push_head(&mut self.main, n);
            self.map.insert(id, n);
        } else {
            if size64 >= self.small_cap {
                return false;
            }
            let n = self.nodes.alloc(id, size);
            if !self.has_evicted && self.q.bytes >= self.small_cap {
                self.nodes.queue[n as usize] = IN_MAIN;
                self.nodes.push_head(&mut self.main, n);
            } else {
                self.nodes.queue[n as usize] = IN_SMALL;
                self.nodes.push_head(&mut self.q, n);
            }
            self.map.insert(id, n);
        }
        false
    }

    /// S3FIFO_evict_fifo: promote tail objects read often enough to main (they start there
    /// with a count of 0) until one is evicted to the ghost.
    fn s3fifo_evict_small(&mut self) {
        while self.q.bytes > 0 {
            let t = self.q.tail;
            let i = t as usize;
            self.nodes.unlink(&mut self.q, t);
            if self.nodes.freq[i] >= S3FIFO_MOVE_TO_MAIN {
                self.nodes.freq[i] = 0;
                self.nodes.queue[i] = IN_MAIN;
                self.nodes.push_head(&mut self.main, t);
                continue;
            }
            // The ghost is a FIFO of `ghost_cap` bytes (the ids keep their sizes).
            let size = self.nodes.size[i] as u64;
            if self.ghost_cap > 0 && size <= self.ghost_cap {
                while self.ghost.bytes + size > self.ghost_cap {
                    let g = self.ghost.tail;
                    self.nodes.unlink(&mut self.ghost, g);
                    self.map.remove(self.nodes.rec[g as usize].id);
                    self.nodes.release(g);
                }
                self.nodes.freq[i] = 0;
                self.nodes.queue[i] = IN_GHOST;
                self.nodes.push_head(&mut self.ghost, t);
            } else {
                self.map.remove(self.nodes.rec[i].id);
                self.nodes.release(t);
            }
            return;
        }
    }

    /// S3FIFO_evict_main
    fn s3fifo_evict_main(&mut self) {
        while self.main.bytes > 0 {
            let t = self.main.tail;
            let i = t as usize;
            let freq = self.nodes.freq[i];
            self.nodes.unlink(&mut self.main, t);
            if freq >= 1 {
                self.nodes.freq[i] = freq.min(3) - 1;
                self.nodes.push_head(&mut self.main, t);
                continue;
            }
            self.map.remove(self.nodes.rec[i].id);
            self.nodes.release(t);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u32 = 4096;

    /// Hits (1) and misses (0) of a sequence of page ids on a cache of `pages` pages.
    fn run(kind: PolicyKind, pages: u64, ids: &[u64]) -> String {
        let mut c = Cache::new(kind, pages * P as u64, 16);
        ids.iter().map(|&id| if c.get(id, P) { '1' } else { '0' }).collect()
    }

    #[test]
    fn lru_hand_derived() {
        // Capacity 3. 1 2 3 miss; 1 hit (order 1,3,2 from head); 4 miss evicts 2;
        // 2 miss evicts 3; 3 miss evicts 1; 4 hit; 1 miss.
        assert_eq!(run(PolicyKind::Lru, 3, &[1, 2, 3, 1, 4, 2, 3, 4, 1]), "000100010");
    }

    #[test]
    fn fifo_hand_derived() {
        // Capacity 3. 1 2 3 miss; 1 hit (no move); 4 evicts 1; 1 miss evicts 2;
        // 3 hit; 2 miss evicts 3; 4 hit.
        assert_eq!(run(PolicyKind::Fifo, 3, &[1, 2, 3, 1, 4, 1, 3, 2, 4]), "000100101");
    }

    #[test]
    fn clock_hand_derived() {
        // Capacity 3, queue written head..tail.
        // 1 2 3 miss: [3 2 1]. 1 hit: bit(1). 4 miss: tail 1 has its bit -> cleared, to
        // head [1 3 2]; tail 2 evicted: [4 1 3]. 2 miss: tail 3 evicted: [2 4 1].
        // 1 hit: bit(1). 3 miss: tail 1 bit -> [1 2 4]; evict 4: [3 1 2]. 4 miss: evict 2.
        // 1 hit.
        assert_eq!(run(PolicyKind::Clock, 3, &[1, 2, 3, 1, 4, 2, 1, 3, 4, 1]), "0001001001");
    }

    #[test]
    fn s3fifo_hand_derived() {
        // Capacity 20 pages: small = 2 pages (8192 bytes, floor(81920 * 0.1)), main 18,
        // ghost 18. A 4 KiB object fits in small (4096 < 8192).
        let mut c = Cache::new(PolicyKind::S3Fifo, 20 * P as u64, 16);
        // Warm-up: 0 and 1 fill small; nothing has been evicted yet, so 2..19 go to main.
        for id in 0..20 {
            assert!(!c.get(id, P));
        }
        assert_eq!((c.q.len, c.main.len), (2, 18));
        assert!(c.get(0, P)); // count 1
        assert!(c.get(1, P));
        assert!(c.get(1, P)); // count 2
        // Full. Main is not over its share and small is not empty: evict from small. Its
        // tail 0 (count 1 < 2) goes to the ghost; 100 enters small.
        assert!(!c.get(100, P));
        // 0 is a ghost: a miss that goes to main. Eviction from small: tail 1 (count 2)
        // moves to main, then 100 (count 0) goes to the ghost.
        assert!(!c.get(0, P));
        assert_eq!((c.q.len, c.main.len, c.ghost.len), (0, 20, 1));
        assert!(c.get(1, P));
        // 100 is a ghost: to main; main (20 pages) is over its share (18): its tail, 2
        // (count 0), is evicted for good (main evictions leave no ghost).
        assert!(!c.get(100, P));
        assert!(!c.get(2, P)); // into small; main evicts 3
        assert!(!c.get(3, P)); // into small; main evicts 4
        assert_eq!((c.q.len, c.main.len), (2, 18));
        assert!(c.get(5, P));
        assert!(!c.get(4, P));
    }

    #[test]
    fn s3fifo_main_reinsertion_caps_count() {
        // Capacity 10 pages: small 4096 bytes (floor(40960 * 0.1)): a 4 KiB object is
        // never inserted into small (S3FIFO_insert: obj_size >= small size), so
        // nothing is ever cached by a first miss.
        let mut c = Cache::new(PolicyKind::S3Fifo, 10 * P as u64, 16);
        assert!(!c.get(1, P));
        assert!(!c.get(1, P));
        assert_eq!(c.occupied().1, 0);
    }

    #[test]
    fn objects_larger_than_the_cache_are_not_inserted() {
        for kind in [PolicyKind::Lru, PolicyKind::Fifo, PolicyKind::Clock] {
            let mut c = Cache::new(kind, 2 * P as u64, 4);
            assert!(!c.get(1, 3 * P));
            assert!(!c.get(1, 3 * P));
            assert!(!c.get(2, P));
            assert!(c.get(2, P));
        }
    }

    #[test]
    fn byte_capacity_with_sizes() {
        // LRU of 10000 bytes: 6000 + 3000 fit; 2000 evicts the 6000-byte object only.
        let mut c = Cache::new(PolicyKind::Lru, 10_000, 4);
        assert!(!c.get(1, 6000));
        assert!(!c.get(2, 3000));
        assert!(!c.get(3, 2000));
        assert!(!c.get(1, 6000));
        assert_eq!(c.occupied(), (6000 + 2000, 2));
        assert!(c.get(3, 2000));
    }

    /// Ids indexed directly (small) and by hash (large) give the same hits, for every
    /// policy, and the prefetch hints change nothing.
    #[test]
    fn small_and_large_ids_behave_alike() {
        let mut x = 88172645463325252u64;
        let ids: Vec<u64> = (0..20_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 3000).min(x % 700 + x % 5)
            })
            .collect();
        for kind in [PolicyKind::Lru, PolicyKind::Fifo, PolicyKind::Clock, PolicyKind::S3Fifo] {
            let mut small = Cache::new(kind, 400 * 4096, 400);
            let mut large = Cache::new(kind, 400 * 4096, 400);
            for (i, &id) in ids.iter().enumerate() {
                if let Some(&a) = ids.get(i + 3) {
                    small.prefetch_index(a);
                    small.prefetch_node(a);
                    small.prefetch_neighbours(a);
                }
                assert_eq!(small.get(id, 4096), large.get(id + (1 << 40), 4096), "{kind:?} request {i}");
            }
            assert_eq!(small.occupied(), large.occupied());
        }
    }
}
