//! The event queue: a binary min-heap on (time, sequence). The sequence number makes
//! same-instant events run in scheduling order, which keeps runs deterministic.

use crate::Ns;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// (time, sequence) as one number, time in the high half: compared in one step, without
/// the branch on equal times that comparing the two fields makes.
#[derive(Clone, Copy, Debug)]
struct Entry<E: Copy> {
    key: u128,
    ev: E,
}

impl<E: Copy> Entry<E> {
    #[inline]
    fn time(&self) -> Ns {
        (self.key >> 64) as Ns
    }
}

impl<E: Copy> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl<E: Copy> Eq for Entry<E> {}
impl<E: Copy> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    #[inline]
    fn lt(&self, o: &Self) -> bool {
        o.key < self.key
    }
    #[inline]
    fn le(&self, o: &Self) -> bool {
        o.key <= self.key
    }
    #[inline]
    fn gt(&self, o: &Self) -> bool {
        o.key > self.key
    }
    #[inline]
    fn ge(&self, o: &Self) -> bool {
        o.key >= self.key
    }
}
impl<E: Copy> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// Events are small `Copy` values; the heap's storage is reused, so scheduling does not
/// allocate once the queue has reached its working size.
pub struct EventQueue<E: Copy> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0 }
    }
    pub fn push(&mut self, time: Ns, ev: E) {
        self.seq += 1;
        self.heap.push(Entry { key: ((time as u128) << 64) | self.seq as u128, ev });
    }
    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.peek().map(|e| e.time())
    }
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        self.heap.pop().map(|e| (e.time(), e.ev))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_at_same_time() {
        let mut q = EventQueue::new();
        q.push(20, 'c');
        q.push(10, 'a');
        q.push(10, 'b');
        q.push(5, 'z');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['z', 'a', 'b', 'c']);
    }

    /// Interleaved pushes and pops, many at the same instants: every pop is the least
    /// (time, sequence) among the events queued, as a sorted reference list says.
    #[test]
    fn pops_follow_time_then_scheduling_order() {
        let mut q = EventQueue::new();
        let mut reference: Vec<(Ns, u64)> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut id = 0u64;
        let mut now = 0;
        for round in 0..20_000 {
            let r = next();
            // Grow to a few thousand events, then drain in phases.
            let push = if round % 5000 < 3000 { r % 4 != 0 } else { r % 4 == 0 };
            if push || reference.is_empty() {
                id += 1;
                let t = now + next() % 50;
                q.push(t, id);
                reference.push((t, id));
            } else {
                let (t, e) = q.pop().expect("an event is queued");
                let k = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
                assert_eq!((t, e), reference.swap_remove(k), "round {round}");
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
        reference.sort();
        for want in reference {
            assert_eq!(q.pop(), Some(want));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }
}
