//! Tree RCU's deferred frees (kernel/rcutree.c on 2.6.39, kernel/rcu/tree.c on 5.x and
//! 6.x), as far as memory is concerned: an object handed to call_rcu stays allocated until
//! a grace period has passed and is then freed by RCU's callback processing, not by the
//! task that let it go. The VFS frees its hashed dentries this way (d_free ->
//! call_rcu(__d_free), 2.6.x and later) and its inodes (destroy_inode -> call_rcu(
//! i_callback); ext3/ext4_destroy_inode since 2.6.38); 2.4 freed both at once.
//!
//! Timing, from tree RCU's state machine and the scheduler tick (`TICK_NS`, HZ=250): the
//! RCU core starts a grace period at the first tick after a callback is queued
//! (rcu_process_callbacks -> rcu_start_gp; 6.x rcu_gp_kthread's rcu_gp_init); each CPU
//! notices it at its next tick and reports a quiescent state at the tick after it has
//! switched tasks, been idle or run user code (rcu_check_callbacks -> rcu_sched_qs /
//! rcu_report_qs_rdp; a CPU of the model switches tasks between every burst, so the tick
//! after the one that noticed the grace period), which ends it; the callbacks it covered
//! run then (rcu_do_batch). So a callback waits from its call to the next tick, then two
//! ticks: 8 to 12 ms.
//!
//! Where the callbacks run matters to reclaim: 2.6.39 invokes them in the per-CPU rcuc
//! kthreads (rcu_cpu_kthread), 6.x in RCU_SOFTIRQ or rcuc, neither of them the reclaiming
//! task, whose current->reclaim_state counts the slab pages freed as the reclaim's progress
//! (kmem_freepages / __free_slab -> reclaimed_slab). The slab pages the shrinkers' frees
//! release are nobody's progress. (A 6.x softirq run at an interrupt's exit while the
//! reclaimer is current would credit it by chance; not modelled.) The freed pages go to
//! the per-CPU list of the CPU that queued the callback (callbacks are per CPU).

use crate::mm::memcontrol::MemcgId;
use crate::mm::slab::ObjHandle;
use crate::Kernel;
use memtwin_engine::sched::TICK_NS;
use memtwin_engine::Ns;
use std::collections::VecDeque;

/// Callbacks queued one after another with the same run time, on the same CPU and charged
/// to the same cgroup: their objects are the next `n` of `Rcu::objs`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    at: Ns,
    cpu: u16,
    memcg: MemcgId,
    n: u32,
}

/// The callbacks waiting for their grace period, in the order of their calls (so in the
/// order of the times they run): slab objects to free (kmem_cache_free), 8 host bytes
/// each, and whether an event is set for the first of them.
#[derive(Debug, Default)]
pub struct Rcu {
    segs: VecDeque<Segment>,
    objs: VecDeque<ObjHandle>,
    armed: bool,
    /// Callbacks invoked since boot (the `rcu_do_batch` count; no /proc file shows it).
    pub invoked: u64,
}

impl Rcu {
    /// When a callback queued at `now` runs: the grace period that starts at the next
    /// tick ends two ticks later.
    pub fn callback_time(now: Ns) -> Ns {
        (now / TICK_NS + 1) * TICK_NS + 2 * TICK_NS
    }

    /// Objects handed to call_rcu and not freed yet.
    pub fn pending(&self) -> usize {
        self.objs.len()
    }

    /// Host memory of the queue.
    pub fn host_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<Segment>() + self.objs.capacity() * std::mem::size_of::<ObjHandle>()
    }

    fn push(&mut self, at: Ns, cpu: u16, memcg: MemcgId, obj: ObjHandle) {
        match self.segs.back_mut() {
            Some(g) if g.at == at && g.cpu == cpu && g.memcg == memcg && g.n < u32::MAX => g.n += 1,
            _ => self.segs.push_back(Segment { at, cpu, memcg, n: 1 }),
        }
        self.objs.push_back(obj);
    }

    /// Charges of pending callbacks to cgroup `from` are `to`'s (memcg_reparent_objcgs:
    /// the offline cgroup's object cgroup points at its parent).
    pub fn reparent(&mut self, from: MemcgId, to: MemcgId) {
        for g in self.segs.iter_mut().filter(|g| g.memcg == from) {
            g.memcg = to;
        }
    }
}

impl Kernel {
    /// call_rcu of a slab object whose free must wait for a grace period.
    pub(crate) fn call_rcu_free(&mut self, obj: ObjHandle, memcg: MemcgId) {
        let at = Rcu::callback_time(self.now);
        let cpu = self.this_cpu() as u16;
        self.rcu.push(at, cpu, memcg, obj);
        if !self.rcu.armed {
            self.rcu.armed = true;
            self.events.push(at, crate::Event::RcuCallbacks);
        }
    }

    /// rcu_barrier: run the clock until every callback queued so far has run.
    pub fn rcu_barrier(&mut self) {
        if let Some(g) = self.rcu.segs.back() {
            let at = g.at;
            self.run_until(at, &mut |_| false);
        }
    }

    /// rcu_do_batch: the callbacks whose grace period has ended free their objects, in no
    /// task's context (so into no reclaim's progress).
    pub(crate) fn rcu_do_batch(&mut self) {
        self.rcu.armed = false;
        let prev = self.current.take();
        while let Some(&g) = self.rcu.segs.front() {
            if g.at > self.now {
                break;
            }
            self.rcu.segs.pop_front();
            self.irq_cpu = Some(g.cpu as u32);
            for _ in 0..g.n {
                let obj = self.rcu.objs.pop_front().expect("a segment's objects are queued");
                self.kmem_cache_free_memcg(obj, g.memcg);
            }
            self.rcu.invoked += g.n as u64;
        }
        self.irq_cpu = None;
        self.current = prev;
        if let Some(g) = self.rcu.segs.front() {
            self.rcu.armed = true;
            self.events.push(g.at, crate::Event::RcuCallbacks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callback_runs_after_the_next_tick_and_a_grace_period_of_two() {
        assert_eq!(Rcu::callback_time(0), 3 * TICK_NS);
        assert_eq!(Rcu::callback_time(TICK_NS - 1), 3 * TICK_NS);
        assert_eq!(Rcu::callback_time(TICK_NS), 4 * TICK_NS);
        let wait = Rcu::callback_time(5 * TICK_NS + 7) - (5 * TICK_NS + 7);
        assert!(wait > 2 * TICK_NS && wait <= 3 * TICK_NS);
    }

    #[test]
    fn a_removed_cgroups_pending_frees_uncharge_its_parent() {
        let mut r = Rcu::default();
        let obj = ObjHandle::from_raw(1);
        for memcg in [3, 3, 4, 3] {
            r.push(0, 0, memcg, obj);
        }
        assert_eq!((r.segs.len(), r.pending()), (3, 4), "consecutive calls alike share a segment");
        r.reparent(3, 1);
        let m: Vec<(MemcgId, u32)> = r.segs.iter().map(|g| (g.memcg, g.n)).collect();
        assert_eq!(m, [(1, 2), (4, 1), (1, 1)]);
    }
}
