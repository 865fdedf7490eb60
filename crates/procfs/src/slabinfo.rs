//! /proc/slabinfo (mm/slab_common.c print_slabinfo_header / cache_show; 2.6.39 mm/slab.c
//! s_show; 2.4 mm/slab.c proc_getdata).

/// One cache as /proc/slabinfo shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlabInfo {
    pub name: String,
    pub active_objs: u64,
    pub num_objs: u64,
    /// The object with its metadata and alignment (SLUB s->size, SLAB buffer_size).
    pub objsize: u32,
    pub objperslab: u32,
    pub pagesperslab: u32,
    /// SLAB's per-cpu array tunables (0 with SLUB).
    pub limit: u32,
    pub batchcount: u32,
    pub sharedfactor: u32,
    pub active_slabs: u64,
    pub num_slabs: u64,
    pub sharedavail: u64,
}

/// Which kernel printed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlabinfoVersion {
    /// "slabinfo - version: 2.1" (2.6.10+: SLAB, SLUB).
    V21,
    /// "slabinfo - version: 1.1" of 2.4 (SMP kernels add the limit and batchcount).
    V11 { smp: bool },
}

/// The file, caches in the order given (the kernel's slab_caches list: newest first).
pub fn slabinfo(caches: &[SlabInfo], v: SlabinfoVersion) -> String {
    let mut out = String::with_capacity(128 * (caches.len() + 2));
    match v {
        SlabinfoVersion::V21 => {
            out.push_str("slabinfo - version: 2.1\n");
            out.push_str("# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>");
            out.push_str(" : tunables <limit> <batchcount> <sharedfactor>");
            out.push_str(" : slabdata <active_slabs> <num_slabs> <sharedavail>\n");
            for c in caches {
                out.push_str(&format!(
                    "{:<17} {:>6} {:>6} {:>6} {:>4} {:>4} : tunables {:>4} {:>4} {:>4} : slabdata {:>6} {:>6} {:>6}\n",
                    c.name, c.active_objs, c.num_objs, c.objsize, c.objperslab, c.pagesperslab, c.limit, c.batchcount, c.sharedfactor, c.active_slabs, c.num_slabs, c.sharedavail
                ));
            }
        }
        SlabinfoVersion::V11 { smp } => {
            out.push_str(if smp { "slabinfo - version: 1.1 (SMP)\n" } else { "slabinfo - version: 1.1\n" });
            for c in caches {
                out.push_str(&format!(
                    "{:<17} {:>6} {:>6} {:>6} {:>4} {:>4} {:>4}",
                    c.name, c.active_objs, c.num_objs, c.objsize, c.active_slabs, c.num_slabs, c.pagesperslab
                ));
                if smp {
                    out.push_str(&format!(" : {:>4} {:>4}", c.limit, c.batchcount));
                }
                out.push('\n');
            }
        }
    }
    out
}

/// Parse the 2.1 layout back (the tools read the file as procps does).
pub fn parse_slabinfo(text: &str) -> Vec<SlabInfo> {
    let mut v = Vec::new();
    for l in text.lines().skip(2) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 16 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        v.push(SlabInfo {
            name: f[0].to_string(),
            active_objs: n(1),
            num_objs: n(2),
            objsize: n(3) as u32,
            objperslab: n(4) as u32,
            pagesperslab: n(5) as u32,
            limit: n(8) as u32,
            batchcount: n(9) as u32,
            sharedfactor: n(10) as u32,
            active_slabs: n(13),
            num_slabs: n(14),
            sharedavail: n(15),
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_2_1_layout_matches_a_real_kernel_column_for_column() {
        let real = include_str!("../../../tests/data/real-tools/proc-slabinfo-6.18.txt");
        let caches = parse_slabinfo(real);
        assert!(caches.len() > 100);
        assert_eq!(slabinfo(&caches, SlabinfoVersion::V21), real);
    }
    #[test]
    fn the_2_4_layout_has_slab_counts_before_pages_per_slab() {
        let c = SlabInfo { name: "dentry_cache".into(), active_objs: 1234, num_objs: 1290, objsize: 128, objperslab: 30, pagesperslab: 1, limit: 252, batchcount: 126, active_slabs: 43, num_slabs: 43, ..Default::default() };
        assert_eq!(
            slabinfo(&[c], SlabinfoVersion::V11 { smp: true }),
            "slabinfo - version: 1.1 (SMP)\ndentry_cache        1234   1290    128   43   43    1 :  252  126\n"
        );
    }
}
