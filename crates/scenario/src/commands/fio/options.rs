//! fio's options: the subset the twin models, from the command line (`--key=value`) and
//! from INI job files (`[global]`, `[job]`, `key=value`). Anything else is refused with
//! what is accepted.

use memtwin_kernel::{Ns, NS_PER_MS, NS_PER_SEC, NS_PER_US};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed read/write (rw, readwrite).
    ReadWrite,
    RandRw,
    /// Trims (BLKDISCARD), sequential or random, alone or each followed by a write of the
    /// same block (trimwrite).
    Trim,
    RandTrim,
    TrimWrite,
    RandTrimWrite,
}

impl Rw {
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::ReadWrite => "rw",
            Rw::RandRw => "randrw",
            Rw::Trim => "trim",
            Rw::RandTrim => "randtrim",
            Rw::TrimWrite => "trimwrite",
            Rw::RandTrimWrite => "randtrimwrite",
        }
    }
    pub fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim | Rw::RandTrimWrite)
    }
    /// td_read.
    pub fn reads(self) -> bool {
        matches!(self, Rw::Read | Rw::RandRead | Rw::ReadWrite | Rw::RandRw)
    }
    /// td_write (trimwrite: TD_DDIR_TRIM | TD_DDIR_WRITE).
    pub fn writes(self) -> bool {
        matches!(self, Rw::Write | Rw::RandWrite | Rw::ReadWrite | Rw::RandRw | Rw::TrimWrite | Rw::RandTrimWrite)
    }
    /// td_trim.
    pub fn trims(self) -> bool {
        matches!(self, Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Psync,
    Sync,
    Pvsync,
    Libaio,
    IoUring,
    /// memcpy to and from a shared mapping of the file (engines/mmap.c).
    Mmap,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Psync => "psync",
            Engine::Sync => "sync",
            Engine::Pvsync => "pvsync",
            Engine::Libaio => "libaio",
            Engine::IoUring => "io_uring",
            Engine::Mmap => "mmap",
        }
    }
    /// FIO_SYNCIO engines: one I/O at a time, completed when the system call returns.
    pub fn sync(self) -> bool {
        !matches!(self, Engine::Libaio | Engine::IoUring)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Random,
    Zipf(f64),
    Pareto(f64),
    Normal(f64),
}

/// fadvise_hint's values (fio 3.33: 0, 1, sequential, random).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadviseHint {
    None,
    /// 1: POSIX_FADV_RANDOM for a random job, POSIX_FADV_SEQUENTIAL otherwise.
    ByPattern,
    Sequential,
    Random,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    /// Terse version 3 (--terse-version's default): one line of ';'-separated fields per job.
    Terse,
}

/// One job's settings (struct thread_options, the modelled part).
#[derive(Clone, Debug)]
pub struct JobOpts {
    pub name: String,
    pub rw: Rw,
    pub bs: u64,
    pub size: Option<u64>,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub direct: bool,
    pub engine: Engine,
    pub iodepth: u32,
    pub numjobs: u32,
    pub runtime: Option<Ns>,
    pub time_based: bool,
    pub ramp_time: Ns,
    pub rwmixread: u32,
    pub fsync: u64,
    pub invalidate: bool,
    pub dist: Dist,
    pub norandommap: bool,
    pub group_reporting: bool,
    /// fadvise_hint: None (0), or the advice given at open.
    pub fadvise_hint: FadviseHint,
    /// randrepeat: the offsets repeat from run to run (seeded from randseed and the job's
    /// number), or come from the system's entropy (the twin's --seed).
    pub randrepeat: bool,
    /// randseed (fio's rand_seed): given, it makes the offsets repeat whatever randrepeat
    /// says; fio's default is 0x89.
    pub randseed: Option<u64>,
    /// The options as written, in order, for JSON's "job options".
    pub given: Vec<(String, String)>,
}

impl Default for JobOpts {
    fn default() -> Self {
        JobOpts {
            name: String::new(),
            rw: Rw::Read,
            bs: 4096,
            size: None,
            filename: None,
            directory: None,
            direct: false,
            engine: Engine::Psync,
            iodepth: 1,
            numjobs: 1,
            runtime: None,
            time_based: false,
            ramp_time: 0,
            rwmixread: 50,
            fsync: 0,
            invalidate: true,
            dist: Dist::Random,
            norandommap: false,
            group_reporting: false,
            fadvise_hint: FadviseHint::ByPattern,
            randrepeat: true,
            randseed: None,
            given: Vec::new(),
        }
    }
}

/// Every option the twin accepts (job options; output-format is a command-line option).
pub const ACCEPTED: &str = "name, rw|readwrite (read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite: \
trims of a regular file fail as on Linux, of a block device are refused), bs, size, filename, \
directory, direct, ioengine (psync, sync, pvsync, libaio, io_uring, mmap), iodepth, numjobs, runtime, time_based, ramp_time, \
rwmixread, rwmixwrite, fsync, invalidate, random_distribution (random, zipf:T, pareto:H, normal:P), norandommap, \
randrepeat, randseed, fadvise_hint (0, 1, sequential, random), group_reporting, output-format (normal, json, terse)";

/// Options that take no value (`--time_based`, a bare `time_based` line).
pub fn is_flag(key: &str) -> bool {
    matches!(key, "time_based" | "group_reporting" | "norandommap")
}

/// fio's sizes with kb_base=1024: a number with an optional k, m, g, t suffix (and an
/// optional trailing b): 4k = 4096.
pub fn parse_size(v: &str) -> Option<u64> {
    let s = v.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').unwrap_or(&s);
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        't' => (&s[..s.len() - 1], 1 << 40),
        c if c.is_ascii_digit() => (s, 1),
        _ => return None,
    };
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// fio's times: seconds by default, or with us, ms, s, m, h, d.
pub fn parse_time(v: &str) -> Option<Ns> {
    let s = v.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..split].parse().ok()?;
    let mult = match &s[split..] {
        "" | "s" => NS_PER_SEC,
        "us" | "usec" => NS_PER_US,
        "ms" | "msec" => NS_PER_MS,
        "m" | "min" => 60 * NS_PER_SEC,
        "h" => 3600 * NS_PER_SEC,
        "d" => 86400 * NS_PER_SEC,
        _ => return None,
    };
    n.checked_mul(mult)
}

fn parse_bool(key: &str, v: &str) -> Result<bool, String> {
    match v {
        "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err(format!("fio: {key}={v}: expected 0 or 1")),
    }
}

fn parse_u32(key: &str, v: &str, lo: u32, hi: u32) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!("fio: {key}={v}: expected a whole number from {lo} to {hi}")),
    }
}

fn parse_dist(v: &str) -> Result<Dist, String> {
    let bad = || format!("fio: random_distribution={v}: expected random, zipf:THETA (THETA > 0, not 1), pareto:H (0 < H < 1) or normal:PERCENT");
    if v == "random" {
        return Ok(Dist::Random);
    }
    let (kind, arg) = v.split_once(':').ok_or_else(bad)?;
    let x: f64 = arg.parse().map_err(|_| bad())?;
    if !x.is_finite() {
        return Err(bad());
    }
    match kind {
        // fio refuses theta == 1 (zipf's normalisation diverges) and needs theta > 0.
        "zipf" if x > 0.0 && x != 1.0 => Ok(Dist::Zipf(x)),
        "pareto" if x > 0.0 && x < 1.0 => Ok(Dist::Pareto(x)),
        "normal" if (0.0..=100.0).contains(&x) => Ok(Dist::Normal(x)),
        _ => Err(bad()),
    }
}

impl JobOpts {
    /// Apply one option. `value` is None for a bare flag.
    pub fn set(&mut self, key: &str, value: Option<&str>) -> Result<(), String> {
        let key = key.replace('-', "_");
        let key = key.as_str();
        let v = match value {
            Some(v) => v.trim(),
            None if is_flag(key) => "1",
            None => {
                if option_known(key) {
                    return Err(format!("fio: option '{key}' needs a value ({key}=...)"));
                }
                return Err(format!("fio: unknown option '{key}' (accepted: {ACCEPTED})"));
            }
        };
        match key {
            "name" => self.name = v.to_string(),
            "rw" | "readwrite" => {
                self.rw = match v {
                    "read" => Rw::Read,
                    "write" => Rw::Write,
                    "randread" => Rw::RandRead,
                    "randwrite" => Rw::RandWrite,
                    "rw" | "readwrite" => Rw::ReadWrite,
                    "randrw" => Rw::RandRw,
                    "trim" => Rw::Trim,
                    "randtrim" => Rw::RandTrim,
                    "trimwrite" => Rw::TrimWrite,
                    "randtrimwrite" => Rw::RandTrimWrite,
                    _ => return Err(format!("fio: rw={v}: accepted: read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite")),
                }
            }
            "bs" | "blocksize" => match parse_size(v) {
                Some(n) if n > 0 && n <= 1 << 30 => self.bs = n,
                _ => return Err(format!("fio: bs={v}: expected a size such as 4k, 64k, 1m (up to 1g; one size for reads and writes)")),
            },
            "size" => match parse_size(v) {
                Some(n) if n > 0 => self.size = Some(n),
                _ => return Err(format!("fio: size={v}: expected a size such as 64m or 1g (percentages are not modelled)")),
            },
            "filename" => {
                if v.is_empty() || v.contains(':') {
                    return Err(format!("fio: filename={v}: expected one file name (several files joined with ':' are not modelled)"));
                }
                self.filename = Some(v.to_string())
            }
            "directory" => self.directory = Some(v.to_string()),
            "direct" => self.direct = parse_bool(key, v)?,
            "buffered" => self.direct = !parse_bool(key, v)?,
            "ioengine" => {
                self.engine = match v {
                    "psync" => Engine::Psync,
                    "sync" => Engine::Sync,
                    "pvsync" => Engine::Pvsync,
                    "libaio" => Engine::Libaio,
                    "io_uring" => Engine::IoUring,
                    "mmap" => Engine::Mmap,
                    _ => return Err(format!("fio: ioengine={v}: accepted: psync, sync, pvsync, libaio, io_uring, mmap")),
                }
            }
            "iodepth" => self.iodepth = parse_u32(key, v, 1, 256)?,
            "numjobs" => self.numjobs = parse_u32(key, v, 1, 64)?,
            "runtime" | "timeout" => match parse_time(v) {
                Some(t) if t > 0 => self.runtime = Some(t),
                _ => return Err(format!("fio: runtime={v}: expected a time such as 2, 10s, 500ms, 1m")),
            },
            "ramp_time" => match parse_time(v) {
                Some(t) => self.ramp_time = t,
                None => return Err(format!("fio: ramp_time={v}: expected a time such as 1, 2s, 500ms")),
            },
            "time_based" => self.time_based = parse_bool(key, v)?,
            "rwmixread" => self.rwmixread = parse_u32(key, v, 0, 100)?,
            "rwmixwrite" => self.rwmixread = 100 - parse_u32(key, v, 0, 100)?,
            "fsync" => match v.parse::<u64>() {
                Ok(n) => self.fsync = n,
                Err(_) => return Err(format!("fio: fsync={v}: expected a number of writes between fsync calls (0: none)")),
            },
            "invalidate" => self.invalidate = parse_bool(key, v)?,
            "random_distribution" => self.dist = parse_dist(v)?,
            "norandommap" => self.norandommap = parse_bool(key, v)?,
            "randrepeat" | "rand_repeatable" => self.randrepeat = parse_bool(key, v)?,
            "randseed" => match v.parse::<u64>().ok().or_else(|| v.strip_prefix("0x").and_then(|h| u64::from_str_radix(h, 16).ok())) {
                Some(n) => self.randseed = Some(n),
                None => return Err(format!("fio: randseed={v}: expected a whole number")),
            },
            "fadvise_hint" => {
                self.fadvise_hint = match v {
                    "0" | "false" => FadviseHint::None,
                    "1" | "true" => FadviseHint::ByPattern,
                    "sequential" => FadviseHint::Sequential,
                    "random" => FadviseHint::Random,
                    _ => return Err(format!("fio: fadvise_hint={v}: accepted: 0, 1, sequential, random")),
                }
            }
            "group_reporting" => self.group_reporting = parse_bool(key, v)?,
            _ => return Err(format!("fio: unknown option '{key}' (accepted: {ACCEPTED})")),
        }
        if key != "name" {
            self.given.push((key.to_string(), v.to_string()));
        }
        Ok(())
    }

    /// setup_random_seeds: the seed of a repeatable job (randrepeat=1, or randseed given)
    /// from rand_seed and the job's number in the run (`thread_number`, from 1); None
    /// when the job seeds from the system's entropy.
    pub fn repeatable_seed(&self, thread_number: u64) -> Option<u64> {
        if !self.randrepeat && self.randseed.is_none() {
            return None;
        }
        let mut seed = self.randseed.unwrap_or(0x89);
        for _ in 0..4 {
            seed = seed.wrapping_mul(0x9e37_0001);
        }
        Some(seed.wrapping_mul(thread_number))
    }

    /// Checks across options, made once a job is complete (fio's fixup_options).
    pub fn check(&self) -> Result<(), String> {
        let n = &self.name;
        if self.size.is_none() {
            return Err(format!("fio: job '{n}': give size= (the size of the file the job works on)"));
        }
        let size = self.size.unwrap_or(0);
        if size < self.bs {
            return Err(format!("fio: job '{n}': size ({size}) is smaller than bs ({})", self.bs));
        }
        if self.direct && self.bs % 512 != 0 {
            return Err(format!("fio: job '{n}': direct=1 needs bs to be a multiple of 512 (O_DIRECT alignment), got {}", self.bs));
        }
        if self.engine == Engine::Mmap && self.bs % 4096 != 0 && (self.direct || self.fsync > 0) {
            // fio_mmapio_init: msync works on whole pages.
            return Err(format!("fio: job '{n}': mmap options dictate a minimum block size of 4096 bytes (direct=1 or fsync= with ioengine=mmap)"));
        }
        if self.time_based && self.runtime.is_none() {
            return Err(format!("fio: job '{n}': time_based needs runtime="));
        }
        Ok(())
    }
}

fn option_known(key: &str) -> bool {
    matches!(
        key,
        "name" | "rw" | "readwrite" | "bs" | "blocksize" | "size" | "filename" | "directory" | "direct" | "buffered" | "ioengine"
            | "iodepth" | "numjobs" | "runtime" | "timeout" | "ramp_time" | "time_based" | "rwmixread" | "rwmixwrite" | "fsync"
            | "invalidate" | "random_distribution" | "norandommap" | "randrepeat" | "rand_repeatable" | "randseed" | "fadvise_hint"
            | "group_reporting"
    )
}

/// A job file (INI): `[global]` sets defaults for the jobs after it; each other `[section]`
/// is a job named after it; `key=value` or a bare flag per line; `;` and `#` start
/// comments. Errors name `file:line`.
pub fn parse_job_file(file: &str, text: &str, base: &JobOpts) -> Result<Vec<JobOpts>, String> {
    let mut global = base.clone();
    let mut jobs: Vec<JobOpts> = Vec::new();
    let mut cur: Option<JobOpts> = None;
    let mut in_global = false;
    for (i, raw) in text.lines().enumerate() {
        let at = |m: String| format!("{file}:{}: {}", i + 1, m.trim_start_matches("fio: "));
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(sec) = line.strip_prefix('[') {
            let Some(sec) = sec.strip_suffix(']') else {
                return Err(at(format!("fio: bad section line '{line}' (expected [name])")));
            };
            let sec = sec.trim();
            if sec.is_empty() {
                return Err(at("fio: empty section name".into()));
            }
            if let Some(j) = cur.take() {
                jobs.push(j);
            }
            if sec == "global" {
                in_global = true;
            } else {
                in_global = false;
                let mut j = global.clone();
                j.name = sec.to_string();
                cur = Some(j);
            }
            continue;
        }
        let (k, v) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        let target = if in_global {
            &mut global
        } else {
            match cur.as_mut() {
                Some(j) => j,
                None => return Err(at(format!("fio: option '{k}' outside a section (start with [global] or [jobname])"))),
            }
        };
        if k == "name" {
            return Err(at("fio: name= in a job file: the section header names the job".into()));
        }
        target.set(k, v).map_err(at)?;
    }
    if let Some(j) = cur.take() {
        jobs.push(j);
    }
    if jobs.is_empty() {
        return Err(format!("{file}: no jobs defined (add a [jobname] section)"));
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times() {
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("64m"), Some(64 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("4kb"), Some(4096));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("4x"), None);
        assert_eq!(parse_time("2"), Some(2 * NS_PER_SEC));
        assert_eq!(parse_time("500ms"), Some(500 * NS_PER_MS));
        assert_eq!(parse_time("1m"), Some(60 * NS_PER_SEC));
    }

    #[test]
    fn job_file_with_global_and_two_jobs() {
        let text = "; a comment\n[global]\nrw=randread\nbs=4k\nsize=8m\ngroup_reporting\n\n[a]\nfilename=fa\n[b]\nfilename=fb\nrw=randwrite\n";
        let jobs = parse_job_file("j.fio", text, &JobOpts::default()).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!((jobs[0].name.as_str(), jobs[0].rw, jobs[0].size), ("a", Rw::RandRead, Some(8 << 20)));
        assert_eq!((jobs[1].name.as_str(), jobs[1].rw), ("b", Rw::RandWrite));
        assert!(jobs[0].group_reporting && jobs[1].group_reporting);
        assert_eq!(jobs[1].filename.as_deref(), Some("fb"));
    }

    #[test]
    fn job_file_errors_name_the_line() {
        let e = parse_job_file("j.fio", "[global]\nbs=4k\n[a]\nfoo=1\n", &JobOpts::default()).unwrap_err();
        assert!(e.starts_with("j.fio:4: unknown option 'foo'"), "{e}");
        let e = parse_job_file("j.fio", "rw=read\n", &JobOpts::default()).unwrap_err();
        assert!(e.starts_with("j.fio:1:"), "{e}");
        let e = parse_job_file("j.fio", "[a]\nioengine=posixaio\n", &JobOpts::default()).unwrap_err();
        assert!(e.starts_with("j.fio:2: ioengine=posixaio: accepted: psync, sync, pvsync, libaio, io_uring, mmap"), "{e}");
    }
}
