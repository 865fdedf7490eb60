//! Named figures of one benchmark, how they travel from a child process to the parent and
//! how they are shown.

#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(u64),
    Float(f64),
    Str(String),
}

impl Val {
    /// One line for the child -> parent protocol.
    pub fn encode(&self) -> String {
        match self {
            Val::Int(i) => format!("i:{i}"),
            Val::Float(x) => format!("f:{x:e}"),
            Val::Str(s) => format!("s:{}", s.replace('\n', " | ").replace('\t', " ")),
        }
    }
    pub fn decode(s: &str) -> Val {
        if let Some(i) = s.strip_prefix("i:").and_then(|v| v.parse().ok()) {
            return Val::Int(i);
        }
        if let Some(x) = s.strip_prefix("f:").and_then(|v| v.parse().ok()) {
            return Val::Float(x);
        }
        Val::Str(s.strip_prefix("s:").unwrap_or(s).to_string())
    }
    /// For the table: integers with thousands separators, floats with 3 significant
    /// digits at least.
    pub fn show(&self) -> String {
        match self {
            Val::Int(i) => group(*i),
            Val::Float(x) => show_float(*x),
            Val::Str(s) => s.clone(),
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(x) => Some(*x),
            Val::Str(_) => None,
        }
    }
}

pub fn group(i: u64) -> String {
    let s = i.to_string();
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n > 0 && (s.len() - n) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn show_float(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if a >= 1e6 {
        group(x.round() as u64)
    } else if a >= 100.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.3}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{x:.4}")
    }
}

#[derive(Clone, Debug, Default)]
pub struct Figures {
    pub items: Vec<(String, Val)>,
}

impl Figures {
    pub fn int(&mut self, k: &str, v: u64) {
        self.items.push((k.to_string(), Val::Int(v)));
    }
    pub fn float(&mut self, k: &str, v: f64) {
        self.items.push((k.to_string(), Val::Float(v)));
    }
    pub fn str(&mut self, k: &str, v: impl Into<String>) {
        self.items.push((k.to_string(), Val::Str(v.into())));
    }
    pub fn get(&self, k: &str) -> Option<&Val> {
        self.items.iter().find(|(n, _)| n == k).map(|(_, v)| v)
    }
    /// Append another benchmark part's figures under a prefix.
    pub fn extend_prefixed(&mut self, prefix: &str, other: &Figures) {
        for (k, v) in &other.items {
            self.items.push((format!("{prefix}{k}"), v.clone()));
        }
    }

    pub fn print_table(&self, _bench: &str) {
        let rows: Vec<(String, String, &str)> = self
            .items
            .iter()
            .map(|(k, v)| {
                let (label, unit) = describe(k);
                (label, v.show(), unit)
            })
            .collect();
        let w0 = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let w1 = rows.iter().filter(|r| r.2 != "text").map(|r| r.1.chars().count()).max().unwrap_or(0);
        for (label, val, unit) in rows {
            if unit == "text" {
                println!("   {label:<w0$}  {val}");
            } else {
                println!("   {label:<w0$}  {val:>w1$} {unit}");
            }
        }
    }
}

/// (label, unit) of a figure key for the table. Keys are `snake_case` with the unit last
/// (`_s`, `_per_s`, `_bytes`, `_pages`); a prefix like `memtwin_` is kept in the label.
pub fn describe(key: &str) -> (String, &'static str) {
    const KNOWN: &[(&str, &str, &str)] = &[
        ("machine", "machine (RunOptions)", "text"),
        ("script", "scenario", "text"),
        ("exit_status", "scenario exit status", ""),
        ("wall_s", "wall time", "s"),
        ("cpu_s", "CPU time of the simulating thread", "s"),
        ("cpu_median_s", "CPU time of the simulating thread, median", "s"),
        ("sim_s", "simulated time", "s"),
        ("sim_speedup", "simulated s per wall s", "x"),
        ("ram_pages", "simulated RAM", "pages"),
        ("workload_pages", "pages dd read or wrote (page-cache lookups)", "pages"),
        ("workload_pages_per_s", "  ... per wall second", "pages/s"),
        ("pgpgin_pages", "pages read from disk (pgpgin/4)", "pages"),
        ("pgpgout_pages", "pages written to disk (pgpgout/4)", "pages"),
        ("pgalloc", "pages allocated (pgalloc_normal)", "pages"),
        ("pgfree", "pages freed (pgfree)", "pages"),
        ("cache_hit_pages", "pages read from the page cache", "pages"),
        ("page_events", "simulated page events", "events"),
        ("page_events_per_s", "simulated page events per wall second", "events/s"),
        ("page_events_per_cpu_s", "simulated page events per CPU second", "events/s"),
        ("pgscan", "pages scanned by reclaim (pgscan_kswapd+direct)", "pages"),
        ("pgsteal", "pages reclaimed (pgsteal_kswapd+direct)", "pages"),
        ("pgscan_per_s", "pgscan per wall second", "pages/s"),
        ("pgsteal_per_s", "pgsteal per wall second", "pages/s"),
        ("pgactivate", "pages activated (pgactivate)", "pages"),
        ("pgdeactivate", "pages deactivated (pgdeactivate)", "pages"),
        ("pgrefill", "active pages scanned (pgrefill)", "pages"),
        ("allocstall", "direct reclaim stalls (allocstall_normal)", ""),
        ("rss_before_bytes", "host RSS before the run (VmRSS)", "bytes"),
        ("peak_rss_bytes", "host peak RSS after the run (VmHWM)", "bytes"),
        ("host_bytes_per_page", "peak RSS / simulated RAM pages", "bytes/page"),
        ("host_bytes_per_page_run", "(peak RSS - RSS before) / simulated pages", "bytes/page"),
        ("core_table_bytes_per_page", "core frame table (Pages::HOST_BYTES_PER_PAGE)", "bytes/page"),
        ("runs", "timed runs (after 1 untimed warm-up)", ""),
        ("wall_median_s", "wall time, median", "s"),
        ("wall_min_s", "wall time, min", "s"),
        ("wall_max_s", "wall time, max", "s"),
        ("requests", "trace requests (page accesses)", "requests"),
        ("cache_pages", "cache capacity (peak page cache of the memtwin run)", "pages"),
        ("misses", "misses", "requests"),
        ("miss_ratio", "miss ratio", ""),
        ("requests_per_s", "requests per wall second", "requests/s"),
        ("requests_per_cpu_s", "requests per CPU second", "requests/s"),
        ("version", "version", "text"),
        ("throughput_ratio", "memtwin / libCacheSim requests per wall second", "x"),
        ("throughput_ratio_cpu", "memtwin / libCacheSim requests per CPU second", "x"),
        ("error", "error", "text"),
    ];
    let (prefix, rest) = match key.split_once('_') {
        Some((p, r)) if p == "memtwin" || p == "libcachesim" => (Some(p), r),
        _ => (None, key),
    };
    if let Some(n) = rest.strip_prefix("dd_") {
        return (format!("{}dd #{n} said", prefix.map(|p| format!("{p}: ")).unwrap_or_default()), "text");
    }
    let (label, unit) = KNOWN
        .iter()
        .find(|(k, _, _)| *k == rest)
        .map(|(_, l, u)| (l.to_string(), *u))
        .unwrap_or_else(|| (rest.to_string(), ""));
    match prefix {
        Some(p) => (format!("{p}: {label}"), unit),
        None => (label, unit),
    }
}
