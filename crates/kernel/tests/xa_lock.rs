//! The page index's lock (xa_lock on mapping->i_pages): tasks on many CPUs that put pages
//! into one file at once queue on that file's lock; tasks writing files of their own never
//! meet. Shapes only, no timed assertions.

mod common;

use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::{Kernel, Step, TaskId};

/// `n` writers put 8 MiB each into tmpfs, 64 KiB per write: into one file (each at its own
/// offset) when `shared`, else each into its own file. Returns the lock's
/// (acquisitions, contended, mean wait in ns) and the writers' spin.
fn write_concurrently(n: usize, shared: bool) -> (u64, u64, f64, u64) {
    // 32 CPUs, /dev/shm (tmpfs, half of RAM): no reclaim, no writeback.
    let mut k = common::boot_era("linux-6.x", 32);
    let before = k.mm.xa_lock_stats;
    let each: u64 = 8 << 20;
    let tids: Vec<TaskId> = (0..n)
        .map(|i| {
            let path = if shared {
                "/dev/shm/shared".to_string()
            } else {
                format!("/dev/shm/own{i}")
            };
            let (mut fd, mut left) = (None, each);
            common::spawn(&mut k, move |k: &mut Kernel, me| {
                let f = *fd.get_or_insert_with(|| {
                    let f = k
                        .sys_open(
                            me,
                            &path,
                            OpenFlags {
                                write: true,
                                create: true,
                                ..Default::default()
                            },
                        )
                        .unwrap()
                        .0;
                    if shared {
                        k.sys_lseek(me, f, i as u64 * each).unwrap();
                    }
                    f
                });
                if left == 0 {
                    return None;
                }
                let r = k.sys_write(me, f, left.min(64 << 10)).unwrap();
                left -= r.bytes;
                Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
            })
        })
        .collect();
    common::run(&mut k, &tids);
    let st = k.mm.xa_lock_stats;
    let acq = st.acquisitions - before.acquisitions;
    let spin: u64 = tids.iter().map(|&t| k.tasks[t as usize].lock_wait_ns).sum();
    (
        acq,
        st.contended - before.contended,
        (st.wait_ns - before.wait_ns) as f64 / acq.max(1) as f64,
        spin,
    )
}

#[test]
fn writers_of_one_file_queue_on_its_page_index_lock_and_writers_of_their_own_files_do_not() {
    let mut rows = Vec::new();
    for n in [1usize, 4, 16, 32] {
        let (acq, contended, mean, spin) = write_concurrently(n, true);
        eprintln!("one file, N={n:2}: xa_lock {acq} acquisitions, {contended} contended, mean wait {mean:.1} ns, writers' spin {spin} ns");
        // One insertion per page (shmem's dirtying takes no tag lock).
        let pages = n as u64 * (8 << 8);
        assert!(
            acq >= pages && acq <= pages + 64,
            "N={n}: {acq} acquisitions for {pages} pages"
        );
        rows.push((n, mean, spin));
        let (_, c_own, _, _) = write_concurrently(n, false);
        assert_eq!(
            c_own, 0,
            "N={n}: writers of their own files never wait for a page-index lock"
        );
    }
    assert_eq!(rows[0].1, 0.0, "a lone writer never waits");
    for w in rows.windows(2) {
        let ((n0, m0, _), (n1, m1, _)) = (w[0], w[1]);
        assert!(
            m1 > m0,
            "mean xa_lock wait N={n0}: {m0:.1} ns, N={n1}: {m1:.1} ns"
        );
    }
}
