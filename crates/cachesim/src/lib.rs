//! memtwin-cachesim: cache-simulator replay of page-access traces.
//!
//! The policies (LRU, FIFO, CLOCK, S3-FIFO) follow libCacheSim's definitions so that their
//! miss ratios are the same on the same trace and capacity (see `policy`); the readers
//! stream CSV, text and oracleGeneral traces through a bounded buffer (see `trace`). The
//! kernel-model replay lives in memtwin-scenario (it needs the kernel); it reads traces with
//! the same readers.

pub mod policy;
pub mod trace;

pub use policy::{Cache, PolicyKind};
pub use trace::{Format, Request, TraceError, TraceReader, PAGE_BYTES};

use std::time::Instant;

/// Requests read per batch: the bounded buffer between the reader and the cache.
pub const BATCH: usize = 1 << 16;

/// Request and byte counts of a replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub requests: u64,
    pub misses: u64,
    pub bytes: u64,
    pub miss_bytes: u64,
}

impl Stats {
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 { 0.0 } else { self.misses as f64 / self.requests as f64 }
    }
    pub fn byte_miss_ratio(&self) -> f64 {
        if self.bytes == 0 { 0.0 } else { self.miss_bytes as f64 / self.bytes as f64 }
    }
    #[inline]
    pub fn count(&mut self, size: u32, hit: bool) {
        self.requests += 1;
        self.bytes += size as u64;
        if !hit {
            self.misses += 1;
            self.miss_bytes += size as u64;
        }
    }
}

/// The outcome of one simulator replay.
#[derive(Clone, Debug)]
pub struct SimOutcome {
    pub policy: PolicyKind,
    pub format: Format,
    pub capacity_pages: u64,
    pub stats: Stats,
    /// Whether the trace gave sizes (then the byte miss ratio means something).
    pub has_sizes: bool,
    /// Wall seconds of the replay (reading included).
    pub wall_s: f64,
}

/// `--cache-size`: a number of 4 KiB pages ("262144") or a size with a unit ("1G", "512MiB",
/// "4096K"), which must be a whole number of pages.
pub fn parse_cache_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let accepted = "a number of 4 KiB pages (e.g. 262144) or a size with a unit (K, M, G, T, optionally KiB/KB...: e.g. 1G)";
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(format!("--cache-size '{s}' is not a size ({accepted})"));
    }
    let n: u64 = t[..digits].parse().map_err(|_| format!("--cache-size '{s}' is too large"))?;
    let unit = t[digits..].trim();
    let pages = if unit.is_empty() {
        n
    } else {
        let mult: u64 = match unit.to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
            "k" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            "t" => 1 << 40,
            _ => return Err(format!("--cache-size '{s}': unknown unit '{unit}' ({accepted})")),
        };
        let bytes = n.checked_mul(mult).ok_or_else(|| format!("--cache-size '{s}' is too large"))?;
        if bytes % PAGE_BYTES as u64 != 0 {
            return Err(format!("--cache-size '{s}' is not a whole number of 4 KiB pages"));
        }
        bytes / PAGE_BYTES as u64
    };
    if pages == 0 {
        return Err(format!("--cache-size '{s}' must be at least one 4 KiB page"));
    }
    if pages > 1 << 40 {
        return Err(format!("--cache-size '{s}' is too large (at most 4 PiB)"));
    }
    Ok(pages)
}

/// How many requests ahead `simulate` asks for a request's index entry, node and
/// neighbours (each stage a host memory latency after the one before).
const PREFETCH_INDEX: usize = 24;
const PREFETCH_NODE: usize = 12;
const PREFETCH_NEIGHBOURS: usize = 4;

/// Replay `path` through `policy` with a cache of `capacity_pages` 4 KiB pages (bytes:
/// `capacity_pages * 4096`; each request weighs its size, 4 KiB if the trace has none).
pub fn simulate(path: &str, format: Format, policy: PolicyKind, capacity_pages: u64) -> Result<SimOutcome, TraceError> {
    let t0 = Instant::now();
    let mut reader = TraceReader::open(path, format)?;
    let capacity = capacity_pages * PAGE_BYTES as u64;
    let mut cache = Cache::new(policy, capacity, capacity_pages.min(1 << 24) as usize);
    let mut stats = Stats::default();
    let mut batch = Vec::with_capacity(BATCH);
    while reader.next_batch(&mut batch, BATCH)? {
        for (i, r) in batch.iter().enumerate() {
            // Memory-level parallelism: hints for the requests ahead (see Cache::prefetch_*).
            if let Some(q) = batch.get(i + PREFETCH_INDEX) {
                cache.prefetch_index(q.id);
            }
            if let Some(q) = batch.get(i + PREFETCH_NODE) {
                cache.prefetch_node(q.id);
            }
            if let Some(q) = batch.get(i + PREFETCH_NEIGHBOURS) {
                cache.prefetch_neighbours(q.id);
            }
            let hit = cache.get(r.id, r.size);
            stats.count(r.size, hit);
        }
    }
    Ok(SimOutcome { policy, format, capacity_pages, stats, has_sizes: reader.has_sizes(), wall_s: t0.elapsed().as_secs_f64() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file in its own temporary directory, removed when dropped.
    struct Tmp {
        _dir: tempfile::TempDir,
        path: String,
    }

    impl std::ops::Deref for Tmp {
        type Target = str;
        fn deref(&self) -> &str {
            &self.path
        }
    }

    fn tmp(name: &str, bytes: &[u8]) -> Tmp {
        let dir = tempfile::Builder::new().prefix("memtwin-cachesim-").tempdir().unwrap();
        let p = dir.path().join(name);
        std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
        Tmp { path: p.to_string_lossy().to_string(), _dir: dir }
    }

    fn og(ids: &[(u64, u32)]) -> Vec<u8> {
        let mut v = Vec::new();
        for (i, &(id, size)) in ids.iter().enumerate() {
            v.extend_from_slice(&(i as u32).to_le_bytes());
            v.extend_from_slice(&id.to_le_bytes());
            v.extend_from_slice(&size.to_le_bytes());
            v.extend_from_slice(&(-1i64).to_le_bytes());
        }
        v
    }

    #[test]
    fn the_three_formats_give_the_same_requests() {
        let ids = [1u64, 2, 3, 1, 4, 2, 3, 4, 1];
        let csv = tmp("a.csv", format!("time,id,op\n{}", ids.iter().enumerate().map(|(t, i)| format!("{t},{i},get\n")).collect::<String>()).as_bytes());
        let txt = tmp("a.txt", format!("# ids\n{}\n", ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join("\n")).as_bytes());
        let bin = tmp("a.oracleGeneral", &og(&ids.iter().map(|&i| (i, 4096)).collect::<Vec<_>>()));
        for (p, f) in [(csv, Format::Csv), (txt, Format::U64), (bin, Format::OracleGeneral)] {
            let o = simulate(&p, f, PolicyKind::Lru, 3).unwrap();
            assert_eq!(o.stats.requests, 9, "{}", &*p);
            assert_eq!(o.stats.misses, 7, "{}", &*p);
        }
    }

    #[test]
    fn headerless_csv_with_sizes() {
        let p = tmp("b.csv", b"1,6000\n2,3000\n3,2000\n1,6000\n");
        let o = simulate(&p, Format::Csv, PolicyKind::Lru, 2).unwrap();
        assert!(o.has_sizes);
        assert_eq!(o.stats, Stats { requests: 4, misses: 4, bytes: 17000, miss_bytes: 17000 });
    }

    #[test]
    fn small_batches_stream_the_whole_trace() {
        let p = tmp("c.txt", (0..1000).map(|i| format!("{}\n", i % 7)).collect::<String>().as_bytes());
        let mut r = TraceReader::open(&p, Format::U64).unwrap();
        let mut b = Vec::new();
        let mut n = 0;
        while r.next_batch(&mut b, 3).unwrap() {
            assert!(b.len() <= 3);
            n += b.len();
        }
        assert_eq!(n, 1000);
    }

    #[test]
    fn binary_records_across_reads_come_whole_and_in_order() {
        // 100,003 records: 2.4 MB, so records straddle the reader's 1 MiB reads (not a
        // multiple of 24 bytes), read in batches that do and do not divide the count.
        let n = 100_003u64;
        let ids: Vec<(u64, u32)> = (0..n).map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15), (i % 5000) as u32)).collect();
        let p = tmp("d.oracleGeneral", &og(&ids));
        for batch in [1, 7, 4096, BATCH] {
            let mut r = TraceReader::open(&p, Format::OracleGeneral).unwrap();
            let mut b = Vec::new();
            let mut got = Vec::new();
            while r.next_batch(&mut b, batch).unwrap() {
                assert!(b.len() <= batch);
                got.extend(b.iter().map(|q| (q.id, q.size)));
            }
            assert_eq!(got, ids, "batch {batch}");
        }
    }

    #[test]
    fn bad_traces_name_the_line_or_record() {
        let p = tmp("bad.csv", b"id,size\n1,4096\nx7,4096\n");
        let e = simulate(&p, Format::Csv, PolicyKind::Lru, 2).unwrap_err().message;
        assert!(e.ends_with("bad.csv:3: 'x7' is not an object id (accepted: an unsigned 64-bit integer in column 1)"), "{e}");
        let p = tmp("bad.txt", b"1\n2\n-3\n");
        let e = simulate(&p, Format::U64, PolicyKind::Lru, 2).unwrap_err().message;
        assert!(e.contains("bad.txt:3: '-3' is not an object id (accepted: one unsigned 64-bit integer per line)"), "{e}");
        let mut bytes = og(&[(1, 4096), (2, 4096)]);
        bytes.truncate(40);
        let p = tmp("bad.oracleGeneral", &bytes);
        let e = simulate(&p, Format::OracleGeneral, PolicyKind::Lru, 2).unwrap_err().message;
        assert!(e.contains("bad.oracleGeneral: record 2: truncated"), "{e}");
        assert!(e.contains("24 bytes"), "{e}");
        let p = tmp("bad2.csv", b"time,key,op\n1,5,get\n2,6,set\n");
        let e = simulate(&p, Format::Csv, PolicyKind::Lru, 2).unwrap_err().message;
        assert!(e.contains("bad2.csv:3: operation 'set' is not replayed"), "{e}");
        let p = tmp("bad3.csv", b"when,what\n1,5\n");
        let e = simulate(&p, Format::Csv, PolicyKind::Lru, 2).unwrap_err().message;
        assert!(e.contains("bad3.csv:1: the header 'when,what' names no id column"), "{e}");
        let e = simulate("/nonexistent/t.csv", Format::Csv, PolicyKind::Lru, 2).unwrap_err().message;
        assert_eq!(e, "cannot read trace '/nonexistent/t.csv': No such file or directory");
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("1000"), Ok(1000));
        assert_eq!(parse_cache_size("4G"), Ok(1 << 20));
        assert_eq!(parse_cache_size("4096K"), Ok(1024));
        assert_eq!(parse_cache_size("1MiB"), Ok(256));
        assert!(parse_cache_size("1001K").unwrap_err().contains("whole number of 4 KiB pages"));
        assert!(parse_cache_size("0").is_err());
        assert!(parse_cache_size("lots").is_err());
        assert!(parse_cache_size("3X").unwrap_err().contains("unknown unit"));
    }
}
