//! The CPU cost of each memory-management operation, from the machine's per-operation
//! figures (`[cpu]` in a machine file; docs/costs.md gives where each comes from).
//!
//! Every path that does one of these operations charges it here, so that a buffered
//! write, a cached read, a fault or a zram store costs the sum of what the kernel does
//! for it, not one blended figure:
//! - copy_to_user of a page-cache page (read(2)): `copy_bw`;
//! - copy_from_user into a page-cache page (write(2)): `copy_in_bw`, slower where the
//!   destination line must be read for ownership first;
//! - a new page-cache page: allocation (`page_alloc_ns`, charged by the allocator), the
//!   tree insertion (`page_cache_add_ns`) and the LRU insertion (`lru_add_ns`);
//! - a disk filesystem's own work per page written or read (`fs_write_page_ns`,
//!   `fs_read_page_ns`); tmpfs has none;
//! - zram: the same-filled check on every page, then compression (or not) by algorithm and
//!   content, scaled by `compress_scale`.

use super::Content;
use memtwin_engine::{Ns, NS_PER_SEC};
use memtwin_machine::CpuModel;

/// Time to move `bytes` at `bw` bytes/s.
pub fn ns_at(bytes: u64, bw: f64) -> Ns {
    (bytes as f64 / bw * NS_PER_SEC as f64) as Ns
}

/// copy_to_user of `bytes` from the page cache (filemap_read -> copy_page_to_iter).
pub fn copy_out_ns(c: &CpuModel, bytes: u64) -> Ns {
    ns_at(bytes, c.copy_bw)
}

/// copy_from_user of `bytes` into a page-cache page (generic_perform_write ->
/// copy_folio_from_iter_atomic).
pub fn copy_in_ns(c: &CpuModel, bytes: u64) -> Ns {
    ns_at(bytes, c.copy_in_bw)
}

/// A new page joins a mapping: the tree insertion (add_to_page_cache_lru /
/// filemap_add_folio -> __filemap_add_folio) and the LRU insertion (lru_cache_add /
/// folio_add_lru). The allocation itself is charged by the allocator.
pub fn page_cache_insert_ns(c: &CpuModel) -> Ns {
    c.page_cache_add_ns + c.lru_add_ns
}

/// A new anonymous or shmem page mapped by a fault (do_anonymous_page / shmem_fault): the
/// trap and PTE install, clear_page, and the LRU insertion (the allocation is charged by
/// the allocator).
pub fn anon_fault_ns(c: &CpuModel) -> Ns {
    c.page_fault_ns + ns_at(4096, c.zero_bw) + c.lru_add_ns
}

/// The zram compressors (drivers/block/zram/zcomp.c backends, crypto/ before 6.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zcomp {
    Lzo,
    LzoRle,
    Lz4,
    Lz4hc,
    Zstd,
    Deflate,
    Sw842,
}

impl Zcomp {
    /// The compressor named as zramctl and /sys/block/zramN/comp_algorithm name it.
    /// Unknown names (already refused where devices are set up) are taken as lzo-rle,
    /// zram's default since 5.1.
    pub fn from_name(name: &str) -> Zcomp {
        match name {
            "lzo" => Zcomp::Lzo,
            "lz4" => Zcomp::Lz4,
            "lz4hc" => Zcomp::Lz4hc,
            "zstd" => Zcomp::Zstd,
            "deflate" => Zcomp::Deflate,
            "842" => Zcomp::Sw842,
            _ => Zcomp::LzoRle,
        }
    }

    /// (compress, decompress) ns for one 4 KiB page of program data (the model's `Text`)
    /// on the reference core: a 2.6 GHz Xeon (Sapphire Rapids class, KVM guest), one
    /// thread, CPU time, 4096 pages of concatenated /usr/bin executables (liblzo2 2.10
    /// lzo1x_1, liblz4 1.9.4 at acceleration 1 and LZ4HC level 9, libzstd 1.5.4 level 3,
    /// zlib 1.2.13 raw deflate level 6 with an 11-bit window; docs/costs.md has the program).
    /// lzo-rle is lzo1x_1 with run-length coding of zero runs: the same speed on this data.
    /// 842 has no library here; the kernel's software 842 is taken as deflate's speed.
    fn text_ns(self) -> (Ns, Ns) {
        match self {
            Zcomp::Lzo | Zcomp::LzoRle => (9_000, 6_900),
            Zcomp::Lz4 => (8_500, 1_700),
            Zcomp::Lz4hc => (39_000, 1_600),
            Zcomp::Zstd => (26_000, 7_700),
            Zcomp::Deflate | Zcomp::Sw842 => (126_000, 22_000),
        }
    }

    /// Compression of one incompressible (random) page on the reference core: the
    /// compressors skip ahead quickly when they find no match. zram then stores the page
    /// as it is (huge class), so reading it back is a copy, not a decompression.
    fn random_compress_ns(self) -> Ns {
        match self {
            Zcomp::Lzo | Zcomp::LzoRle => 1_550,
            Zcomp::Lz4 => 1_900,
            Zcomp::Lz4hc => 24_000,
            Zcomp::Zstd => 5_800,
            Zcomp::Deflate | Zcomp::Sw842 => 77_000,
        }
    }
}

/// zram_write_page for one page of `content`: page_same_filled reads the page, unsigned
/// long by unsigned long, until a word differs from the first. A same-filled page stops
/// there (ZRAM_SAME: only the value is kept, no compression); any other page is
/// compressed by the device's algorithm. Random and program data differ at the second
/// word, so their check is nearly free.
pub fn zram_store_ns(c: &CpuModel, algo: Zcomp, content: Content) -> Ns {
    let scale = |ns: Ns| (ns as f64 * c.compress_scale) as Ns;
    match content {
        // The whole page is read once: memory speed, one byte of traffic per byte.
        Content::Zero => ns_at(4096, c.copy_bw),
        Content::Text => scale(algo.text_ns().0),
        Content::Random => scale(algo.random_compress_ns()),
    }
}

/// zram_read_page for one page of `content`: a same-filled page is filled with its value
/// (zram_fill_page, a memset of the page); a page stored as is (huge) is copied; any
/// other is decompressed.
pub fn zram_load_ns(c: &CpuModel, algo: Zcomp, content: Content) -> Ns {
    match content {
        Content::Zero => ns_at(4096, c.zero_bw),
        Content::Random => ns_at(4096, c.copy_bw),
        Content::Text => (algo.text_ns().1 as f64 * c.compress_scale) as Ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_filled_pages_are_never_compressed_nor_decompressed() {
        let c = CpuModel::default();
        for algo in [Zcomp::Lzo, Zcomp::LzoRle, Zcomp::Lz4, Zcomp::Lz4hc, Zcomp::Zstd, Zcomp::Deflate, Zcomp::Sw842] {
            // The store is one read of the page; the load one memset: both independent of
            // the algorithm, and far below a compression of any content.
            assert_eq!(zram_store_ns(&c, algo, Content::Zero), zram_store_ns(&c, Zcomp::Lzo, Content::Zero));
            assert_eq!(zram_load_ns(&c, algo, Content::Zero), ns_at(4096, c.zero_bw));
            assert!(zram_store_ns(&c, algo, Content::Zero) * 2 < zram_store_ns(&c, algo, Content::Random));
            assert!(zram_store_ns(&c, algo, Content::Zero) * 5 < zram_store_ns(&c, algo, Content::Text));
            // An incompressible page is stored as is: reading it back is a copy.
            assert_eq!(zram_load_ns(&c, algo, Content::Random), ns_at(4096, c.copy_bw));
        }
    }

    #[test]
    fn compression_cost_follows_the_algorithm_and_the_core() {
        let c = CpuModel::default();
        let text = |a| zram_store_ns(&c, a, Content::Text);
        // lz4 compresses about as fast as lzo and decompresses several times faster; zstd
        // and lz4hc trade speed for ratio; deflate is the slowest.
        assert!(text(Zcomp::Lz4) <= text(Zcomp::Lzo));
        assert!(zram_load_ns(&c, Zcomp::Lz4, Content::Text) * 3 < zram_load_ns(&c, Zcomp::Lzo, Content::Text));
        assert!(text(Zcomp::Zstd) > 2 * text(Zcomp::Lz4));
        assert!(text(Zcomp::Lz4hc) > 4 * text(Zcomp::Lz4));
        assert!(text(Zcomp::Deflate) > text(Zcomp::Zstd));
        // A slower core takes proportionally longer.
        let slow = CpuModel { compress_scale: 8.0, ..c.clone() };
        assert_eq!(zram_store_ns(&slow, Zcomp::Lz4, Content::Text), 8 * text(Zcomp::Lz4));
        assert_eq!(Zcomp::from_name("lzo-rle"), Zcomp::LzoRle);
        assert_eq!(Zcomp::from_name("zstd"), Zcomp::Zstd);
    }

    #[test]
    fn a_write_into_the_page_cache_costs_more_than_a_read_from_it() {
        // A read copies out of a cached page; a write allocates, inserts and copies into
        // a cold page (read for ownership): on every machine the write is the dearer.
        let c = CpuModel::default();
        let read = c.page_cache_ns + copy_out_ns(&c, 4096);
        let write = c.page_alloc_ns + page_cache_insert_ns(&c) + copy_in_ns(&c, 4096);
        assert!(write > read);
        // Two bytes of traffic per byte copied in, one per byte copied out.
        let rfo = CpuModel { copy_bw: 1e9, copy_in_bw: 0.5e9, ..c };
        assert_eq!(copy_in_ns(&rfo, 4096), 2 * copy_out_ns(&rfo, 4096));
    }
}
