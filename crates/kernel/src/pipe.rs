//! Pipes (fs/pipe.c): a ring of PIPE_DEF_BUFFERS (16) page-sized pipe_buffers, 64 KiB.
//! A writer that finds the ring full sleeps on the pipe's wait queue (pipe_write ->
//! wait_event_interruptible_exclusive) until a reader frees room; a reader that finds it
//! empty sleeps (pipe_read -> wait_event_interruptible) until data arrives or the last
//! writer is gone (then read returns 0: end of file). A write to a pipe with no readers
//! raises SIGPIPE (pipe_write: `send_sig(SIGPIPE, current, 0)`, then -EPIPE): the writer
//! dies with status 128 + 13 = 141. Copies in and out cost the memory-copy bandwidth of
//! the machine's CPU model (copy_page_to_iter / copy_page_from_iter), charged as system
//! time to the task that copies.

use crate::task::{Sink, Step};
use crate::Kernel;
use memtwin_engine::TaskId;
use std::collections::VecDeque;

/// PIPE_DEF_BUFFERS * PAGE_SIZE.
pub const PIPE_CAPACITY: usize = 16 * 4096;

/// 128 + SIGPIPE.
pub const SIGPIPE_STATUS: i32 = 141;

#[derive(Default)]
pub struct Pipe {
    pub buf: VecDeque<u8>,
    pub readers: u32,
    pub writers: u32,
    /// The read end has been given to a task: once it and every write end are closed, the
    /// pipe is gone (free_pipe_info) and its slot can be reused.
    reader_attached: bool,
    /// Tasks sleeping in pipe_read / pipe_write.
    read_waiters: Vec<TaskId>,
    write_waiters: Vec<TaskId>,
}

/// What a read from a pipe gives.
#[derive(Debug, PartialEq, Eq)]
pub enum PipeRead {
    Data(Vec<u8>),
    /// All writers are gone and the pipe is empty.
    Eof,
    /// Empty with writers left: the task must take this step (sleep) and read again.
    Wait(Step),
}

impl Kernel {
    /// pipe(2): a new pipe with no ends open yet (tasks spawned with it as stdin or
    /// stdout/stderr hold the ends).
    pub fn pipe_create(&mut self) -> u32 {
        if let Some(p) = self.free_pipes.pop() {
            return p;
        }
        self.pipes.push(Pipe::default());
        (self.pipes.len() - 1) as u32
    }

    /// The last end of pipe `p` closed after its reader had it (pipe_release ->
    /// free_pipe_info): its buffer goes and its slot is reused. A pipe whose reader has
    /// not been started yet stays (the pipeline is still being set up).
    fn pipe_release_if_unused(&mut self, p: u32) {
        let pipe = &mut self.pipes[p as usize];
        if pipe.reader_attached && pipe.readers == 0 && pipe.writers == 0 {
            *pipe = Pipe::default();
            self.free_pipes.push(p);
        }
    }

    /// The task's standard input becomes the read end of pipe `p`.
    pub fn attach_stdin_pipe(&mut self, tid: TaskId, p: u32) {
        self.tasks[tid as usize].stdin_pipe = Some(p);
        self.pipes[p as usize].readers += 1;
        self.pipes[p as usize].reader_attached = true;
    }

    /// Count the write ends a freshly spawned task holds.
    pub(crate) fn pipe_hold_ends(&mut self, tid: TaskId) {
        let t = &self.tasks[tid as usize];
        for s in [t.stdout, t.stderr] {
            if let Sink::Pipe(p) = s {
                self.pipes[p as usize].writers += 1;
            }
        }
    }

    /// The task exits: its ends close (pipe_release), waking the other side.
    pub(crate) fn pipe_release_ends(&mut self, tid: TaskId) {
        let t = &mut self.tasks[tid as usize];
        let ends = [t.stdout, t.stderr];
        let rd = t.stdin_pipe.take();
        for s in ends {
            if let Sink::Pipe(p) = s {
                let pipe = &mut self.pipes[p as usize];
                pipe.writers = pipe.writers.saturating_sub(1);
                if pipe.writers == 0 {
                    for w in std::mem::take(&mut pipe.read_waiters) {
                        self.sched.wake(w, self.now, None);
                    }
                }
                self.pipe_release_if_unused(p);
            }
        }
        if let Some(p) = rd {
            let pipe = &mut self.pipes[p as usize];
            pipe.readers = pipe.readers.saturating_sub(1);
            if pipe.readers == 0 {
                pipe.buf.clear();
                for w in std::mem::take(&mut pipe.write_waiters) {
                    self.sched.wake(w, self.now, None);
                }
            }
            self.pipe_release_if_unused(p);
        }
    }

    fn copy_ns(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.machine.cpu_model.copy_bw * 1e9) as u64
    }

    /// pipe_write of text printed by a task: appended whole (a tool's line or report), the
    /// copy charged; with no reader left the task gets SIGPIPE.
    pub(crate) fn pipe_write_text(&mut self, tid: TaskId, p: u32, text: &[u8]) {
        let pipe = &mut self.pipes[p as usize];
        if pipe.readers == 0 {
            self.kill(tid, SIGPIPE_STATUS);
            return;
        }
        pipe.buf.extend(text);
        for w in std::mem::take(&mut pipe.read_waiters) {
            self.sched.wake(w, self.now, None);
        }
        let ns = self.copy_ns(text.len());
        self.charge_sys(tid, ns);
    }

    /// Room left in the pipe the task's stdout goes to (`usize::MAX` when stdout is not a
    /// pipe). A bulk writer that finds none calls [`Kernel::pipe_wait_room`].
    pub fn stdout_pipe_room(&self, tid: TaskId) -> usize {
        match self.tasks[tid as usize].stdout {
            Sink::Pipe(p) => {
                let pipe = &self.pipes[p as usize];
                if pipe.readers == 0 {
                    // The next write raises SIGPIPE.
                    return usize::MAX;
                }
                PIPE_CAPACITY.saturating_sub(pipe.buf.len())
            }
            _ => usize::MAX,
        }
    }

    /// The pipe is full: sleep until a reader makes room (or leaves).
    pub fn pipe_wait_room(&mut self, tid: TaskId) -> Step {
        if let Sink::Pipe(p) = self.tasks[tid as usize].stdout {
            let pipe = &mut self.pipes[p as usize];
            if !pipe.write_waiters.contains(&tid) {
                pipe.write_waiters.push(tid);
            }
        }
        Step::Block { io: false }
    }

    /// Whether the task's standard input is a pipe.
    pub fn stdin_is_pipe(&self, tid: TaskId) -> bool {
        self.tasks[tid as usize].stdin_pipe.is_some()
    }

    /// pipe_read from the task's standard input, at most `max` bytes.
    pub fn stdin_read(&mut self, tid: TaskId, max: usize) -> PipeRead {
        let Some(p) = self.tasks[tid as usize].stdin_pipe else { return PipeRead::Eof };
        let pipe = &mut self.pipes[p as usize];
        if pipe.buf.is_empty() {
            if pipe.writers == 0 {
                return PipeRead::Eof;
            }
            if !pipe.read_waiters.contains(&tid) {
                pipe.read_waiters.push(tid);
            }
            return PipeRead::Wait(Step::Block { io: false });
        }
        let n = max.min(pipe.buf.len());
        let data: Vec<u8> = pipe.buf.drain(..n).collect();
        if pipe.buf.len() < PIPE_CAPACITY {
            for w in std::mem::take(&mut pipe.write_waiters) {
                self.sched.wake(w, self.now, None);
            }
        }
        let ns = self.copy_ns(n);
        self.charge_sys(tid, ns);
        PipeRead::Data(data)
    }
}
