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
