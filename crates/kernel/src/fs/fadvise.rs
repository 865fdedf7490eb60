//! posix_fadvise(2) (mm/fadvise.c), the advice benchmarks use to start from a cold cache.

use super::Target;
use crate::mm::Slot;
use crate::Kernel;
use memtwin_engine::TaskId;

use super::read_write::Errno;

impl Kernel {
    /// POSIX_FADV_DONTNEED over the whole file (generic_fadvise): start writeback of its
    /// dirty pages without waiting (__filemap_fdatawrite_range, WB_SYNC_NONE), then drop the
    /// pages that are clean, unlocked and not under writeback (invalidate_mapping_pages).
    /// Pages of a mapped file stay. Returns the pages dropped.
    pub fn sys_fadvise_dontneed(&mut self, tid: TaskId, fd: usize) -> Result<u64, Errno> {
        let f = self.tasks[tid as usize].files.get(fd).and_then(|f| f.as_ref()).ok_or(Errno::EBADF)?;
        let m = match f.target {
            Target::Inode(ino) => self.fs.inodes[ino as usize].mapping,
            Target::BlockDev(d) => self.block.devs[d as usize].mapping,
            _ => return Ok(0),
        };
        self.charge_sys(tid, self.machine.cpu_model.syscall_ns);
        // shmem has no writeback and invalidate_mapping_pages cannot drop its pages.
        if self.mm.mappings[m as usize].swap_backed() {
            return Ok(0);
        }
        if self.mm.mappings[m as usize].nr_dirty > 0 {
            self.writeback_mapping(m, u64::MAX, Some(tid));
        }
        if self.mm.mappings[m as usize].mapped {
            return Ok(0);
        }
        let mut dropped = 0;
        let lookup_ns = self.machine.cpu_model.page_cache_ns;
        for index in 0..self.mm.mappings[m as usize].slots.len() as u64 {
            if let Slot::Page(p) = self.mm.mappings[m as usize].slot(index) {
                let pg = &self.mm.pages;
                if pg.dirty(p) || pg.writeback(p) || pg.locked(p) {
                    continue;
                }
                self.page_cache_delete(p, None);
                self.charge_sys(tid, lookup_ns);
                dropped += 1;
            }
        }
        Ok(dropped)
    }
}
