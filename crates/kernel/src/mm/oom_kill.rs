//! The OOM killer (mm/oom_kill.c): pick the task with the largest badness and kill it.

use crate::Kernel;
use memtwin_engine::TaskId;
use memtwin_procfs::VmItem;

impl Kernel {
    /// oom_badness: resident pages + swap entries + page-table pages, adjusted by
    /// oom_score_adj in thousandths of memory.
    /// (anon rss, file rss, shmem rss, swap entries) of a task, in pages.
    pub fn task_mem(&self, tid: TaskId) -> (u64, u64, u64, u64) {
        let t = &self.tasks[tid as usize];
        let (mut file, mut shmem, mut swap) = (t.rss_file, 0, 0);
        for &m in &t.vmas {
            let s = &self.mm.mappings[m as usize];
            if !s.live {
                continue;
            }
            if s.kind == crate::mm::MappingKind::Shmem {
                shmem += s.nrpages;
                swap += s.nr_swapped;
            } else {
                file += s.nrpages;
            }
        }
        let anon = t.anon_mapping.map_or(0, |m| self.mm.mappings[m as usize].nrpages);
        swap += t.anon_mapping.map_or(0, |m| self.mm.mappings[m as usize].nr_swapped);
        (anon, file, shmem, swap)
    }

    pub fn oom_badness(&self, tid: TaskId) -> Option<i64> {
        let t = &self.tasks[tid as usize];
        if t.kthread || t.exit_code.is_some() || t.oom_score_adj == -1000 || t.pid == 1 || t.killed {
            return None;
        }
        let (anon, file, shmem, swap) = self.task_mem(tid);
        let rss = anon + file + shmem;
        let pt = (rss + swap) / 512;
        let points = (rss + swap + pt) as i64;
        let adj = t.oom_score_adj as i64 * (self.mm.managed as i64) / 1000;
        Some(points + adj)
    }

    /// out_of_memory: kill the worst task; prints what the kernel logs.
    pub fn out_of_memory(&mut self, trigger: TaskId) {
        // vm.oom_kill_allocating_task: the task whose allocation failed is killed, if it
        // may be (out_of_memory: current->mm, not unkillable, oom_score_adj not -1000).
        let t = &self.tasks[trigger as usize];
        let allocating = self.sysctl.oom_kill_allocating_task != 0
            && !t.kthread
            && t.pid != 1
            && t.exit_code.is_none()
            && !t.killed
            && t.oom_score_adj != -1000;
        let (victim, message) = if allocating {
            (Some(trigger), "Out of memory (oom_kill_allocating_task)")
        } else {
            let v = (0..self.tasks.len() as TaskId)
                .filter_map(|t| self.oom_badness(t).map(|b| (b, t)))
                .max_by_key(|&(b, t)| (b, std::cmp::Reverse(self.tasks[t as usize].pid)))
                .map(|(_, t)| t);
            (v, "Out of memory")
        };
        let Some(v) = victim else { return };
        let (anon, file, shmem, swap) = self.task_mem(v);
        let t = &self.tasks[v as usize];
        let msg = format!(
            "{}: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB, shmem-rss:{}kB, UID:0 pgtables:{}kB oom_score_adj:{}\n",
            message,
            t.pid,
            t.comm,
            t.vm_kb,
            anon * 4,
            file * 4,
            shmem * 4,
            (anon + file + shmem + swap) / 512 * 4 + 4,
            t.oom_score_adj
        );
        let line = format!("[{:>12.6}] {msg}", self.now as f64 / 1e9);
        self.transcript.push_str(&line);
        self.printk(crate::printk::KERN_ERR, &msg);
        self.vm.inc(VmItem::OomKill);
        self.kill(v, 137);
    }
}
