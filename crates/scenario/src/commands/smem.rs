//! smem 1.5 (Debian's smem_1.5): memory per process, per user and for the whole system,
//! with PSS and USS from the model's sharing of mappings (Kernel::task_pss). Its table
//! layout follows smem's showtable: each column's printf format applied to the header and
//! to every row, a space after each column, rows sorted by the sort field ascending (the
//! whole row breaks ties), `-t` a dashed line and the totals.

use memtwin_kernel::{Kernel, Program, Step, TaskId};

const USAGE: &str = "smem [-t] [-k|-p] [-s FIELD] [-r] [-c 'COLS'] [-H] [-n] [-P REGEX] [-U REGEX] [-u|-w] [-R SIZE]";

#[derive(Clone, Copy, PartialEq)]
enum View {
    Processes,
    Users,
    System,
}

pub struct Smem {
    view: View,
    totals: bool,
    abbreviate: bool,
    percent: bool,
    sort: Option<String>,
    reverse: bool,
    columns: Option<Vec<String>>,
    header: bool,
    numeric: bool,
    process_filter: Option<regex::Regex>,
    user_filter: Option<regex::Regex>,
    realmem_kb: Option<u64>,
    args: String,
}

/// A cell: text or an amount in kB (amounts print per -k / -p).
#[derive(Clone, PartialEq, PartialOrd)]
enum V {
    N(u64),
    S(String),
}

struct Col {
    name: &'static str,
    head: &'static str,
    /// printf width; negative: left-aligned; `cut`: %-27.27s truncation.
    width: i32,
    cut: bool,
    amount: bool,
    /// Swap amounts are shown as a percentage of SwapTotal, others of MemTotal.
    swap: bool,
    total: Tot,
}

#[derive(Clone, Copy)]
enum Tot {
    Sum,
    Count,
    Distinct,
    Empty,
}

fn units(kb: u64) -> String {
    // smem's units(): bytes scaled by 1024 while >= 1024, "%.1f%s".
    if kb == 0 {
        return "0".into();
    }
    let mut x = kb as f64 * 1024.0;
    let mut s = "";
    for u in ["", "K", "M", "G", "T"] {
        s = u;
        if x < 1024.0 {
            break;
        }
        x /= 1024.0;
    }
    format!("{x:.1}{s}")
}

/// smem's `-R`: a size with a unit (k, K, M, G, T, with or without B).
fn fromunits(v: &str) -> Option<u64> {
    for (suf, mul) in [("kB", 1u64 << 10), ("KB", 1 << 10), ("MB", 1 << 20), ("GB", 1 << 30), ("TB", 1 << 40), ("k", 1 << 10), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40)] {
        if let Some(n) = v.strip_suffix(suf) {
            return n.parse::<f64>().ok().map(|f| (f * mul as f64) as u64 / 1024);
        }
    }
    None
}

impl Smem {
    pub fn parse(args: &[String]) -> Result<Smem, String> {
        let mut s = Smem {
            view: View::Processes,
            totals: false,
            abbreviate: false,
            percent: false,
            sort: None,
            reverse: false,
            columns: None,
            header: true,
            numeric: false,
            process_filter: None,
            user_filter: None,
            realmem_kb: None,
            args: args.join(" "),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (name, inline) = match a.split_once('=') {
                Some((n, v)) if a.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            // Short options may be grouped (-tk); the last may take a value.
            let shorts: Vec<char> = if name.starts_with("--") || !name.starts_with('-') { Vec::new() } else { name[1..].chars().collect() };
            let mut value = |flag: &str, rest: String| -> Result<String, String> {
                if let Some(v) = inline.clone() {
                    return Ok(v);
                }
                if !rest.is_empty() {
                    return Ok(rest);
                }
                it.next().cloned().ok_or(format!("smem: error: {flag} option requires an argument ({USAGE})"))
            };
            let long = |n: &str| -> Option<char> {
                Some(match n {
                    "--totals" => 't',
                    "--abbreviate" => 'k',
                    "--percent" => 'p',
                    "--sort" => 's',
                    "--reverse" => 'r',
                    "--columns" => 'c',
                    "--no-header" => 'H',
                    "--numeric" => 'n',
                    "--processfilter" => 'P',
                    "--userfilter" => 'U',
                    "--users" => 'u',
                    "--system" => 'w',
                    "--realmem" => 'R',
                    "--mappings" => 'm',
                    _ => return None,
                })
            };
            let opts: Vec<(char, String)> = if name.starts_with("--") {
                let c = long(&name).ok_or(format!("smem: error: no such option: {name} ({USAGE})"))?;
                vec![(c, String::new())]
            } else if shorts.is_empty() {
                return Err(format!("smem: error: unexpected argument '{a}' ({USAGE})"));
            } else {
                let mut v = Vec::new();
                for (i, c) in shorts.iter().enumerate() {
                    if "scPUR".contains(*c) {
                        v.push((*c, shorts[i + 1..].iter().collect()));
                        break;
                    }
                    v.push((*c, String::new()));
                }
                v
            };
            for (c, rest) in opts {
                match c {
                    't' => s.totals = true,
                    'k' => s.abbreviate = true,
                    'p' => s.percent = true,
                    'r' => s.reverse = true,
                    'H' => s.header = false,
                    'n' => s.numeric = true,
                    'u' => s.view = View::Users,
                    'w' => s.view = View::System,
                    's' => s.sort = Some(value("-s", rest)?),
                    'c' => s.columns = Some(value("-c", rest)?.split_whitespace().map(String::from).collect()),
                    'P' | 'U' => {
                        let v = value(if c == 'P' { "-P" } else { "-U" }, rest)?;
                        let re = regex::Regex::new(&v).map_err(|e| format!("smem: bad regular expression '{v}': {e}"))?;
                        if c == 'P' {
                            s.process_filter = Some(re);
                        } else {
                            s.user_filter = Some(re);
                        }
                    }
                    'R' => {
                        let v = value("-R", rest)?;
                        s.realmem_kb = Some(fromunits(&v).ok_or("smem: Memory size should be written with units, for example 1024M".to_string())?);
                    }
                    'm' => return Err("smem: -m (per mapping) is not modelled: the model keeps mappings per object, not the address-space layout of each library".into()),
                    o => return Err(format!("smem: error: no such option: -{o} ({USAGE}; -a, -m, --pie, --bar are not modelled)")),
                }
            }
        }
        // Unknown columns or sort fields are smem's "unknown field" listing; checked here.
        let cols = s.cols();
        let known: Vec<&str> = cols.iter().map(|c| c.name).collect();
        for c in s.columns.iter().flatten() {
            if !known.contains(&c.as_str()) {
                return Err(format!("smem: unknown fields: {c} (known fields: {})", known.join(" ")));
            }
        }
        if let Some(f) = &s.sort {
            if !known.contains(&f.as_str()) {
                return Err(format!("smem: unknown field {f} (known fields: {})", known.join(" ")));
            }
        }
        Ok(s)
    }

    /// Every column of the view, as smem defines its fields.
    fn cols(&self) -> Vec<Col> {
        let c = |name, head, width, amount, total| Col { name, head, width, cut: false, amount, swap: name == "swap", total };
        match self.view {
            View::Processes => vec![
                c("pid", "PID", 5, false, Tot::Count),
                c("user", "User", -8, false, Tot::Distinct),
                Col { cut: true, ..c("name", "Name", -24, false, Tot::Empty) },
                Col { cut: true, ..c("command", "Command", -27, false, Tot::Empty) },
                c("swap", "Swap", 8, true, Tot::Sum),
                c("uss", "USS", 8, true, Tot::Sum),
                c("rss", "RSS", 8, true, Tot::Sum),
                c("pss", "PSS", 8, true, Tot::Sum),
                c("vss", "VSS", 8, true, Tot::Sum),
            ],
            View::Users => vec![
                c("user", "User", -8, false, Tot::Empty),
                c("count", "Count", 5, false, Tot::Sum),
                c("swap", "Swap", 8, true, Tot::Sum),
                c("uss", "USS", 8, true, Tot::Sum),
                c("rss", "RSS", 8, true, Tot::Sum),
                c("pss", "PSS", 8, true, Tot::Sum),
                c("vss", "VSS", 8, true, Tot::Sum),
            ],
            View::System => vec![
                c("order", "Order", 1, false, Tot::Empty),
                c("area", "Area", -24, false, Tot::Empty),
                c("used", "Used", 10, true, Tot::Sum),
                c("cache", "Cache", 10, true, Tot::Sum),
                c("noncache", "Noncache", 10, true, Tot::Sum),
            ],
        }
    }

    fn default_columns(&self) -> &'static [&'static str] {
        match self.view {
            View::Processes => &["pid", "user", "command", "swap", "uss", "pss", "rss"],
            View::Users => &["user", "count", "swap", "uss", "pss", "rss"],
            View::System => &["area", "used", "cache", "noncache"],
        }
    }

    /// The rows of the view: a map from column name to value, per row.
    fn rows(&self, k: &Kernel, me: TaskId) -> Vec<Vec<(&'static str, V)>> {
        let mut out = Vec::new();
        match self.view {
            View::System => {
                let m = k.meminfo();
                let mt = m.mem_total;
                let f = m.mem_free;
                let t = self.realmem_kb.unwrap_or(mt);
                let fh = t.saturating_sub(mt);
                let u = m.anon_pages + m.mapped;
                let kd = mt.saturating_sub(f + u);
                let kdc = m.buffers + m.sreclaimable + m.cached.saturating_sub(m.mapped);
                let l = [("firmware/hardware", fh, 0), ("kernel image", 0, 0), ("kernel dynamic memory", kd, kdc), ("userspace memory", u, m.mapped), ("free memory", f, f)];
                for (i, (area, used, cache)) in l.into_iter().enumerate() {
                    out.push(vec![("order", V::N(i as u64)), ("area", V::S(area.into())), ("used", V::N(used)), ("cache", V::N(cache)), ("noncache", V::N(used.saturating_sub(cache)))]);
                }
            }
            View::Processes | View::Users => {
                let user = if self.numeric { "0".to_string() } else { "root".to_string() };
                let mut per_user = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
                for i in 0..k.tasks.len() {
                    let t = &k.tasks[i];
                    // Kernel threads have no mappings; smem lists processes with a command line.
                    if t.kthread || t.exit_code.is_some() || t.reaped {
                        continue;
                    }
                    let tid = i as TaskId;
                    let cmd = if tid == me { format!("/usr/bin/python3 /usr/bin/smem {}", self.args).trim_end().to_string() } else { t.cmdline.clone() };
                    let name = if tid == me { "smem".to_string() } else { k.task_comm(tid) };
                    if self.process_filter.as_ref().is_some_and(|re| !re.is_match(&name) && !re.is_match(&cmd)) {
                        continue;
                    }
                    if self.user_filter.as_ref().is_some_and(|re| !re.is_match("root")) {
                        continue;
                    }
                    let p = k.task_pss(tid);
                    let (rss, pss, uss, swap, vss) = (p.rss * 4, (p.pss * 4.0) as u64, p.uss * 4, p.swap * 4, t.vm_kb);
                    if self.view == View::Users {
                        per_user = (per_user.0 + 1, per_user.1 + swap, per_user.2 + uss, per_user.3 + rss, per_user.4 + pss, per_user.5 + vss);
                        continue;
                    }
                    out.push(vec![
                        ("pid", V::N(t.pid as u64)),
                        ("user", V::S(user.clone())),
                        ("name", V::S(name)),
                        ("command", V::S(cmd)),
                        ("swap", V::N(swap)),
                        ("uss", V::N(uss)),
                        ("rss", V::N(rss)),
                        ("pss", V::N(pss)),
                        ("vss", V::N(vss)),
                    ]);
                }
                if self.view == View::Users && per_user.0 > 0 {
                    let (n, swap, uss, rss, pss, _vss) = per_user;
                    // smem's users view shows PSS under VSS too (its field table says so).
                    out.push(vec![("user", V::S(user)), ("count", V::N(n)), ("swap", V::N(swap)), ("uss", V::N(uss)), ("rss", V::N(rss)), ("pss", V::N(pss)), ("vss", V::N(pss))]);
                }
            }
        }
        out
    }
}

impl Program for Smem {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let all = self.cols();
        let names: Vec<String> = self.columns.clone().unwrap_or_else(|| self.default_columns().iter().map(|s| s.to_string()).collect());
        let cols: Vec<&Col> = names.iter().filter_map(|n| all.iter().find(|c| c.name == n)).collect();
        let sort = self.sort.clone().unwrap_or_else(|| if self.view == View::System { "order".into() } else { "pss".into() });
        let m = k.meminfo();
        let (mt, st) = (self.realmem_kb.unwrap_or(m.mem_total), m.swap_total);
        let get = |r: &Vec<(&'static str, V)>, n: &str| r.iter().find(|(c, _)| *c == n).map(|(_, v)| v.clone()).unwrap_or(V::S(String::new()));
        let rows = self.rows(k, me);
        let mut keyed: Vec<(V, Vec<V>)> = rows.iter().map(|r| (get(r, &sort), cols.iter().map(|c| get(r, c.name)).collect())).collect();
        keyed.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        if self.reverse {
            keyed.reverse();
        }
        let show = |c: &Col, v: &V| -> String {
            let text = match v {
                V::N(n) if c.amount && self.abbreviate => units(*n),
                V::N(n) if c.amount && self.percent => {
                    let total = if c.swap { st } else { mt };
                    if total == 0 { "N/A".to_string() } else { format!("{:.2}%", 100.0 * *n as f64 / total as f64) }
                }
                V::N(n) => n.to_string(),
                V::S(s) => s.clone(),
            };
            let w = c.width.unsigned_abs() as usize;
            let text: String = if c.cut { text.chars().take(w).collect() } else { text };
            if c.width < 0 { format!("{text:<w$} ") } else { format!("{text:>w$} ") }
        };
        let mut out = String::new();
        let header: String = cols.iter().map(|c| show(c, &V::S(c.head.to_string()))).collect();
        if self.header {
            out.push_str(&header);
            out.push('\n');
        }
        for (_, r) in &keyed {
            out.extend(cols.iter().zip(r).map(|(c, v)| show(c, v)));
            out.push('\n');
        }
        if self.totals {
            out.push_str(&"-".repeat(header.len()));
            out.push('\n');
            for c in &cols {
                let vals: Vec<V> = rows.iter().map(|r| get(r, c.name)).collect();
                let v = match c.total {
                    Tot::Sum => V::N(vals.iter().map(|v| if let V::N(n) = v { *n } else { 0 }).sum()),
                    Tot::Count => V::N(vals.len() as u64),
                    Tot::Distinct => {
                        let mut d: Vec<String> = vals.iter().map(|v| if let V::S(s) = v { s.clone() } else { String::new() }).collect();
                        d.sort();
                        d.dedup();
                        V::N(d.len() as u64)
                    }
                    Tot::Empty => V::S(String::new()),
                };
                out.push_str(&show(c, &v));
            }
            out.push('\n');
        }
        k.print(me, &out);
        Step::Exit(0)
    }
}
