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
fio --name=t --rw=randread --bs=4k --size=16m --filename=f --ioengine=mmap --runtime=1 --time_based
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
        ("--name=t --rw=randread --bs=4k --size=16m --filename=f --ioengine=mmap", "mmap-randread.txt"),
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
        script_text: Some("sync\nfio --name=t --size=1m --ioengine=posixaio\n".into()),
        machine: "seed-000".into(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.message.contains("t.sh:2") && e.message.contains("ioengine=posixaio: accepted: psync, sync, pvsync, libaio, io_uring, mmap"), "{}", e.message);
    assert_eq!(e.message.lines().count(), 1, "{}", e.message);
    for (cmd, what) in [
        ("fio --name=t --size=1m --bogus=1", "unknown option 'bogus'"),
        ("fio --name=t --size=1m --rw=trim", "trim is not modelled"),
        ("fio --name=t --size=1m --ioengine=libaio --iodepth=4", "buffered I/O is not modelled"),
        ("fio --name=t --size=1m --output-format=json+", "json+ is not"),
        ("fio --name=t --size=1m --randrepeat=0", "randrepeat=0"),
        ("fio --name=t --rw=read", "give size="),
        ("fio --name=t --size=1m --bs=1k --ioengine=mmap --fsync=4", "mmap options dictate a minimum block size of 4096 bytes"),
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

/// (majf, minf) of the (first) job in a normal report's cpu line.
fn faults(out: &str) -> (u64, u64) {
    let l = out.lines().find(|l| l.contains("majf=")).unwrap_or_else(|| panic!("no cpu line:\n{out}"));
    let v = |k: &str| l.split(k).nth(1).unwrap().split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap();
    (v("majf="), v("minf="))
}

const LAY_OUT_COLD: &str = "\
fio --name=lay --rw=write --bs=1m --size=32m --filename=f --output-format=json > /dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
";

#[test]
fn mmap_randread_faults_each_page_in_alone() {
    // MADV_RANDOM (fio's advice for a random job): filemap_fault reads the faulting page
    // and nothing around it, so every read of a cold page is one major fault and one disk
    // read, and the retry after the read is not counted again.
    let s = format!("{LAY_OUT_COLD}fio --name=mr --rw=randread --ioengine=mmap --bs=4k --size=32m --filename=f --runtime=1 --time_based\n");
    let r = run(&s, "seed-000", &[]);
    let out = fio_output(&r.transcript, "--name=mr");
    assert!(out.contains("ioengine=mmap, iodepth=1"), "{out}");
    let (issued, disk) = issued_and_disk_reads(out);
    let (majf, minf) = faults(out);
    assert!(issued > 1000, "{out}");
    assert_eq!(disk, issued, "one read per I/O\n{out}");
    assert_eq!(majf, issued, "one major fault per I/O\n{out}");
    assert!(minf < issued / 10, "minor faults {minf} for {issued} major ones\n{out}");
}

#[test]
fn mmap_sequential_read_takes_one_major_fault_then_runs_on_async_readahead() {
    // MADV_SEQUENTIAL: the first fault reads the initial window, which marks a page in its
    // middle (it would otherwise hit its own mark); the access to each marked page starts
    // the next window asynchronously, so the stream never faults for I/O again. fio 3.33
    // on a 6.18 host, the same job on a 32 MiB file after POSIX_FADV_DONTNEED: majf=1.
    let s = format!("{LAY_OUT_COLD}fio --name=ms --rw=read --ioengine=mmap --bs=64k --size=32m --filename=f --invalidate=0\n");
    let r = run(&s, "seed-000", &[]);
    let out = fio_output(&r.transcript, "--name=ms");
    let (majf, minf) = faults(out);
    assert_eq!(majf, 1, "{out}");
    // Fault-around maps 16 pages per minor fault, plus one fault per async window.
    let pages = (32 << 20) / 4096;
    assert!(minf >= pages / 16 && minf < pages / 8, "minf {minf}\n{out}");
    let (_, disk) = issued_and_disk_reads(out);
    assert!(disk > 1, "{out}");
}

#[test]
fn mmap_stores_dirty_the_page_cache_and_the_mapping_counts_in_mapped() {
    let s = "\
fio --name=mw --rw=randwrite --ioengine=mmap --bs=4k --size=64m --filename=f --runtime=3 --time_based
sleep 40
";
    let r = run(s, "seed-000", &[]);
    let out = fio_output(&r.transcript, "--name=mw");
    let dirty = col(&r.series, "vm.nr_dirty");
    let mapped = col(&r.series, "vm.nr_mapped");
    let peak = *dirty.iter().max().unwrap();
    assert!(peak > 1000, "stores left {peak} dirty pages at most\n{out}");
    assert!(*dirty.last().unwrap() < peak / 10, "the flusher cleaned them: {dirty:?}");
    // The job maps its 64 MiB region; the mapping goes when the job exits.
    let (most, last) = (*mapped.iter().max().unwrap(), *mapped.last().unwrap());
    assert!(most >= last + 10_000, "nr_mapped {mapped:?}");
    // A store to a page not in the cache is a major fault (the page is read, then made
    // writable); one to a clean cached page a minor one (page_mkwrite): a fault per page
    // dirtied. (invalidate=1 dropped the laid-out file: these are major.)
    let (majf, minf) = faults(out);
    assert!(majf + minf >= peak, "majf {majf}, minf {minf}, dirty pages {peak}\n{out}");
    assert!(majf > 1000, "{out}");
}

#[test]
fn mmap_engine_invalidates_like_psync_and_maps_cached_pages_by_fault_around() {
    // fio 3.33's mmap engine has no invalidate hook: invalidate=1 is posix_fadvise(DONTNEED)
    // as for psync, so a warm file is read from the disk again. With invalidate=0 the cached
    // file is mapped by minor faults of 16 pages each (fio 3.33 on a 6.18 host: 32 MiB,
    // 8,192 pages, minf=523 with invalidate=0; majf=8192 and 8,192 disk reads without).
    let s = "\
fio --name=warm --rw=read --bs=1m --size=32m --filename=f --invalidate=0
fio --name=kept --rw=randread --ioengine=mmap --bs=4k --size=32m --filename=f --invalidate=0 --runtime=1 --time_based
fio --name=dropped --rw=randread --ioengine=mmap --bs=4k --size=32m --filename=f --runtime=1 --time_based
";
    let r = run(s, "seed-000", &[]);
    let kept = fio_output(&r.transcript, "--name=kept");
    let dropped = fio_output(&r.transcript, "--name=dropped");
    assert_eq!(issued_and_disk_reads(kept).1, 0, "{kept}");
    let (majf, minf) = faults(kept);
    assert_eq!(majf, 0, "{kept}");
    assert!((512..=600).contains(&minf), "{kept}");
    assert!(issued_and_disk_reads(dropped).1 > 0, "invalidate dropped the cache first\n{dropped}");
}

/// The kind of each field of a terse line: an integer, a "%f" float, a "%f%%" or "%3.1f%%" /
/// "%3.2f%%" percentage, a percentile "P%=V", or text (the version, job and disk names).
fn terse_shape(line: &str) -> Vec<&'static str> {
    line.split(';')
        .map(|f| {
            let decimals = |x: &str| x.split('.').nth(1).map(|d| d.len());
            if f.contains("%=") {
                "pctile"
            } else if let Some(p) = f.strip_suffix('%') {
                match decimals(p) {
                    Some(6) => "pct6",
                    Some(2) => "pct2",
                    Some(1) => "pct1",
                    _ => "pct?",
                }
            } else if f.parse::<u64>().is_ok() {
                "int"
            } else if f.parse::<f64>().is_ok() && decimals(f) == Some(6) {
                "f6"
            } else {
                "text"
            }
        })
        .collect()
}

#[test]
fn terse_lines_have_the_recorded_fields() {
    // fio 3.33's terse version 3, recorded on a real host: 130 fields for one disk, the
    // disk's counters at the end of every job's line.
    let s = "\
fio --name=t --rw=randread --bs=4k --size=16m --filename=f --runtime=1 --time_based --output-format=terse
fio --name=t --rw=randwrite --bs=4k --size=16m --filename=g --runtime=1 --time_based --output-format=terse
fio --name=a --rw=randread --bs=4k --size=8m --runtime=1 --time_based --numjobs=2 --output-format=terse
";
    let r = run(s, "seed-000", &[]);
    for (marker, file) in [("--name=t --rw=randread", "randread-buffered.terse"), ("--name=t --rw=randwrite", "randwrite.terse")] {
        let twin = fio_output(&r.transcript, marker);
        let real = recorded(file);
        assert_eq!(twin.lines().count(), 1, "{twin}");
        assert_eq!(terse_shape(twin.trim_end()), terse_shape(real.trim_end()), "{file}:\ntwin {twin}\nreal {real}");
        let f: Vec<&str> = twin.trim_end().split(';').collect();
        assert_eq!((f[0], f[1], f[2]), ("3", "fio-3.33", "t"));
        assert_eq!(f[121], "vda", "{twin}");
    }
    // Reads in the read fields, writes in the write fields (KiB moved).
    let rd: Vec<String> = fio_output(&r.transcript, "--name=t --rw=randread").trim_end().split(';').map(String::from).collect();
    let wr: Vec<String> = fio_output(&r.transcript, "--name=t --rw=randwrite").trim_end().split(';').map(String::from).collect();
    assert!(rd[5].parse::<u64>().unwrap() > 0 && rd[46] == "0", "{rd:?}");
    assert!(wr[5] == "0" && wr[46].parse::<u64>().unwrap() > 0, "{wr:?}");
    // numjobs=2 without group_reporting: a line per job, each with the disk at its end.
    let two = fio_output(&r.transcript, "--name=a");
    assert_eq!(two.lines().count(), 2, "{two}");
    for l in two.lines() {
        assert_eq!(l.split(';').count(), 130, "{l}");
    }
}
