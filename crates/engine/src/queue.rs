//! The event queue: a binary min-heap on (time, sequence). The sequence number makes
//! same-instant events run in scheduling order, which keeps runs deterministic.

use crate::Ns;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Entry<E: Copy> {
    time: Ns,
    seq: u64,
    ev: E,
}

impl<E: Copy> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E: Copy> Eq for Entry<E> {}
impl<E: Copy> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E: Copy> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
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
        self.heap.push(Entry { time, seq: self.seq, ev });
    }
    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Ns> {
        self.heap.peek().map(|e| e.time)
    }
    pub fn pop(&mut self) -> Option<(Ns, E)> {
        self.heap.pop().map(|e| (e.time, e.ev))
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
}
