//! The replay benchmark: the anchor trace (Zipf 0.9, 20 M requests over 4 M pages, a cache of
//! 1 M pages) replayed by memtwin's LRU simulator, memtwin's kernel policy and libCacheSim's
//! LRU, alternately, several rounds. Each replay runs in its own process; the figures are
//! requests per second of each replay, by wall clock and by CPU time (trace reading
//! included; the kernel policy's also includes its first pass over the trace for the largest
//! id, and the machine's boot), and the ratios of the medians. Nothing is asserted.
//!
//! The trace is generated here (seeded), written once as a libCacheSim oracleGeneral file
//! (read natively by all three), and removed at the end.

use crate::figures::{Figures, Val};
use crate::Args;
use std::io::Write;

pub const REQUESTS: u64 = 20_000_000;
pub const PAGES: u64 = 4_000_000;
pub const CACHE_PAGES: u64 = 1_000_000;
pub const ALPHA: f64 = 0.9;
pub const SEED: u64 = 20_260_101;
const ROUNDS: usize = 3;

/// splitmix64: the trace's random numbers.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Write `requests` Zipf(`alpha`) draws over `pages` ids (popularity rank r has weight
/// 1/(r+1)^alpha; ranks are scattered over the ids by a seeded permutation) as
/// oracleGeneral records of 4096 bytes.
pub fn write_zipf_trace(path: &str, requests: u64, pages: u64, alpha: f64, seed: u64) -> std::io::Result<()> {
    let mut rng = SplitMix(seed);
    let mut cdf = Vec::with_capacity(pages as usize);
    let mut sum = 0.0;
    for r in 0..pages {
        sum += 1.0 / ((r + 1) as f64).powf(alpha);
        cdf.push(sum);
    }
    let mut perm: Vec<u64> = (0..pages).collect();
    for i in (1..perm.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        perm.swap(i, j);
    }
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let mut rec = [0u8; 24];
    rec[12..16].copy_from_slice(&4096u32.to_le_bytes());
    rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
    // clock_time stays 0: libCacheSim's default TTL (300 days from a request's time) then
    // never expires an object.
    for _ in 0..requests {
        let u = rng.unit() * sum;
        let rank = cdf.partition_point(|&c| c <= u).min(pages as usize - 1);
        rec[4..12].copy_from_slice(&perm[rank].to_le_bytes());
        w.write_all(&rec)?;
    }
    w.flush()
}

const PY: &str = r#"
import sys, time
try:
    import libcachesim as lcs
except Exception as e:
    print("@err libcachesim is not importable by %s: %s (pip install libcachesim)" % (sys.executable, e))
    sys.exit(3)
path, cache_bytes = sys.argv[1], int(sys.argv[2])
t = time.perf_counter()
c = time.process_time()
reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
cache = lcs.LRU(cache_bytes)
req_miss_ratio, byte_miss_ratio = cache.process_trace(reader)
wall = time.perf_counter() - t
cpu = time.process_time() - c
print("@fig version\ts:%s" % getattr(lcs, "__version__", "unknown"))
print("@fig wall_s\tf:%r" % wall)
print("@fig cpu_s\tf:%r" % cpu)
print("@fig miss_ratio\tf:%r" % req_miss_ratio)
"#;

/// In the child: one memtwin replay of `trace`, "lru" or "kernel".
pub fn child(which: &str, trace: &str, scale: u64) -> Result<Figures, String> {
    let cache_pages = CACHE_PAGES / scale;
    let c0 = crate::host::thread_cpu_s();
    let t0 = std::time::Instant::now();
    let mut f = Figures::default();
    let stats = match which {
        "lru" => {
            let o = memtwin_cachesim::simulate(trace, memtwin_cachesim::Format::OracleGeneral, memtwin_cachesim::PolicyKind::Lru, cache_pages).map_err(|e| e.message)?;
            o.stats
        }
        "kernel" => {
            let o = memtwin_scenario::replay::KernelReplay {
                path: trace.to_string(),
                format: memtwin_cachesim::Format::OracleGeneral,
                machine: "default".into(),
                sets: vec!["boot_anon=0".into(), "boot_file=0".into()],
                cache_pages: Some(cache_pages),
                readahead: false,
                seed: 0,
            };
            let r = memtwin_scenario::replay::replay_kernel(&o).map_err(|e| e.message)?;
            f.int("ram_bytes", r.ram_bytes);
            f.int("peak_cache_pages", r.peak_cache_pages);
            f.float("sim_s", r.sim_s);
            for (k, v) in &r.vmstat {
                f.int(k, *v);
            }
            r.stats
        }
        _ => return Err(format!("unknown replay '{which}'")),
    };
    let wall = t0.elapsed().as_secs_f64();
    let cpu = crate::host::thread_cpu_s() - c0;
    f.float("wall_s", wall);
    f.float("cpu_s", cpu);
    f.int("requests", stats.requests);
    f.int("misses", stats.misses);
    f.float("miss_ratio", stats.miss_ratio());
    Ok(f)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn libcachesim(args: &Args, trace: &str, cache_pages: u64) -> Result<Figures, String> {
    crate::lru::run_python(args, PY, &[trace.to_string(), (cache_pages * 4096).to_string()])
}

/// The parent: generate the trace, then `ROUNDS` rounds of memtwin LRU, memtwin kernel and
/// libCacheSim LRU, one after the other.
pub fn compare(args: &Args) -> Result<Figures, String> {
    let scale = if args.quick { 16 } else { 1 };
    let (requests, pages, cache_pages) = (REQUESTS / scale, PAGES / scale, CACHE_PAGES / scale);
    let trace = std::env::temp_dir().join(format!("memtwin-bench-replay-{}.oracleGeneral", std::process::id()));
    let trace_s = trace.to_string_lossy().to_string();
    let r = (|| {
        let t0 = std::time::Instant::now();
        write_zipf_trace(&trace_s, requests, pages, ALPHA, SEED).map_err(|e| format!("cannot write the trace {trace_s}: {e}"))?;
        let mut f = Figures::default();
        f.str("trace", format!("Zipf {ALPHA}, {requests} requests over {pages} pages, seed {SEED} (oracleGeneral, 4096-byte objects)"));
        f.int("cache_size_pages", cache_pages);
        f.float("trace_write_s", t0.elapsed().as_secs_f64());
        let mut rps: [Vec<f64>; 3] = Default::default();
        let mut rps_cpu: [Vec<f64>; 3] = Default::default();
        let names = ["memtwin_lru", "memtwin_kernel", "libcachesim_lru"];
        let mut last: [Option<Figures>; 3] = Default::default();
        for round in 1..=ROUNDS {
            let extra = ["--trace".to_string(), trace_s.clone()];
            let runs = [
                crate::run_child("replay-lru", args, &extra)?,
                crate::run_child("replay-kernel", args, &extra)?,
                libcachesim(args, &trace_s, cache_pages)?,
            ];
            for (i, fig) in runs.into_iter().enumerate() {
                let wall = fig.get("wall_s").and_then(Val::as_f64).ok_or("a replay reported no wall time")?;
                let cpu = fig.get("cpu_s").and_then(Val::as_f64).ok_or("a replay reported no CPU time")?;
                let per_s = requests as f64 / wall;
                rps[i].push(per_s);
                rps_cpu[i].push(requests as f64 / cpu);
                f.float(&format!("round{round}.{}_requests_per_s", names[i]), per_s);
                f.float(&format!("round{round}.{}_requests_per_cpu_s", names[i]), requests as f64 / cpu);
                last[i] = Some(fig);
            }
        }
        for (i, name) in names.iter().enumerate() {
            if let Some(fig) = &last[i] {
                f.extend_prefixed(&format!("{name}_"), fig);
            }
            f.float(&format!("{name}_requests_per_s_min"), min(&rps[i]));
            f.float(&format!("{name}_requests_per_s_median"), median(&mut rps[i].clone()));
            f.float(&format!("{name}_requests_per_cpu_s_min"), min(&rps_cpu[i]));
            f.float(&format!("{name}_requests_per_cpu_s_median"), median(&mut rps_cpu[i].clone()));
        }
        let med = |v: &[Vec<f64>; 3], i: usize| median(&mut v[i].clone());
        f.float("ratio_memtwin_lru_to_libcachesim_lru", med(&rps, 0) / med(&rps, 2));
        f.float("ratio_memtwin_kernel_to_libcachesim_lru", med(&rps, 1) / med(&rps, 2));
        f.float("ratio_cpu_memtwin_lru_to_libcachesim_lru", med(&rps_cpu, 0) / med(&rps_cpu, 2));
        f.float("ratio_cpu_memtwin_kernel_to_libcachesim_lru", med(&rps_cpu, 1) / med(&rps_cpu, 2));
        f.str("ratio_targets", "memtwin kernel / libCacheSim LRU >= 3, memtwin LRU / libCacheSim LRU >= 5");
        let lm = last[0].as_ref().and_then(|x| x.get("miss_ratio")).and_then(Val::as_f64);
        let cm = last[2].as_ref().and_then(|x| x.get("miss_ratio")).and_then(Val::as_f64);
        if let (Some(a), Some(b)) = (lm, cm) {
            f.str("lru_miss_ratios_equal", if (a - b).abs() < 0.5 / requests as f64 { "yes" } else { "NO" });
        }
        Ok(f)
    })();
    let _ = std::fs::remove_file(&trace);
    r
}
