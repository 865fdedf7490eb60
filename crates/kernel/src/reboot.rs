//! Crash (power loss) and reboot: the same machine boots again and finds on its disks what
//! reached them (fs/persist.rs). Memory, page cache, tmpfs, swap, sysctl settings made at
//! run time and every counter start afresh, as after a real boot; the simulated clock, the
//! terminal transcript, captured command output and the random stream carry on.

use crate::{Kernel, KernelError};

impl Kernel {
    /// Boot `old`'s machine again. `clean`: an orderly reboot, after the caller synced
    /// (every file is on disk as the old kernel saw it, the journals committed at unmount).
    /// Otherwise a power loss: only committed metadata and completed writes survive. The
    /// old kernel gives up its transcript and capture buffers and should be dropped.
    pub fn reboot_from(old: &mut Kernel, clean: bool) -> Result<Kernel, KernelError> {
        let image = old.disk_image(clean);
        // One seed-derived stream: the new boot's seed comes from the old kernel's.
        let seed = old.rng.next_u64();
        let now = old.now;
        let mut k = Kernel::boot(old.machine.clone(), seed)?;
        // The clock continues; the new boot's tasks start now.
        k.now = now;
        for t in &mut k.tasks {
            t.start = now;
        }
        k.delayacct_restart_clock();
        k.transcript = std::mem::take(&mut old.transcript);
        k.buffers = std::mem::take(&mut old.buffers);
        k.debug_invariants = old.debug_invariants;
        k.per_page_io = old.per_page_io;
        k.restore_disk_image(&image);
        Ok(k)
    }
}
