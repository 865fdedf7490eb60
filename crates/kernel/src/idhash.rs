//! Host-side hashing of the model's small integer ids (frame numbers, inode and mapping ids,
//! (mapping, index) pairs) for the maps looked up on per-page paths. std's default
//! SipHash is keyed per process and costs tens of nanoseconds a lookup; these keys are
//! not adversarial, so a multiplicative hash (Fibonacci hashing, as FxHash does) is enough,
//! and it is the same in every run.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(K);
        }
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(K);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub type IdBuild = BuildHasherDefault<IdHasher>;
pub type IdMap<K, V> = HashMap<K, V, IdBuild>;
pub type IdSet<K> = HashSet<K, IdBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn pairs_differ_in_either_half_and_maps_work() {
        let b = IdBuild::default();
        let h = |k: (u32, u64)| b.hash_one(k);
        assert_ne!(h((1, 2)), h((2, 1)));
        assert_ne!(h((1, 2)), h((1, 3)));
        assert_eq!(h((7, 9)), h((7, 9)));
        let mut m: IdMap<u32, u64> = IdMap::default();
        for i in 0..10_000u32 {
            m.insert(i, i as u64 * 3);
        }
        assert!((0..10_000u32).all(|i| m[&i] == i as u64 * 3));
    }
}
