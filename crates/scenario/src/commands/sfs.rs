//! The NFS server's commands: `rpc.nfsd N` (nfs-utils: the number of server threads) and
//! `sfs` (the SPEC SFS 3.0 load generator, NFSv3, driving the server from M load
//! processes on the clients; docs/nfs.md). The server and the load are the kernel's
//! (crates/kernel/src/fs/nfsd.rs); `sfs` waits for its run and prints SFS's report.

use memtwin_kernel::fs::nfsd::{NfsProc, SfsConfig, NFS3_PROCS, SFS97_ACCESS_PCT, SFS97_FILES_PER_DIR, SFS97_FILE_SIZES, SFS97_MB_PER_OPS, SFS97_MIX};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};

/// rpc.nfsd NPROC: start (or stop) server threads.
pub struct RpcNfsd {
    n: u32,
}

impl RpcNfsd {
    pub fn parse(args: &[String]) -> Result<RpcNfsd, String> {
        let usage = "usage: rpc.nfsd NPROC (the number of nfsd threads, 0 to stop them)";
        match args {
            [n] => n.parse::<u32>().ok().filter(|&n| n <= 8192).map(|n| RpcNfsd { n }).ok_or(format!("rpc.nfsd: invalid thread count '{n}' ({usage})")),
            _ => Err(format!("rpc.nfsd: {usage}")),
        }
    }
}

impl Program for RpcNfsd {
    fn step(&mut self, k: &mut Kernel, _me: TaskId) -> Step {
        k.nfsd_set_threads(self.n);
        Step::Exit(0)
    }
}

/// sfs: one SFS run against the server.
pub struct Sfs {
    ops: u64,
    procs: u32,
    clients: u32,
    runtime: Ns,
    warmup: Ns,
    mix: Vec<(NfsProc, u32)>,
    default_mix: bool,
    storm: bool,
    files: Option<u64>,
    access_pct: u64,
    export: String,
    seed: u64,
    started: bool,
    created_kb: u64,
}

const USAGE: &str = "sfs [--ops N|-l N] [--procs N|-p N] [--clients N] [--runtime S|-t S] [--warmup S|-w S] [--mix op=pct,...] [--files N] [--access-pct P] [--export DIR] [--seed N] [--storm]";

fn num<T: std::str::FromStr>(opt: &str, v: Option<&String>) -> Result<T, String> {
    let v = v.ok_or(format!("sfs: option '{opt}' needs a value ({USAGE})"))?;
    v.parse::<T>().map_err(|_| format!("sfs: invalid value '{v}' for '{opt}' ({USAGE})"))
}

impl Sfs {
    pub fn parse(args: &[String]) -> Result<Sfs, String> {
        let mut s = Sfs {
            ops: 1000,
            procs: 4,
            clients: 1,
            // sfs_rc's defaults: RUNTIME=300, WARMUP_TIME=300.
            runtime: 300 * NS_PER_SEC,
            warmup: 300 * NS_PER_SEC,
            mix: SFS97_MIX.to_vec(),
            default_mix: true,
            storm: false,
            files: None,
            access_pct: SFS97_ACCESS_PCT,
            export: "/export".into(),
            seed: 1,
            started: false,
            created_kb: 0,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--ops" | "-l" | "--load" => s.ops = num(a, it.next())?,
                "--procs" | "-p" => s.procs = num(a, it.next())?,
                "--clients" => s.clients = num(a, it.next())?,
                "--runtime" | "-t" => s.runtime = (num::<f64>(a, it.next())? * NS_PER_SEC as f64) as Ns,
                "--warmup" | "-w" => s.warmup = (num::<f64>(a, it.next())? * NS_PER_SEC as f64) as Ns,
                "--files" => s.files = Some(num(a, it.next())?),
                "--access-pct" => s.access_pct = num(a, it.next())?,
                "--export" => s.export = it.next().ok_or(format!("sfs: option '{a}' needs a value ({USAGE})"))?.clone(),
                "--seed" => s.seed = num(a, it.next())?,
                "--storm" => s.storm = true,
                "--mix" => {
                    let v = it.next().ok_or(format!("sfs: option '--mix' needs a value ({USAGE})"))?;
                    let mut mix = Vec::new();
                    for part in v.split(',') {
                        let (name, pct) = part.split_once('=').ok_or(format!("sfs: invalid mix entry '{part}' (op=percent)"))?;
                        let op = NfsProc::from_name(name).filter(|p| p.modelled()).ok_or(format!(
                            "sfs: unsupported mix operation '{name}' (supported: {})",
                            NfsProc::ALL.iter().filter(|p| p.modelled()).map(|p| p.name()).collect::<Vec<_>>().join(", ")
                        ))?;
                        let pct: u32 = pct.parse().map_err(|_| format!("sfs: invalid percentage '{pct}' in mix entry '{part}'"))?;
                        mix.push((op, pct));
                    }
                    if mix.iter().map(|m| m.1).sum::<u32>() == 0 {
                        return Err("sfs: the mix has no operations".into());
                    }
                    s.mix = mix;
                    s.default_mix = false;
                }
                o => return Err(format!("sfs: unsupported option '{o}' ({USAGE})")),
            }
        }
        if s.procs == 0 || s.clients == 0 {
            return Err("sfs: --procs and --clients must be at least 1".into());
        }
        if !s.storm && s.ops == 0 {
            return Err("sfs: --ops must be at least 1".into());
        }
        if s.access_pct == 0 || s.access_pct > 100 {
            return Err("sfs: --access-pct must be 1 to 100".into());
        }
        if !s.storm && s.runtime == 0 {
            return Err("sfs: --runtime must be positive".into());
        }
        if s.storm {
            s.warmup = 0;
        }
        Ok(s)
    }

    /// The mean size of SFS's files, bytes.
    fn mean_file_size() -> f64 {
        SFS97_FILE_SIZES.iter().map(|&(s, p)| s as f64 * p as f64 / 100.0).sum()
    }

    /// Find the exported tree, or create the file set SFS sizes from the requested load.
    fn file_set(&mut self, k: &mut Kernel) -> Result<(u32, u64), String> {
        let at = memtwin_kernel::fs::normalize("/", &self.export);
        if let Some((sb, rest)) = k.vfs.tree_of(&at) {
            if !rest.is_empty() {
                return Err(format!("sfs: {at} is inside the tree at {}; export the tree's own directory", k.vfs.sbs[sb].tree.as_ref().unwrap().spec.at));
            }
            let t = k.vfs.sbs[sb].tree.as_ref().unwrap();
            self.created_kb = (t.spec.files as f64 * t.mean_generated_size() / 1024.0) as u64;
            return Ok((sb as u32, t.spec.files));
        }
        // SFS's INIT phase: 10 MB per requested op/s in files of its size distribution,
        // 30 per directory. The files exist on the disk; the caches start cold.
        let files = match self.files {
            Some(n) => n,
            None => ((self.ops * SFS97_MB_PER_OPS * 1_000_000) as f64 / Self::mean_file_size()).ceil() as u64,
        };
        if files == 0 || files > (1 << 31) {
            return Err(format!("sfs: a file set of {files} files is not supported (1 to 2^31)"));
        }
        let spec = memtwin_machine::TreeSpec {
            at: at.clone(),
            files,
            files_per_dir: SFS97_FILES_PER_DIR,
            dirs_per_dir: SFS97_FILES_PER_DIR,
            file_size: 4096,
            seed: self.seed,
        };
        let sb = k.add_tree(spec, Some(SFS97_FILE_SIZES.to_vec()), 1).map_err(|e| format!("sfs: cannot create the file set: {e}"))?;
        self.created_kb = (files as f64 * Self::mean_file_size() / 1024.0) as u64;
        Ok((sb as u32, files))
    }

    fn report(&self, k: &Kernel) -> String {
        let l = k.nfsd.load.as_ref().unwrap();
        let (ops, len) = l.measured();
        let secs = len as f64 / NS_PER_SEC as f64;
        let mix_total: u32 = self.mix.iter().map(|m| m.1).sum::<u32>().max(1);
        let total_time: f64 = l.stats.iter().map(|s| s.sum_ns).sum();
        let mut out = String::new();
        let rule = format!("{}\n", "-".repeat(100));
        out.push_str(&rule);
        out.push_str("    NFS V3     Target  Actual      NFS Op    NFS Op      Mean   Std Dev  Std Error   Pcnt\n");
        out.push_str("      Op        NFS     NFS      Success     Error  Response  Response  of Mean,95%   of\n");
        out.push_str("     Type       Mix     Mix        Count     Count      Time      Time  Confidence  Total\n");
        out.push_str("                Pcnt    Pcnt                         Msec/Op   Msec/Op  +- Msec/Op   Time\n");
        out.push_str(&rule);
        for p in NfsProc::ALL {
            let s = &l.stats[p as usize];
            let target = if self.storm {
                if matches!(p, NfsProc::Lookup | NfsProc::Getattr) { 50.0 } else { 0.0 }
            } else {
                self.mix.iter().filter(|m| m.0 == p).map(|m| m.1).sum::<u32>() as f64 * 100.0 / mix_total as f64
            };
            let actual = if ops == 0 { 0.0 } else { s.ok as f64 * 100.0 / ops as f64 };
            let ci = if s.ok > 1 { 1.96 * s.std_ms() / (s.ok as f64).sqrt() } else { 0.0 };
            let pct_time = if total_time > 0.0 { s.sum_ns * 100.0 / total_time } else { 0.0 };
            out.push_str(&format!(
                "{:>12} {:>7.0}% {:>6.1}% {:>12} {:>9} {:>9.2} {:>9.2} {:>10.2} {:>6.1}%\n",
                p.name(),
                target,
                actual,
                s.ok,
                s.errors,
                s.mean_ms(),
                s.std_ms(),
                ci,
                pct_time
            ));
        }
        out.push_str(&rule);
        let _ = NFS3_PROCS;
        let avg = if ops == 0 { 0.0 } else { total_time / ops as f64 / 1e6 };
        out.push('\n');
        out.push_str("        ---------------------------------------------------------\n");
        out.push_str("        |     SPEC SFS VERSION 3.0 AGGREGATE RESULTS SUMMARY     |\n");
        out.push_str("        ---------------------------------------------------------\n");
        let tput = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
        out.push_str(&format!("NFS V3 THROUGHPUT: {:>7.0} Ops/Sec   AVG. RESPONSE TIME: {:>7.1} Msec/Op\n", tput, avg));
        out.push_str("TCP PROTOCOL\n");
        let mixname = if self.storm { "[ attribute storm: lookup + getattr of every file ]" } else if self.default_mix { "[ SFS default ]" } else { "[ --mix ]" };
        out.push_str(&format!("NFS MIXFILE: {mixname}\n"));
        if self.storm {
            out.push_str("AGGREGATE REQUESTED LOAD: as fast as the server replies\n");
        } else {
            out.push_str(&format!("AGGREGATE REQUESTED LOAD: {} Ops/Sec\n", self.ops));
        }
        out.push_str(&format!("TOTAL NFS OPERATIONS: {:>9}      TEST TIME: {:.0} Sec\n", ops, secs));
        out.push_str(&format!("NUMBER OF SFS CLIENTS: {}\n", self.clients));
        out.push_str(&format!("TOTAL FILE SET SIZE CREATED: {} KB\n", self.created_kb));
        if self.storm {
            out.push_str(&format!("FILES STATTED: {}   TOTAL TIME OF THE STORM: {:.3} Sec\n", l.files_done, secs));
        } else {
            out.push_str(&format!("TOTAL FILE SET SIZE ACCESSED: {} KB\n", self.created_kb * self.access_pct / 100));
        }
        out
    }
}

impl Program for Sfs {
    fn killed(&mut self, k: &mut Kernel, _me: TaskId) {
        k.sfs_stop();
    }

    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.started {
            self.started = true;
            let (sb, files) = match self.file_set(k) {
                Ok(x) => x,
                Err(e) => {
                    k.eprint(me, &format!("{e}\n"));
                    return Step::Exit(1);
                }
            };
            let cfg = SfsConfig {
                ops: if self.storm { 0 } else { self.ops },
                procs: self.procs * self.clients,
                clients: self.clients,
                warmup: self.warmup,
                runtime: if self.storm { Ns::MAX / 4 } else { self.runtime },
                mix: if self.storm { Vec::new() } else { self.mix.clone() },
                storm: self.storm,
                sb,
                files,
                access_pct: if self.storm { 100 } else { self.access_pct },
                seed: self.seed,
            };
            if let Err(e) = k.sfs_start(cfg) {
                k.eprint(me, &format!("sfs: {e}\n"));
                return Step::Exit(1);
            }
            let what = if self.storm { "attribute storm".to_string() } else { format!("{} Ops/Sec", self.ops) };
            k.print(me, &format!(
                "sfs: {} clients x {} load processes, {what}, file set {} files on {}\n",
                self.clients,
                self.procs,
                files,
                memtwin_kernel::fs::normalize("/", &self.export)
            ));
        }
        if k.nfsd.load.as_ref().is_some_and(|l| l.done()) {
            let r = self.report(k);
            k.print(me, &r);
            return Step::Exit(0);
        }
        Step::SleepUntil { t: k.now + NS_PER_SEC / 10, io: false }
    }
}
