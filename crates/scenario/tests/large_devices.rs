//! dd far into a 16 TiB block device: the read is served and cached (Buffers) at 64-bit
//! page indices, drop_caches empties it, and the re-read is a miss that reads the disk.

mod common;
use common::run_on;

fn field(transcript: &str, name: &str) -> Vec<u64> {
    transcript
        .lines()
        .filter_map(|l| l.strip_prefix(name))
        .filter_map(|r| r.trim_start_matches(':').split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn dd_at_1_and_15_tib_of_a_16_tib_disk_caches_then_misses_after_drop_caches() {
    for skip_mib in [1u64 << 20, 15 << 20] {
        let text = format!(
            "cat /proc/meminfo\ncat /proc/vmstat\n\
             dd if=/dev/vda of=/dev/null bs=1M count=4 skip={skip_mib}\n\
             sleep 1\n\
             cat /proc/meminfo\ncat /proc/vmstat\n\
             echo 1 > /proc/sys/vm/drop_caches\n\
             cat /proc/meminfo\ncat /proc/vmstat\n\
             dd if=/dev/vda of=/dev/null bs=1M count=4 skip={skip_mib}\n\
             cat /proc/meminfo\ncat /proc/vmstat\n"
        );
        let r = run_on(&text, "seed-000", &["ram=256M", "disk.vda.size=16T"]);
        let t = &r.transcript;
        assert_eq!(t.matches("4194304 bytes (4.2 MB, 4.0 MiB) copied").count(), 2, "{t}");
        let buffers = field(t, "Buffers");
        let pgpgin = field(t, "pgpgin ");
        assert_eq!((buffers.len(), pgpgin.len()), (4, 4), "{t}");
        // The read caches its 4 MiB (and a readahead window) in Buffers and reads it in.
        let cached_kb = buffers[1] - buffers[0];
        assert!((4096..4096 + 1024).contains(&cached_kb), "Buffers grew by {cached_kb} kB");
        assert!(pgpgin[1] - pgpgin[0] >= 4096);
        // drop_caches empties it (the readahead has completed: no page is locked); the re-read is a miss with I/O, not a phantom hit.
        assert_eq!(buffers[2], buffers[0]);
        assert!(pgpgin[3] - pgpgin[2] >= 4096, "re-read after drop_caches read {} kB", pgpgin[3] - pgpgin[2]);
        assert!(buffers[3] - buffers[2] >= 4096);
    }
}

#[test]
fn an_offset_beyond_off_t_is_refused_clearly() {
    let r = memtwin_scenario::run(&memtwin_scenario::RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("dd if=/dev/vda of=/dev/null bs=1M count=1 skip=9000000000000\n".into()),
        machine: "seed-000".into(),
        ..Default::default()
    });
    let msg = match r {
        Ok(r) => r.transcript,
        Err(e) => e.to_string(),
    };
    assert!(msg.contains("dd: invalid number: 'skip=9000000000000'"), "{msg}");
}
