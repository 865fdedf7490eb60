//! The in-kernel NFS server and the load that drives it (docs/nfs.md).
//!
//! Server (fs/nfsd, net/sunrpc/svc.c, svc_xprt.c): `rpc.nfsd N` starts N kernel threads
//! (`nfsd`, nfsd_svc -> svc_set_num_threads), each looping in nfsd() -> svc_recv ->
//! svc_process: an RPC that arrives is queued on the transport (svc_xprt_enqueue) and the
//! first idle thread of the pool is woken (svc_pool's sp_all_threads, an idle thread
//! sleeps in svc_recv); a thread that finds nothing queued goes idle. Each RPC costs the
//! receive path per segment (`[net] rx_packet_ns`) and the copy of its payload, the VFS
//! work of the procedure (fs/namei.rs: dentries, inodes, page cache, slab, with every
//! wait — block reads, direct reclaim, slab reclaim — taken by the thread), and the send
//! path for the reply (the same cost per segment: taken as symmetric).
//!
//! Network: the server's link (`[net] link_mbit`, `rtt_us`) carries requests in and
//! replies out, each direction one FIFO at the line rate (framing per MTU-sized segment
//! counted), plus half the round trip each way.
//!
//! Load (SPEC SFS 3.0 / SFS97_R1, NFSv3): M load processes on the clients, each with one
//! request outstanding at a time, each paced to its share of the requested rate (the
//! think time between requests is drawn around ops / M, and a process that fell behind
//! sends at once); the operation mix and the file set are SFS's (docs/nfs.md cites them).
//! The clients' own CPUs are not modelled (they are other machines).

use super::namei::{Fh, VfsErr};
use super::read_write::Errno;
use super::vfs::Node;
use crate::task::{Program, Step};
use crate::Kernel;
use memtwin_engine::{Ns, Rng, TaskId, NS_PER_SEC};
use std::collections::VecDeque;

/// NFSv3 procedures (RFC 1813), by procedure number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum NfsProc {
    Null = 0,
    Getattr,
    Setattr,
    Lookup,
    Access,
    Readlink,
    Read,
    Write,
    Create,
    Mkdir,
    Symlink,
    Mknod,
    Remove,
    Rmdir,
    Rename,
    Link,
    Readdir,
    Readdirplus,
    Fsstat,
    Fsinfo,
    Pathconf,
    Commit,
}

pub const NFS3_PROCS: usize = 22;

impl NfsProc {
    pub const ALL: [NfsProc; NFS3_PROCS] = [
        NfsProc::Null,
        NfsProc::Getattr,
        NfsProc::Setattr,
        NfsProc::Lookup,
        NfsProc::Access,
        NfsProc::Readlink,
        NfsProc::Read,
        NfsProc::Write,
        NfsProc::Create,
        NfsProc::Mkdir,
        NfsProc::Symlink,
        NfsProc::Mknod,
        NfsProc::Remove,
        NfsProc::Rmdir,
        NfsProc::Rename,
        NfsProc::Link,
        NfsProc::Readdir,
        NfsProc::Readdirplus,
        NfsProc::Fsstat,
        NfsProc::Fsinfo,
        NfsProc::Pathconf,
        NfsProc::Commit,
    ];

    /// The name SFS prints (lower case, as in its per-operation table).
    pub fn name(self) -> &'static str {
        [
            "null", "getattr", "setattr", "lookup", "access", "readlink", "read", "write", "create", "mkdir", "symlink", "mknod",
            "remove", "rmdir", "rename", "link", "readdir", "readdirplus", "fsstat", "fsinfo", "pathconf", "commit",
        ][self as usize]
    }

    pub fn from_name(s: &str) -> Option<NfsProc> {
        NfsProc::ALL.iter().copied().find(|p| p.name() == s)
    }

    /// Whether the server carries this procedure out in the model (the ones the SFS 3.0
    /// mix uses; the others are refused as a mix entry).
    pub fn modelled(self) -> bool {
        matches!(
            self,
            NfsProc::Getattr
                | NfsProc::Setattr
                | NfsProc::Lookup
                | NfsProc::Access
                | NfsProc::Readlink
                | NfsProc::Read
                | NfsProc::Write
                | NfsProc::Create
                | NfsProc::Remove
                | NfsProc::Readdir
                | NfsProc::Readdirplus
                | NfsProc::Fsstat
                | NfsProc::Commit
        )
    }
}

/// The SPEC SFS 3.0 (SFS97_R1) NFSv3 mix, percent (docs/nfs.md cites it). The table sums
/// to 99: each operation is drawn in proportion to its share of the sum.
pub const SFS97_MIX: [(NfsProc, u32); 13] = [
    (NfsProc::Lookup, 27),
    (NfsProc::Read, 18),
    (NfsProc::Write, 9),
    (NfsProc::Getattr, 11),
    (NfsProc::Readlink, 7),
    (NfsProc::Readdir, 2),
    (NfsProc::Create, 1),
    (NfsProc::Remove, 1),
    (NfsProc::Fsstat, 1),
    (NfsProc::Setattr, 1),
    (NfsProc::Readdirplus, 9),
    (NfsProc::Access, 7),
    (NfsProc::Commit, 5),
];

/// SFS 2.0/3.0's file-size distribution (size, percent of files): docs/nfs.md.
pub const SFS97_FILE_SIZES: [(u64, u32); 10] = [
    (1 << 10, 33),
    (2 << 10, 21),
    (4 << 10, 13),
    (8 << 10, 10),
    (16 << 10, 8),
    (32 << 10, 5),
    (64 << 10, 4),
    (128 << 10, 3),
    (256 << 10, 2),
    (1 << 20, 1),
];

/// SFS's data set: 10 MB per requested op/s; 10 % of the files are accessed; 30 files per
/// directory; SFS97 reads and writes 8 KB per RPC (docs/nfs.md).
pub const SFS97_MB_PER_OPS: u64 = 10;
pub const SFS97_ACCESS_PCT: u64 = 10;
pub const SFS97_FILES_PER_DIR: u64 = 30;
pub const SFS97_IO_SIZE: u64 = 8 << 10;

/// RPC record marking, RPC call/reply headers with AUTH_UNIX credentials and the NFSv3
/// arguments or results without data: ~128 bytes each way (RFC 1831, RFC 1813).
const RPC_OVERHEAD: u64 = 128;
/// An NFSv3 file handle, fattr3 and the per-entry part of READDIR(PLUS) results.
const READDIR_ENTRY: u64 = 24;
const READDIRPLUS_ENTRY: u64 = 24 + 84 + 8 + 36;
/// Framing per segment on the wire: Ethernet (38 with preamble and gap), IP, TCP with
/// timestamps.
const WIRE_PER_SEGMENT: u64 = 38 + 20 + 20 + 12;

/// DRAM misses of the RPC layer per request, beyond the socket layer's per-segment cost
/// and the copies (`net_cost`) and the VFS work: the structures the 2.6.39 path touches
/// that are not in the thread's own cache. Receive: svc_xprt_enqueue / svc_xprt_dequeue
/// (the pool and the transport, shared by every thread) 2; svc_tcp_recvfrom (the socket,
/// the skb and its shared info) 3; svc_process -> svcauth_unix_accept (the ip_map and
/// unix_gid cache entries: hash bucket and entry) 3; fh_verify -> rqst_exp_find (the
/// svc_expkey and svc_export cache entries: bucket and entry each) 4, exportfs_decode_fh
/// -> ext3_nfs_get_inode -> iget_locked (the inode hash bucket and the inode) 2. Reply:
/// svc_send (xpt_mutex) 1, svc_tcp_sendto -> tcp_sendpage (the socket, a new skb from
/// skbuff_head_cache and its data) 3, the reply pages' first lines 1. XDR decoding and
/// encoding run in the thread's own pages (cache hits).
const RPC_PATH_MISSES: u64 = 2 + 3 + 3 + 4 + 2 + 1 + 3 + 1;
/// nfsd_cache_lookup for the procedures the duplicate reply cache keeps (RC_REPLSTAT /
/// RC_REPLBUFF: SETATTR, WRITE, CREATE, REMOVE; RC_NOCACHE returns at once):
/// the hash bucket, the entry, the LRU's neighbours.
const DRC_MISSES: u64 = 3;

/// Marks an `Event::NfsRpc` as the client's send rather than the server's receive.
const SEND: u32 = 1 << 31;

/// Per-procedure statistics of the measured phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpStat {
    pub ok: u64,
    pub errors: u64,
    pub sum_ns: f64,
    pub sum_sq: f64,
    pub max_ns: Ns,
}

impl OpStat {
    pub fn mean_ms(&self) -> f64 {
        if self.ok == 0 { 0.0 } else { self.sum_ns / self.ok as f64 / 1e6 }
    }
    pub fn std_ms(&self) -> f64 {
        if self.ok < 2 {
            return 0.0;
        }
        let n = self.ok as f64;
        let m = self.sum_ns / n;
        ((self.sum_sq / n - m * m).max(0.0) * n / (n - 1.0)).sqrt() / 1e6
    }
}

/// What a run of the load is configured to do.
#[derive(Clone, Debug)]
pub struct SfsConfig {
    /// Requested ops/s over all processes (0: storm, as fast as replies come).
    pub ops: u64,
    pub procs: u32,
    pub clients: u32,
    pub warmup: Ns,
    pub runtime: Ns,
    /// Mix (procedure, weight); empty in storm mode.
    pub mix: Vec<(NfsProc, u32)>,
    /// Storm: every file of the set once, LOOKUP then GETATTR, no think time.
    pub storm: bool,
    /// The exported tree's super block, and its files.
    pub sb: u32,
    pub files: u64,
    /// Percentage of each process's files it accesses.
    pub access_pct: u64,
    pub seed: u64,
}

/// One load process's state: its outstanding request.
#[derive(Clone, Copy, Debug, Default)]
struct LoadProc {
    /// The file range it owns: [lo, hi).
    lo: u64,
    hi: u64,
    proc_: u8,
    file: u64,
    offset: u64,
    /// When it sent the request, and when it meant to (the pacing schedule).
    sent: Ns,
    due: Ns,
    /// Storm: the next file, and whether its LOOKUP is done (then GETATTR).
    cursor: u64,
    looked_up: bool,
    done: bool,
    /// Files it removed and may create again.
    pool: [u64; 8],
    pool_n: u8,
}

/// The load running against the server.
pub struct SfsLoad {
    pub cfg: SfsConfig,
    procs: Vec<LoadProc>,
    rng: Rng,
    mix_total: u32,
    pub start: Ns,
    pub measure_from: Ns,
    pub end: Ns,
    /// Processes still sending.
    pub active: u32,
    pub in_flight: u32,
    pub stats: [OpStat; NFS3_PROCS],
    /// Storm: when the last reply came.
    pub last_reply: Ns,
    pub files_done: u64,
}

impl SfsLoad {
    pub fn done(&self) -> bool {
        self.active == 0 && self.in_flight == 0
    }
    /// Operations completed in the measured phase, and its length.
    pub fn measured(&self) -> (u64, Ns) {
        let ops = self.stats.iter().map(|s| s.ok).sum();
        let end = if self.cfg.storm { self.last_reply } else { self.end };
        (ops, end.saturating_sub(self.measure_from))
    }
}

/// The server: its threads, the RPCs waiting for one, and the link.
#[derive(Default)]
pub struct Nfsd {
    pub threads: Vec<TaskId>,
    /// Threads asleep in svc_recv, most recently idle last.
    idle: Vec<TaskId>,
    /// Threads asked to stop (rpc.nfsd with a smaller count): they exit when idle.
    pub to_stop: u32,
    /// Load processes whose request waits for a thread (svc_xprt_enqueue).
    queue: VecDeque<u32>,
    /// When each direction of the server's link is free: requests in, replies out.
    link_in_free: Ns,
    link_out_free: Ns,
    pub load: Option<SfsLoad>,
    /// RPCs served since the threads started (/proc/net/rpc/nfsd "rpc" calls).
    pub calls: u64,
}

/// The stages of `Kernel::nfsd_hint`.
#[derive(Clone, Copy)]
enum HintStage {
    Buckets,
    Chains,
    Dentries,
}

/// An nfsd thread: takes the next queued RPC, carries it out (resumable: the VFS step
/// may wait), replies, and goes idle when nothing is queued.
#[derive(Default)]
pub struct NfsdThread {
    cur: Option<u32>,
}

impl Program for NfsdThread {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let p = match self.cur {
            Some(p) => p,
            None => match k.nfsd.queue.pop_front() {
                Some(p) => {
                    // The next two requests' lookups, one stage each (`nfsd_hint`).
                    if let Some(&next) = k.nfsd.queue.front() {
                        k.nfsd_hint(next, HintStage::Dentries);
                    }
                    if let Some(&after) = k.nfsd.queue.get(1) {
                        k.nfsd_hint(after, HintStage::Chains);
                    }
                    k.nfsd_recv_cost(me, p);
                    p
                }
                None => {
                    if k.nfsd.to_stop > 0 {
                        k.nfsd.to_stop -= 1;
                        k.nfsd.threads.retain(|&t| t != me);
                        return Step::Exit(0);
                    }
                    k.nfsd.idle.push(me);
                    return Step::Block { io: false };
                }
            },
        };
        self.cur = Some(p);
        match k.nfsd_dispatch(me, p) {
            Ok(err) => {
                self.cur = None;
                k.nfsd_reply(me, p, err);
                // The work charged runs, then the thread looks for the next RPC.
                Step::Cpu { user: 0, sys: 0 }
            }
            Err(step) => step,
        }
    }
}

fn wire_time(bytes: u64, mtu: u64, link_bps: f64) -> Ns {
    let mss = mtu.saturating_sub(52).max(536);
    let segs = bytes.div_ceil(mss).max(1);
    (((bytes + segs * WIRE_PER_SEGMENT) * 8) as f64 / link_bps * 1e9) as Ns
}

impl Kernel {
    /// rpc.nfsd N: run N server threads (nfsd_svc -> svc_set_num_threads): new ones are
    /// started at once; surplus ones stop when they are next idle.
    pub fn nfsd_set_threads(&mut self, n: u32) {
        let have = self.nfsd.threads.len() as u32 - self.nfsd.to_stop.min(self.nfsd.threads.len() as u32);
        if n >= have {
            let cancel = (n - have).min(self.nfsd.to_stop);
            self.nfsd.to_stop -= cancel;
            for _ in 0..(n - have - cancel) {
                let t = self.spawn_task("nfsd", "", true, None, Some(Box::new(NfsdThread::default())));
                self.nfsd.threads.push(t);
            }
        } else {
            self.nfsd.to_stop += have - n;
            // Idle threads look again and stop.
            let idle: Vec<TaskId> = std::mem::take(&mut self.nfsd.idle);
            for t in idle {
                self.wake(t);
            }
        }
    }

    /// Threads running (and not asked to stop).
    pub fn nfsd_threads(&self) -> u32 {
        self.nfsd.threads.len() as u32 - self.nfsd.to_stop.min(self.nfsd.threads.len() as u32)
    }

    /// Start a load against the server. The file set must be a generated tree.
    pub fn sfs_start(&mut self, cfg: SfsConfig) -> Result<(), String> {
        if self.nfsd_threads() == 0 {
            return Err("no nfsd threads are running (start them with rpc.nfsd N)".into());
        }
        if self.nfsd.load.as_ref().is_some_and(|l| !l.done()) {
            return Err("a load is already running".into());
        }
        let per_proc = (cfg.ops as f64 / cfg.procs as f64).max(1e-9);
        let interval = (NS_PER_SEC as f64 / per_proc) as Ns;
        let mut rng = Rng::new(cfg.seed ^ 0x5f53_4653);
        let files = cfg.files;
        let n = cfg.procs as u64;
        let start = self.now;
        let mut procs = Vec::with_capacity(cfg.procs as usize);
        for p in 0..n {
            let (lo, hi) = (p * files / n, (p + 1) * files / n);
            let mut lp = LoadProc { lo, hi, cursor: lo, ..Default::default() };
            // The first request of each process at a random point of its first interval
            // (SFS starts its processes together and lets them drift apart).
            lp.due = start + if cfg.storm { rng.below(1000) } else { rng.below(interval.max(1)) };
            procs.push(lp);
        }
        let mix_total = cfg.mix.iter().map(|m| m.1).sum::<u32>().max(1);
        let end = start + cfg.warmup + cfg.runtime;
        let measure_from = start + cfg.warmup;
        let active = procs.iter().filter(|p| p.hi > p.lo || !cfg.storm).count() as u32;
        let mut load = SfsLoad {
            cfg,
            procs,
            rng,
            mix_total,
            start,
            measure_from,
            end,
            active,
            in_flight: 0,
            stats: [OpStat::default(); NFS3_PROCS],
            last_reply: start,
            files_done: 0,
        };
        // Each process keeps a few of its files removed, so that CREATE has names to
        // create and REMOVE files to remove from the start (SFS's file set has both).
        if !load.cfg.storm && load.cfg.mix.iter().any(|m| m.0 == NfsProc::Create) {
            let sb = load.cfg.sb as usize;
            for lp in &mut load.procs {
                let span = lp.hi - lp.lo;
                for j in 0..4u64.min(span / 2) {
                    let f = lp.hi - 1 - j;
                    if !self.vfs.sbs[sb].tree.as_ref().unwrap().is_symlink(f) {
                        self.vfs.sbs[sb].tree.as_mut().unwrap().removed.insert(f);
                        lp.pool[lp.pool_n as usize] = f;
                        lp.pool_n += 1;
                    }
                }
            }
        }
        self.nfsd.load = Some(load);
        for p in 0..n as u32 {
            let l = self.nfsd.load.as_ref().unwrap();
            if l.cfg.storm && l.procs[p as usize].hi == l.procs[p as usize].lo {
                continue;
            }
            let due = l.procs[p as usize].due;
            self.sfs_send(p, due);
        }
        Ok(())
    }

    /// Stop the load: no new requests (those in flight finish).
    pub fn sfs_stop(&mut self) {
        if let Some(l) = self.nfsd.load.as_mut() {
            l.end = l.end.min(self.now);
        }
    }

    /// Load process `p` sends its next request at `t` (>= now): a client-side event then,
    /// so that requests take the link in the order they are sent.
    fn sfs_send(&mut self, p: u32, t: Ns) {
        self.events.push(t.max(self.now), crate::Event::NfsRpc(p | SEND));
    }

    /// Load process `p` chooses its request now and puts it on the link.
    fn sfs_send_now(&mut self, p: u32) {
        let t = self.now;
        let Some(l) = self.nfsd.load.as_mut() else { return };
        let sb = l.cfg.sb as usize;
        let tree = self.vfs.sbs[sb].tree.as_ref().unwrap();
        let lp = &mut l.procs[p as usize];
        if l.cfg.storm {
            if lp.cursor >= lp.hi {
                lp.done = true;
                l.active -= 1;
                return;
            }
            lp.file = lp.cursor;
            lp.proc_ = if lp.looked_up { NfsProc::Getattr } else { NfsProc::Lookup } as u8;
        } else {
            if t >= l.end {
                lp.done = true;
                l.active -= 1;
                return;
            }
            let mut x = l.rng.below(l.mix_total as u64) as u32;
            let mut op = l.cfg.mix[0].0;
            for &(o, w) in &l.cfg.mix {
                if x < w {
                    op = o;
                    break;
                }
                x -= w;
            }
            // CREATE takes back a name the process removed and REMOVE gives one up: with no
            // name to create the process removes one, with its list full it creates one (the
            // two stay at their combined share of the mix).
            if op == NfsProc::Create && lp.pool_n == 0 {
                op = NfsProc::Remove;
            } else if op == NfsProc::Remove && lp.pool_n as usize == lp.pool.len() {
                op = NfsProc::Create;
            }
            let span = lp.hi - lp.lo;
            let accessed = (span * l.cfg.access_pct).div_ceil(100).clamp(1, span.max(1));
            let per = tree.spec.files_per_dir;
            let pick = |rng: &mut Rng, regular: bool| -> u64 {
                for _ in 0..8 {
                    let f = lp.lo + rng.below(accessed);
                    if tree.is_symlink(f) == !regular && (!regular || !tree.removed.contains(&f)) {
                        return f;
                    }
                }
                lp.lo
            };
            let f = match op {
                NfsProc::Readlink => {
                    // A symlink of the directory of an accessed file.
                    let f = lp.lo + l.rng.below(accessed);
                    let dir0 = f / per * per;
                    let k = tree.symlinks_per_dir.min(per);
                    if k == 0 { f } else { dir0 + per - 1 - l.rng.below(k) }
                }
                NfsProc::Create => {
                    if lp.pool_n > 0 {
                        let i = l.rng.below(lp.pool_n as u64) as usize;
                        let f = lp.pool[i];
                        lp.pool_n -= 1;
                        lp.pool[i] = lp.pool[lp.pool_n as usize];
                        f
                    } else {
                        pick(&mut l.rng, true)
                    }
                }
                NfsProc::Remove => {
                    let f = pick(&mut l.rng, true);
                    if (lp.pool_n as usize) < lp.pool.len() && !tree.removed.contains(&f) {
                        lp.pool[lp.pool_n as usize] = f;
                        lp.pool_n += 1;
                    }
                    f
                }
                NfsProc::Getattr | NfsProc::Lookup | NfsProc::Access | NfsProc::Readdir | NfsProc::Readdirplus | NfsProc::Fsstat => {
                    // An existing file (SFS looks up the names it has created).
                    let mut f = lp.lo + l.rng.below(accessed);
                    for _ in 0..8 {
                        if !tree.removed.contains(&f) {
                            break;
                        }
                        f = lp.lo + l.rng.below(accessed);
                    }
                    f
                }
                _ => pick(&mut l.rng, true),
            };
            lp.file = f;
            lp.proc_ = op as u8;
            if matches!(op, NfsProc::Read | NfsProc::Write) {
                let size = tree.file_size(f);
                let cap = tree.max_generated_size();
                let blocks = if op == NfsProc::Read { size.div_ceil(SFS97_IO_SIZE) } else { size.div_ceil(SFS97_IO_SIZE).min(cap / SFS97_IO_SIZE) };
                lp.offset = l.rng.below(blocks.max(1)) * SFS97_IO_SIZE;
            }
        }
        lp.sent = t;
        let op = NfsProc::ALL[lp.proc_ as usize];
        let bytes = RPC_OVERHEAD + if op == NfsProc::Write { SFS97_IO_SIZE } else { 0 };
        let net = &self.machine.net;
        let wire = wire_time(bytes, net.mtu as u64, net.link_bps);
        let at = t.max(self.nfsd.link_in_free);
        self.nfsd.link_in_free = at + wire;
        let arrive = at + wire + net.rtt_ns / 2;
        l.in_flight += 1;
        self.events.push(arrive.max(self.now), crate::Event::NfsRpc(p));
    }

    /// An RPC arrived (the NIC's interrupt and svc_xprt_enqueue): queued, and the first
    /// idle thread woken.
    pub(crate) fn nfsd_arrive(&mut self, p: u32) {
        if p & SEND != 0 {
            return self.sfs_send_now(p & !SEND);
        }
        self.intr += 1;
        self.nfsd_hint(p, HintStage::Buckets);
        self.nfsd.queue.push_back(p);
        if let Some(t) = self.nfsd.idle.pop() {
            self.wake(t);
        }
    }

    /// A hint for the host (changes nothing): what load process `p`'s request will look up
    /// (its file's and its directory's inode in the inode hash, their dentries, and for a
    /// LOOKUP the name in the dentry hash), asked for in stages while it waits in the
    /// queue, each stage reading what the one before brought in: the inode-hash buckets
    /// when it arrives, the chains' first entries and their aliases when it is second in
    /// the queue, the dentries and the name's bucket when it is next. Lookups in tables of
    /// millions of entries are otherwise one memory latency after another.
    fn nfsd_hint(&self, p: u32, stage: HintStage) {
        let Some(l) = self.nfsd.load.as_ref() else { return };
        let lp = l.procs[p as usize];
        let Some(s) = self.vfs.sbs.get(l.cfg.sb as usize) else { return };
        let Some(t) = s.tree.as_ref() else { return };
        let (file, dir, ord) = t.file_place(lp.file);
        let (file, dir) = (file as u32, dir as u32);
        for ino in [file, dir] {
            match stage {
                HintStage::Buckets => s.icache.prefetch_bucket(ino),
                HintStage::Chains => {
                    if let Some(i) = s.icache.prefetch_chain(ino).filter(|&i| (i as usize) < s.i_alias.len()) {
                        crate::mm::xarray::prefetch(s.i_alias.as_ptr().wrapping_add(i as usize));
                    }
                }
                HintStage::Dentries => {
                    let Some(d) = s.icache.find(ino).and_then(|i| s.i_alias.get(i as usize).copied()) else { continue };
                    s.dcache.prefetch_dentry(d);
                    if ino == dir && NfsProc::ALL[lp.proc_ as usize] == NfsProc::Lookup {
                        s.dcache.prefetch_lookup(d, ord as super::dcache::NameKey);
                    }
                }
            }
        }
    }

    /// svc_recv's work for one request: the receive path per segment and the copy of the
    /// request into the thread's pages; svc_process's decode.
    fn nfsd_recv_cost(&mut self, me: TaskId, p: u32) {
        let Some(l) = self.nfsd.load.as_ref() else { return };
        let op = NfsProc::ALL[l.procs[p as usize].proc_ as usize];
        let bytes = RPC_OVERHEAD + if op == NfsProc::Write { SFS97_IO_SIZE } else { 0 };
        let c = self.net_cost(bytes);
        // nfsd_dispatch: the duplicate reply cache for non-idempotent procedures
        // (nfs3proc.c's pc_cachetype).
        let drc = matches!(op, NfsProc::Setattr | NfsProc::Write | NfsProc::Create | NfsProc::Remove) as u64 * DRC_MISSES;
        self.charge_sys(me, c + (RPC_PATH_MISSES + drc) * self.machine.cpu_model.cache_miss_ns);
        self.nfsd.calls += 1;
    }

    /// CPU for moving `bytes` through the socket layer: per segment and the copy.
    fn net_cost(&self, bytes: u64) -> Ns {
        let net = &self.machine.net;
        let mss = (net.mtu as u64).saturating_sub(52).max(536);
        let segs = bytes.div_ceil(mss).max(1);
        segs * net.rx_packet_ns + (bytes as f64 / self.machine.cpu_model.copy_bw * 1e9) as Ns + (bytes as f64 * net.rx_byte_ns) as Ns
    }

    /// Carry out load process `p`'s request: Ok(None) done, Ok(Some(errno)) failed (an NFS
    /// error status in the reply), Err(step) to wait and call again.
    fn nfsd_dispatch(&mut self, me: TaskId, p: u32) -> Result<Option<Errno>, Step> {
        let Some(l) = self.nfsd.load.as_ref() else { return Ok(None) };
        let lp = l.procs[p as usize];
        let sb = l.cfg.sb;
        let t = self.vfs.sbs[sb as usize].tree.as_ref().unwrap();
        let per = t.spec.files_per_dir;
        let (file, dir, ord) = t.file_place(lp.file);
        let fh = Fh { sb, ino: file };
        let dir = Fh { sb, ino: dir };
        let root = Fh { sb, ino: t.ino_of(Node::Dir { depth: 0, idx: 0 }) };
        // The file's name in its directory ("f<n>"), written in place: most operations
        // go by file handle and never read it.
        let mut buf = [0u8; 24];
        let name = file_name(&mut buf, ord);
        let op = NfsProc::ALL[lp.proc_ as usize];
        let r: Result<(), VfsErr> = match op {
            NfsProc::Getattr => self.vfs_getattr(me, fh).map(drop),
            NfsProc::Setattr => self.vfs_setattr(me, fh, None).map(drop),
            NfsProc::Lookup => self.vfs_lookup(me, dir, name).map(drop),
            NfsProc::Access => self.vfs_access(me, fh).map(drop),
            NfsProc::Readlink => self.vfs_readlink(me, fh).map(drop),
            NfsProc::Read => self.vfs_read(me, fh, lp.offset, SFS97_IO_SIZE).map(drop),
            NfsProc::Write => self.vfs_write(me, fh, lp.offset, SFS97_IO_SIZE).map(drop),
            NfsProc::Create => self.vfs_create(me, dir, name).map(drop),
            NfsProc::Remove => self.vfs_unlink(me, dir, name),
            NfsProc::Readdir => self.vfs_readdir(me, dir, 0, per).map(drop),
            NfsProc::Readdirplus => self.vfs_readdirplus(me, dir, 0, per).map(drop),
            NfsProc::Fsstat => self.vfs_statfs(me, root).map(drop),
            NfsProc::Commit => match self.vfs_commit(me, fh) {
                Ok(Some(t)) => Err(VfsErr::Wait(Step::SleepUntil { t, io: true })),
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            },
            _ => Err(VfsErr::Errno(Errno::EOPNOTSUPP)),
        };
        match r {
            Ok(()) => Ok(None),
            Err(VfsErr::Errno(e)) => Ok(Some(e)),
            Err(VfsErr::Wait(s)) => Err(s),
        }
    }

    /// Send the reply to process `p`'s request: the send path's CPU, the link, the
    /// response time recorded, and the process's next request.
    fn nfsd_reply(&mut self, me: TaskId, p: u32, err: Option<Errno>) {
        let Some(l) = self.nfsd.load.as_ref() else { return };
        let lp = l.procs[p as usize];
        let op = NfsProc::ALL[lp.proc_ as usize];
        let per = self.vfs.sbs[l.cfg.sb as usize].tree.as_ref().map_or(30, |t| t.spec.files_per_dir);
        let bytes = RPC_OVERHEAD
            + match (op, err) {
                (_, Some(_)) => 0,
                (NfsProc::Read, _) => SFS97_IO_SIZE,
                (NfsProc::Readdir, _) => per * READDIR_ENTRY,
                (NfsProc::Readdirplus, _) => per * READDIRPLUS_ENTRY,
                _ => 0,
            };
        let c = self.net_cost(bytes);
        self.charge_sys(me, c);
        let t = &self.tasks[me as usize];
        let done = self.now + t.pending_sys + t.pending_user;
        let net = &self.machine.net;
        let wire = wire_time(bytes, net.mtu as u64, net.link_bps);
        let at = done.max(self.nfsd.link_out_free);
        self.nfsd.link_out_free = at + wire;
        let recv = at + wire + net.rtt_ns / 2;
        let l = self.nfsd.load.as_mut().unwrap();
        l.in_flight -= 1;
        let resp = recv.saturating_sub(lp.sent);
        if lp.sent >= l.measure_from {
            let s = &mut l.stats[op as usize];
            if err.is_some() {
                s.errors += 1;
            } else {
                s.ok += 1;
                s.sum_ns += resp as f64;
                s.sum_sq += resp as f64 * resp as f64;
                s.max_ns = s.max_ns.max(resp);
            }
        }
        l.last_reply = l.last_reply.max(recv);
        let storm = l.cfg.storm;
        let lpm = &mut l.procs[p as usize];
        let next = if storm {
            if lpm.looked_up || err.is_some() {
                lpm.looked_up = false;
                lpm.cursor += 1;
                l.files_done += 1;
            } else {
                lpm.looked_up = true;
            }
            recv
        } else {
            let per_proc = l.cfg.ops as f64 / l.cfg.procs as f64;
            let interval = NS_PER_SEC as f64 / per_proc.max(1e-9);
            // Think time drawn uniformly in [0.5, 1.5) x the process's interval; a process
            // behind its schedule sends as soon as the reply is in.
            let think = (interval * (0.5 + l.rng.unit())) as Ns;
            lpm.due += think;
            lpm.due.max(recv)
        };
        self.sfs_send(p, next);
    }
}

/// "f<n>", the generated name of file `n` of a directory, written into `buf`.
fn file_name(buf: &mut [u8; 24], n: u64) -> &str {
    let mut digits = [0u8; 20];
    let (mut i, mut v) = (digits.len(), n);
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = 1 + digits.len() - i;
    buf[0] = b'f';
    buf[1..len].copy_from_slice(&digits[i..]);
    std::str::from_utf8(&buf[..len]).unwrap_or("f")
}

#[cfg(test)]
mod tests {
    #[test]
    fn file_names_are_what_format_writes() {
        let mut buf = [0u8; 24];
        for n in [0, 1, 9, 10, 11, 99, 100, 12_345, 999_999_999, 1 << 40, u64::MAX] {
            assert_eq!(super::file_name(&mut buf, n), format!("f{n}"));
        }
    }
}
