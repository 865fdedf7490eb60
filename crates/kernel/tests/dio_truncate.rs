//! O_DIRECT transfers and truncation as wait paths (wait.rs): the direct I/O submitter
//! sleeps until its requests complete (`WaitOn::DirectIo`), and a truncation or unlink of
//! a file with writeback in flight sleeps until that writeback ends
//! (truncate_inode_pages -> folio_wait_writeback: `WaitOn::FdataWait`), after the step's
//! CPU work, woken by the completions.

mod common;

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::wait::WaitOn;
use memtwin_kernel::{Kernel, Step, TaskId, NS_PER_SEC};
use std::cell::RefCell;
use std::rc::Rc;

/// Run until `t` exits, recording every wait it was seen asleep in.
fn run_seeing_waits(k: &mut Kernel, t: TaskId) -> Vec<WaitOn> {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let s = seen.clone();
    let limit = k.now + 120 * NS_PER_SEC;
    k.run_until(limit, &mut |k| {
        if let Some(w) = k.waits.get(t) {
            let mut v = s.borrow_mut();
            if v.last() != Some(&w.on) {
                v.push(w.on);
            }
        }
        k.task_exited(t)
    });
    assert!(k.task_exited(t));
    let v = seen.borrow().clone();
    v
}

#[test]
fn an_o_direct_write_sleeps_until_its_requests_complete() {
    let mut k = common::boot();
    let (mut fd, mut left) = (None, 4u64 << 20);
    let t = common::spawn(&mut k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/dio", OpenFlags { write: true, create: true, direct: true, ..Default::default() }).unwrap().0);
        if left == 0 {
            return None;
        }
        let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
        left -= r.bytes;
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    let seen = run_seeing_waits(&mut k, t);
    assert!(seen.iter().any(|w| matches!(w, WaitOn::DirectIo { .. })), "{seen:?}");
    assert_eq!(k.block.reqs.iter().filter(|r| r.live).count(), 0, "every transfer completed");
}

#[test]
fn truncating_and_unlinking_a_file_under_writeback_wait_for_it() {
    for unlink in [false, true] {
        let mut k = common::boot();
        let (mut fd, mut left, mut phase) = (None, 8u64 << 20, 0);
        let t = common::spawn(&mut k, move |k, me| {
            let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/w", OpenFlags { write: true, create: true, ..Default::default() }).unwrap().0);
            if left > 0 {
                let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
                left -= r.bytes;
                return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
            }
            phase += 1;
            match phase {
                1 => {
                    // Start the writeback (sync_file_range-like: fadvise starts it, no wait).
                    k.sys_fadvise_dontneed(me, f).unwrap();
                    assert!(k.mm.stat.writeback > 0, "writeback in flight");
                    k.sys_close(me, f).unwrap();
                    if unlink {
                        assert_eq!(k.sys_unlink(me, "/root/w").unwrap(), None, "a wait path, not a time");
                    } else {
                        let (g, due) = k.sys_open(me, "/root/w", OpenFlags { write: true, trunc: true, ..Default::default() }).unwrap();
                        assert_eq!(due, None, "a wait path, not a time");
                        k.sys_close(me, g).unwrap();
                    }
                    Some(Step::Yield)
                }
                _ => {
                    // The wait is over: the writeback it waited for has completed.
                    assert!(!k.block.reqs.iter().any(|r| r.live && matches!(r.kind, memtwin_kernel::block::ReqKind::Writeback { .. })));
                    None
                }
            }
        });
        let seen = run_seeing_waits(&mut k, t);
        assert!(seen.iter().any(|w| matches!(w, WaitOn::FdataWait { mapping: Some(_), .. })), "unlink {unlink}: {seen:?}");
    }
}

/// An O_DIRECT write over dirty cached pages of its range first writes them back and waits
/// (filemap_write_and_wait_range), then drops them and transfers: the dirty pages reach the
/// disk (pgpgout counts them as well as the direct write) instead of being cancelled.
#[test]
fn an_o_direct_write_writes_back_dirty_pages_of_its_range_first() {
    let mut k = common::boot();
    let (mut phase, mut left, mut buffered) = (0, 4u64 << 20, 4u64 << 20);
    let mut fd = None;
    let t = common::spawn(&mut k, move |k, me| {
        match phase {
            0 => {
                // A buffered write leaves 4 MiB dirty.
                let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/mix", OpenFlags { write: true, create: true, ..Default::default() }).unwrap().0);
                let r = k.sys_write(me, f, buffered).unwrap();
                buffered -= r.bytes;
                if buffered > 0 {
                    return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
                }
                k.sys_close(me, f).unwrap();
                assert!(k.mm.stat.dirty >= 1024, "dirty: {}", k.mm.stat.dirty);
                phase = 1;
                fd = None;
                Some(Step::Yield)
            }
            _ => {
                let f = *fd.get_or_insert_with(|| k.sys_open(me, "/root/mix", OpenFlags { write: true, direct: true, ..Default::default() }).unwrap().0);
                if left == 0 {
                    return None;
                }
                let r = k.sys_write(me, f, left).unwrap();
                left -= r.bytes;
                Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
            }
        }
    });
    let out0 = k.vm.get(memtwin_procfs::VmItem::Pgpgout);
    let seen = run_seeing_waits(&mut k, t);
    assert!(seen.iter().any(|w| matches!(w, WaitOn::FdataWait { .. })), "waited for the writeback first: {seen:?}");
    assert!(seen.iter().any(|w| matches!(w, WaitOn::DirectIo { .. })), "then the transfer: {seen:?}");
    let out = k.vm.get(memtwin_procfs::VmItem::Pgpgout) - out0;
    assert!(out >= 2 * 4096, "4 MiB written back and 4 MiB direct: {out} KiB");
    assert_eq!(k.mm.stat.dirty, 0);
    assert_eq!(k.mm.mappings[k.fs.inodes[k.fs.lookup("/root/mix").unwrap() as usize].mapping as usize].nrpages, 0, "the range left the page cache");
}

/// A truncation waits for the direct transfers in flight on the inode, whoever submitted
/// them (inode_dio_wait in ext4_setattr / xfs_setattr_size), then goes on.
#[test]
fn truncating_a_file_waits_for_another_tasks_direct_io_on_it() {
    let mut k = common::boot();
    let mut fd = None;
    let mut written = false;
    let writer = common::spawn(&mut k, move |k, me| {
        let f = *fd.get_or_insert_with(|| {
            k.sys_open(
                me,
                "/root/dio-t",
                OpenFlags {
                    write: true,
                    create: true,
                    direct: true,
                    ..Default::default()
                },
            )
            .unwrap()
            .0
        });
        if written {
            return None;
        }
        written = true;
        // 16 MiB in one call: every request is submitted before the writer sleeps.
        let r = k.sys_write(me, f, 16 << 20).unwrap();
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    let mut phase = 0;
    let truncator = common::spawn(&mut k, move |k, me| {
        let in_flight = k
            .block
            .reqs
            .iter()
            .any(|r| r.live && matches!(r.kind, memtwin_kernel::block::ReqKind::Direct { .. }));
        match phase {
            0 if !in_flight => Some(Step::Yield),
            0 => {
                phase = 1;
                let (g, due) = k
                    .sys_open(
                        me,
                        "/root/dio-t",
                        OpenFlags {
                            write: true,
                            trunc: true,
                            ..Default::default()
                        },
                    )
                    .unwrap();
                assert_eq!(due, None, "a wait path, not a time");
                k.sys_close(me, g).unwrap();
                Some(Step::Yield)
            }
            _ => {
                assert!(
                    !in_flight,
                    "the truncation went on only after the direct writes completed"
                );
                None
            }
        }
    });
    let seen = run_seeing_waits(&mut k, truncator);
    assert!(
        seen.iter().any(|w| matches!(w, WaitOn::InodeDio { .. })),
        "{seen:?}"
    );
    run_seeing_waits(&mut k, writer);
}
