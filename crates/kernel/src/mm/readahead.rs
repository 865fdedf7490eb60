//! Readahead (mm/readahead.c): on a miss, a sequential reader gets a window that grows
//! (get_init_ra_size, get_next_ra_size) up to read_ahead_kb — or the device's request size
//! for large reads — and the next window is started asynchronously when the reader reaches
//! the async mark, so a streaming reader keeps the device busy.

use super::{Slot, PAGE_SIZE};
use crate::block::{Dir, ReqKind};
use crate::fs::{Fadvice, RaState};
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

    /// page_cache_sync_ra (ondemand_readahead on a miss at `index`).
    pub(crate) fn page_cache_sync_ra(&mut self, tid: TaskId, fd: usize, m: u32, index: u64, req: u64, size: u64) -> Result<(), Step> {
        let eof = size.div_ceil(PAGE_SIZE);
        if self.ra_disabled(m) {
            // page_cache_sync_ra: "Even if readahead is disabled, issue this request as
            // readahead ... limit the read to just the requested range, which we'll set to
            // 1 page for this case" (force_page_cache_ra with req_count = 1): no window.
            if let Some(r) = self.ra_state(tid, fd) {
                *r = RaState { start: index, size: 0, async_size: 0, prev_index: r.prev_index };
            }
            return self.ra_submit(tid, m, index, 1, eof, true);
        }
        let advice = self.file(tid, fd).map(|f| f.advice).unwrap_or_default();
        if advice == Fadvice::Random {
            // FMODE_RANDOM: force_page_cache_ra of the request, up to max(io_pages,
            // ra_pages); the readahead state is left alone.
            let n = req.min(self.ra_limits(m, u64::MAX)).max(1);
            return self.ra_submit(tid, m, index, n, eof, true);
        }
        let max = self.ra_limits_scaled(m, req, if advice == Fadvice::Sequential { 2 } else { 1 });
        let ra = *self.ra_state(tid, fd).ok_or(Step::Yield)?;
        let sequential = index == 0 || ra.prev_index.wrapping_add(1) == index || (ra.size > 0 && index == ra.start + ra.size);
        let (start, n, async_size) = if sequential {
            if ra.size > 0 && index == ra.start + ra.size {
                let n = next_ra_size(ra.size, max);
                (index, n, n)
            } else {
                let n = init_ra_size(req, max);
                (index, n, if n > req { n - req } else { n })
            }
        } else {
            // Random access: read what was asked for, no window.
            (index, req.min(max).max(1), 0)
        };
        if let Some(r) = self.ra_state(tid, fd) {
            *r = RaState { start, size: n, async_size, prev_index: r.prev_index };
        }
        self.ra_submit(tid, m, start, n, eof, true)
    }

    /// page_cache_async_ra: the reader reached the async mark; start the next window.
    pub(crate) fn page_cache_async_ra(&mut self, tid: TaskId, fd: usize, m: u32, _index: u64, size: u64) {
        // page_cache_async_ra: "no readahead" when ra_pages is 0.
        if self.ra_disabled(m) {
            return;
        }
        let Some(ra) = self.ra_state(tid, fd).copied() else { return };
        let advice = self.file(tid, fd).map(|f| f.advice).unwrap_or_default();
        let max = self.ra_limits_scaled(m, ra.size, if advice == Fadvice::Sequential { 2 } else { 1 });
        let start = ra.start + ra.size;
        let n = next_ra_size(ra.size, max);
        if let Some(r) = self.ra_state(tid, fd) {
            r.start = start;
            r.size = n;
            r.async_size = n;
        }
        let eof = size.div_ceil(PAGE_SIZE);
        let _ = self.ra_submit(tid, m, start, n, eof, false);
    }

    /// do_sync_mmap_readahead of a VM_SEQ_READ mapping: page_cache_sync_ra with req_count =
    /// ra_pages on the mapped file's readahead state (ondemand_readahead without a folio).
    /// Returns the window (start, pages) to read for a major fault at `index`: the next
    /// window of a stream whose expected index this is, the initial one at the start of the
    /// file, else ra_pages from the fault with no state kept (do_page_cache_ra; the cached
    /// history try_context_readahead would look for is not modelled). A window that would
    /// hit its own async mark at once takes the next one with it (readit), so a stream read
    /// through a mapping takes one major fault and then runs on async readahead.
    pub(crate) fn mmap_seq_sync_ra(&mut self, m: u32, index: u64) -> (u64, u64) {
        let ra_pages = self.mm.mappings[m as usize]
            .dev
            .map(|d| (self.block.devs[d as usize].disk.read_ahead_kb as u64 * 1024 / PAGE_SIZE).max(1))
            .unwrap_or(1);
        let max = self.ra_limits(m, ra_pages);
        let Some(ra) = self.mm.file_advice_ra(m).copied() else { return (index, ra_pages) };
        let expected = ra.size > 0 && (index == ra.start + ra.size || index == ra.start + ra.size - ra.async_size);
        let (start, mut size, mut async_size) = if expected {
            let n = next_ra_size(ra.size, max);
            (ra.start + ra.size, n, n)
        } else if index == 0 {
            let n = init_ra_size(ra_pages, max);
            (0, n, if n > ra_pages { n - ra_pages } else { n })
        } else {
            return (index, ra_pages);
        };
        if index == start && size == async_size {
            let add = next_ra_size(size, max);
            if size + add <= max {
                async_size = add;
                size += add;
            } else {
                size = max;
                async_size = max >> 1;
            }
        }
        if let Some(r) = self.mm.file_advice_ra(m) {
            *r = RaState { start, size, async_size, prev_index: r.prev_index };
        }
        (start, size)
    }

    /// do_async_mmap_readahead: an access to the page of a VM_SEQ_READ mapping that carries
    /// the async mark (PG_readahead; fault-around leaves it unmapped, so the access faults)
    /// starts the next window (page_cache_async_ra). Returns whether `index` was the mark.
    pub(crate) fn mmap_seq_async_ra(&mut self, tid: TaskId, m: u32, index: u64, eof: u64) -> bool {
        let Some(ra) = self.mm.file_advice_ra(m).copied() else { return false };
        if ra.async_size == 0 || index != ra.start + ra.size - ra.async_size || self.ra_disabled(m) {
            return false;
        }
        let max = self.ra_limits(m, ra.size);
        let (start, n) = (ra.start + ra.size, next_ra_size(ra.size, max));
        if let Some(r) = self.mm.file_advice_ra(m) {
            *r = RaState { start, size: n, async_size: n, prev_index: r.prev_index };
        }
        let _ = self.ra_submit(tid, m, start, n, eof, false);
        true
    }

    /// Allocate the missing pages of [start, start+n) (below EOF), insert them locked and
    /// read them in runs of contiguous pages. `must`: the first page is needed now; if it
    /// cannot be allocated the caller waits.
    fn ra_submit(&mut self, tid: TaskId, m: u32, start: u64, n: u64, eof: u64, must: bool) -> Result<(), Step> {
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
