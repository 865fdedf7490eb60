//! io_uring's io-wq (io_uring/io-wq.c, fs/io-wq.c before 5.12): a request that cannot be
//! done without blocking is handed to a worker thread, which carries it out with the
//! blocking system call and posts its completion; the submitter goes on.
//!
//! Which requests: a buffered write to ext4 (ext4_buffered_write_iter refuses IOCB_NOWAIT
//! with -EOPNOTSUPP, so io_write punts it), and before 5.9 a buffered read whose pages are
//! not all cached (generic_file_buffered_read returns -EAGAIN under IOCB_NOWAIT before it
//! starts any readahead). Writes to one regular file are hashed on its inode
//! (io_wq_hash_work): one worker at a time runs them, in order. Reads are not hashed: a
//! worker per request, up to the bounded limit min(SQ entries, 4 x CPUs) (io_wq_create's
//! bounded max_workers). Workers are created when work finds none idle and wait for more
//! when the queue is empty (io_wqe_worker's idle loop); they are threads of the submitter
//! ("iou-wrk-PID", 5.12+) or kernel threads ("io_wqe_worker-N", before). The linux-5.4
//! profile borrows the io-wq of 5.5-5.11: 5.4 ran punted requests on an unbound workqueue.

use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// One punted request.
#[derive(Clone, Copy, Debug)]
pub struct Work {
    pub id: u64,
    pub dir: usize,
    pub off: u64,
    pub len: u64,
}

/// A request a worker finished: its completion is in the ring at `at`.
#[derive(Clone, Debug)]
pub struct Done {
    pub id: u64,
    pub at: Ns,
    pub bytes: u64,
    pub err: Option<super::job::JobError>,
}

/// What the submitter and its workers share (struct io_wq and its accounting).
pub struct IoWq {
    pub queue: VecDeque<Work>,
    pub done: Vec<Done>,
    /// The submitting task, woken by each completion (io_cqring_ev_posted).
    pub submitter: TaskId,
    pub workers: Vec<TaskId>,
    pub idle: Vec<TaskId>,
    /// Hashed work (writes to the job's file) runs on one worker at a time: set from
    /// when a worker takes a write until that write's CPU time has run.
    pub hashed_busy: bool,
    /// Workers created that have not run yet (they will take queued work).
    pub starting: usize,
    pub max_workers: usize,
    pub exit: bool,
    /// The workers' name, whether they are kernel threads, the job's file and descriptor.
    name: String,
    kthread: bool,
    fname: String,
    fd: usize,
}

impl IoWq {
    pub fn new(submitter: TaskId, max_workers: usize, name: String, kthread: bool, fname: &str, fd: usize) -> IoWq {
        IoWq {
            queue: VecDeque::new(),
            done: Vec::new(),
            submitter,
            workers: Vec::new(),
            idle: Vec::new(),
            hashed_busy: false,
            starting: 0,
            max_workers: max_workers.max(1),
            exit: false,
            name,
            kthread,
            fname: fname.to_string(),
            fd,
        }
    }
}

/// Queue `w` (io_wq_enqueue): wake an idle worker, or create one below the limit. Writes
/// are hashed: while one runs, the others wait in the queue for that worker.
pub fn enqueue(wq: &Rc<RefCell<IoWq>>, k: &mut Kernel, me: TaskId, w: Work) {
    let spawn = {
        let mut q = wq.borrow_mut();
        q.queue.push_back(w);
        if w.dir == 1 && (q.hashed_busy || q.starting > 0) {
            // The worker on the hashed chain (or one about to run) takes it in turn.
            false
        } else if let Some(t) = q.idle.pop() {
            k.wake(t);
            false
        } else if q.starting >= q.queue.len() {
            false
        } else {
            q.workers.len() < q.max_workers
        }
    };
    if spawn {
        let cmd = k.tasks[me as usize].cmdline.clone();
        let (name, kthread, fname, fd) = {
            let q = wq.borrow();
            (q.name.clone(), q.kthread, q.fname.clone(), q.fd)
        };
        let worker = Worker { wq: wq.clone(), fd, fname, cur: None, started: false, holds_hash: false };
        // The worker is created with the submitter's files (create_io_worker: CLONE_FILES).
        let t = k.spawn_task(&name, &cmd, kthread, Some(me), Some(Box::new(worker)));
        let mut q = wq.borrow_mut();
        q.workers.push(t);
        q.starting += 1;
    }
}

/// Ask the workers to exit (io_wq_exit_start) once the submitter is done.
pub fn shutdown(wq: &Rc<RefCell<IoWq>>, k: &mut Kernel) {
    let idle = {
        let mut q = wq.borrow_mut();
        q.exit = true;
        std::mem::take(&mut q.idle)
    };
    for t in idle {
        k.wake(t);
    }
}

struct Worker {
    wq: Rc<RefCell<IoWq>>,
    fd: usize,
    fname: String,
    /// The request being carried out, and the bytes moved so far.
    cur: Option<(Work, u64)>,
    started: bool,
    /// This worker ran a write whose CPU time was still to run at its last step.
    holds_hash: bool,
}

impl Worker {
    /// The next request this worker may take: the first unhashed one, or the first write
    /// if no worker runs the hashed chain now.
    fn take(&mut self) -> Option<Work> {
        let mut q = self.wq.borrow_mut();
        let i = q.queue.iter().position(|w| w.dir == 0 || !q.hashed_busy)?;
        let w = q.queue.remove(i)?;
        if w.dir == 1 {
            q.hashed_busy = true;
        }
        Some(w)
    }

    fn post(&mut self, k: &mut Kernel, me: TaskId, w: Work, bytes: u64, err: Option<super::job::JobError>) {
        let t = &k.tasks[me as usize];
        let at = k.now + t.pending_user + t.pending_sys;
        self.holds_hash = w.dir == 1;
        let submitter = {
            let mut q = self.wq.borrow_mut();
            q.done.push(Done { id: w.id, at, bytes, err });
            q.submitter
        };
        k.wake(submitter);
    }
}

impl Program for Worker {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        {
            let mut q = self.wq.borrow_mut();
            if !self.started {
                self.started = true;
                q.starting -= 1;
            }
            if self.holds_hash {
                // The last write's CPU time has run: the chain is free.
                self.holds_hash = false;
                q.hashed_busy = false;
            }
        }
        loop {
            let Some((w, done)) = self.cur else {
                match self.take() {
                    Some(w) => {
                        self.cur = Some((w, 0));
                        continue;
                    }
                    None => {
                        let mut q = self.wq.borrow_mut();
                        if q.exit {
                            return Step::Exit(0);
                        }
                        q.idle.push(me);
                        return Step::Block { io: false };
                    }
                }
            };
            if done >= w.len {
                self.cur = None;
                self.post(k, me, w, done, None);
                // The completion is posted when this request's CPU time has run.
                return Step::Cpu { user: 0, sys: 0 };
            }
            // The request carries its own offset (kiocb->ki_pos), not the file's f_pos.
            if let Ok(f) = k.file_mut(me, self.fd) {
                f.pos = w.off + done;
            }
            let r = if w.dir == 0 { k.sys_read(me, self.fd, w.len - done) } else { k.sys_write(me, self.fd, w.len - done) };
            match r {
                Ok(r) if r.bytes == 0 && r.eof => {
                    // The file ended under the request: a short completion.
                    self.cur = None;
                    self.post(k, me, w, done, None);
                    return Step::Cpu { user: 0, sys: 0 };
                }
                Ok(r) => {
                    self.cur = Some((w, done + r.bytes));
                    if let Some(step) = r.wait {
                        return step;
                    }
                }
                Err(e) => {
                    self.cur = None;
                    let m = super::job::io_u_error(&self.fname, e, w.dir, w.off, w.len);
                    self.post(k, me, w, done, Some(m));
                    return Step::Cpu { user: 0, sys: 0 };
                }
            }
        }
    }
}
