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
fio --name=t --rw=randread --bs=4k --size=64m --filename=f --ioengine=libaio --iodepth=8 --runtime=1 --time_based
fio --name=t --rw=randread --bs=4k --size=64m --filename=f --ioengine=io_uring --iodepth=8 --runtime=1 --time_based
fio --name=t --rw=randwrite --bs=4k --size=64m --filename=f --ioengine=io_uring --iodepth=8 --runtime=1 --time_based
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
        ("--name=t --rw=randread --bs=4k --size=64m --filename=f --ioengine=libaio", "libaio-buffered-randread.txt"),
        ("--name=t --rw=randread --bs=4k --size=64m --filename=f --ioengine=io_uring", "io_uring-buffered-randread.txt"),
        ("--name=t --rw=randwrite --bs=4k --size=64m --filename=f --ioengine=io_uring", "io_uring-buffered-randwrite.txt"),
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

/// A write that fails (a tmpfs too small for the job): fio 3.33's io_u error line, the
/// thread's exit line and the report's error with td->verror, the failed write counted as
/// issued; and a read job whose layout fails: no job report. Both recorded on a 6.18 host
/// with an 8 MiB tmpfs. A job that only writes has its file created and fallocated, not
/// written out first: on tmpfs the failed fallocate is undone and the job's own writes fail.
#[test]
fn errors_are_reported_as_fio_reports_them() {
    let s = "\
mkdir /mnt/small
mount -t tmpfs -o size=8m tmpfs /mnt/small
cd /mnt/small
fio --name=w --rw=write --bs=4k --size=16m --filename=f
rm -f f
fio --name=r --rw=read --bs=4k --size=16m --filename=f
";
    let r = run(s, "default", &[]);
    // Lines without the pid and the date.
    let plain = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("fio: ") || l.contains("err=") || l.contains("issued rwts") || l.contains("Laying out") || l.starts_with("Run status"))
            .map(|l| {
                // pid=N masked, the date after the job's pid cut.
                let l = l.split("): pid=").next().unwrap();
                match l.find("pid=") {
                    Some(i) => {
                        let rest = l[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
                        format!("{}pid=N{rest}", &l[..i])
                    }
                    None => l.to_string(),
                }
            })
            .collect()
    };
    for (marker, file) in [("--name=w", "enospc-write-tmpfs.txt"), ("--name=r", "enospc-layout-tmpfs.txt")] {
        let twin = fio_output(&r.transcript, marker);
        let real = recorded(file);
        assert_eq!(plain(twin), plain(&real), "{file}: twin output:\n{twin}");
        assert_eq!(shape(twin), shape(&real), "{file}: twin output:\n{twin}");
    }
}

/// A trim of a regular file is ioctl(BLKDISCARD) on it: ENOTTY at the first trim, which
/// ends the job (recorded with fio 3.33 on a 6.18 host); a trim of a block device is
/// refused (discard is not modelled).
#[test]
fn a_trim_of_a_file_fails_as_on_linux_and_of_a_device_is_refused() {
    let r = run("fio --name=t --rw=randtrim --bs=4k --size=4m --filename=tf\n", "seed-000", &[]);
    let twin = fio_output(&r.transcript, "--name=t");
    let real = recorded("randtrim-file.txt");
    let key = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("err=") || l.contains("issued rwts") || l.contains("IO depths") || l.contains("complete  :") || l.contains("cpu  "))
            .map(|l| {
                let l = l.split("): pid=").next().unwrap();
                let l = l.split(", ctx=").next().unwrap();
                match l.find("pid=") {
                    Some(i) => format!("{}pid=N{}", &l[..i], l[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit())),
                    None => l.to_string(),
                }
            })
            .collect()
    };
    assert_eq!(key(twin), key(&real), "twin output:\n{twin}");
    assert_eq!(shape(twin), shape(&real), "twin output:\n{twin}");
    let r = run("fio --name=t --rw=trim --bs=4k --size=4m --filename=/dev/vda\n", "seed-000", &[]);
    assert!(r.transcript.contains("discard (BLKDISCARD) is not modelled"), "{}", r.transcript);
}

/// extend_file: a job that only writes (overwrite=0) creates and fallocates its file and
/// writes nothing before it runs, so its 64 MiB are dirtied once; a job that reads has the
/// file written out first. On a 6.18 host the same write job raised nr_dirtied by 16,385
/// and 16,397 pages (two runs, host-wide).
#[test]
fn a_write_job_does_not_write_its_file_out_first() {
    let s = "\
grep -E ^nr_dirtied /proc/vmstat
fio --name=w --rw=write --bs=1m --size=64m --filename=f
grep -E ^nr_dirtied /proc/vmstat
fio --name=r --rw=read --bs=1m --size=64m --filename=g
grep -E ^nr_dirtied /proc/vmstat
";
    let r = run(s, "default", &[]);
    let d: Vec<u64> = r.transcript.lines().filter_map(|l| l.strip_prefix("nr_dirtied ")).map(|v| v.parse().unwrap()).collect();
    assert_eq!(d.len(), 3, "{}", r.transcript);
    let pages = (64 << 20) / 4096;
    assert_eq!(d[1] - d[0], pages, "the write job: its own writes only\n{}", r.transcript);
    assert_eq!(d[2] - d[1], pages, "the read job's layout\n{}", r.transcript);
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
        ("fio --name=t --size=1m --output-format=json+", "json+ is not"),
        ("fio --name=t --size=1m --fadvise_hint=willneed", "fadvise_hint=willneed: accepted: 0, 1, sequential, random"),
        ("fio --name=t --size=1m --randseed=x", "randseed=x"),
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
fn mmap_randread_without_advice_reads_around_each_fault() {
    // fadvise_hint=0: fio_madvise_file gives no advice, so filemap_fault reads ra_pages
    // around a cold page (do_sync_mmap_readahead), its last quarter marked for the next
    // window: far fewer major faults and disk reads than pages read. fio 3.33 on a 6.18
    // host, 4 KiB random reads over a cold 64 MiB file, ra_pages 2048, 2 s: majf=12
    // without advice, 16384 with MADV_RANDOM.
    let s = format!(
        "{LAY_OUT_COLD}fio --name=adv --rw=randread --ioengine=mmap --bs=4k --size=32m --filename=f --runtime=1 --time_based\n\
         echo 3 > /proc/sys/vm/drop_caches\n\
         fio --name=noadv --rw=randread --ioengine=mmap --bs=4k --size=32m --filename=f --runtime=1 --time_based --fadvise_hint=0\n"
    );
    let r = run(&s, "default", &[]);
    let adv = fio_output(&r.transcript, "--name=adv");
    let noadv = fio_output(&r.transcript, "--name=noadv");
    let pages = (32 << 20) / 4096;
    let (majf_adv, _) = faults(adv);
    let (majf, _) = faults(noadv);
    let (_, disk) = issued_and_disk_reads(noadv);
    assert!(majf_adv > pages / 2, "MADV_RANDOM: a major fault per cold page\n{adv}");
    assert!(majf * 8 < majf_adv, "read-around: majf {majf} against {majf_adv}\n{noadv}");
    assert!(disk * 4 < pages, "read-around: {disk} disk reads for {pages} pages\n{noadv}");
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

/// (average, in µs) of a latency line ("slat", "clat", "lat") of a normal report.
fn avg_us(out: &str, what: &str) -> f64 {
    let l = out.lines().find(|l| l.trim_start().starts_with(&format!("{what} ("))).unwrap_or_else(|| panic!("no {what} line:\n{out}"));
    let unit = &l[l.find('(').unwrap() + 1..l.find(')').unwrap()];
    let v: f64 = l.split("avg=").nth(1).unwrap().split(',').next().unwrap().trim().parse().unwrap();
    match unit {
        "nsec" => v / 1000.0,
        "usec" => v,
        "msec" => v * 1000.0,
        _ => panic!("{l}"),
    }
}

#[test]
fn buffered_libaio_reads_in_io_submit_and_io_uring_reads_overlap() {
    // A cold 1 GiB file on the seed-000 machine (2 GiB): each 4 KiB random read misses.
    let s = "\
fio --name=p --rw=randread --bs=4k --size=1g --filename=f --runtime=1 --time_based
fio --name=a --rw=randread --bs=4k --size=1g --filename=f --ioengine=libaio --iodepth=8 --runtime=1 --time_based
fio --name=u --rw=randread --bs=4k --size=1g --filename=f --ioengine=io_uring --iodepth=8 --runtime=1 --time_based
fio --name=d --rw=randread --bs=4k --size=1g --filename=f --ioengine=io_uring --iodepth=8 --direct=1 --runtime=1 --time_based
";
    let r = run(s, "seed-000", &[]);
    let out = |n: &str| fio_output(&r.transcript, &format!("--name={n} "));
    let (p, a, u, d) = (out("p"), out("a"), out("u"), out("d"));
    // libaio: aio_read runs the buffered read inside io_submit (no IOCB_WAITQ for aio), so
    // the submission lasts one disk read, the queue never has more than one read at the
    // disk, and the event waits in the ring behind the seven queued before it (fio reaps
    // one per submission). Measured on 6.18 with fio 3.33: slat 31 us = psync's clat,
    // clat 228 us = 7.3 slat, IOPS 0.94 of psync's.
    let (sl, cl, pcl) = (avg_us(a, "slat"), avg_us(a, "clat"), avg_us(p, "clat"));
    assert!((sl / pcl - 1.0).abs() < 0.2, "libaio slat {sl} us vs psync clat {pcl} us\n{a}\n{p}");
    assert!((cl / (7.0 * sl) - 1.0).abs() < 0.2, "libaio clat {cl} us vs 7 x slat {sl} us\n{a}");
    let (pi, ai, ui, di) = (read_iops(p), read_iops(a), read_iops(u), read_iops(d));
    assert!((ai / pi - 1.0).abs() < 0.15, "libaio {ai} vs psync {pi} IOPS");
    // io_uring: the read arms a wait on the page and returns (IOCB_WAITQ, 5.9+): eight
    // reads at the device, like O_DIRECT's eight (6.18: 72.4k IOPS against psync's 32.8k).
    assert!(ui > 4.0 * pi, "io_uring buffered {ui} vs psync {pi} IOPS\n{u}");
    assert!(ui > 0.8 * di && ui < 1.2 * di, "io_uring buffered {ui} vs O_DIRECT {di} IOPS");
    assert!(avg_us(u, "slat") < 0.2 * sl, "io_uring submits without waiting\n{u}");
    for o in [p, a, u] {
        let (issued, disk) = issued_and_disk_reads(o);
        assert!(disk as f64 > 0.95 * issued as f64 && disk <= issued + 8, "one disk read per I/O: {issued} issued, {disk} read\n{o}");
    }
    // Each reap takes one event; the last ones are reaped together at the end.
    assert!(a.contains("complete  : 0=0.0%, 4=100.0%"), "{a}");
}

#[test]
fn buffered_libaio_writes_complete_in_io_submit() {
    let s = "fio --name=w --rw=randwrite --bs=4k --size=64m --filename=f --ioengine=libaio --iodepth=8 --runtime=1 --time_based\n";
    let r = run(s, "seed-000", &[]);
    let w = fio_output(&r.transcript, "--name=w");
    // The copy into the page cache is the submission; its event waits behind seven.
    let (sl, cl) = (avg_us(w, "slat"), avg_us(w, "clat"));
    assert!(sl > 0.5 && (cl / (7.0 * sl) - 1.0).abs() < 0.25, "slat {sl} us, clat {cl} us\n{w}");
    assert!(*col(&r.series, "vm.nr_dirty").iter().max().unwrap() > 1000, "the writes dirtied the page cache");
}

#[test]
fn engines_the_kernel_lacks_are_refused() {
    let cases = [
        ("--ioengine=io_uring --direct=1", "linux-2.6.39", "io_uring_setup(2) does not exist in linux-2.6.39"),
        ("--ioengine=io_uring --direct=1", "linux-2.4", "io_uring_setup(2) does not exist in linux-2.4"),
        ("--ioengine=libaio --direct=1", "linux-2.4", "io_setup(2) does not exist in linux-2.4"),
    ];
    for (opts, kernel, what) in cases {
        let s = format!("fio --name=t --rw=randread --bs=4k --size=4m --filename=f {opts} --runtime=1 --time_based\necho rc=$?\n");
        let r = run(&s, "seed-000", &[&format!("kernel={kernel}")]);
        assert!(r.transcript.contains(what) && r.transcript.contains("rc=1"), "{kernel} {opts}:\n{}", r.transcript);
    }
    // What those kernels have runs: buffered libaio on 2.6.39, io_uring O_DIRECT on 5.4.
    for (opts, kernel) in [("--ioengine=libaio", "linux-2.6.39"), ("--ioengine=io_uring --direct=1", "linux-5.4")] {
        let s = format!("fio --name=t --rw=randread --bs=4k --size=4m --filename=f {opts} --iodepth=4 --runtime=1 --time_based\necho rc=$?\n");
        let r = run(&s, "seed-000", &[&format!("kernel={kernel}")]);
        assert!(r.transcript.contains("read: IOPS=") && r.transcript.contains("rc=0"), "{kernel} {opts}:\n{}", r.transcript);
    }
}

#[test]
fn randrepeat_repeats_the_offsets_and_randrepeat_0_draws_new_ones() {
    // fio's default randrepeat=1 seeds each job from randseed and its number: the same
    // offsets on every run, whatever the machine's entropy (the twin's --seed) is.
    // randrepeat=0 seeds from that entropy: another --seed, other offsets.
    let body = |text: &str, seed: u64| {
        let r = memtwin_scenario::run(&RunOptions {
            script_path: Some("t.sh".into()),
            script_text: Some(text.to_string()),
            machine: "seed-000".into(),
            sets: vec!["ram=256M".into()],
            seed,
            ..Default::default()
        })
        .unwrap();
        let out = fio_output(&r.transcript, "--name=t").to_string();
        let (issued, disk) = issued_and_disk_reads(&out);
        (out.lines().filter(|l| l.contains("clat percentiles") || l.contains(" |")).collect::<Vec<_>>().join("\n"), issued, disk)
    };
    // A cache smaller than the file, so what is hit depends on the offsets drawn.
    let job = |extra: &str| format!("fio --name=t --rw=randread --bs=4k --size=384m --filename=f --norandommap --invalidate=0 --random_distribution=zipf:0.8 --runtime=1 --time_based{extra}\n");
    let repeat = job("");
    assert_eq!(body(&repeat, 1), body(&repeat, 2), "randrepeat=1: the same reads and misses under two seeds");
    let fresh = job(" --randrepeat=0");
    assert_ne!(body(&fresh, 1), body(&fresh, 2), "randrepeat=0: other offsets under another seed");
    // randseed picks another repeatable sequence.
    let seeded = job(" --randseed=1234");
    assert_ne!(body(&seeded, 1), body(&repeat, 1));
    assert_eq!(body(&seeded, 1), body(&seeded, 3));
}

#[test]
fn fadvise_hint_doubles_a_sequential_readers_window() {
    // fio advises POSIX_FADV_SEQUENTIAL for a sequential job (fadvise_hint=1): the file's
    // ra_pages is twice read_ahead_kb, so the stream reaches the disk in half as many
    // requests; fadvise_hint=0 leaves the device's window (6.18 host, read_ahead_kb 8192
    // for vda, not comparable; the rule is generic_fadvise's).
    let s = "\
fio --name=hint --rw=read --bs=4k --size=256m --filename=f
fio --name=nohint --rw=read --bs=4k --size=256m --filename=f --fadvise_hint=0
";
    let r = run(s, "seed-000", &[]);
    let (_, hint) = issued_and_disk_reads(fio_output(&r.transcript, "--name=hint"));
    let (_, nohint) = issued_and_disk_reads(fio_output(&r.transcript, "--name=nohint"));
    assert!((nohint as f64 / hint as f64 - 2.0).abs() < 0.1, "disk reads with the hint {hint}, without {nohint}");
}

#[test]
fn io_uring_hands_buffered_writes_to_an_io_wq_worker() {
    // ext4 refuses IOCB_NOWAIT buffered writes, so io_uring punts each to io-wq, hashed on
    // the inode: one worker runs them in order while the submitter goes on. The submission
    // is cheap; the completion comes after the writes queued before it (6.18, fio 3.33:
    // slat 1.6 us, clat 55 us at iodepth 8; buffered libaio: slat 2.6 us, the write itself).
    let s = "\
fio --name=a --rw=randwrite --bs=4k --size=64m --filename=f --ioengine=libaio --iodepth=8 --runtime=1 --time_based
fio --name=u --rw=randwrite --bs=4k --size=64m --filename=f --ioengine=io_uring --iodepth=8 --runtime=1 --time_based
top -b -n 1
";
    let r = run(s, "seed-000", &[]);
    let (a, u) = (fio_output(&r.transcript, "--name=a"), fio_output(&r.transcript, "--name=u"));
    let (asl, usl, ucl) = (avg_us(a, "slat"), avg_us(u, "slat"), avg_us(u, "clat"));
    assert!(usl < 0.5 * asl, "io_uring slat {usl} us vs libaio's {asl} us (the write itself)\n{u}");
    assert!(ucl > 4.0 * asl, "the completion waits for the writes queued before it: clat {ucl} us\n{u}");
    let iops = |o: &str| {
        let l = o.lines().find(|l| l.trim_start().starts_with("write: IOPS=")).unwrap();
        let v = &l[l.find("IOPS=").unwrap() + 5..l.find(',').unwrap()];
        let (n, m) = if let Some(n) = v.strip_suffix('k') { (n, 1e3) } else { (v, 1.0) };
        n.parse::<f64>().unwrap() * m
    };
    // Both are bound by the same write path, one write at a time.
    let (ai, ui) = (iops(a), iops(u));
    assert!(ui > 0.5 * ai && ui < 2.0 * ai, "io_uring {ui} vs libaio {ai} IOPS");
    assert!(r.transcript.contains("write: IOPS=") && *col(&r.series, "vm.nr_dirty").iter().max().unwrap() > 1000);
}

#[test]
fn io_uring_buffered_reads_before_5_9_run_on_io_wq_workers() {
    // 5.4: a read that would block returns -EAGAIN under IOCB_NOWAIT and is punted to an
    // unhashed worker (up to min(SQ entries, 4 x CPUs) of them), so eight cold reads are at
    // the device at once, as with IOCB_WAITQ on 6.x.
    let s = "\
fio --name=p --rw=randread --bs=4k --size=1g --filename=f --runtime=1 --time_based
fio --name=u --rw=randread --bs=4k --size=1g --filename=f --ioengine=io_uring --iodepth=8 --runtime=1 --time_based
";
    let r = run(s, "seed-000", &["kernel=linux-5.4"]);
    let (p, u) = (fio_output(&r.transcript, "--name=p"), fio_output(&r.transcript, "--name=u"));
    let (pi, ui) = (read_iops(p), read_iops(u));
    assert!(ui > 4.0 * pi, "io_uring on io-wq {ui} vs psync {pi} IOPS\n{u}");
    let (issued, disk) = issued_and_disk_reads(u);
    assert!(disk as f64 > 0.95 * issued as f64, "{issued} issued, {disk} read\n{u}");
}

#[test]
fn a_time_based_job_drops_the_cache_each_time_it_goes_round_the_file() {
    // get_next_rand_block -> fio_file_reset + loop_cache_invalidate: with invalidate=1 every
    // pass over the file reads it from the disk again (fio 3.33 on 6.18: a 64 MiB file read
    // at random for 3 s, 98k reads, 94.7k of them from the disk); invalidate=0 keeps it.
    let s = "\
fio --name=inv --rw=randread --bs=4k --size=8m --filename=f --runtime=1 --time_based
fio --name=keep --rw=randread --bs=4k --size=8m --filename=f --invalidate=0 --runtime=1 --time_based
";
    let r = run(s, "seed-000", &[]);
    let (issued, disk) = issued_and_disk_reads(fio_output(&r.transcript, "--name=inv"));
    assert!(issued > 2 * 2048 && disk as f64 > 0.95 * issued as f64, "{issued} issued, {disk} from the disk");
    // Without: at most the first pass reads from the disk (what the job before left cached
    // is not read at all).
    let (issued, disk) = issued_and_disk_reads(fio_output(&r.transcript, "--name=keep"));
    assert!(issued > 5 * 2048 && disk <= 2048, "{issued} issued, {disk} from the disk");
}

#[test]
fn fio_spends_user_time_on_each_io() {
    // fio's own loop per I/O (offset, clock reads, histogram): on a cached 4 KiB randread
    // the real fio 3.33 spent usr 24 % of its time on a 6.18 host, sys 66 %.
    let s = "\
fio --name=warm --rw=read --bs=1m --size=32m --filename=f --invalidate=0
fio --name=cached --rw=randread --bs=4k --size=32m --filename=f --invalidate=0 --runtime=1 --time_based
";
    let r = run(s, "seed-000", &[]);
    let out = fio_output(&r.transcript, "--name=cached");
    let l = out.lines().find(|l| l.trim_start().starts_with("cpu ")).unwrap();
    let pct = |k: &str| -> f64 { l.split(&format!("{k}=")).nth(1).unwrap().split('%').next().unwrap().parse().unwrap() };
    let (usr, sys) = (pct("usr"), pct("sys"));
    assert!(usr > 15.0 && usr < 50.0 && sys > usr, "usr {usr} %, sys {sys} %\n{out}");
}
