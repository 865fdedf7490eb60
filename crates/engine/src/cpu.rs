//! CPU time accounting as /proc/stat reports it. Time is integrated piecewise: between two
//! state changes the number of CPUs busy in user and system mode and the number of tasks
//! waiting on I/O are constant. Idle CPUs count as iowait while tasks wait on I/O, one CPU
//! per waiting task at most (the kernel charges iowait to the CPU a task slept on).

use crate::Ns;

#[derive(Clone, Debug, Default)]
pub struct CpuAccount {
    pub ncpus: u32,
    last: Ns,
    busy_user: u32,
    busy_sys: u32,
    nr_iowait: u32,
    pub user: u64,
    /// User time of tasks with a positive niceness (moved from `user` at the end of
    /// their bursts).
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
}

impl CpuAccount {
    pub fn new(ncpus: u32) -> Self {
        CpuAccount { ncpus, ..Default::default() }
    }

    /// Integrate up to `now`. Call before every change of state.
    pub fn advance(&mut self, now: Ns) {
        debug_assert!(now >= self.last, "time went backwards");
        let dt = now.saturating_sub(self.last);
        if dt == 0 {
            return;
        }
        self.last = now;
        let busy = self.busy_user + self.busy_sys;
        debug_assert!(busy <= self.ncpus);
        self.user += self.busy_user as u64 * dt;
        self.system += self.busy_sys as u64 * dt;
        let idle_cpus = self.ncpus.saturating_sub(busy);
        let wa = idle_cpus.min(self.nr_iowait);
        self.iowait += wa as u64 * dt;
        self.idle += (idle_cpus - wa) as u64 * dt;
    }

    pub fn cpu_start(&mut self, now: Ns, sys: bool) {
        self.advance(now);
        if sys { self.busy_sys += 1 } else { self.busy_user += 1 }
    }
    pub fn cpu_stop(&mut self, now: Ns, sys: bool) {
        self.advance(now);
        if sys { self.busy_sys -= 1 } else { self.busy_user -= 1 }
    }
    pub fn iowait_inc(&mut self, now: Ns) {
        self.advance(now);
        self.nr_iowait += 1;
    }
    pub fn iowait_dec(&mut self, now: Ns) {
        self.advance(now);
        self.nr_iowait -= 1;
    }
    pub fn nr_iowait(&self) -> u32 {
        self.nr_iowait
    }
    pub fn busy(&self) -> u32 {
        self.busy_user + self.busy_sys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn time_is_conserved() {
        let mut c = CpuAccount::new(2);
        c.cpu_start(0, false);
        c.iowait_inc(10);
        c.cpu_start(20, true);
        c.cpu_stop(30, true);
        c.iowait_dec(35);
        c.cpu_stop(40, false);
        c.advance(100);
        assert_eq!(c.user + c.nice + c.system + c.idle + c.iowait, 200);
        assert_eq!(c.user, 40);
        assert_eq!(c.system, 10);
        // CPU 2 idle 0..20 (10 idle, 10 iowait), busy 20..30, iowait 30..35, idle 35..100.
        assert_eq!(c.iowait, 15);
    }
}
