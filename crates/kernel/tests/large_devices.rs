//! Files and block devices of any size the disks allow: reads far into a 16 TiB device
//! cache pages at 64-bit indices, cost host memory for the pages cached only, and leave
//! nothing behind after drop_caches. And a property: every page is accounted once across
//! the page indexes and the LRU lists, whatever the operations.

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::mm::{Slot, PAGE_SIZE};
use memtwin_kernel::{Kernel, Program, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::VmItem;
use proptest::prelude::*;

const TIB: u64 = 1 << 40;
const MIB: u64 = 1 << 20;

/// A machine with a 16 TiB disk and 256 MiB of RAM.
fn boot_16t() -> Kernel {
    let mut m = memtwin_machine::preset("seed-000").expect("preset");
    memtwin_machine::apply_set(&mut m, "ram=256M").unwrap();
    memtwin_machine::apply_set(&mut m, "disk.vda.size=16T").unwrap();
    let mut k = Kernel::boot(m, 1).expect("boot");
    k.debug_invariants = true;
    k
}

struct Script<F: FnMut(&mut Kernel, TaskId) -> Option<Step>>(F);
impl<F: FnMut(&mut Kernel, TaskId) -> Option<Step>> Program for Script<F> {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        (self.0)(k, me).unwrap_or(Step::Exit(0))
    }
}

fn run_task<F: FnMut(&mut Kernel, TaskId) -> Option<Step> + 'static>(k: &mut Kernel, f: F) {
    let t = k.spawn("test", "test", Box::new(Script(f)), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null);
    let limit = k.now + 3600 * NS_PER_SEC;
    k.run_until(limit, &mut |k| k.task_exited(t));
    assert!(k.task_exited(t), "task did not finish");
}

/// pread of `len` bytes at `pos` of `path` in 1 MiB reads, as dd skip= does.
fn read_at(k: &mut Kernel, path: &'static str, pos: u64, len: u64) {
    let mut fd = None;
    let mut done = 0;
    run_task(k, move |k, me| {
        let f = match fd {
            Some(f) => f,
            None => {
                let f = k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }).unwrap().0;
                k.file_mut(me, f).unwrap().pos = pos;
                fd = Some(f);
                f
            }
        };
        if done >= len {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_read(me, f, (len - done).min(MIB)).unwrap();
        done += r.bytes;
        assert!(!r.eof, "read past the end at {}", pos + done);
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    // Let the readahead still in flight complete.
    let t = k.now + 10 * NS_PER_SEC;
    k.run_until(t, &mut |k| k.block.reads.is_empty());
}

fn write_at(k: &mut Kernel, path: &'static str, pos: u64, len: u64) {
    let mut fd = None;
    let mut done = 0;
    run_task(k, move |k, me| {
        let f = match fd {
            Some(f) => f,
            None => {
                let f = k.sys_open(me, path, OpenFlags { write: true, create: true, ..Default::default() }).unwrap().0;
                k.file_mut(me, f).unwrap().pos = pos;
                fd = Some(f);
                f
            }
        };
        if done >= len {
            k.sys_close(me, f).unwrap();
            return None;
        }
        // A write far into a file can run out of filesystem space (ENOSPC): it ends there.
        let Ok(r) = k.sys_write(me, f, (len - done).min(MIB)) else {
            k.sys_close(me, f).unwrap();
            return None;
        };
        done += r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    })
}

fn vda_mapping(k: &Kernel) -> u32 {
    let d = k.block.find("vda").expect("vda");
    k.block.devs[d as usize].mapping
}

fn disk_read_bytes(k: &Kernel) -> u64 {
    k.block.devs[k.block.find("vda").unwrap() as usize].bytes_done[0]
}

/// Cached pages of mapping `m` in [start, end) page indices, walking the index.
fn cached(k: &Kernel, m: u32, start: u64, end: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut at = start;
    while let Some((i, s)) = k.mm.next_slot(m, at, end) {
        if let Slot::Page(p) = s {
            assert_eq!(k.mm.pages.index(p), i, "the frame records its 64-bit index");
            assert_eq!(k.mm.pages.mapping(p), m);
            out.push(i);
        }
        at = i + 1;
    }
    out
}

#[test]
fn reads_at_1_and_15_tib_of_a_16_tib_device_cost_memory_per_page_cached() {
    for tib in [1u64, 15] {
        let mut k = boot_16t();
        let m = vda_mapping(&k);
        let pos = tib * TIB;
        let (first, last) = (pos / PAGE_SIZE, (pos + 4 * MIB) / PAGE_SIZE);
        let buffers0 = k.mm.stat.buffers;
        let pgpgin0 = k.vm.get(VmItem::Pgpgin);
        let bytes0 = disk_read_bytes(&k);
        let nodes0 = k.mm.xa.live();

        read_at(&mut k, "/dev/vda", pos, 4 * MIB);

        // The data path: 1024 pages cached in the device's mapping (Buffers), read from
        // the disk (pgpgin in KiB, the device's read bytes), plus at most a readahead
        // window beyond.
        let ra_pages = 4096 / 4; // far above any read_ahead_kb preset
        let got = k.mm.stat.buffers - buffers0;
        assert!(got >= 1024 && got <= 1024 + ra_pages, "{got} pages added to Buffers");
        assert_eq!(cached(&k, m, first, last).len(), 1024, "every page of the range is cached at its index");
        assert_eq!(cached(&k, m, 0, first).len() as u64 + cached(&k, m, last, u64::MAX).len() as u64, got - 1024);
        assert_eq!(k.vm.get(VmItem::Pgpgin) - pgpgin0, got * 4);
        assert_eq!(disk_read_bytes(&k) - bytes0, got * PAGE_SIZE);
        // The frames keep the index's high bits in the side table, one entry per page.
        assert_eq!(k.mm.pages.high_index_frames() as u64, got);

        // Host memory: the tree's nodes follow the pages cached (a leaf per 64 pages and a
        // path of at most 5 interior nodes), not the offset.
        let nodes = k.mm.xa.live() - nodes0;
        assert!(nodes <= got.div_ceil(64) + 2 + 5, "{nodes} nodes for {got} pages");
        assert!(k.mm.xa.host_bytes() < 4 * MIB, "{} bytes of index nodes", k.mm.xa.host_bytes());
        k.mm.check_invariants().unwrap();
        k.mm.check_index().unwrap();

        // drop_caches frees every page and every node the range used; nothing is left at
        // the old indices and no frame keeps a stale index.
        k.drop_caches(1);
        assert_eq!(k.mm.stat.buffers, buffers0);
        assert!(cached(&k, m, first, u64::MAX).is_empty());
        assert_eq!(k.mm.next_slot(m, first, u64::MAX), None, "no stale entry");
        assert_eq!(k.mm.xa.live(), nodes0, "the nodes were freed");
        assert_eq!(k.mm.pages.high_index_frames(), 0);
        k.mm.check_index().unwrap();

        // The re-read is a miss: it does I/O again (no phantom hit on a freed frame).
        let (pgpgin1, bytes1) = (k.vm.get(VmItem::Pgpgin), disk_read_bytes(&k));
        read_at(&mut k, "/dev/vda", pos, 4 * MIB);
        assert!(k.vm.get(VmItem::Pgpgin) - pgpgin1 >= 4096, "re-read after drop_caches read from the disk");
        assert!(disk_read_bytes(&k) - bytes1 >= 4 * MIB);
        assert_eq!(cached(&k, m, first, last).len(), 1024);
        k.mm.check_index().unwrap();
    }
}

#[test]
fn a_file_written_past_1_tib_is_cached_and_truncated_by_its_64_bit_indices() {
    let mut k = boot_16t();
    let pos = 3 * TIB + 5 * PAGE_SIZE;
    write_at(&mut k, "/root/sparse", pos, 2 * MIB);
    let ino = k.fs.lookup("/root/sparse").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    assert_eq!(k.fs.inodes[ino as usize].size, pos + 2 * MIB);
    let c = cached(&k, m, 0, u64::MAX);
    assert_eq!(c.len(), 512);
    assert_eq!(c[0], pos / PAGE_SIZE);
    assert!(k.mm.xa.host_bytes() < 4 * MIB);
    // unlink truncates the whole index: walked by the entries present, not 2^30 indices.
    run_task(&mut k, |k, me| {
        k.sys_unlink(me, "/root/sparse").unwrap();
        None
    });
    let t = k.now + 60 * NS_PER_SEC;
    k.run_until(t, &mut |k| k.mm.stat.writeback == 0);
    assert_eq!(k.mm.pages.high_index_frames(), 0);
    k.mm.check_invariants().unwrap();
    k.mm.check_index().unwrap();
}

#[test]
fn streaming_more_than_ram_leaves_shadow_nodes_the_index_accounts_for() {
    let mut m = memtwin_machine::preset("seed-000").unwrap();
    memtwin_machine::apply_set(&mut m, "ram=64M").unwrap();
    memtwin_machine::apply_set(&mut m, "disk.vda.size=16T").unwrap();
    let mut k = Kernel::boot(m, 1).unwrap();
    k.debug_invariants = true;
    write_at(&mut k, "/root/stream", 5 * TIB, 96 * MIB);
    let ino = k.fs.lookup("/root/stream").unwrap();
    let sm = k.fs.inodes[ino as usize].mapping;
    assert!(k.mm.mappings[sm as usize].nrshadows > 0, "reclaim left shadow entries");
    assert!(k.mm.shadow_nodes() > 0, "leaves of only shadows are on the shadow list");
    k.mm.check_invariants().unwrap();
    k.mm.check_index().unwrap();
    // Reading the start again refaults from the shadows at 64-bit indices.
    read_at(&mut k, "/root/stream", 5 * TIB, 4 * MIB);
    assert!(k.vm.get(VmItem::WorkingsetRefaultFile) > 0);
    k.mm.check_index().unwrap();
}

#[derive(Clone, Debug)]
enum Op {
    Write { file: usize, page: u64, pages: u64 },
    Read { file: usize, page: u64, pages: u64 },
    ReadDev { page: u64, pages: u64 },
    Unlink { file: usize },
    DropCaches,
    /// Stream a file larger than RAM through the cache: reclaim, shadows, the shrinker.
    Pressure,
}

const FILES: [&str; 3] = ["/root/a", "/root/b", "/root/c"];

fn page() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..512, (0u64..4).prop_map(|k| (k << 28) - k.min(1) * 3), (1u64..16).prop_map(|t| t * (TIB / PAGE_SIZE) - 7)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..3usize, page(), 1u64..200).prop_map(|(file, page, pages)| Op::Write { file, page, pages }),
        3 => (0..3usize, page(), 1u64..200).prop_map(|(file, page, pages)| Op::Read { file, page, pages }),
        2 => (page(), 1u64..200).prop_map(|(page, pages)| Op::ReadDev { page, pages }),
        1 => (0..3usize).prop_map(|file| Op::Unlink { file }),
        1 => Just(Op::DropCaches),
        1 => Just(Op::Pressure),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    /// After any sequence of writes, reads (of files and of the raw device, near and far),
    /// unlinks, drop_caches and memory pressure, every page on an LRU list is in exactly one
    /// page index at the index its frame records, every index entry is counted by its
    /// mapping, and the trees are well formed.
    #[test]
    fn each_page_is_accounted_once_across_trees_and_lists(ops in proptest::collection::vec(op(), 1..8)) {
        let mut m = memtwin_machine::preset("seed-000").unwrap();
        memtwin_machine::apply_set(&mut m, "ram=64M").unwrap();
        memtwin_machine::apply_set(&mut m, "disk.vda.size=16T").unwrap();
        let mut k = Kernel::boot(m, 1).unwrap();
        k.debug_invariants = true;
        for o in ops {
            match o {
                Op::Write { file, page, pages } => write_at(&mut k, FILES[file], page * PAGE_SIZE, pages * PAGE_SIZE),
                Op::Read { file, page, pages } => {
                    let size = k.fs.lookup(FILES[file]).map(|i| k.fs.inodes[i as usize].size).unwrap_or(0);
                    let pos = (page * PAGE_SIZE).min(size);
                    let len = (pages * PAGE_SIZE).min(size - pos);
                    if len > 0 {
                        read_at(&mut k, FILES[file], pos, len);
                    }
                }
                Op::ReadDev { page, pages } => read_at(&mut k, "/dev/vda", page * PAGE_SIZE, pages * PAGE_SIZE),
                Op::Unlink { file } => {
                    let path = FILES[file];
                    if k.fs.lookup(path).is_some() {
                        run_task(&mut k, move |k, me| {
                            k.sys_unlink(me, path).unwrap();
                            None
                        });
                    }
                }
                Op::DropCaches => {
                    k.drop_caches(3);
                }
                Op::Pressure => write_at(&mut k, "/root/stream", 0, 96 * MIB),
            }
            k.mm.check_invariants().map_err(TestCaseError::fail)?;
            k.mm.check_index().map_err(TestCaseError::fail)?;
        }
    }
}
