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

/// One callback: a slab object to free (kmem_cache_free) and the memory cgroup it is
/// charged to, queued on CPU `cpu`.
#[derive(Clone, Copy, Debug)]
struct RcuCb {
    obj: ObjHandle,
    memcg: MemcgId,
    cpu: u32,
}

/// The callbacks waiting for their grace period, in the order of their calls (so in the
/// order of the times they run), and whether an event is set for the first of them.
#[derive(Debug, Default)]
pub struct Rcu {
    cbs: VecDeque<(Ns, RcuCb)>,
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
        self.cbs.len()
    }

    /// Charges of pending callbacks to cgroup `from` are `to`'s (memcg_reparent_objcgs:
    /// the offline cgroup's object cgroup points at its parent).
    pub fn reparent(&mut self, from: MemcgId, to: MemcgId) {
        for (_, cb) in self.cbs.iter_mut().filter(|(_, cb)| cb.memcg == from) {
            cb.memcg = to;
        }
    }
}

impl Kernel {
    /// call_rcu of a slab object whose free must wait for a grace period.
    pub(crate) fn call_rcu_free(&mut self, obj: ObjHandle, memcg: MemcgId) {
        let at = Rcu::callback_time(self.now);
        let cpu = self.this_cpu() as u32;
        self.rcu.cbs.push_back((at, RcuCb { obj, memcg, cpu }));
        if !self.rcu.armed {
            self.rcu.armed = true;
            self.events.push(at, crate::Event::RcuCallbacks);
        }
    }

    /// rcu_barrier: run the clock until every callback queued so far has run.
    pub fn rcu_barrier(&mut self) {
        if let Some(&(at, _)) = self.rcu.cbs.back() {
            self.run_until(at, &mut |_| false);
        }
    }

    /// rcu_do_batch: the callbacks whose grace period has ended free their objects, in no
    /// task's context (so into no reclaim's progress).
    pub(crate) fn rcu_do_batch(&mut self) {
        self.rcu.armed = false;
        let prev = self.current.take();
        while let Some(&(at, cb)) = self.rcu.cbs.front() {
            if at > self.now {
                break;
            }
            self.rcu.cbs.pop_front();
            self.irq_cpu = Some(cb.cpu);
            self.kmem_cache_free_memcg(cb.obj, cb.memcg);
            self.rcu.invoked += 1;
        }
        self.irq_cpu = None;
        self.current = prev;
        if let Some(&(at, _)) = self.rcu.cbs.front() {
            self.rcu.armed = true;
            self.events.push(at, crate::Event::RcuCallbacks);
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
        for memcg in [3, 4, 3] {
            r.cbs.push_back((0, RcuCb { obj, memcg, cpu: 0 }));
        }
        r.reparent(3, 1);
        let m: Vec<MemcgId> = r.cbs.iter().map(|(_, cb)| cb.memcg).collect();
        assert_eq!(m, [1, 4, 1]);
    }
}
