use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::{Kernel, Program, Step, TaskId, NS_PER_SEC};
struct W { fd: Option<usize>, left: u64, steps: u64 }
impl Program for W {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        self.steps += 1;
        let f = *self.fd.get_or_insert_with(|| k.sys_open(me, "/root/f", OpenFlags { write: true, create: true, trunc: true, ..Default::default() }).unwrap().0);
        if self.left == 0 { return Step::Exit(0); }
        let r = k.sys_write(me, f, self.left.min(1 << 20)).unwrap();
        self.left -= r.bytes;
        if self.steps % 1000 == 0 { eprintln!("t={:.3} left={} dirty={} wb={} free={} wait={:?}", k.now as f64/1e9, self.left>>20, k.mm.stat.dirty, k.mm.stat.writeback, k.mm.nr_free(), r.wait); }
        r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 })
    }
}
fn main() {
    let mb: u64 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(32);
    let m = memtwin_machine::preset("seed-000").unwrap();
    let mut k = Kernel::boot(m, 1).unwrap();
    let t = k.spawn("w", "w", Box::new(W { fd: None, left: mb << 20, steps: 0 }), memtwin_kernel::Sink::Null, memtwin_kernel::Sink::Null);
    let mut n = 0u64;
    k.run_until(100 * NS_PER_SEC, &mut |k| { n += 1; if n % 200000 == 0 { eprintln!("ev {} t={:.6} q={}", n, k.now as f64/1e9, k.events.len()); } k.task_exited(t) });
    eprintln!("done t={:.3} exited={} dirty={} wb={}", k.now as f64 / 1e9, k.task_exited(t), k.mm.stat.dirty, k.mm.stat.writeback);
    k.request_sync();
    let mut n = 0u64;
    k.run_until(k.now + 60 * NS_PER_SEC, &mut |k| { n += 1; if n % 100000 == 0 { eprintln!("ev {} t={:.6} q={} dirty={} wb={} sync={}", n, k.now as f64/1e9, k.events.len(), k.mm.stat.dirty, k.mm.stat.writeback, k.sync_requested); } n > 1_000_000 || k.mm.stat.dirty + k.mm.stat.writeback == 0 });
    eprintln!("synced t={:.3} dirty={} wb={} n={}", k.now as f64 / 1e9, k.mm.stat.dirty, k.mm.stat.writeback, n);
}
