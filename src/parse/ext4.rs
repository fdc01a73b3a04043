//! ext4 superblock facts from two sources: `tune2fs -l` / `dumpe2fs -h` text
//! and the raw 1024-byte superblock (offset 1024 of the device), with the
//! derived mkfs parameters (bytes per inode, reserved percentage).
//! Pure: works on `&str` / `&[u8]`, never touches the filesystem.

use std::collections::BTreeMap;

use super::{numbered_lines, Issue};

/// What driftaudit knows about one ext2/3/4 filesystem's layout.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Ext4Layout {
    /// 1-based line where the listing starts (text), 0 for a binary superblock.
    pub line: usize,
    /// Volume label (`None` for `<none>`).
    pub label: Option<String>,
    /// Filesystem UUID, lower-case (`None` for `<none>`).
    pub uuid: Option<String>,
    /// Feature names as e2fsprogs prints them, in its order.
    pub features: Vec<String>,
    /// Default mount options as e2fsprogs prints them.
    pub default_mount_options: Vec<String>,
    /// `clean`, `not clean`, `clean with errors`.
    pub state: Option<String>,
    /// `Continue`, `Remount read-only`, `Panic`.
    pub errors_behavior: Option<String>,
    /// Total inodes.
    pub inode_count: u64,
    /// Total blocks.
    pub block_count: u64,
    /// Blocks reserved for root.
    pub reserved_block_count: u64,
    /// Bytes per block.
    pub block_size: u64,
    /// Bytes per on-disk inode.
    pub inode_size: Option<u64>,
    /// Inodes per block group.
    pub inodes_per_group: Option<u64>,
    /// Blocks per block group (`None` when the listing lacks the line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_group: Option<u64>,
    /// First data block (1 for 1 KiB blocks, else 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_block: Option<u64>,
    /// Whether the `bigalloc` feature is on (groups count clusters then).
    #[serde(skip)]
    pub bigalloc: bool,
}

impl Ext4Layout {
    /// `Block count * Block size / Inode count`, slightly below mkfs `-i`.
    pub fn bytes_per_inode_raw(&self) -> Option<f64> {
        if self.inode_count == 0 {
            return None;
        }
        Some(self.block_count as f64 * self.block_size as f64 / self.inode_count as f64)
    }

    /// The mkfs `-i` value. Where the group geometry is known, it is derived
    /// the way mke2fs computes the inode count (see [`inode_ratio_range`]):
    /// the roundest `-i` that gives exactly this many inodes per group
    /// (a multiple of 1024 with the most factors of two, else the decimal
    /// number with the most trailing zeros). Without the geometry, the raw
    /// ratio snapped as [`snap_inode_ratio`] does. Whether the answer is the
    /// only plausible one says [`Ext4Layout::bytes_per_inode_is_exact`].
    pub fn bytes_per_inode(&self) -> Option<u64> {
        if let Some((lo, hi)) = self.inode_ratio_range() {
            return Some(roundest_in(lo, hi, self.bytes_per_inode_raw()?).0);
        }
        let raw = self.bytes_per_inode_raw()?;
        Some(snap_inode_ratio(
            raw,
            self.block_size,
            self.inode_size,
            self.inodes_per_group,
        ))
    }

    /// Every `mke2fs -i` value that yields this filesystem's inodes per group,
    /// as an inclusive range (`None` when the listing lacks the geometry, the
    /// filesystem uses bigalloc, or no ratio reproduces it, as after
    /// `resize2fs` or `mke2fs -N`).
    pub fn inode_ratio_range(&self) -> Option<(u64, u64)> {
        if self.bigalloc {
            return None;
        }
        let g = Geometry {
            blocks: self.block_count,
            block_size: self.block_size,
            inode_size: self.inode_size?,
            blocks_per_group: self.blocks_per_group?,
            first_block: self.first_block.unwrap_or(0),
        };
        inode_ratio_range(&g, self.inodes_per_group?)
    }

    /// Whether [`Ext4Layout::bytes_per_inode`] is the only plausible `-i`:
    /// false when the range of ratios that give this layout holds several
    /// equally round values or none at all (the value is then approximate).
    pub fn bytes_per_inode_is_exact(&self) -> bool {
        match self.inode_ratio_range() {
            Some((lo, hi)) => self
                .bytes_per_inode_raw()
                .is_some_and(|raw| roundest_in(lo, hi, raw).1),
            None => false,
        }
    }

    /// Where [`Ext4Layout::bytes_per_inode`] is not exact, what a report says
    /// about it: `approximate (...)` with the range of `-i` values that give
    /// this layout, or why no range is known. `None` when it is exact.
    pub fn bytes_per_inode_approximation(&self) -> Option<String> {
        if self.inode_count == 0 || self.bytes_per_inode_is_exact() {
            return None;
        }
        let why = match self.inode_ratio_range() {
            Some((lo, hi)) => {
                format!("mke2fs rounds the inode count; the range {lo}..{hi} gives this layout")
            }
            None if self.bigalloc => {
                "bigalloc: mke2fs counts inodes per cluster group; snapped from the raw ratio"
                    .to_string()
            }
            None if self.inode_size.is_none()
                || self.blocks_per_group.is_none()
                || self.inodes_per_group.is_none() =>
            {
                "the listing lacks the group geometry mke2fs rounds with; snapped from the raw ratio"
                    .to_string()
            }
            None => "no mke2fs -i gives this layout exactly, as after resize2fs or mke2fs -N; snapped from the raw ratio".to_string(),
        };
        Some(format!("approximate ({why})"))
    }

    /// `100 * reserved / blocks`, rounded to 2 decimals.
    pub fn reserved_pct(&self) -> Option<f64> {
        if self.block_count == 0 {
            return None;
        }
        let p = 100.0 * self.reserved_block_count as f64 / self.block_count as f64;
        Some((p * 100.0).round() / 100.0)
    }

    /// Whether a feature is on.
    pub fn has_feature(&self, name: &str) -> bool {
        self.features.iter().any(|f| f == name)
    }
}

/// The numbers mke2fs uses to turn `-i` into an inode count.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    /// Block count of the filesystem.
    pub blocks: u64,
    /// Bytes per block.
    pub block_size: u64,
    /// Bytes per inode on disk.
    pub inode_size: u64,
    /// Blocks per group.
    pub blocks_per_group: u64,
    /// First data block.
    pub first_block: u64,
}

/// Smallest and largest `-i` mke2fs accepts (`misc/mke2fs.c`:
/// `EXT2_MIN_BLOCK_SIZE` to `EXT2_MAX_BLOCK_SIZE * 1024`).
const RATIO_MIN: u64 = 1024;
const RATIO_MAX: u64 = 65536 * 1024;

/// Inodes per group mke2fs makes for `-i ratio` (`misc/mke2fs.c` asks for
/// `blocks * block_size / ratio` inodes; `lib/ext2fs/initialize.c` spreads
/// them over the groups rounding up, fills whole inode-table blocks, then
/// clears the low three bits). `None` for a geometry that cannot be real.
pub fn mke2fs_inodes_per_group(g: &Geometry, ratio: u64) -> Option<u64> {
    if ratio == 0 || g.block_size == 0 || g.inode_size == 0 || g.blocks_per_group == 0 {
        return None;
    }
    let groups = g
        .blocks
        .checked_sub(g.first_block)?
        .div_ceil(g.blocks_per_group)
        .max(1);
    let inodes = (u128::from(g.blocks) * u128::from(g.block_size) / u128::from(ratio))
        .min(u128::from(u32::MAX)) as u64;
    let per_block = (g.block_size / g.inode_size).max(1);
    let max_ipg = (1u64 << 16).saturating_sub(per_block);
    let ipg = inodes.div_ceil(groups).min(max_ipg).min(g.block_size * 8);
    let table_blocks = (ipg * g.inode_size).div_ceil(g.block_size);
    let ipg = (table_blocks * g.block_size / g.inode_size).max(8);
    Some(ipg & !7)
}

/// The inclusive range of `-i` values for which mke2fs makes `ipg` inodes
/// per group on this geometry (inodes per group falls as the ratio grows, so
/// two binary searches find it); `None` when no ratio gives `ipg`.
pub fn inode_ratio_range(g: &Geometry, ipg: u64) -> Option<(u64, u64)> {
    let f = |r: u64| mke2fs_inodes_per_group(g, r);
    // smallest ratio whose ipg is <= target
    let (mut a, mut b) = (RATIO_MIN, RATIO_MAX);
    if f(b)? > ipg {
        return None;
    }
    while a < b {
        let m = a + (b - a) / 2;
        if f(m)? <= ipg {
            b = m
        } else {
            a = m + 1
        }
    }
    let lo = a;
    if f(lo)? != ipg {
        return None;
    }
    // largest ratio whose ipg is >= target
    let (mut a, mut b) = (lo, RATIO_MAX);
    while a < b {
        let m = a + (b - a).div_ceil(2);
        if f(m)? >= ipg {
            a = m
        } else {
            b = m - 1
        }
    }
    Some((lo, a))
}

/// The value in `lo..=hi` a person most likely typed after `-i`, and whether
/// it is the only plausible one. Candidates are multiples of 1024
/// (mke2fs.conf values, `-i 10240`) and of ten (`-i 10000`); the pick has
/// the fewest significant digits: a power of two first, then `k * 1024` or
/// `m * 10^d` by the digits of `k` or `m` (a multiple of 1024 wins a tie,
/// then the one nearest the raw ratio).
/// It is exact when it has at most two significant digits and every other
/// candidate has more. Without candidates, the middle of the range, exact
/// only when the range is one value.
fn roundest_in(lo: u64, hi: u64, raw: f64) -> (u64, bool) {
    fn digits(mut n: u64) -> u32 {
        while n > 0 && n.is_multiple_of(10) {
            n /= 10;
        }
        n.checked_ilog10().map_or(0, |d| d + 1)
    }
    let mut cands: Vec<((u32, u32), u64)> = Vec::new();
    let first_1024 = lo.div_ceil(1024) * 1024;
    for v in (first_1024..=hi).step_by(1024).take(100_000) {
        let score = if v.is_power_of_two() {
            0
        } else {
            digits(v / 1024)
        };
        cands.push(((score, 0), v));
    }
    let first_10 = lo.div_ceil(10) * 10;
    for v in (first_10..=hi).step_by(10).take(100_000) {
        if v % 1024 != 0 {
            cands.push(((digits(v), 1), v));
        }
    }
    let Some(&(score, v)) = cands.iter().min_by(|a, b| {
        let dist = |v: u64| (v as f64 - raw).abs();
        a.0.cmp(&b.0).then(dist(a.1).total_cmp(&dist(b.1)))
    }) else {
        return (lo + (hi - lo) / 2, lo == hi);
    };
    let rivals = cands.iter().filter(|((d, _), _)| *d <= score.0).count();
    (v, score.0 <= 2 && rivals == 1)
}

/// Snap a bytes-per-inode ratio to the mkfs `-i` value (see
/// [`Ext4Layout::bytes_per_inode`]).
pub fn snap_inode_ratio(
    raw: f64,
    block_size: u64,
    inode_size: Option<u64>,
    ipg: Option<u64>,
) -> u64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 0;
    }
    let per_block = inode_size
        .filter(|&s| s > 0)
        .map(|s| (block_size / s).max(1))
        .unwrap_or(1);
    let step = per_block.max(8) as f64;
    let below = match ipg {
        Some(g) if g > 0 => (step / g as f64).max(0.015),
        _ => 0.015,
    }
    .min(0.25);
    // when an inode-table block holds fewer than 8 inodes, `&= ~7` can round down
    let above = match ipg {
        Some(g) if g > 0 && per_block < 8 => (8.0 / g as f64).min(0.25),
        _ => 0.0,
    } + 1e-9;
    let lo = (raw / (1.0 + above) / 1024.0).ceil().max(1.0) as u64;
    let hi = (raw / (1.0 - below) / 1024.0).floor() as u64;
    let hi = hi.min(65536).min(lo + 4096);
    let mut best: Option<u64> = None;
    for k in lo..=hi {
        let c = k * 1024;
        best = match best {
            None => Some(c),
            Some(b) => {
                let (tb, tc) = (b.trailing_zeros(), c.trailing_zeros());
                if tc > tb || (tc == tb && (c as f64 - raw).abs() < (b as f64 - raw).abs()) {
                    Some(c)
                } else {
                    Some(b)
                }
            }
        };
    }
    best.unwrap_or_else(|| raw.round() as u64)
}

/// Feature names by (word, bit) as e2fsprogs `lib/e2p/feature.c` prints them;
/// word 0 = compat, 1 = incompat, 2 = ro_compat (the print order).
const FEATURES: &[(usize, u32, &str)] = &[
    (0, 0x0001, "dir_prealloc"),
    (0, 0x0002, "imagic_inodes"),
    (0, 0x0004, "has_journal"),
    (0, 0x0008, "ext_attr"),
    (0, 0x0010, "resize_inode"),
    (0, 0x0020, "dir_index"),
    (0, 0x0040, "lazy_bg"),
    (0, 0x0100, "snapshot_bitmap"),
    (0, 0x0200, "sparse_super2"),
    (0, 0x0400, "fast_commit"),
    (0, 0x0800, "stable_inodes"),
    (0, 0x1000, "orphan_file"),
    (1, 0x0001, "compression"),
    (1, 0x0002, "filetype"),
    (1, 0x0004, "needs_recovery"),
    (1, 0x0008, "journal_dev"),
    (1, 0x0010, "meta_bg"),
    (1, 0x0040, "extent"),
    (1, 0x0080, "64bit"),
    (1, 0x0100, "mmp"),
    (1, 0x0200, "flex_bg"),
    (1, 0x0400, "ea_inode"),
    (1, 0x1000, "dirdata"),
    (1, 0x2000, "metadata_csum_seed"),
    (1, 0x4000, "large_dir"),
    (1, 0x8000, "inline_data"),
    (1, 0x10000, "encrypt"),
    (1, 0x20000, "casefold"),
    (2, 0x0001, "sparse_super"),
    (2, 0x0002, "large_file"),
    (2, 0x0008, "huge_file"),
    (2, 0x0010, "uninit_bg"),
    (2, 0x0020, "dir_nlink"),
    (2, 0x0040, "extra_isize"),
    (2, 0x0100, "quota"),
    (2, 0x0200, "bigalloc"),
    (2, 0x0400, "metadata_csum"),
    (2, 0x0800, "replica"),
    (2, 0x1000, "read-only"),
    (2, 0x2000, "project"),
    (2, 0x4000, "shared_blocks"),
    (2, 0x8000, "verity"),
    (2, 0x10000, "orphan_present"),
];

/// Default mount option names (`lib/e2p/mntopts.c`), journal mode excluded.
const MNTOPTS: &[(u32, &str)] = &[
    (0x0001, "debug"),
    (0x0002, "bsdgroups"),
    (0x0004, "user_xattr"),
    (0x0008, "acl"),
    (0x0010, "uid16"),
    (0x0100, "nobarrier"),
    (0x0200, "block_validity"),
    (0x0400, "discard"),
    (0x0800, "nodelalloc"),
];

/// ext2/3/4 magic number.
pub const EXT4_MAGIC: u16 = 0xEF53;

fn le16(b: &[u8], off: usize) -> u16 {
    b.get(off..off + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .unwrap_or(0)
}

fn le32(b: &[u8], off: usize) -> u32 {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .unwrap_or(0)
}

/// Feature names for the three feature words, in e2fsprogs' order; unknown
/// bits print as `FEATURE_C12` / `FEATURE_I3` / `FEATURE_R20` as e2fsprogs does.
pub fn feature_names(compat: u32, incompat: u32, ro_compat: u32) -> Vec<String> {
    let words = [compat, incompat, ro_compat];
    let mut out = Vec::new();
    for (w, &mask) in words.iter().enumerate() {
        for bit in 0..32u32 {
            let m = 1u32 << bit;
            if mask & m == 0 {
                continue;
            }
            match FEATURES.iter().find(|(fw, fm, _)| *fw == w && *fm == m) {
                Some((_, _, name)) => out.push((*name).to_string()),
                None => out.push(format!("FEATURE_{}{}", ['C', 'I', 'R'][w], bit)),
            }
        }
    }
    out
}

/// Default mount options in e2fsprogs' order (journal mode first).
pub fn mount_option_names(mask: u32) -> Vec<String> {
    let mut out = Vec::new();
    match mask & 0x60 {
        0x20 => out.push("journal_data".to_string()),
        0x40 => out.push("journal_data_ordered".to_string()),
        0x60 => out.push("journal_data_writeback".to_string()),
        _ => {}
    }
    for bit in 0..32u32 {
        let m = 1u32 << bit;
        if m & 0x60 != 0 || mask & m == 0 {
            continue;
        }
        match MNTOPTS.iter().find(|(mm, _)| *mm == m) {
            Some((_, n)) => out.push((*n).to_string()),
            None => out.push(format!("MNTOPT_{bit}")),
        }
    }
    out
}

fn uuid_string(b: &[u8]) -> Option<String> {
    if b.len() != 16 || b.iter().all(|&x| x == 0) {
        return None;
    }
    let h: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    ))
}

/// Parse a raw superblock (the 1024 bytes found at offset 1024 of the device).
/// `Err` says why the bytes are not an ext2/3/4 superblock.
pub fn parse_superblock(sb: &[u8]) -> Result<Ext4Layout, String> {
    if sb.len() < 1024 {
        return Err(format!("superblock needs 1024 bytes, got {}", sb.len()));
    }
    let magic = le16(sb, 0x38);
    if magic != EXT4_MAGIC {
        return Err(format!(
            "no ext2/3/4 superblock: magic is 0x{magic:04X}, not 0xEF53"
        ));
    }
    let log_bs = le32(sb, 0x18);
    if log_bs > 16 {
        return Err(format!("implausible block size 1024 << {log_bs}"));
    }
    let block_size = 1024u64 << log_bs;
    let compat = le32(sb, 0x5C);
    let incompat = le32(sb, 0x60);
    let ro_compat = le32(sb, 0x64);
    let is64 = incompat & 0x80 != 0;
    let hi = |off: usize| {
        if is64 {
            u64::from(le32(sb, off)) << 32
        } else {
            0
        }
    };
    let rev = le32(sb, 0x4C);
    let inode_size = if rev == 0 {
        128
    } else {
        u64::from(le16(sb, 0x58))
    };
    let name = sb.get(0x78..0x88).unwrap_or(&[]);
    let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
    let label = String::from_utf8_lossy(name).into_owned();
    let state = le16(sb, 0x3A);
    let mut state_s = if state & 1 != 0 { "clean" } else { "not clean" }.to_string();
    if state & 2 != 0 {
        state_s.push_str(" with errors");
    }
    let errors = match le16(sb, 0x3C) {
        1 => "Continue",
        2 => "Remount read-only",
        3 => "Panic",
        _ => "Unknown (continue)",
    };
    Ok(Ext4Layout {
        line: 0,
        label: Some(label).filter(|l| !l.is_empty()),
        uuid: uuid_string(sb.get(0x68..0x78).unwrap_or(&[])),
        features: feature_names(compat, incompat, ro_compat),
        default_mount_options: mount_option_names(le32(sb, 0x100)),
        state: Some(state_s),
        errors_behavior: Some(errors.to_string()),
        inode_count: u64::from(le32(sb, 0x00)),
        block_count: u64::from(le32(sb, 0x04)) | hi(0x150),
        reserved_block_count: u64::from(le32(sb, 0x08)) | hi(0x154),
        block_size,
        inode_size: Some(inode_size),
        inodes_per_group: Some(u64::from(le32(sb, 0x28))),
        blocks_per_group: Some(u64::from(le32(sb, 0x20))),
        first_block: Some(u64::from(le32(sb, 0x14))),
        bigalloc: ro_compat & 0x0200 != 0,
    })
}

/// Parse the first 2048 (or more) bytes of a device or image: the superblock
/// sits at offset 1024.
pub fn parse_device_head(head: &[u8]) -> Result<Ext4Layout, String> {
    match head.get(1024..2048) {
        Some(sb) => parse_superblock(sb),
        None => Err(format!("device head needs 2048 bytes, got {}", head.len())),
    }
}

/// Parse `tune2fs -l` or `dumpe2fs -h` output. The first superblock listing
/// is used; a second one is an issue. Output without one (a failed capture,
/// usage text) gives `None` and an issue.
pub fn parse_text(text: &str) -> (Option<Ext4Layout>, Vec<Issue>) {
    let mut issues = super::Issues::new();
    let mut fields: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let mut start: Option<usize> = None;
    let mut last_label: Option<String> = None;
    let mut ended = false;
    for (n, raw) in numbered_lines(text) {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((label, value)) = raw.split_once(':') else {
            // continuation of a wrapped feature list (mail clients wrap long lines)
            if start.is_some()
                && !ended
                && last_label.as_deref() == Some("Filesystem features")
                && is_feature_words(t)
            {
                if let Some((v, _)) = fields.get_mut("Filesystem features") {
                    v.push(' ');
                    v.push_str(t);
                }
                continue;
            }
            last_label = None;
            continue;
        };
        let label = label.trim();
        let value = value.trim();
        if label == "Filesystem volume name" {
            if start.is_some() {
                issues.push(Issue::at(
                    n,
                    "another superblock listing starts here; only the first one is used",
                ));
                break;
            }
            start = Some(n);
        }
        if start.is_none() || ended {
            continue;
        }
        if label.starts_with("Group ")
            && label[6..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_digit())
        {
            // dumpe2fs group descriptors follow the superblock: the listing
            // ends, but keep looking for a second listing to report it
            ended = true;
            continue;
        }
        last_label = Some(label.to_string());
        fields
            .entry(label.to_string())
            .or_insert((value.to_string(), n));
    }
    let Some(start) = start else {
        let what = if text.contains("Usage:") {
            " (the capture holds usage text: the command failed)"
        } else {
            ""
        };
        issues.push(Issue::at(
            1,
            format!("no superblock listing (`Filesystem volume name:` line) found{what}"),
        ));
        return (None, issues.into_vec());
    };
    let num = |label: &str, issues: &mut super::Issues| -> Option<u64> {
        let (v, line) = fields.get(label)?;
        let first = v.split_whitespace().next().unwrap_or("");
        match first.parse::<u64>() {
            Ok(x) => Some(x),
            Err(_) => {
                issues.push(Issue::at(
                    *line,
                    format!("`{label}` value `{v}` is not a number"),
                ));
                None
            }
        }
    };
    let required = ["Inode count", "Block count", "Block size"];
    let mut missing = Vec::new();
    let inode_count = num("Inode count", &mut issues);
    let block_count = num("Block count", &mut issues);
    let block_size = num("Block size", &mut issues);
    for (label, v) in required.iter().zip([inode_count, block_count, block_size]) {
        if v.is_none() {
            missing.push(*label);
        }
    }
    if !missing.is_empty() {
        issues.push(Issue::at(
            start,
            format!("superblock listing lacks {}", missing.join(", ")),
        ));
        return (None, issues.into_vec());
    }
    let words = |label: &str| -> Vec<String> {
        match fields.get(label) {
            Some((v, _)) if v != "(none)" => v.split_whitespace().map(str::to_string).collect(),
            _ => Vec::new(),
        }
    };
    let text_field = |label: &str, none: &str| -> Option<String> {
        fields
            .get(label)
            .map(|(v, _)| v.clone())
            .filter(|v| !v.is_empty() && v != none)
    };
    let layout = Ext4Layout {
        line: start,
        label: text_field("Filesystem volume name", "<none>"),
        uuid: text_field("Filesystem UUID", "<none>").map(|u| u.to_ascii_lowercase()),
        features: words("Filesystem features"),
        default_mount_options: words("Default mount options"),
        state: text_field("Filesystem state", ""),
        errors_behavior: text_field("Errors behavior", ""),
        inode_count: inode_count.unwrap_or(0),
        block_count: block_count.unwrap_or(0),
        reserved_block_count: num("Reserved block count", &mut issues).unwrap_or(0),
        block_size: block_size.unwrap_or(0),
        inode_size: num("Inode size", &mut issues),
        inodes_per_group: num("Inodes per group", &mut issues),
        blocks_per_group: num("Blocks per group", &mut issues),
        first_block: num("First block", &mut issues),
        bigalloc: words("Filesystem features").iter().any(|f| f == "bigalloc"),
    };
    (Some(layout), issues.into_vec())
}

fn is_feature_words(t: &str) -> bool {
    t.split_whitespace().all(|w| {
        w.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "tune2fs 1.47.0 (5-Feb-2023)\nFilesystem volume name:   zimbra-db\nFilesystem UUID:          5C1F3E2A-9d47-4b8e-a0c3-6f2b7d91e4a8\nFilesystem features:      has_journal ext_attr dir_index\nDefault mount options:    user_xattr acl\nInode count:              20992000\nBlock count:              52428800\nReserved block count:     1048576\nBlock size:               4096\nInodes per group:         13120\nInode size:\t          256\nSome future label:        x\n";

    #[test]
    fn text_listing_with_tab_quirk() {
        let (l, issues) = parse_text(SAMPLE);
        assert!(issues.is_empty(), "{issues:?}");
        let l = l.unwrap();
        assert_eq!(l.label.as_deref(), Some("zimbra-db"));
        assert_eq!(
            l.uuid.as_deref(),
            Some("5c1f3e2a-9d47-4b8e-a0c3-6f2b7d91e4a8")
        );
        assert_eq!(l.inode_size, Some(256));
        assert_eq!(l.bytes_per_inode(), Some(10240));
        assert!((l.bytes_per_inode_raw().unwrap() - 10230.01).abs() < 0.01);
        assert_eq!(l.reserved_pct(), Some(2.0));
        assert!(l.has_feature("dir_index"));
        assert_eq!(l.line, 2);
    }

    #[test]
    fn approximate_ratio_says_why() {
        // no `Blocks per group` line: the range cannot be derived
        let l = parse_text(SAMPLE).0.unwrap();
        assert!(!l.bytes_per_inode_is_exact());
        let a = l.bytes_per_inode_approximation().unwrap();
        assert!(
            a.starts_with("approximate (the listing lacks the group geometry"),
            "{a}"
        );
        let g = Ext4Layout {
            bigalloc: true,
            ..l.clone()
        };
        assert!(g
            .bytes_per_inode_approximation()
            .unwrap()
            .contains("bigalloc"));
    }

    #[test]
    fn ratio_not_a_multiple_of_1024_is_derived_as_mke2fs_computes_it() {
        // mkfs.ext4 -b 1024 -i 10000 on 300 MiB (e2fsprogs 1.47.0): 38 groups, 824 inodes each
        let g = Geometry {
            blocks: 307200,
            block_size: 1024,
            inode_size: 256,
            blocks_per_group: 8192,
            first_block: 1,
        };
        assert_eq!(mke2fs_inodes_per_group(&g, 10000), Some(824));
        let (lo, hi) = inode_ratio_range(&g, 824).unwrap();
        assert!(lo <= 10000 && (10000..10240).contains(&hi), "{lo}..={hi}");
        let l = Ext4Layout {
            inode_count: 824 * 38,
            block_count: 307200,
            block_size: 1024,
            inode_size: Some(256),
            inodes_per_group: Some(824),
            blocks_per_group: Some(8192),
            first_block: Some(1),
            ..parse_text(SAMPLE).0.unwrap()
        };
        assert_eq!(
            l.bytes_per_inode(),
            Some(10000),
            "raw {:?}",
            l.bytes_per_inode_raw()
        );
        assert!(l.bytes_per_inode_is_exact());
        // no ratio gives 830 inodes per group (not a multiple of 8)
        assert_eq!(inode_ratio_range(&g, 830), None);
    }

    #[test]
    fn failed_capture_and_second_listing() {
        let (l, issues) =
            parse_text("dumpe2fs 1.44.3 (10-July-2018)\nUsage: dumpe2fs [-bfghimxV] device\n");
        assert!(l.is_none());
        assert!(issues[0].message.contains("usage text"));
        let two = format!(
            "{SAMPLE}Group 0: (Blocks 0-32767)\n  Primary superblock at 0\n{}",
            SAMPLE.replace("zimbra-db", "other")
        );
        let (l, issues) = parse_text(&two);
        assert_eq!(l.unwrap().label.as_deref(), Some("zimbra-db"));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].line, 16);
    }

    #[test]
    fn wrapped_features() {
        let t = "Filesystem volume name:   DATA\nFilesystem features:      has_journal ext_attr\nfiletype extent 64bit\ndir_nlink\nFilesystem flags:         x\nInode count: 10\nBlock count: 100\nBlock size: 4096\n";
        let l = parse_text(t).0.unwrap();
        assert_eq!(
            l.features,
            [
                "has_journal",
                "ext_attr",
                "filetype",
                "extent",
                "64bit",
                "dir_nlink"
            ]
        );
    }

    #[test]
    fn binary_superblock() {
        let mut sb = vec![0u8; 1024];
        sb[0x00..0x04].copy_from_slice(&1000u32.to_le_bytes());
        sb[0x04..0x08].copy_from_slice(&8000u32.to_le_bytes());
        sb[0x08..0x0C].copy_from_slice(&400u32.to_le_bytes());
        sb[0x18..0x1C].copy_from_slice(&2u32.to_le_bytes());
        sb[0x38..0x3A].copy_from_slice(&0xEF53u16.to_le_bytes());
        sb[0x3A] = 1;
        sb[0x3C] = 2;
        sb[0x4C] = 1;
        sb[0x58..0x5A].copy_from_slice(&256u16.to_le_bytes());
        sb[0x5C..0x60].copy_from_slice(&0x2Cu32.to_le_bytes());
        sb[0x60..0x64].copy_from_slice(&0x80000042u32.to_le_bytes());
        sb[0x78..0x7C].copy_from_slice(b"data");
        sb[0x100..0x104].copy_from_slice(&0x4Cu32.to_le_bytes());
        sb[0x150..0x154].copy_from_slice(&1u32.to_le_bytes());
        let l = parse_superblock(&sb).unwrap();
        assert_eq!(
            l.features,
            [
                "has_journal",
                "ext_attr",
                "dir_index",
                "filetype",
                "extent",
                "FEATURE_I31"
            ]
        );
        assert_eq!(l.block_count, 8000, "hi word ignored without 64bit");
        assert_eq!(l.block_size, 4096);
        assert_eq!(l.label.as_deref(), Some("data"));
        assert_eq!(
            l.default_mount_options,
            ["journal_data_ordered", "user_xattr", "acl"]
        );
        assert_eq!(l.state.as_deref(), Some("clean"));
        assert_eq!(l.errors_behavior.as_deref(), Some("Remount read-only"));
        assert_eq!(l.uuid, None);
        sb[0x38] = 0;
        assert!(parse_superblock(&sb).unwrap_err().contains("magic"));
        assert!(parse_superblock(&sb[..10]).is_err());
        assert!(parse_device_head(&[0u8; 100]).is_err());
    }
}
