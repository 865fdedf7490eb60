//! Waits for I/O as kernel paths (wait.rs): a task blocked on a read or on writeback is
//! woken by the block layer's completion of what it waits for, at that completion's time,
//! whatever order requests complete in.

mod common;

use common::{boot, run, spawn};
use memtwin_kernel::block::{Dir, ReqKind};
use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::wait::WaitOn;
use memtwin_kernel::{Kernel, Ns, Step, TaskId, NS_PER_SEC};
use std::cell::RefCell;
use std::rc::Rc;

/// Write `bytes` to `path` and leave them dirty in the page cache.
fn write_dirty(k: &mut Kernel, path: &'static str, bytes: u64) {
    let mut fd = None;
    let mut left = bytes;
    let t = spawn(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { write: true, create: true, trunc: true, ..Default::default() }).unwrap().0);
        if left == 0 {
            k.sys_close(me, f).unwrap();
            return None;
        }
        let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
        left -= r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    run(k, &[t]);
}

/// Write `bytes` to `path`, get them onto the disk and out of the page cache.
fn write_on_disk(k: &mut Kernel, path: &'static str, bytes: u64) {
    write_dirty(k, path, bytes);
    let mut fd = None;
    let t = spawn(k, move |k, me| {
        if fd.is_some() {
            return None;
        }
        let f = k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }).unwrap().0;
        fd = Some(f);
        k.sys_fsync(me, f).unwrap()
    });
    run(k, &[t]);
    k.drop_caches(1);
    let ino = k.fs.lookup(path).unwrap();
    assert_eq!(k.mm.mappings[k.fs.inodes[ino as usize].mapping as usize].nrpages, 0, "{path} is not cached");
}

/// A task that opens `path`, reads `len` bytes and records, for each wait its read asked
/// for, the completion time the device model gave the read and the time the task ran again.
fn reader(k: &mut Kernel, path: &'static str, len: u64, log: Rc<RefCell<Vec<(Ns, Ns)>>>) -> TaskId {
    let mut fd = None;
    let mut due = None;
    spawn(k, move |k, me| {
        if let Some(d) = due.take() {
            log.borrow_mut().push((d, k.now));
        }
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { read: true, ..Default::default() }).unwrap().0);
        let r = k.sys_read(me, f, len).unwrap();
        match r.wait {
            Some(Step::Wait(w)) => {
                assert!(matches!(w.on, WaitOn::FolioLocked { .. }), "{w:?}");
                due = Some(k.wait_due(&w).expect("a read in flight"));
                Some(Step::Wait(w))
            }
            Some(s) => Some(s),
            None if r.bytes == 0 || r.eof => None,
            None => Some(Step::Cpu { user: 0, sys: 0 }),
        }
    })
}

/// folio_wait_locked: a reader of a page under read I/O sleeps until that read's
/// completion and runs again exactly then — here while a write queued before its read on
/// the same virtio disk is still in flight (a write's latency is 1.2 ms, a read's 0.2 ms).
#[test]
fn a_reader_is_woken_exactly_when_its_read_completes() {
    let mut k = boot();
    write_on_disk(&mut k, "/root/small", 4096);
    write_dirty(&mut k, "/root/dirty", 4096);
    // The write goes first: the fsync submits it and waits for it.
    let wrote = Rc::new(RefCell::new(None));
    let (w2, mut fd) = (wrote.clone(), None);
    let writer = spawn(&mut k, move |k, me| {
        if fd.is_some() {
            *w2.borrow_mut() = Some(k.now);
            return None;
        }
        let f = k.sys_open(me, "/root/dirty", OpenFlags { write: true, ..Default::default() }).unwrap().0;
        fd = Some(f);
        let w = k.sys_fsync(me, f).unwrap();
        assert!(matches!(w, Some(Step::Wait(_))), "{w:?}");
        w
    });
    let log = Rc::new(RefCell::new(Vec::new()));
    let r = reader(&mut k, "/root/small", 4096, log.clone());
    let t0 = k.now;
    run(&mut k, &[writer, r]);
    let log = log.borrow();
    assert_eq!(log.len(), 1, "one wait for the one page: {log:?}");
    let (due, woke) = log[0];
    assert_eq!(woke, due, "the reader runs again at its read's completion");
    let wrote = wrote.borrow().expect("the writer ran again");
    assert!(due < wrote, "the read (done at {due}) completes before the write queued ahead of it (fsync back at {wrote})");
    assert!(due > t0);
    assert!(k.waits.woken >= 2, "both waits were ended by completions");
}

/// Two tasks reading the same uncached page: both wait on its one read (the second finds
/// the page locked) and both are woken at its completion, in the order they began to wait.
#[test]
fn readers_of_one_page_under_read_are_woken_by_its_completion() {
    let mut k = boot();
    write_on_disk(&mut k, "/root/f", 4096);
    let a_log = Rc::new(RefCell::new(Vec::new()));
    let b_log = Rc::new(RefCell::new(Vec::new()));
    let a = reader(&mut k, "/root/f", 4096, a_log.clone());
    let b = reader(&mut k, "/root/f", 4096, b_log.clone());
    let reads0 = k.block.devs[0].ios_done[Dir::Read as usize];
    run(&mut k, &[a, b]);
    let (a_log, b_log) = (a_log.borrow(), b_log.borrow());
    assert_eq!(a_log.len(), 1);
    assert_eq!(b_log.len(), 1);
    assert_eq!(a_log[0].0, b_log[0].0, "one read for both");
    assert_eq!(a_log[0].1, a_log[0].0);
    assert_eq!(b_log[0].1, b_log[0].0);
    assert_eq!(k.block.devs[0].ios_done[Dir::Read as usize] - reads0, 1, "the page was read once");
}

/// fsync waits for its own file's writeback: a second fsync of a file whose pages another
/// fsync has just submitted has nothing to write but waits for those pages
/// (filemap_fdatawait_range), and an fsync of a small file is not held up by a big file's
/// writeback submitted after it.
#[test]
fn fsync_waits_for_its_own_files_writeback_only() {
    let mut k = boot();
    write_dirty(&mut k, "/root/small", 64 << 10);
    write_dirty(&mut k, "/root/big", 32 << 20);
    let back: Rc<RefCell<Vec<(&str, Ns)>>> = Rc::new(RefCell::new(Vec::new()));
    let fsyncer = |k: &mut Kernel, name: &'static str, back: Rc<RefCell<Vec<(&'static str, Ns)>>>| {
        let mut fd = None;
        spawn(k, move |k, me| {
            if fd.is_some() {
                back.borrow_mut().push((name, k.now));
                return None;
            }
            let f = k.sys_open(me, name, OpenFlags { write: true, ..Default::default() }).unwrap().0;
            fd = Some(f);
            let w = k.sys_fsync(me, f).unwrap();
            assert!(w.is_some(), "{name}: its writeback is in flight");
            w
        })
    };
    // Spawned in this order, they run in this order at the same instant.
    let s = fsyncer(&mut k, "/root/small", back.clone());
    let b1 = fsyncer(&mut k, "/root/big", back.clone());
    let b2 = fsyncer(&mut k, "/root/big", back.clone());
    // When the last write request of each file completes.
    let mut last = [0 as Ns; 2];
    let mut small_m = None;
    run_with(&mut k, &[s, b1, b2], |k| {
        let sm = *small_m.get_or_insert_with(|| k.fs.inodes[k.fs.lookup("/root/small").unwrap() as usize].mapping);
        for r in k.block.reqs.iter().filter(|r| r.live) {
            if let ReqKind::Writeback { mapping, .. } = r.kind {
                let i = usize::from(mapping != sm);
                last[i] = last[i].max(r.done_at);
            }
        }
    });
    let back = back.borrow();
    let at = |name: &str| back.iter().filter(|(n, _)| *n == name).map(|&(_, t)| t).collect::<Vec<_>>();
    assert_eq!(at("/root/small"), vec![last[0]], "small's fsync returns when its writeback completes");
    assert_eq!(at("/root/big"), vec![last[1], last[1]], "both fsyncs of big return when its writeback completes");
    assert!(last[0] < last[1]);
}

/// `run`, calling `watch` after every event.
fn run_with(k: &mut Kernel, tasks: &[TaskId], mut watch: impl FnMut(&Kernel)) {
    let limit = k.now + 600 * NS_PER_SEC;
    let ts = tasks.to_vec();
    k.run_until(limit, &mut |k| {
        watch(k);
        ts.iter().all(|&t| k.task_exited(t))
    });
    assert!(tasks.iter().all(|&t| k.task_exited(t)), "tasks did not finish");
}

/// The parts of a task that waited for reads and writeback still sum to its wall time.
#[test]
fn waits_keep_delay_accounting_exact() {
    let mut k = boot();
    write_on_disk(&mut k, "/root/f", 4 << 20);
    let log = Rc::new(RefCell::new(Vec::new()));
    let r = reader(&mut k, "/root/f", 1 << 20, log.clone());
    run(&mut k, &[r]);
    assert!(!log.borrow().is_empty());
    let a = k.task_acct(r);
    assert_eq!(a.breakdown.sum(), a.end_ns - a.start_ns, "{:?}", a.breakdown);
    assert!(a.breakdown.blkio_ns > 0, "{:?}", a.breakdown);
}
