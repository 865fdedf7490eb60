//! fio's statistics (stat.c, stat.h): running min/max/mean/variance per value (struct
//! io_stat, Welford's update as add_stat_sample does it) and the log-linear latency
//! histogram (io_u_plat: FIO_IO_U_PLAT_BITS = 6, 29 groups) that percentiles come from.
//! Recording a sample never allocates.

/// FIO_IO_U_PLAT_BITS: 64 buckets per power of two, so a bucket is within 1/128 of its value.
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_GROUP_NR: usize = 29;
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// fio's default percentile_list.
pub const PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

/// struct io_stat: min, max, mean and the sum of squared deviations of a series.
#[derive(Clone, Copy, Debug, Default)]
pub struct IoStat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub s: f64,
    pub samples: u64,
}

impl IoStat {
    /// add_stat_sample: Welford's running mean and variance.
    pub fn add(&mut self, v: u64) {
        if self.samples == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        let x = v as f64;
        let delta = x - self.mean;
        self.samples += 1;
        self.mean += delta / self.samples as f64;
        self.s += delta * (x - self.mean);
    }

    /// calc_lat: (min, max, mean, stddev) or None without samples.
    pub fn calc(&self) -> Option<(u64, u64, f64, f64)> {
        if self.samples == 0 {
            return None;
        }
        let dev = if self.samples > 1 { (self.s / (self.samples as f64 - 1.0)).sqrt() } else { 0.0 };
        Some((self.min, self.max, self.mean, dev))
    }

    /// sum_stat(pure_sum): bandwidth and IOPS of the jobs of a group add up, sample
    /// statistics and all.
    pub fn sum(&mut self, o: &IoStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.samples += o.samples;
        self.mean += o.mean;
        self.s += o.s;
    }

    /// sum_stat: merge two series (group_reporting), as fio combines their moments.
    pub fn merge(&mut self, o: &IoStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        let n1 = self.samples as f64;
        let n2 = o.samples as f64;
        let delta = o.mean - self.mean;
        let mean = (n1 * self.mean + n2 * o.mean) / (n1 + n2);
        self.s += o.s + delta * delta * n1 * n2 / (n1 + n2);
        self.mean = mean;
        self.samples += o.samples;
    }
}

/// plat_val_to_idx: the bucket of a latency in ns.
pub fn plat_val_to_idx(val: u64) -> usize {
    let msb = if val == 0 { 0 } else { 63 - val.leading_zeros() };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as u64) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// plat_idx_to_val: the value a bucket stands for (the middle of its range).
pub fn plat_idx_to_val(idx: usize) -> u64 {
    if idx < (PLAT_VAL << 1) as usize {
        return idx as u64;
    }
    let error_bits = (idx as u64 >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + PLAT_BITS as u64);
    let k = idx as u64 % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// The latency histogram of one direction.
#[derive(Clone)]
pub struct Plat {
    pub buckets: Box<[u64; PLAT_NR]>,
    pub n: u64,
}

impl Default for Plat {
    fn default() -> Self {
        Plat { buckets: Box::new([0; PLAT_NR]), n: 0 }
    }
}

impl Plat {
    #[inline]
    pub fn add(&mut self, ns: u64) {
        self.buckets[plat_val_to_idx(ns)] += 1;
        self.n += 1;
    }
    pub fn merge(&mut self, o: &Plat) {
        for (a, b) in self.buckets.iter_mut().zip(o.buckets.iter()) {
            *a += b;
        }
        self.n += o.n;
    }
    /// calc_clat_percentiles: the bucket value at each percentile of PERCENTILES.
    pub fn percentiles(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(PERCENTILES.len());
        if self.n == 0 {
            return out;
        }
        let mut sum = 0u64;
        let mut j = 0;
        for (i, &c) in self.buckets.iter().enumerate() {
            sum += c;
            while j < PERCENTILES.len() && sum as f64 >= PERCENTILES[j] / 100.0 * self.n as f64 {
                out.push(plat_idx_to_val(i));
                j += 1;
            }
            if j == PERCENTILES.len() {
                break;
            }
        }
        out
    }
}

/// The latency distribution buckets (io_u_lat_n/u/m): upper bounds of each bucket.
pub const LAT_N: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
pub const LAT_U: [u64; 10] = LAT_N;
pub const LAT_M: [u64; 12] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000, u64::MAX];

/// add_lat_percentile / io_u_mark_latency: counts per nsec, usec and msec bucket.
#[derive(Clone, Copy, Debug, Default)]
pub struct LatDist {
    pub n: [u64; 10],
    pub u: [u64; 10],
    pub m: [u64; 12],
}

fn bucket(v: u64, bounds: &[u64]) -> usize {
    bounds.iter().position(|&b| v < b).unwrap_or(bounds.len() - 1)
}

impl LatDist {
    /// io_u_mark_latency: below 1 us by ns, below 1 ms by us, else by ms.
    pub fn add(&mut self, ns: u64) {
        if ns < 1000 {
            self.n[bucket(ns, &LAT_N)] += 1;
        } else if ns < 1_000_000 {
            self.u[bucket(ns / 1000, &LAT_U)] += 1;
        } else {
            self.m[bucket(ns / 1_000_000, &LAT_M)] += 1;
        }
    }
    pub fn merge(&mut self, o: &LatDist) {
        for i in 0..10 {
            self.n[i] += o.n[i];
            self.u[i] += o.u[i];
        }
        for i in 0..12 {
            self.m[i] += o.m[i];
        }
    }
}

/// The IO depth buckets (io_u_map, io_u_submit, io_u_complete): 7 levels.
#[derive(Clone, Copy, Debug, Default)]
pub struct DepthMap(pub [u64; 7]);

impl DepthMap {
    /// io_u_mark_depth: 1, 2, 4, 8, 16, 32, >=64.
    pub fn mark_depth(&mut self, depth: u32, n: u64) {
        let i = match depth {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        self.0[i] += n;
    }
    /// io_u_mark_submit / io_u_mark_complete: 0, 4, 8, 16, 32, 64, >=64.
    pub fn mark_batch(&mut self, nr: u32) {
        let i = match nr {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        };
        self.0[i] += 1;
    }
    pub fn merge(&mut self, o: &DepthMap) {
        for i in 0..7 {
            self.0[i] += o.0[i];
        }
    }
    /// stat_calc_dist: percentages, a non-zero level shows at least 0.1%.
    pub fn dist(&self, total: u64) -> [f64; 7] {
        let mut d = [0.0; 7];
        for i in 0..7 {
            if total > 0 {
                d[i] = self.0[i] as f64 / total as f64 * 100.0;
                if d[i] < 0.1 && self.0[i] > 0 {
                    d[i] = 0.1;
                }
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_round_trip_within_fio_error() {
        for v in [0u64, 1, 63, 127, 128, 1000, 52_480, 1_630_208, 9_764_864, 123_456_789] {
            let back = plat_idx_to_val(plat_val_to_idx(v));
            let err = (back as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 1.0 / 64.0, "{v} -> {back}");
        }
        // Values fio printed in a recorded run are bucket values: they map to themselves.
        for v in [36_608u64, 45_824, 52_480, 1_630_208, 9_764_864] {
            assert_eq!(plat_idx_to_val(plat_val_to_idx(v)), v);
        }
    }

    #[test]
    fn welford_matches_direct_computation() {
        let xs = [3u64, 9, 27, 81, 243];
        let mut s = IoStat::default();
        for &x in &xs {
            s.add(x);
        }
        let (min, max, mean, dev) = s.calc().unwrap();
        let m = xs.iter().sum::<u64>() as f64 / 5.0;
        let var = xs.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / 4.0;
        assert_eq!((min, max), (3, 243));
        assert!((mean - m).abs() < 1e-9 && (dev - var.sqrt()).abs() < 1e-9);
        let (mut a, mut b) = (IoStat::default(), IoStat::default());
        for &x in &xs[..2] {
            a.add(x);
        }
        for &x in &xs[2..] {
            b.add(x);
        }
        a.merge(&b);
        let (_, _, mean2, dev2) = a.calc().unwrap();
        assert!((mean2 - m).abs() < 1e-9 && (dev2 - var.sqrt()).abs() < 1e-9);
    }

    #[test]
    fn percentiles_of_a_uniform_series() {
        let mut p = Plat::default();
        for v in 1..=1000u64 {
            p.add(v * 1000);
        }
        let ps = p.percentiles();
        assert_eq!(ps.len(), PERCENTILES.len());
        let p50 = ps[6] as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.02, "{p50}");
    }
}
