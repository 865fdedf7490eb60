//! fio on the model: the report has fio 3.33's layout (line structure and JSON keys, checked
//! against runs of the real fio recorded in tests/data/fio/), and the page cache shapes what
//! fio measures: cached reads are far faster than direct ones, a file larger than RAM
//! refaults, zipf concentrates hits, buffered writes go through dirty pages and the flusher.

mod common;

use common::{col, run_on as run};
use memtwin_scenario::RunOptions;


fn recorded(name: &str) -> String {
    let p = format!("{}/../../tests/data/fio/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The output of the fio command whose echoed line starts with `# fio` and contains `marker`.
fn fio_output<'a>(transcript: &'a str, marker: &str) -> &'a str {
    let start = transcript.find(&format!("# fio {marker}")).unwrap_or_else(|| panic!("no '# fio {marker}' in:\n{transcript}"));
    let rest = &transcript[start..];
    let body = &rest[rest.find('\n').map(|i| i + 1).unwrap_or(rest.len())..];
    let end = body.find("\n# ").map(|i| i + 1).unwrap_or(body.len());
    &body[..end]
}

/// A report's structure: the label of each line (the text before its first '(' ':' or '='),
/// with repeats of the same label folded, so that values, units and how many latency
/// buckets were non-empty do not matter but the order of the sections does.
fn shape(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let cut = line.find(['(', ':', '=']).unwrap_or(line.len());
        let mut label = line[..cut].trim().to_string();
        // Percentile rows: how many fit a row depends on the widest value.
        if label.starts_with('|') {
            label = "|".into();
        }
        if out.last() != Some(&label) {
            out.push(label);
        }
    }
    out
}

/// (indent, key) of every line of fio's pretty-printed JSON, outside "job options".
fn json_keys(text: &str) -> Vec<(usize, String)> {
    let mut keys = Vec::new();
    let mut skip_indent: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(si) = skip_indent {
            if indent > si {
                continue;
            }
            skip_indent = None;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('"') {
            if let Some(end) = rest.find("\" :") {
                let k = rest[..end].to_string();
                if k == "job options" {
                    skip_indent = Some(indent);
                }
                keys.push((indent, k));
            }
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

const LAYOUT_SCRIPT: &str = "\
fio --name=t --rw=randread --bs=4k --size=16m --filename=f --direct=0 --runtime=1 --time_based
fio --name=t --rw=randread --bs=4k --size=16m --filename=f --direct=1 --runtime=1 --time_based
fio --name=t --rw=randread --bs=4k --size=16m --filename=f --direct=1 --ioengine=libaio --iodepth=8 --runtime=1 --time_based
fio --name=t --rw=randread --bs=4k --size=16m --filename=f --ioengine=psync --iodepth=4 --runtime=1 --time_based
fio --name=t --rw=randrw --bs=4k --size=16m --filename=f --runtime=1 --time_based --numjobs=2
fio --output-format=json --name=t --rw=randread --bs=4k --size=16m --filename=f --direct=1 --runtime=1 --time_based
";

#[test]
fn normal_and_json_layout_match_recorded_fio() {
    let r = run(LAYOUT_SCRIPT, "seed-000", &[]);
    let t = &r.transcript;
    let pairs = [
        ("--name=t --rw=randread --bs=4k --size=16m --filename=f --direct=0", "randread-buffered.txt"),
        ("--name=t --rw=randread --bs=4k --size=16m --filename=f --direct=1 --runtime", "randread-direct.txt"),
        ("--name=t --rw=randread --bs=4k --size=16m --filename=f --direct=1 --ioengine=libaio", "libaio-qd8.txt"),
        ("--name=t --rw=randread --bs=4k --size=16m --filename=f --ioengine=psync --iodepth=4", "psync-iodepth4.txt"),
        ("--name=t --rw=randrw", "randrw-numjobs2.txt"),
    ];
    for (marker, file) in pairs {
        let twin = fio_output(t, marker);
        let real = recorded(file);
        // The real randrw run was not the first on its file, the twin's is: layout lines
        // differ only there.
        let strip = |s: Vec<String>| s.into_iter().filter(|l| !l.contains("Laying out")).collect::<Vec<_>>();
        assert_eq!(strip(shape(twin)), strip(shape(&real)), "{file}: twin output:\n{twin}");
    }
    let json = fio_output(t, "--output-format=json");
    let real = recorded("randread-direct.json");
    assert_eq!(json_keys(json), json_keys(&real), "twin JSON:\n{json}");
}

#[test]
fn job_file_with_global_and_two_jobs_matches_recorded_layout() {
    let mut s = String::new();
    for line in recorded("two.fio").lines() {
        s += &format!("echo '{line}' >> two.fio\n");
    }
    s += "fio two.fio\n";
    let r = run(&s, "seed-000", &[]);
    let twin = fio_output(&r.transcript, "two.fio");
    assert_eq!(shape(twin), shape(&recorded("jobfile-two-group.txt")), "twin output:\n{twin}");
    assert!(twin.contains("(groupid=0, jobs=2)"), "{twin}");
}

#[test]
fn bad_options_are_refused_with_file_and_line() {
    let e = memtwin_scenario::run(&RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("sync\nfio --name=t --size=1m --ioengine=mmap\n".into()),
        machine: "seed-000".into(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.message.contains("t.sh:2") && e.message.contains("ioengine=mmap is not modelled"), "{}", e.message);
    assert_eq!(e.message.lines().count(), 1, "{}", e.message);
    for (cmd, what) in [
        ("fio --name=t --size=1m --bogus=1", "unknown option 'bogus'"),
        ("fio --name=t --size=1m --rw=trim", "trim is not modelled"),
        ("fio --name=t --size=1m --ioengine=libaio --iodepth=4", "buffered I/O is not modelled"),
        ("fio --name=t --size=1m --output-format=terse", "terse"),
        ("fio --name=t --size=1m --randrepeat=0", "randrepeat=0"),
        ("fio --name=t --rw=read", "give size="),
    ] {
        let e = memtwin_scenario::run(&RunOptions {
            script_path: Some("t.sh".into()),
            script_text: Some(format!("{cmd}\n")),
            machine: "seed-000".into(),
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.message.contains("t.sh:1") && e.message.contains(what), "{cmd}: {}", e.message);
    }
    // A job file's errors name the job file's line; fio exits 1.
    let r = run("echo '[global]' > j.fio\necho 'bs=4k' >> j.fio\necho '[a]' >> j.fio\necho 'size=1m' >> j.fio\necho 'foo=1' >> j.fio\nfio j.fio\necho rc=$?\n", "seed-000", &[]);
    assert!(r.transcript.contains("fio: j.fio:5: unknown option 'foo'"), "{}", r.transcript);
    assert!(r.transcript.contains("rc=1"), "{}", r.transcript);
}

/// Read IOPS of the (first) job in a normal report: "IOPS=12.3k" -> 12300.
fn read_iops(out: &str) -> f64 {
    let l = out.lines().find(|l| l.trim_start().starts_with("read: IOPS=")).unwrap_or_else(|| panic!("no read line:\n{out}"));
    let v = &l[l.find("IOPS=").unwrap() + 5..l.find(',').unwrap()];
    let (num, mult) = match v.chars().last().unwrap() {
        'k' => (&v[..v.len() - 1], 1e3),
        'M' => (&v[..v.len() - 1], 1e6),
        _ => (v, 1.0),
    };
    num.parse::<f64>().unwrap() * mult
}

/// (reads issued by the job, read requests the disk completed) from a normal report.
fn issued_and_disk_reads(out: &str) -> (u64, u64) {
    let l = out.lines().find(|l| l.contains("issued rwts: total=")).unwrap();
    let issued = l.split("total=").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
    let d = out.lines().find(|l| l.contains(": ios=")).unwrap();
    let ios = d.split("ios=").nth(1).unwrap().split('/').next().unwrap().parse().unwrap();
    (issued, ios)
}

#[test]
fn cached_randread_is_far_faster_than_cold_direct() {
    let s = "\
fio --name=warm --rw=read --bs=1m --size=32m --filename=f --invalidate=0
fio --name=cached --rw=randread --bs=4k --size=32m --filename=f --invalidate=0 --runtime=1 --time_based
fio --name=cold --rw=randread --bs=4k --size=32m --filename=f --direct=1 --runtime=1 --time_based
";
    let r = run(s, "seed-000", &[]);
    let cached = fio_output(&r.transcript, "--name=cached");
    let cold = fio_output(&r.transcript, "--name=cold");
    let (ci, co) = (read_iops(cached), read_iops(cold));
    assert!(ci > 20.0 * co, "cached {ci} vs cold {co} IOPS\n{cached}\n{cold}");
    // The cached run never went to the disk; every direct read did.
    assert_eq!(issued_and_disk_reads(cached).1, 0, "{cached}");
    let (issued, disk) = issued_and_disk_reads(cold);
    assert_eq!(issued, disk, "{cold}");
}

#[test]
fn randread_larger_than_ram_reads_in_and_refaults() {
    // --invalidate=0: the layout's evictions leave shadows that the reads refault on
    // (fio's default invalidate=1 is POSIX_FADV_DONTNEED, which clears them).
    let s = "fio --name=big --rw=randread --bs=4k --size=384m --filename=f --norandommap --invalidate=0 --runtime=3 --time_based\n";
    let r = run(s, "seed-000", &["ram=256M"]);
    let out = fio_output(&r.transcript, "--name=big");
    let pgpgin = *col(&r.series, "vm.pgpgin").last().unwrap();
    let refaults = *col(&r.series, "vm.workingset_refault_file").last().unwrap();
    let (issued, disk) = issued_and_disk_reads(out);
    assert!(disk > issued / 2, "most reads miss a cache smaller than the file: {issued} issued, {disk} from disk\n{out}");
    assert!(pgpgin > 0 && refaults > 0, "pgpgin {pgpgin}, refaults {refaults}");
}

#[test]
fn zipf_concentrates_hits_on_a_file_larger_than_the_cache() {
    let job = |name: &str, dist: &str| {
        format!("fio --name={name} --rw=randread --bs=4k --size=384m --filename=f --norandommap --random_distribution={dist} --invalidate=0 --runtime=3 --time_based\n")
    };
    let s = job("uniform", "random") + &job("zipf", "zipf:1.2");
    let r = run(&s, "seed-000", &["ram=256M"]);
    let miss = |name: &str| {
        let out = fio_output(&r.transcript, &format!("--name={name}"));
        let (issued, disk) = issued_and_disk_reads(out);
        disk as f64 / issued as f64
    };
    let (mu, mz) = (miss("uniform"), miss("zipf"));
    assert!(mz < mu / 2.0, "zipf miss ratio {mz:.3} vs uniform {mu:.3}");
}

#[test]
fn buffered_randwrite_dirties_pages_that_the_flusher_writes() {
    let s = "fio --name=w --rw=randwrite --bs=4k --size=64m --filename=f --runtime=2 --time_based\nsleep 40\n";
    let r = run(s, "seed-000", &[]);
    let out = fio_output(&r.transcript, "--name=w");
    let dirty = col(&r.series, "vm.nr_dirty");
    let written = col(&r.series, "vm.nr_written");
    let peak = *dirty.iter().max().unwrap();
    assert!(peak > 1000, "randwrite left {peak} dirty pages at most\n{out}");
    assert!(*dirty.last().unwrap() < peak / 10, "the flusher cleaned them: {dirty:?}");
    assert!(written.last().unwrap() - written[0] > peak, "written {written:?}");
    // The writes completed in the page cache: far below a disk's latency.
    assert!(out.contains("write: IOPS="), "{out}");
}

#[test]
fn numjobs_runs_separate_tasks() {
    let r = run("fio --name=t --rw=randread --bs=4k --size=8m --numjobs=2 --runtime=1 --time_based\n", "seed-000", &[]);
    let out = fio_output(&r.transcript, "--name=t");
    assert!(out.contains("Starting 2 processes"), "{out}");
    let pids: Vec<&str> = out.lines().filter(|l| l.contains("(groupid=0, jobs=1)")).map(|l| l.split(" pid=").nth(1).unwrap()).collect();
    assert_eq!(pids.len(), 2, "{out}");
    assert_ne!(pids[0], pids[1]);
    // Each clone works on its own file (NAME.JOBNUM.0).
    assert_eq!(out.matches("Laying out IO file").count(), 2, "{out}");
}

#[test]
fn same_seed_same_bytes() {
    let s = "fio --name=t --rw=randrw --bs=4k --size=16m --random_distribution=pareto:0.3 --runtime=1 --time_based\n";
    assert_eq!(run(s, "seed-000", &[]).transcript, run(s, "seed-000", &[]).transcript);
}
