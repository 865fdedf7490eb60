//! Per-cgroup pressure stall information: a cgroup's memory.pressure counts the stalls of its
//! own tasks (here memory.high throttling), a sibling's stays at zero, and the parent's
//! includes its children's (psi_task_change walks up the tree).

mod common;

/// The `total=` of the `some` line of the pressure file printed after `# cat PATH`.
fn some_total(t: &str, path: &str) -> u64 {
    let prompt = format!("# cat {path}");
    let mut lines = t.lines().skip_while(|l| *l != prompt);
    assert!(lines.next().is_some(), "no '{prompt}' in:\n{t}");
    let some = lines.next().unwrap_or_else(|| panic!("{path}: nothing printed"));
    assert!(some.starts_with("some avg10="), "{path}: {some}");
    some.rsplit("total=").next().unwrap().trim().parse().unwrap_or_else(|_| panic!("{path}: {some}"))
}

#[test]
fn memory_pressure_is_per_cgroup_and_counts_in_the_ancestors() {
    let text = "\
mkdir /sys/fs/cgroup/pod
echo +memory > /sys/fs/cgroup/pod/cgroup.subtree_control
mkdir /sys/fs/cgroup/pod/job
mkdir /sys/fs/cgroup/idle
echo 128M > /sys/fs/cgroup/pod/job/memory.high
cat /sys/fs/cgroup/pod/job/memory.pressure
cgexec -g memory:pod/job memhog 400M
cgexec -g memory:idle memhog 64M
cat /sys/fs/cgroup/pod/job/memory.pressure
cat /sys/fs/cgroup/pod/memory.pressure
cat /sys/fs/cgroup/idle/memory.pressure
cat /sys/fs/cgroup/memory.pressure
";
    let r = common::run_on(text, "default", &[]);
    let t = &r.transcript;
    // Before anything ran: zero.
    let first = t.lines().skip_while(|l| *l != "# cat /sys/fs/cgroup/pod/job/memory.pressure").nth(1).unwrap();
    assert_eq!(first, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0", "{t}");
    let job = some_total(&t[t.find("# cgexec -g memory:idle").unwrap()..], "/sys/fs/cgroup/pod/job/memory.pressure");
    let pod = some_total(t, "/sys/fs/cgroup/pod/memory.pressure");
    let idle = some_total(t, "/sys/fs/cgroup/idle/memory.pressure");
    let root = some_total(t, "/sys/fs/cgroup/memory.pressure");
    // memory.high throttling (reclaim and the penalty sleeps) is a memory stall of the job.
    assert!(job > 10_000, "job stalled {job} µs:\n{t}");
    // The parent holds only the job's task: the same stall.
    assert!(pod >= job * 9 / 10 && pod <= job + job / 10, "pod {pod} µs vs job {job} µs");
    // The sibling never stalled.
    assert_eq!(idle, 0, "{t}");
    // The root's file is the system's /proc/pressure/memory.
    assert!(root > 0, "{t}");
}
