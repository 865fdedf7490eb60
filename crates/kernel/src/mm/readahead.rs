//! Readahead (mm/readahead.c): on a miss, a sequential reader gets a window that grows
//! (get_init_ra_size, get_next_ra_size) up to read_ahead_kb — or the device's request size
//! for large reads — and the next window is started asynchronously when the reader reaches
//! the async mark, so a streaming reader keeps the device busy.

use super::{Pfn, Slot, PAGE_SIZE};
use crate::block::{Dir, ReqKind};
use crate::fs::{Fadvice, RaState};
use crate::profile::{MmapReadaround, RaHistory, RaRule};
use crate::task::Step;
use crate::Kernel;
use memtwin_engine::TaskId;

fn roundup_pow_of_two(x: u64) -> u64 {
    x.max(1).next_power_of_two()
}

/// get_init_ra_size
fn init_ra_size(size: u64, max: u64) -> u64 {
    let n = roundup_pow_of_two(size);
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// get_next_ra_size
fn next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

impl Kernel {
    fn ra_limits(&self, m: u32, req: u64) -> u64 {
        self.ra_limits_scaled(m, req, 1)
    }

    /// The largest window: ra_pages (the device's read_ahead_kb, `scale` times it for a
    /// file advised POSIX_FADV_SEQUENTIAL), or up to the device's request size for a read
    /// larger than that (ondemand_readahead's max_pages).
    fn ra_limits_scaled(&self, m: u32, req: u64, scale: u64) -> u64 {
        let Some(dev) = self.mm.mappings[m as usize].dev else { return req.max(1) };
        let d = &self.block.devs[dev as usize];
        let mut max = (scale * d.disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE).max(1);
        let io_pages = (d.disk.model.max_request_bytes / PAGE_SIZE).max(1);
        if req > max && io_pages > max {
            max = req.min(io_pages);
        }
        max
    }

    fn ra_state(&mut self, tid: TaskId, fd: usize) -> Option<&mut RaState> {
        self.file_mut(tid, fd).ok().map(|f| &mut f.ra)
    }

    /// Readahead is off for the mapping's device (read_ahead_kb = 0: bdi ra_pages == 0).
    fn ra_disabled(&self, m: u32) -> bool {
        self.mm.mappings[m as usize].dev.is_some_and(|d| self.block.devs[d as usize].disk.read_ahead_kb == 0)
    }

    /// page_cache_sync_ra: a read missed the page cache at `index`, wanting `req` pages.
    pub(crate) fn page_cache_sync_ra(&mut self, tid: TaskId, fd: usize, m: u32, index: u64, req: u64, size: u64) -> Result<(), Step> {
        let eof = size.div_ceil(PAGE_SIZE);
        if self.ra_disabled(m) {
            // page_cache_sync_ra: "Even if readahead is disabled, issue this request as
            // readahead ... limit the read to just the requested range, which we'll set to
            // 1 page for this case" (force_page_cache_ra with req_count = 1): no window.
            if let Some(r) = self.ra_state(tid, fd) {
                *r = RaState { start: index, size: 0, async_size: 0, prev_index: r.prev_index };
            }
            return self.ra_submit(tid, m, index, 1, eof, true, None);
        }
        let advice = self.file(tid, fd).map(|f| f.advice).unwrap_or_default();
        if advice == Fadvice::Random {
            // FMODE_RANDOM: force_page_cache_ra of the request, up to max(io_pages,
            // ra_pages); the readahead state is left alone.
            let n = req.min(self.ra_limits(m, u64::MAX)).max(1);
            return self.ra_submit(tid, m, index, n, eof, true, None);
        }
        let max = self.ra_limits_scaled(m, req, if advice == Fadvice::Sequential { 2 } else { 1 });
        let ra = *self.ra_state(tid, fd).ok_or(Step::Yield)?;
        let Some(new) = self.ondemand_window(m, ra, index, req, max) else {
            // Standalone, small random read: read as is, and do not pollute the readahead
            // state (do_page_cache_ra of the request).
            return self.ra_submit(tid, m, index, req.max(1), eof, true, None);
        };
        if let Some(r) = self.ra_state(tid, fd) {
            *r = RaState { prev_index: r.prev_index, ..new };
        }
        self.ra_submit(tid, m, new.start, new.size, eof, true, new.mark())
    }

    /// The window a miss at `index` (a read of `req` pages, windows of at most `max`) opens
    /// from the file's state `ra`: ondemand_readahead before 6.10, page_cache_sync_ra
    /// since. None: a standalone random read (the request alone, the state untouched).
    fn ondemand_window(&self, m: u32, ra: RaState, index: u64, req: u64, max: u64) -> Option<RaState> {
        let rule = self.profile.ra_rule;
        let mut w = ra;
        let initial = |w: &mut RaState| {
            // initial_readahead: get_init_ra_size; the part past the request is the async
            // part (6.10+: half the window when the request fills it).
            w.start = index;
            w.size = init_ra_size(req, max);
            w.async_size = if w.size > req {
                w.size - req
            } else if rule == RaRule::SyncRa {
                w.size >> 1
            } else {
                w.size
            };
        };
        if index == 0 {
            // Start of file.
            initial(&mut w);
        } else if rule == RaRule::Ondemand && ra.size > 0 && (index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size) {
            // The expected callback index: assume sequential access, ramp the window up
            // and push it forward.
            w.start = ra.start + ra.size;
            w.size = next_ra_size(ra.size, max);
            w.async_size = w.size;
        } else if req > max || index.wrapping_sub(ra.prev_index) <= 1 {
            // An oversized read, or a sequential cache miss (index - prev_index == 1; 0 for
            // unaligned reads).
            initial(&mut w);
        } else {
            // try_context_readahead: the cached pages a sequential stream would have left
            // just before `index` (count_history_pages / page_cache_prev_miss).
            let (contig, from_start) = self.ra_history(m, index, max)?;
            if contig <= req {
                return None;
            }
            // Cached from the start of the file: a strong sign of a long-run stream.
            let contig = if from_start { contig * 2 } else { contig };
            w.start = index;
            w.size = (contig + req).min(max);
            w.async_size = 1;
        }
        if rule == RaRule::Ondemand && index == w.start && w.size == w.async_size {
            // readit: "Will this read hit the readahead marker made by itself? If so,
            // trigger the readahead marker hit now, and merge the resulted next readahead
            // window into the current one."
            let add = next_ra_size(w.size, max);
            if w.size + add <= max {
                w.async_size = add;
                w.size += add;
            } else {
                w.size = max;
                w.async_size = max >> 1;
            }
        }
        Some(w)
    }

    /// How many pages just before `index` are cached, looked up backwards at most `max`
    /// deep, and whether they reach back to the start of the file (the lookup wrapped
    /// below index 0). None where the era has no history lookup. A shadow entry is a miss.
    fn ra_history(&self, m: u32, index: u64, max: u64) -> Option<(u64, bool)> {
        let cached = |i: u64| matches!(self.mm.slot(m, i), Slot::Page(_));
        let mut i = index - 1;
        match self.profile.ra_history {
            RaHistory::None => return None,
            RaHistory::RadixPrevHole => {
                // radix_tree_prev_hole: look at index - 1 .. index - max; none missing
                // gives index - 1 - max.
                for _ in 0..max {
                    if !cached(i) {
                        break;
                    }
                    if i == 0 {
                        return Some((index, true));
                    }
                    i -= 1;
                }
            }
            RaHistory::XarrayPrevMiss => {
                // page_cache_prev_miss: the first xas_prev reads index - 1 itself, each
                // further one steps back; none missing leaves the last one looked at.
                for n in 0..max {
                    if n > 0 {
                        if i == 0 {
                            return Some((index, true));
                        }
                        i -= 1;
                    }
                    if !cached(i) {
                        break;
                    }
                }
            }
        }
        Some((index - 1 - i, false))
    }

    /// page_cache_async_ra: a read reached page `p` at `index`, which carries PG_readahead;
    /// `req` pages of the read are left from it.
    pub(crate) fn page_cache_async_ra(&mut self, tid: TaskId, fd: usize, m: u32, index: u64, p: Pfn, req: u64, size: u64) {
        // "no readahead" when ra_pages is 0; the bit is PG_reclaim on a page under
        // writeback.
        if self.ra_disabled(m) || self.mm.pages.writeback(p) {
            return;
        }
        self.mm.pages.clear_readahead(p);
        let Some(ra) = self.ra_state(tid, fd).copied() else { return };
        let advice = self.file(tid, fd).map(|f| f.advice).unwrap_or_default();
        let max = self.ra_limits_scaled(m, req, if advice == Fadvice::Sequential { 2 } else { 1 });
        let Some(w) = self.async_window(m, ra, index, req, max) else { return };
        if let Some(r) = self.ra_state(tid, fd) {
            *r = RaState { prev_index: r.prev_index, ..w };
        }
        let eof = size.div_ceil(PAGE_SIZE);
        let _ = self.ra_submit(tid, m, w.start, w.size, eof, false, w.mark());
    }

    /// The window page_cache_async_ra opens from state `ra` when a read of `req` pages
    /// reaches the marked page at `index` (windows of at most `max`); None: the cached run
    /// after the page is longer than a window, nothing to read ahead.
    fn async_window(&self, m: u32, ra: RaState, index: u64, req: u64, max: u64) -> Option<RaState> {
        let rule = self.profile.ra_rule;
        let expected = ra.start + ra.size - ra.async_size;
        let mut w = ra;
        if index == expected || (rule == RaRule::Ondemand && index == ra.start + ra.size) {
            // The expected callback index: ramp the window up and push it forward.
            w.start = ra.start + ra.size;
            w.size = next_ra_size(ra.size, max).max(if rule == RaRule::SyncRa { ra.size } else { 0 });
        } else {
            // "Hit a marked folio without valid readahead state. E.g. interleaved reads.
            // Query the pagecache for async_size, which normally equals to readahead size.
            // Ramp it up and use it as the new readahead size."
            let start = self.page_cache_next_miss(m, index + 1, max);
            if start - index > max {
                return None;
            }
            w.start = start;
            w.size = next_ra_size(start - index + req, max);
        }
        w.async_size = w.size;
        Some(w)
    }

    /// page_cache_next_miss: the first index from `index` on (at most `max` looked at) whose
    /// page is not cached; `index + max` when all are.
    fn page_cache_next_miss(&self, m: u32, index: u64, max: u64) -> u64 {
        (index..index + max).find(|&i| !matches!(self.mm.slot(m, i), Slot::Page(_))).unwrap_or(index + max)
    }

    /// The device's readahead in pages (bdi ra_pages, the file's f_ra.ra_pages at open);
    /// 1 for a mapping without a device.
    fn ra_pages(&self, m: u32) -> u64 {
        self.mm.mappings[m as usize].dev.map(|d| (self.block.devs[d as usize].disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE).max(1)).unwrap_or(1)
    }

    /// do_sync_mmap_readahead of a VM_SEQ_READ mapping: page_cache_sync_ra with req_count =
    /// ra_pages on the readahead state of `tid`'s mapped file (the fault path does not
    /// move its prev_pos). Returns the window (start, pages, the page to mark) to read for
    /// a major fault at `index`; a miss with no window of its own (neither the start of
    /// the file, nor expected, nor after cached history) reads ra_pages from the fault
    /// with no mark and the state untouched (do_page_cache_ra).
    pub(crate) fn mmap_seq_sync_ra(&mut self, tid: TaskId, m: u32, index: u64) -> (u64, u64, Option<u64>) {
        let ra_pages = self.ra_pages(m);
        let max = self.ra_limits(m, ra_pages);
        let ra = self.file_vma(tid, m).ra;
        match self.ondemand_window(m, ra, index, ra_pages, max) {
            Some(w) => {
                self.file_vma(tid, m).ra = RaState { prev_index: ra.prev_index, ..w };
                (w.start, w.size, w.mark())
            }
            None => (index, ra_pages, None),
        }
    }

    /// do_sync_mmap_readahead's read-around for a mapping without advice whose faults have
    /// not missed more than MMAP_LOTSAMISS times: ra_pages centred on the fault, its last
    /// quarter the async part since 3.1; since 6.16 a VM_EXEC mapping reads ra_pages from
    /// the fault on, cut at the end of the mapping (`eof` here), with no async part. The
    /// window is the file's readahead state. Returns (start, pages, the page to mark).
    pub(crate) fn mmap_read_around(&mut self, tid: TaskId, m: u32, index: u64, eof: u64) -> (u64, u64, Option<u64>) {
        let ra_pages = self.ra_pages(m);
        let exec = self.mm.mappings[m as usize].exec;
        let (start, size, async_size) = match self.profile.mmap_readaround {
            MmapReadaround::MarkedExecForward if exec => (index, ra_pages.min(eof.saturating_sub(index)).max(1), 0),
            MmapReadaround::Marked | MmapReadaround::MarkedExecForward => (index.saturating_sub(ra_pages / 2), ra_pages, ra_pages / 4),
            MmapReadaround::Unmarked => (index.saturating_sub(ra_pages / 2), ra_pages, 0),
        };
        let v = self.file_vma(tid, m);
        v.ra = RaState { start, size, async_size, prev_index: v.ra.prev_index };
        (start, size, v.ra.mark())
    }

    /// do_async_mmap_readahead: a fault found page `p` at `index` cached with
    /// PG_readahead (fault-around leaves such a page unmapped): page_cache_async_ra with
    /// req_count = ra_pages on the readahead state of `tid`'s mapped file.
    pub(crate) fn mmap_async_ra(&mut self, tid: TaskId, m: u32, index: u64, p: Pfn, eof: u64) {
        // With readahead off (ra_pages 0) the kernel leaves the bit, but the fault maps
        // the page and later accesses do not fault; the model, which keeps no PTE per
        // page, clears it so that only this access counts as the fault.
        self.mm.pages.clear_readahead(p);
        if self.ra_disabled(m) {
            return;
        }
        let ra_pages = self.ra_pages(m);
        let max = self.ra_limits(m, ra_pages);
        let ra = self.file_vma(tid, m).ra;
        let Some(w) = self.async_window(m, ra, index, ra_pages, max) else { return };
        self.file_vma(tid, m).ra = RaState { prev_index: ra.prev_index, ..w };
        let _ = self.ra_submit(tid, m, w.start, w.size, eof, false, w.mark());
    }

    /// Allocate the missing pages of [start, start+n) (below EOF), insert them locked and
    /// read them in runs of contiguous pages. `must`: the first page is needed now; if it
    /// cannot be allocated the caller waits. `mark`: the page that gets PG_readahead if it
    /// is one of those allocated here (page_cache_ra_unbounded: never a page already
    /// cached).
    fn ra_submit(&mut self, tid: TaskId, m: u32, start: u64, n: u64, eof: u64, must: bool, mark: Option<u64>) -> Result<(), Step> {
        let end = (start + n).min(eof);
        let Some(dev) = self.mm.mappings[m as usize].dev else {
            // No backing device (shmem without swap): pages are zero-filled in place.
            return Ok(());
        };
        let base = self.mm.mappings[m as usize].disk_base;
        let max_req = (self.block.devs[dev as usize].disk.model.max_request_bytes / PAGE_SIZE).max(1);
        let mut run_start = start;
        let mut run_len = 0;
        let mut index = start;
        let mut total = 0;
        while index < end {
            let missing = !matches!(self.mm.slot(m, index), Slot::Page(_));
            if missing {
                match self.page_cache_alloc_cold(tid) {
                    Ok(p) => {
                        if run_len > 0 && run_len >= max_req {
                            self.submit_read(dev, m, base, run_start, run_len, tid);
                            run_len = 0;
                        }
                        if run_len == 0 {
                            run_start = index;
                        }
                        self.filemap_add_page(m, index, p, true);
                        if Some(index) == mark {
                            self.mm.pages.set_readahead(p);
                        }
                        self.charge_readahead_page(tid);
                        run_len += 1;
                        total += 1;
                    }
                    Err(step) => {
                        if total == 0 && must {
                            return Err(step);
                        }
                        break;
                    }
                }
            } else if run_len > 0 {
                self.submit_read(dev, m, base, run_start, run_len, tid);
                run_len = 0;
            }
            index += 1;
        }
        if run_len > 0 {
            self.submit_read(dev, m, base, run_start, run_len, tid);
        }
        self.account_read(tid, total * PAGE_SIZE);
        Ok(())
    }

    /// One page read in through the page cache: its insertion in the tree and on the LRU
    /// (filemap_add_folio) and the filesystem's readpage work for it (mm/cost.rs).
    pub(crate) fn charge_readahead_page(&mut self, tid: TaskId) {
        let c = &self.machine.cpu_model;
        let ns = super::cost::page_cache_insert_ns(c) + c.fs_read_page_ns;
        self.charge_sys(tid, ns);
    }

    fn submit_read(&mut self, dev: u32, m: u32, base: u64, index: u64, n: u64, tid: TaskId) {
        let kind = ReqKind::PageRead { mapping: m, index, n: n as u32 };
        self.submit_bio(dev, Dir::Read, base + index * PAGE_SIZE, n * PAGE_SIZE, kind, Some(tid));
        self.charge_sys(tid, self.machine.cpu_model.io_request_ns);
    }
}

#[cfg(test)]
mod tests {
    use crate::fs::{DiskFs, DiskImage, OpenFlags};
    use crate::mm::Slot;
    use crate::{Kernel, Program, Sink, Step, TaskId};
    use memtwin_engine::NS_PER_SEC;
    use memtwin_machine::KernelProfile;

    const PAGE: u64 = 4096;

    struct Script<F: FnMut(&mut Kernel, TaskId) -> Option<Step>>(F);
    impl<F: FnMut(&mut Kernel, TaskId) -> Option<Step>> Program for Script<F> {
        fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
            (self.0)(k, me).unwrap_or(Step::Exit(0))
        }
    }

    /// A machine of `era` (read_ahead_kb 128: windows of at most 32 pages) with a cold
    /// 1,024-page file /root/f on its disk.
    fn machine(era: &str) -> Kernel {
        let mut m = memtwin_machine::preset("default").unwrap();
        m.kernel = KernelProfile::from_name(era).unwrap();
        for d in &mut m.disks {
            d.read_ahead_kb = 128;
        }
        let mut k = Kernel::boot(m, 1).unwrap();
        let mi = k.fs.mounts.iter().position(|m| m.active && m.dev.is_some()).unwrap();
        let source = k.fs.mounts[mi].source.clone();
        k.restore_disk_image(&DiskImage { filesystems: vec![DiskFs { source, dirs: Vec::new(), files: vec![("/root/f".into(), 1024 * PAGE)] }] });
        k
    }

    /// The pages of /root/f in the page cache.
    fn cached(k: &Kernel) -> Vec<u64> {
        let m = k.fs.inodes[k.fs.lookup("/root/f").unwrap() as usize].mapping;
        let (mut v, mut at) = (Vec::new(), 0);
        while let Some((i, s)) = k.mm.next_slot(m, at, u64::MAX) {
            if matches!(s, Slot::Page(_)) {
                v.push(i);
            }
            at = i + 1;
        }
        v
    }

    /// Run `reads` (file descriptor number among those opened, page index; one page each):
    /// every read waits for its pages before the next.
    fn run(k: &mut Kernel, fds: usize, reads: &[(usize, u64)]) {
        let reads = reads.to_vec();
        let (mut open, mut next) = (Vec::new(), 0);
        let t = k.spawn(
            "t",
            "t",
            Box::new(Script(move |k: &mut Kernel, me| {
                while open.len() < fds {
                    open.push(k.sys_open(me, "/root/f", OpenFlags { read: true, ..Default::default() }).unwrap().0);
                }
                let &(f, index) = reads.get(next)?;
                k.file_mut(me, open[f]).unwrap().pos = index * PAGE;
                let r = k.sys_read(me, open[f], PAGE).unwrap();
                if r.bytes == PAGE {
                    next += 1;
                }
                Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }))
            })),
            Sink::Null,
            Sink::Null,
        );
        k.run_until(k.now + 60 * NS_PER_SEC, &mut |k| k.task_exited(t));
        assert!(k.task_exited(t));
    }

    /// try_context_readahead (page_cache_sync_ra's history lookup since 6.10): a read on a
    /// new descriptor (no sequential state) just past cached pages reads a window sized by
    /// them; past a gap it reads the request alone; 2.4 has no such lookup.
    #[test]
    fn a_miss_just_after_cached_pages_reads_ahead_by_the_history() {
        for era in ["linux-6.x", "linux-5.4", "linux-2.6.39", "linux-2.4"] {
            let mut k = machine(era);
            // Pages 200..263 cached by a reader on descriptor 0 (its first miss at 200 is a
            // standalone read: nothing cached before it).
            let stream: Vec<(usize, u64)> = (200..264).map(|i| (0, i)).collect();
            run(&mut k, 2, &stream);
            let before = cached(&k);
            assert!(before.contains(&200) && before.contains(&263), "{era}: {before:?}");
            let n0 = before.len() as u64;
            // Descriptor 1 reads page 600: nothing cached before it, the request alone.
            run(&mut k, 2, &[(1, 600)]);
            assert_eq!(cached(&k).len() as u64, n0 + 1, "{era}: a standalone random read");
            // Descriptor 1 reads the first page not cached after the stream.
            let gap = (264..).find(|i| !before.contains(i)).unwrap();
            run(&mut k, 2, &[(1, gap)]);
            let got = cached(&k).len() as u64 - n0 - 1;
            let want = match era {
                // 32 pages at most: min(contig + req, max) with contig capped at max - 1
                // (XArray) or max (radix tree).
                "linux-6.x" | "linux-5.4" | "linux-2.6.39" => 32,
                _ => 1,
            };
            assert_eq!(got, want, "{era}: pages read for a miss after {} cached ones", gap - 200);
        }
    }

    /// A file cached from its first page: the history doubles (a whole-file reader).
    #[test]
    fn history_from_the_start_of_the_file_counts_twice() {
        let mut k = machine("linux-6.x");
        run(&mut k, 2, &[(0, 0)]);
        // The initial window at index 0 (get_init_ra_size(1, 32) = 4 pages).
        let first = cached(&k);
        assert_eq!(first, vec![0, 1, 2, 3]);
        // A new descriptor misses at 4: 4 pages back to page 0 -> 2 * 4 + 1 = 9 pages.
        run(&mut k, 2, &[(1, 4)]);
        assert_eq!(cached(&k), (0..13).collect::<Vec<_>>());
    }

    /// ra->prev_pos: the byte after the read on 6.x (a whole-page read of page 5 leaves
    /// page 6, so page 7 is "index - prev_index == 1", a sequential miss with an initial
    /// window), the last page read before 5.12 (page 7 is two on: a standalone read).
    #[test]
    fn the_previous_position_is_the_byte_after_the_read_since_5_12() {
        for (era, want) in [("linux-6.x", 4), ("linux-5.8", 1)] {
            let mut k = machine(era);
            run(&mut k, 1, &[(0, 500)]);
            let n0 = cached(&k).len();
            run(&mut k, 1, &[(0, 600), (0, 602)]);
            // Page 600 alone (random), then 602: the twin reads `want` pages for it.
            assert_eq!(cached(&k).len() - n0, 1 + want, "{era}");
        }
    }

    /// PG_readahead marks a page readahead allocated: the read that reaches it starts the
    /// next window. A window whose mark falls on a page already cached gets no mark
    /// (page_cache_ra_unbounded marks only pages it allocates), so the stream goes on
    /// with a synchronous miss.
    #[test]
    fn the_async_mark_is_a_flag_on_a_page_readahead_allocated() {
        // A read of page 0: the initial window 0..3, its mark on page 1 (async part 3).
        let mut k = machine("linux-6.x");
        run(&mut k, 1, &[(0, 0), (0, 1)]);
        // Reaching page 1 started the next window at the expected index: 4 .. 4 + 8.
        assert_eq!(cached(&k), (0..12).collect::<Vec<_>>());
        // The same with page 1 cached first (by another descriptor): no mark, no window.
        let mut k = machine("linux-6.x");
        run(&mut k, 1, &[(0, 1)]);
        run(&mut k, 1, &[(0, 0), (0, 1)]);
        assert_eq!(cached(&k), vec![0, 1, 2, 3]);
    }

    /// "Hit a marked folio without valid readahead state. E.g. interleaved reads": a new
    /// descriptor reaching another reader's mark sizes a window from the cached run after
    /// it (page_cache_next_miss) and reads it.
    #[test]
    fn a_mark_reached_without_readahead_state_starts_a_window_after_the_cached_run() {
        let mut k = machine("linux-6.x");
        run(&mut k, 1, &[(0, 0)]);
        assert_eq!(cached(&k), vec![0, 1, 2, 3]);
        // Descriptor 1 (no state) reads page 1, the mark: the cached run after it ends at
        // 4, so the window starts there, next_ra_size(4 - 1 + 1 = 4 pages) = 8 pages.
        run(&mut k, 1, &[(0, 1)]);
        assert_eq!(cached(&k), (0..12).collect::<Vec<_>>());
    }
}
