//! Descriptor tables and open file descriptions (fs/file.rs): lowest free descriptor, dup
//! and dup2 sharing a description (offset and readahead), fork copying the table, the last
//! reference releasing the file, and one readahead window per open (struct file's f_ra).

mod common;

use common::{boot, run, spawn, Script};
use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::mm::PAGE_SIZE;
use memtwin_kernel::{Kernel, Step, NS_PER_SEC};

const RD: OpenFlags = OpenFlags { read: true, write: false, create: false, trunc: false, append: false, direct: false };

/// A file of `mb` MiB on the disk and not in the page cache.
fn file_on_disk(k: &mut Kernel, path: &'static str, mb: u64) {
    let mut fd = None;
    let mut left = mb << 20;
    let mut synced = false;
    let t = spawn(k, move |k, me| {
        let f = *fd.get_or_insert_with(|| k.sys_open(me, path, OpenFlags { write: true, create: true, trunc: true, ..Default::default() }).unwrap().0);
        if left > 0 {
            let r = k.sys_write(me, f, left.min(1 << 20)).unwrap();
            left -= r.bytes;
            return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
        }
        if !synced {
            synced = true;
            if let Some(w) = k.sys_fsync(me, f).unwrap() {
                return Some(w);
            }
        }
        k.sys_close(me, f).unwrap();
        None
    });
    run(k, &[t]);
    k.drop_caches(1);
}

#[test]
fn open_takes_the_lowest_free_descriptor_and_dup_shares_the_offset() {
    let mut k = boot();
    file_on_disk(&mut k, "/root/f", 1);
    let t = spawn(&mut k, |k, me| {
        let a = k.sys_open(me, "/root/f", RD).unwrap().0;
        let b = k.sys_open(me, "/root/f", RD).unwrap().0;
        assert_eq!((a, b), (3, 4), "0-2 are the standard streams");
        k.sys_close(me, a).unwrap();
        let c = k.sys_open(me, "/dev/null", RD).unwrap().0;
        assert_eq!(c, 3, "the lowest free descriptor");
        // dup: a new descriptor for the same description; its offset is shared.
        let d = k.sys_dup(me, b).unwrap();
        assert_eq!(d, 5);
        k.sys_lseek(me, d, 8192).unwrap();
        assert_eq!(k.file(me, b).unwrap().pos, 8192);
        // dup2 closes what the target referred to (/dev/null here).
        assert_eq!(k.sys_dup2(me, b, 3).unwrap(), 3);
        assert_eq!(k.file(me, 3).unwrap().pos, 8192);
        assert!(k.sys_dup2(me, b, 1).is_err(), "standard streams are the task's sinks");
        let fds: Vec<usize> = k.proc_pid_fd(me).into_iter().map(|(fd, _)| fd).collect();
        assert_eq!(fds, vec![3, 4, 5]);
        assert!(k.proc_pid_fd(me).iter().all(|(_, l)| l == "/root/f"), "{:?}", k.proc_pid_fd(me));
        assert_eq!(k.fs.files.nr_open(), 1, "one description behind three descriptors");
        None
    });
    run(&mut k, &[t]);
    assert_eq!(k.fs.files.nr_open(), 0, "exit closed every descriptor");
}

/// fork copies the descriptor table: the child's descriptor refers to the parent's
/// description, and an unlinked file lives until the last of them is closed.
#[test]
fn a_forked_child_shares_its_parents_open_files() {
    let mut k = boot();
    file_on_disk(&mut k, "/root/f", 1);
    let mut fd = None;
    let parent = spawn(&mut k, move |k, me| {
        if fd.is_some() {
            return Some(Step::Block { io: false });
        }
        let f = k.sys_open(me, "/root/f", RD).unwrap().0;
        k.sys_lseek(me, f, 4096).unwrap();
        fd = Some(f);
        Some(Step::Block { io: false })
    });
    k.run_until(k.now + NS_PER_SEC, &mut |_| false);
    let ino = k.fs.lookup("/root/f").unwrap();
    let m = k.fs.inodes[ino as usize].mapping;
    let child = k.spawn_task("child", "child", false, Some(parent), Some(Box::new(Script(|k: &mut Kernel, me| {
        let r = k.sys_read(me, 3, 4096).unwrap();
        if r.bytes == 0 {
            return Some(r.wait.unwrap_or(Step::Yield));
        }
        None
    }))));
    assert_eq!(k.file(child, 3).unwrap().pos, 4096, "the child sees the parent's offset");
    run(&mut k, &[child]);
    assert_eq!(k.file(parent, 3).unwrap().pos, 8192, "the child's read moved the shared offset");
    // The parent unlinks and closes: the file is gone from the namespace and, with its
    // last reference, from the page cache.
    k.sys_unlink(parent, "/root/f").unwrap();
    assert!(k.mm.mappings[m as usize].live, "still open");
    k.sys_close(parent, 3).unwrap();
    assert!(!k.mm.mappings[m as usize].live, "the last close freed it");
}

/// Two readers of one file, each with its own open: each description has its own
/// readahead window (file_ra_state in struct file), so two sequential streams at different
/// offsets both ramp up to the full window instead of looking random to a shared state.
#[test]
fn two_readers_of_one_file_have_their_own_readahead_windows() {
    let mut k = boot();
    file_on_disk(&mut k, "/root/f", 8);
    let max = (k.block.devs[0].disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE).max(1);
    let mut fds = [None, None];
    let mut reads = 0;
    // One task alternates between its two opens: a read of 16 KiB from each in turn,
    // one stream from the start, the other from the middle.
    let t = spawn(&mut k, move |k, me| {
        if fds[0].is_none() {
            for (i, at) in [0u64, 4 << 20].into_iter().enumerate() {
                let f = k.sys_open(me, "/root/f", RD).unwrap().0;
                k.sys_lseek(me, f, at).unwrap();
                fds[i] = Some(f);
            }
        }
        if reads >= 64 {
            let ra = [k.file(me, fds[0].unwrap()).unwrap().ra, k.file(me, fds[1].unwrap()).unwrap().ra];
            assert!(ra[0].start < (4 << 20) / PAGE_SIZE && ra[1].start >= (4 << 20) / PAGE_SIZE, "{ra:?}");
            assert_eq!(ra[0].size, max, "the first stream's window ramped up: {ra:?}");
            assert_eq!(ra[1].size, max, "the second stream's window ramped up: {ra:?}");
            return None;
        }
        let f = fds[reads % 2].unwrap();
        let r = k.sys_read(me, f, 16 << 10).unwrap();
        if r.bytes > 0 {
            reads += 1;
        }
        Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
    });
    run(&mut k, &[t]);
}
