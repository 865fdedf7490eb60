//! The OOM killer (mm/oom_kill.c): pick the task with the largest badness and kill it.

use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

impl Kernel {
    /// oom_badness: resident pages + swap entries + page-table pages, adjusted by
    /// oom_score_adj in thousandths of memory.
    pub fn oom_badness(&self, tid: TaskId) -> Option<i64> {
        let t = &self.tasks[tid as usize];
        if t.kthread || t.exit_code.is_some() || t.oom_score_adj == -1000 || t.pid == 1 {
            return None;
        }
        let rss = t.rss_anon + t.rss_file + t.rss_shmem;
        let pt = (rss + t.swap_ents) / 512;
        let points = (rss + t.swap_ents + pt) as i64;
        let adj = t.oom_score_adj as i64 * (self.mm.managed as i64) / 1000;
        Some(points + adj)
    }

    /// out_of_memory: kill the worst task; prints what the kernel logs.
    pub fn out_of_memory(&mut self, trigger: TaskId) {
        let victim = (0..self.tasks.len() as TaskId)
            .filter_map(|t| self.oom_badness(t).map(|b| (b, t)))
            .max_by_key(|&(b, t)| (b, std::cmp::Reverse(t)))
            .map(|(_, t)| t);
        let Some(v) = victim else { return };
        let t = &self.tasks[v as usize];
        let line = format!(
            "[{:>12.6}] Out of memory: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB, shmem-rss:{}kB, UID:0 pgtables:{}kB oom_score_adj:{}\n",
            self.now as f64 / 1e9,
            t.pid,
            t.comm,
            t.vm_kb,
            t.rss_anon * 4,
            t.rss_file * 4,
            t.rss_shmem * 4,
            (t.rss_anon + t.rss_file + t.rss_shmem + t.swap_ents) / 512 * 4 + 4,
            t.oom_score_adj
        );
        self.transcript.push_str(&line);
        self.vm.inc(VmItem::OomKill);
        let _ = trigger;
        self.kill(v, 137);
    }
}
