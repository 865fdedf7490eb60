//! Optional comparison with libCacheSim (PRODUCT.md: "measures these against libCacheSim
//! (same trace, LRU) and reports ratios measured in one run").
//!
//! The trace is a sequential scan of N pages, twice. memtwin replays it as a scenario
//! (`dd if=/dev/sda ... count=N` twice, see runs::lru_memtwin); the child that ran it writes
//! the same page sequence as a libCacheSim oracleGeneral binary trace (read natively by
//! libCacheSim's C reader, so Python does no per-request work), and libCacheSim's LRU with the
//! capacity memtwin's page cache reached replays it through `process_trace`. Both times are
//! wall times of the replay alone, measured in this one run of the harness.

use crate::figures::{Figures, Val};
use crate::Args;
use std::io::Write;
use std::process::{Command, Stdio};

/// libCacheSim's oracleGeneral record: clock_time u32, obj_id u64, obj_size u32,
/// next_access_vtime i64, packed little-endian (24 bytes).
pub fn write_oracle_general(path: &str, n: u64) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let mut rec = [0u8; 24];
    for pass in 0..2u64 {
        for page in 0..n {
            let t = (pass * n + page) as u32;
            rec[0..4].copy_from_slice(&t.to_le_bytes());
            rec[4..12].copy_from_slice(&page.to_le_bytes());
            rec[12..16].copy_from_slice(&4096u32.to_le_bytes());
            rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
            w.write_all(&rec)?;
        }
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
path, cache_bytes, requests = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
cache = lcs.LRU(cache_bytes)
c = time.thread_time()
t = time.perf_counter()
req_miss_ratio, byte_miss_ratio = cache.process_trace(reader)
wall = time.perf_counter() - t
cpu = time.thread_time() - c
print("@fig version\ts:%s" % getattr(lcs, "__version__", "unknown"))
print("@fig requests\ti:%d" % requests)
print("@fig cache_pages\ti:%d" % (cache_bytes // 4096))
print("@fig wall_s\tf:%r" % wall)
print("@fig cpu_s\tf:%r" % cpu)
print("@fig misses\ti:%d" % round(req_miss_ratio * requests))
print("@fig miss_ratio\tf:%r" % req_miss_ratio)
print("@fig requests_per_s\tf:%r" % (requests / wall))
print("@fig requests_per_cpu_s\tf:%r" % (requests / cpu))
"#;

/// Run `script` with `args.python` and collect the `@fig KEY\tVALUE` lines it prints; an
/// `@err MESSAGE` line or a failed exit is an error.
pub fn run_python(args: &Args, script: &str, argv: &[String]) -> Result<Figures, String> {
    let out = Command::new(&args.python)
        .arg("-c")
        .arg(script)
        .args(argv)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e} (--python PATH names a Python with libcachesim)", args.python))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if let Some(e) = text.lines().find_map(|l| l.strip_prefix("@err ")) {
        return Err(e.to_string());
    }
    if !out.status.success() {
        return Err(format!("{} exited with {}: {}", args.python, out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    let mut f = Figures::default();
    for line in text.lines() {
        if let Some((k, v)) = line.strip_prefix("@fig ").and_then(|r| r.split_once('\t')) {
            f.items.push((k.to_string(), Val::decode(v)));
        }
    }
    Ok(f)
}

pub fn compare(args: &Args) -> Result<Figures, String> {
    let trace = std::env::temp_dir().join(format!("memtwin-bench-{}.oracleGeneral", std::process::id()));
    let trace_s = trace.to_string_lossy().to_string();
    let r = (|| {
        let mt = crate::run_child("lru", args, &["--trace-out".to_string(), trace_s.clone()])?;
        let cache_pages = match mt.get("cache_pages") {
            Some(Val::Int(p)) if *p > 0 => *p,
            _ => return Err("the memtwin run reported no page-cache size".to_string()),
        };
        let requests = match mt.get("requests") {
            Some(Val::Int(r)) => *r,
            _ => return Err("the memtwin run reported no request count".to_string()),
        };
        let lcs = run_python(args, PY, &[trace_s.clone(), (cache_pages * 4096).to_string(), requests.to_string()])?;
        let mut f = Figures::default();
        f.extend_prefixed("memtwin_", &mt);
        f.extend_prefixed("libcachesim_", &lcs);
        if let (Some(a), Some(b)) = (mt.get("requests_per_s").and_then(Val::as_f64), lcs.get("requests_per_s").and_then(Val::as_f64)) {
            f.float("throughput_ratio", a / b);
        }
        if let (Some(a), Some(b)) = (mt.get("requests_per_cpu_s").and_then(Val::as_f64), lcs.get("requests_per_cpu_s").and_then(Val::as_f64)) {
            f.float("throughput_ratio_cpu", a / b);
        }
        Ok(f)
    })();
    let _ = std::fs::remove_file(&trace);
    r
}
