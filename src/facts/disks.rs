//! What a whole disk is, from its sysfs identity (`device/vendor`,
//! `device/model`, `device/modalias`, its kernel name): a physical drive,
//! whose `queue/rotational` describes its medium, or a virtual or cloud
//! disk, whose flag the hypervisor's driver sets whatever backs it. Pure
//! over the strings it is given; reads nothing itself (the storage reader
//! reads the files through the confined host).
//!
//! References for the identities recognised (each is what the guest's
//! kernel shows, not what the host uses):
//! - virtio-blk: its driver names the disks `vd*` (also where a snapshot
//!   lacks sysfs `device/`, as an sosreport does); the virtio specification gives the block device the
//!   device ID 2 (OASIS virtio 1.2, section 5 "Device Types"), so its
//!   modalias is `virtio:d00000002v…` (`0x1af4` is Red Hat's virtio vendor
//!   ID); the driver (drivers/block/virtio_blk.c) never marks its queue
//!   non-rotational, so every virtio disk reports `rotational = 1`.
//! - virtio-scsi and emulated disks under QEMU/KVM: SCSI INQUIRY vendor
//!   `QEMU`, product `QEMU HARDDISK` (QEMU hw/scsi/scsi-disk.c).
//! - Xen: the paravirtual front end names its disks `xvd*`
//!   (drivers/block/xen-blkfront.c), modalias `xen:vbd`.
//! - VMware: vendor `VMware` with product `Virtual disk` (pvscsi, LSI
//!   Logic) or `VMware Virtual S` (VMware KB 1003951, virtual disk
//!   inquiry data).
//! - Hyper-V and Azure: vendor `Msft`, product `Virtual Disk` (storvsc;
//!   Microsoft, "Linux and FreeBSD VMs on Hyper-V", and Azure's managed
//!   disks, whose SKU decides the medium).
//! - AWS EBS on Nitro: NVMe model `Amazon Elastic Block Store` (AWS, "Amazon
//!   EBS and NVMe"); `Amazon EC2 NVMe Instance Storage` is a local SSD.
//! - Google Compute Engine persistent disks: vendor `Google`, product
//!   `PersistentDisk` on virtio-scsi, NVMe model `nvme_card-pd` (Google
//!   Cloud, "About persistent disks"; local SSDs are `EphemeralDisk` and
//!   `nvme_card`).

/// A whole disk as the guest sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskKind {
    /// A drive whose `queue/rotational` says what its medium is.
    Physical,
    /// A virtual disk: the flag is the driver's default, not the medium.
    Virtual {
        /// What it is (`virtio-blk (QEMU/KVM)`).
        what: &'static str,
    },
    /// A provider's network volume: its volume type decides the medium
    /// (and its latency is the provider's).
    Cloud {
        /// What it is (`AWS EBS volume`).
        what: &'static str,
        /// The fact that decides it (`the EBS volume type: ...`).
        decides: &'static str,
    },
}

/// The sysfs identity of a whole disk (each file's text, trimmed; empty
/// when the file is missing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskId<'a> {
    /// Kernel name (`vda`, `sda`, `nvme0n1`, `xvda`).
    pub name: &'a str,
    /// `device/vendor`.
    pub vendor: &'a str,
    /// `device/model`.
    pub model: &'a str,
    /// `device/modalias`.
    pub modalias: &'a str,
}

/// What the disk is, from its identity.
pub fn classify(id: &DiskId) -> DiskKind {
    let vendor = id.vendor.trim();
    let model = id.model.trim();
    let alias = id.modalias.trim();
    let starts = |s: &str, p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    // virtio_blk names its disks `vd` + letters (drivers/block/virtio_blk.c,
    // `virtblk_name_format("vd", ...)`); no other driver uses the prefix, so
    // the name decides where sysfs `device/` was not kept (an sosreport's
    // block plugin copies only `queue/`)
    let virtio_name = id
        .name
        .strip_prefix("vd")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase()));
    if starts(alias, "virtio:d00000002v") || (alias.is_empty() && virtio_name) {
        return DiskKind::Virtual {
            what: "virtio-blk disk (QEMU/KVM and other virtio hypervisors)",
        };
    }
    if starts(alias, "xen:vbd") || id.name.starts_with("xvd") {
        return DiskKind::Virtual {
            what: "Xen virtual disk",
        };
    }
    if starts(model, "Amazon Elastic Block Store") {
        return DiskKind::Cloud {
            what: "AWS EBS volume",
            decides: "the EBS volume type (gp2, gp3, io1, io2 are SSD; st1, sc1 are HDD): \
                      `aws ec2 describe-volumes`",
        };
    }
    if (starts(vendor, "Google") && starts(model, "PersistentDisk"))
        || starts(model, "nvme_card-pd")
    {
        return DiskKind::Cloud {
            what: "Google Compute Engine persistent disk",
            decides: "the disk type (pd-standard is HDD; pd-balanced, pd-ssd, pd-extreme and \
                      Hyperdisk are SSD): `gcloud compute disks describe`",
        };
    }
    if starts(vendor, "QEMU") && starts(model, "QEMU HARDDISK") {
        return DiskKind::Virtual {
            what: "QEMU virtual disk (virtio-scsi or emulated)",
        };
    }
    if starts(vendor, "VMware")
        && (starts(model, "Virtual disk") || starts(model, "VMware Virtual"))
    {
        return DiskKind::Virtual {
            what: "VMware virtual disk",
        };
    }
    if starts(vendor, "Msft") && starts(model, "Virtual Disk") {
        return DiskKind::Virtual {
            what: "Hyper-V virtual disk (also Azure's managed disks, whose SKU decides the medium)",
        };
    }
    DiskKind::Physical
}

impl DiskKind {
    /// Whether the rotational flag describes the medium.
    pub fn flag_is_the_medium(&self) -> bool {
        matches!(self, DiskKind::Physical)
    }

    /// Why the flag says nothing here, for a disk named `disk` whose flag
    /// reads `flag`.
    pub fn reason(&self, disk: &str, flag: Option<bool>) -> String {
        let shown = match flag {
            Some(true) => "1",
            Some(false) => "0",
            None => "unreadable",
        };
        match self {
            DiskKind::Physical => String::new(),
            DiskKind::Virtual { what } => format!(
                "{disk} is a {what}: its driver reports queue/rotational = {shown} \
                 whatever backs it, so the flag says nothing about the medium"
            ),
            DiskKind::Cloud { what, decides } => format!(
                "{disk} is a {what}, a network volume whose latency is the provider's \
                 (queue/rotational = {shown} is the driver's, not the medium's); {decides} decides"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id<'a>(name: &'a str, vendor: &'a str, model: &'a str, modalias: &'a str) -> DiskId<'a> {
        DiskId {
            name,
            vendor,
            model,
            modalias,
        }
    }

    #[test]
    fn each_documented_identity_is_recognised_and_a_drive_is_physical() {
        // as sysfs shows them: SCSI vendor and model fields are padded
        let cases = [
            (
                id("vda", "0x1af4", "", "virtio:d00000002v00001AF4"),
                "virtio-blk",
            ),
            (
                id("sda", "QEMU    ", "QEMU HARDDISK   ", "scsi:t-0x00"),
                "QEMU virtual",
            ),
            (id("xvda", "", "", "xen:vbd"), "Xen"),
            // an sosreport keeps only queue/: the virtio_blk name decides
            (id("vdb", "", "", ""), "virtio-blk"),
            (
                id("sda", "VMware  ", "Virtual disk    ", "scsi:t-0x00"),
                "VMware",
            ),
            (
                id("sda", "VMware, ", "VMware Virtual S", "scsi:t-0x00"),
                "VMware",
            ),
            (
                id("sda", "Msft    ", "Virtual Disk    ", "scsi:t-0x00"),
                "Hyper-V",
            ),
            (
                id(
                    "nvme0n1",
                    "",
                    "Amazon Elastic Block Store              ",
                    "",
                ),
                "AWS EBS",
            ),
            (
                id("sdb", "Google  ", "PersistentDisk  ", "scsi:t-0x00"),
                "Google",
            ),
            (id("nvme0n1", "", "nvme_card-pd", ""), "Google"),
        ];
        for (d, want) in cases {
            let k = classify(&d);
            assert!(!k.flag_is_the_medium(), "{d:?}");
            let r = k.reason(d.name, Some(true));
            assert!(r.contains(want), "{d:?}: {r}");
            assert!(r.starts_with(&format!("{} is a", d.name)), "{r}");
        }
        for d in [
            id("sda", "ATA     ", "ST4000NM0035-1V4", "scsi:t-0x00"),
            id("nvme0n1", "", "Samsung SSD 980 PRO 1TB", ""),
            id("nvme1n1", "", "Amazon EC2 NVMe Instance Storage", ""),
            id("sdc", "Google  ", "EphemeralDisk   ", "scsi:t-0x00"),
            id("sda", "", "", ""),
        ] {
            assert_eq!(classify(&d), DiskKind::Physical, "{d:?}");
        }
    }
}
