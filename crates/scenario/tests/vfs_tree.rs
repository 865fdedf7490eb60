//! A stat storm over a generated tree: the dentry and inode caches grow Slab, the metadata
//! blocks grow Buffers, and drop_caches 2 gives the unused objects back.

use memtwin_scenario::RunOptions;

fn meminfo_kb(out: &str, field: &str) -> Vec<u64> {
    out.lines()
        .filter(|l| l.starts_with(&format!("{field}:")))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn stat_storm_grows_slab_and_buffers_and_drop_caches_2_shrinks_slab() {
    let machine = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/file-tree.toml");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/stat-storm.sh");
    let r = memtwin_scenario::run(&RunOptions {
        script_path: Some(script.into()),
        machine: machine.into(),
        ..Default::default()
    })
    .expect("runs");
    let out = &r.transcript;
    let slab = meminfo_kb(out, "Slab");
    let bufs = meminfo_kb(out, "Buffers");
    assert_eq!((slab.len(), bufs.len()), (3, 3), "{out}");
    // 200,000 files and 6,667 directories: a dentry (192 B) and an ext3 inode (~800 B) each,
    // about 200 MB of slab; their directory and inode-table blocks: 6,667 directory blocks
    // and 200,000 / 16 inode-table blocks, about 75 MB of Buffers.
    assert!(slab[1] > slab[0] + 150_000, "Slab {slab:?}");
    assert!(bufs[1] > bufs[0] + 50_000, "Buffers {bufs:?}");
    // drop_caches 2 frees the unused dentries and inodes (not the buffer cache).
    assert!(slab[2] < slab[0] + (slab[1] - slab[0]) / 10, "Slab {slab:?}");
    assert!(bufs[2] >= bufs[1] * 9 / 10, "Buffers {bufs:?}");
    // du's total: 200,000 files of 4 KiB plus the directories' blocks.
    let du: u64 = out.lines().find(|l| l.ends_with("\t/export")).unwrap().split('\t').next().unwrap().parse().unwrap();
    assert!(du >= 800_000 && du < 840_000, "{du}");
}

/// `du -s` over the 6.x example tree on ext4 and, the same machine, on ext3: ext4 reads an
/// inode-table block it lacks with its aligned window of inode_readahead_blks (32) blocks in
/// one request (__ext4_get_inode_loc), ext3 one block at a time. The bytes read are the
/// same metadata; the requests are the directories' blocks plus, for ext4, one per window.
#[test]
fn ext4_reads_the_inode_table_in_windows_of_32_blocks() {
    let ext4 = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/file-tree-6x.toml");
    let dir = std::env::temp_dir().join(format!("memtwin-test-ext3-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ext3 = dir.join("ext3.toml");
    std::fs::write(&ext3, std::fs::read_to_string(ext4).unwrap().replace("fstype = \"ext4\"", "fstype = \"ext3\"")).unwrap();
    let reads = |machine: &str| -> (u64, u64) {
        let r = memtwin_scenario::run(&RunOptions {
            script_path: Some("t.sh".into()),
            script_text: Some("du -s /export\ncat /proc/diskstats\n".into()),
            machine: machine.into(),
            ..Default::default()
        })
        .expect("runs");
        let l = r.transcript.lines().find(|l| l.contains(" vda ")).expect("vda in diskstats").to_string();
        let f: Vec<u64> = l.split_whitespace().filter_map(|x| x.parse().ok()).collect();
        // major minor reads merged sectors ...
        (f[2], f[4])
    };
    let (r4, s4) = reads(ext4);
    let (r3, s3) = reads(ext3.to_str().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
    // 6,899 directory blocks; 206,899 inodes of 256 bytes in 12,932 blocks.
    let (dirs, itable) = (6_899u64, 206_899u64.div_ceil(16));
    assert!(r3 >= dirs + itable && r3 < (dirs + itable) * 101 / 100, "ext3: {r3} reads");
    assert!(r4 >= dirs + itable / 33 && r4 < dirs + itable / 16, "ext4: {r4} reads");
    assert!(s4 >= s3 && s4 < s3 + s3 / 100, "sectors: ext4 {s4}, ext3 {s3}");
}
