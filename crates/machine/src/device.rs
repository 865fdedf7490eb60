//! Block-device presets and Linux device numbers.
//!
//! A preset is a class of hardware described by its physical characteristics (datasheet or
//! measured class values), never by the outcomes the model should produce. Rates are decimal
//! bytes per second as datasheets quote them (520 MB/s = 520e6 B/s).

use crate::DeviceModel;

/// Block-layer readahead every preset starts with, KiB: VM_READAHEAD_PAGES (128 KiB), the
/// kernel's default `read_ahead_kb` for any queue unless udev or the driver changes it.
pub const DEFAULT_READ_AHEAD_KB: u32 = 128;

/// Names of the device presets, in the order they are listed in messages.
pub const DEVICE_PRESETS: &[&str] = &["hdd-7200", "sata-ssd", "nvme", "virtio", "ramdisk"];

const KIB: u64 = 1024;

impl DeviceModel {
    /// Names of the presets `DeviceModel::preset` knows.
    pub const PRESET_NAMES: &'static [&'static str] = DEVICE_PRESETS;

    /// The device model of a preset class ("hdd-7200", "sata-ssd", "nvme", "virtio",
    /// "ramdisk"), or None for an unknown name.
    pub fn preset(name: &str) -> Option<DeviceModel> {
        let m = match name {
            // 7200 rpm 3.5" SATA disk (e.g. WD Blue / Seagate Barracuda class): ~150 MB/s
            // sequential in the outer zone both ways; average seek ~4.2 ms plus half a
            // revolution at 7200 rpm (4.17 ms) = ~8.5 ms for a non-contiguous request; ~0.1 ms
            // of command/controller overhead per request; NCQ depth 32; the block layer's
            // usual 512 KiB max_sectors_kb.
            "hdd-7200" => DeviceModel {
                preset: name.into(),
                read_bw: 150e6,
                write_bw: 150e6,
                latency_ns: 100_000,
                write_latency_ns: 100_000,
                seek_ns: 8_500_000,
                rotational: true,
                queue_depth: 32,
                max_request_bytes: 512 * KIB,
                write_through: false,
            },
            // SATA 6 Gb/s SSD (Samsung 860 EVO / Crucial MX500 class): ~520 MB/s sequential
            // read, ~480 MB/s write (the interface caps both near 550); ~80 µs per request
            // (QD1 4 KiB random read latency); no seek; NCQ depth 32.
            "sata-ssd" => DeviceModel {
                preset: name.into(),
                read_bw: 520e6,
                write_bw: 480e6,
                latency_ns: 80_000,
                write_latency_ns: 80_000,
                seek_ns: 0,
                rotational: false,
                queue_depth: 32,
                max_request_bytes: 512 * KIB,
                write_through: false,
            },
            // PCIe 3.0 x4 NVMe SSD (Samsung 970 EVO / WD SN750 class): ~3000 MB/s read,
            // ~2000 MB/s sustained write; a QD1 4 KiB random read takes ~70 µs (about 14K
            // IOPS, 55-60 MB/s in Q1T1 benchmarks: the TLC NAND page read dominates), a
            // QD1 write ~20 µs (absorbed by the SLC cache); the nvme driver's default
            // io_queue_depth of 1024.
            "nvme" => DeviceModel {
                preset: name.into(),
                read_bw: 3000e6,
                write_bw: 2000e6,
                latency_ns: 70_000,
                write_latency_ns: 20_000,
                seek_ns: 0,
                rotational: false,
                queue_depth: 1024,
                max_request_bytes: 512 * KIB,
                write_through: false,
            },
            // The virtio-blk disk of seed 000's VM (a 2016 VPS, host storage behind it):
            // ~520 MB/s read, ~160 MB/s write; ~0.2 ms per read request (vmexit, a host
            // read its page cache often serves, completion interrupt) and ~1.2 ms per write
            // request (the host's write-through path). Calibrated
            // on the article's own raw figures: `dd if=/dev/vda` ~450 MB/s (pipelined
            // readahead hides the per-request cost; the twin's readahead, which starts the
            // next window at the marked page before it is read, now reads it at 520 MB/s:
            // docs/costs.md) and O_DIRECT 1 MiB writes at ~120-140
            // MB/s (1.2 ms + 1 MiB / 160 MB/s = 7.8 ms per MiB = ~135 MB/s). Virtqueue
            // depth 64; 512 KiB max request. The host completes a write on its storage
            // before the next (write-through): the 1.2 ms is paid per write request, in
            // series. Swap-out's 128 KiB requests then run at 128 KiB / (1.2 ms + 0.82 ms)
            // = 65 MB/s and the flusher's 512 KiB ones at 117 MB/s (the article's bo while
            // writing back: 115-135 MB/s).
            "virtio" => DeviceModel {
                preset: name.into(),
                read_bw: 520e6,
                write_bw: 160e6,
                latency_ns: 200_000,
                write_latency_ns: 1_200_000,
                seek_ns: 0,
                rotational: false,
                queue_depth: 64,
                max_request_bytes: 512 * KIB,
                write_through: true,
            },
            // brd RAM disk (/dev/ramN): data is memcpy'd in the submitter's context, so it
            // runs at single-core memory-copy speed (~8 GB/s) with ~1 µs of block-layer
            // overhead per request; no real queue, so a depth large enough never to limit.
            "ramdisk" => DeviceModel {
                preset: name.into(),
                read_bw: 8e9,
                write_bw: 8e9,
                latency_ns: 1_000,
                write_latency_ns: 1_000,
                seek_ns: 0,
                rotational: false,
                queue_depth: 256,
                max_request_bytes: 512 * KIB,
                write_through: false,
            },
            _ => return None,
        };
        Some(m)
    }
}

/// What disk names are accepted, for messages.
pub(crate) const DISK_NAMES_HELP: &str =
    "vdX (virtio), sdX (SCSI/SATA), hdX (IDE), xvdX (Xen), nvmeNnM, mmcblkN, ramN";

/// Index of the letters after "sd"/"vd"/"xvd": a..z = 0..25, aa = 26, ... (sd_format_disk_name).
fn letter_index(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 4 || !s.bytes().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    let mut n: u32 = 0;
    for c in s.bytes() {
        n = n * 26 + u32::from(c - b'a') + 1;
    }
    Some(n - 1)
}

fn number(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 6 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The major:minor Linux gives a whole disk of this name. `nvme_index` is how many NVMe
/// namespaces were registered before this one (they share the dynamic block-extended major
/// 259 and take minors in registration order).
pub(crate) fn device_numbers(name: &str, nvme_index: u32) -> Result<(u32, u32), String> {
    let bad = || format!("'{name}' is not a Linux disk name (accepted: {DISK_NAMES_HELP})");
    // Minors are 20 bits (MINORMASK).
    let minor_ok = |m: u32| if m < (1 << 20) { Ok(m) } else { Err(bad()) };
    if let Some(rest) = name.strip_prefix("vd") {
        // virtio_blk: one dynamic major (253 on the kernels of seed 000's era and most
        // since), 16 minors per disk (PART_BITS = 4).
        let i = letter_index(rest).ok_or_else(bad)?;
        return Ok((253, minor_ok(i * 16)?));
    }
    if let Some(rest) = name.strip_prefix("xvd") {
        // xen-blkfront: XENVBD_MAJOR 202, 16 minors per disk.
        let i = letter_index(rest).ok_or_else(bad)?;
        return Ok((202, minor_ok(i * 16)?));
    }
    if let Some(rest) = name.strip_prefix("sd") {
        // sd.c sd_major(): disks 0-15 on major 8, then 65-71, then 128-135; 16 minors each.
        // Beyond 256 disks the kernel uses extended minors; not modelled.
        let i = letter_index(rest).ok_or_else(bad)?;
        let major = match i / 16 {
            0 => 8,
            g @ 1..=7 => 64 + g,
            g @ 8..=15 => 128 + g - 8,
            _ => return Err(bad()),
        };
        return Ok((major, (i % 16) * 16));
    }
    if let Some(rest) = name.strip_prefix("hd") {
        // IDE: two drives per interface, 64 minors each; ide0..ide3 = majors 3, 22, 33, 34.
        let i = letter_index(rest).ok_or_else(bad)?;
        let major = match i / 2 {
            0 => 3,
            1 => 22,
            2 => 33,
            3 => 34,
            _ => return Err(bad()),
        };
        return Ok((major, (i % 2) * 64));
    }
    if let Some(rest) = name.strip_prefix("nvme") {
        // nvme<ctrl>n<nsid>: major 259 (BLOCK_EXT_MAJOR), minors in registration order.
        let (ctrl, ns) = rest.split_once('n').ok_or_else(bad)?;
        number(ctrl).ok_or_else(bad)?;
        if number(ns).ok_or_else(bad)? == 0 {
            return Err(bad()); // namespace ids start at 1
        }
        return Ok((259, minor_ok(nvme_index)?));
    }
    if let Some(rest) = name.strip_prefix("mmcblk") {
        // mmc_block: major 179, CONFIG_MMC_BLOCK_MINORS = 8 minors per card.
        let i = number(rest).ok_or_else(bad)?;
        return Ok((179, minor_ok(i.checked_mul(8).ok_or_else(bad)?)?));
    }
    if let Some(rest) = name.strip_prefix("ram") {
        // brd: RAMDISK_MAJOR 1, one minor per disk.
        let i = number(rest).ok_or_else(bad)?;
        return Ok((1, minor_ok(i)?));
    }
    Err(bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_device_numbers() {
        assert_eq!(device_numbers("vda", 0), Ok((253, 0)));
        assert_eq!(device_numbers("vdb", 0), Ok((253, 16)));
        assert_eq!(device_numbers("sda", 0), Ok((8, 0)));
        assert_eq!(device_numbers("sdb", 0), Ok((8, 16)));
        assert_eq!(device_numbers("sdq", 0), Ok((65, 0)));
        assert_eq!(device_numbers("sdaa", 0), Ok((65, 160)));
        assert_eq!(device_numbers("hda", 0), Ok((3, 0)));
        assert_eq!(device_numbers("hdb", 0), Ok((3, 64)));
        assert_eq!(device_numbers("hdc", 0), Ok((22, 0)));
        assert_eq!(device_numbers("xvda", 0), Ok((202, 0)));
        assert_eq!(device_numbers("nvme0n1", 0), Ok((259, 0)));
        assert_eq!(device_numbers("nvme1n1", 1), Ok((259, 1)));
        assert_eq!(device_numbers("mmcblk1", 0), Ok((179, 8)));
        assert_eq!(device_numbers("ram0", 0), Ok((1, 0)));
        assert_eq!(device_numbers("ram15", 0), Ok((1, 15)));
        for bad in [
            "", "vd", "vdA", "vd1", "sdzzzzz", "nvme0", "nvme0n0", "nvmean1", "ram", "ramx", "foo",
            "hdz", "sd/a",
        ] {
            let e = device_numbers(bad, 0).expect_err(bad);
            assert!(e.contains("accepted: vdX"), "{e}");
        }
    }

    #[test]
    fn every_preset_is_physical() {
        for name in DEVICE_PRESETS {
            let m = DeviceModel::preset(name).expect("preset");
            assert_eq!(m.preset, *name);
            assert!(m.read_bw > 0.0 && m.write_bw > 0.0 && m.queue_depth > 0);
            assert_eq!(m.rotational, m.seek_ns > 0);
        }
        assert!(DeviceModel::preset("floppy").is_none());
    }
}
