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
//! - Hardware RAID virtual disks: the kernel asks the disk for the SCSI
//!   Block Device Characteristics VPD page (0xB1) and reports rotational
//!   unless it says "non-rotating medium"; a RAID controller answers that
//!   inquiry for its virtual disk itself, and many do not support the page,
//!   which hides whether the drives behind it are SSDs (Red Hat KB 7008833,
//!   "How does the kernel determine if a SCSI disk is HDD or SSD?"). The
//!   virtual disks carry the controller's INQUIRY identity: Dell PERC
//!   (vendor `DELL`, product `PERC …`), Broadcom/LSI/Avago MegaRAID and the
//!   OEM cards built on it (products `MR9…`, `MegaRAID …`, IBM `ServeRAID
//!   …`, Fujitsu `PRAID …`, Lenovo `RAID …`), HPE Smart Array (`HP`/`HPE`
//!   `LOGICAL VOLUME`, hpsa), LSI Integrated RAID volumes (`LSI` `Logical
//!   Volume`, mpt3sas) and Adaptec/Microchip arrays (vendor `Adaptec`, the
//!   product is the array's name). A drive passed through such a controller
//!   (JBOD, HBA mode) keeps its own identity and flag.

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
    /// A virtual disk of a hardware RAID controller: the controller
    /// answers for it and may hide whether its drives are SSDs.
    Controller {
        /// Which controller family (`Dell PERC`).
        what: &'static str,
        /// The controller's own tool that lists its drives' media.
        decides: &'static str,
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
    if let Some(k) = raid_controller(vendor, model) {
        return k;
    }
    if starts(vendor, "Msft") && starts(model, "Virtual Disk") {
        return DiskKind::Virtual {
            what: "Hyper-V virtual disk (also Azure's managed disks, whose SKU decides the medium)",
        };
    }
    DiskKind::Physical
}

/// The virtual disk of a hardware RAID controller, from the INQUIRY
/// identity the controller gives it (see the module's references).
fn raid_controller(vendor: &str, model: &str) -> Option<DiskKind> {
    let starts = |s: &str, p: &str| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    const MEGACLI: &str = "the controller's own tool, which lists each drive's medium \
                           (`storcli /c0/eall/sall show` or `perccli /c0/eall/sall show`: \
                           Med SSD or HDD)";
    let kind = |what, decides| Some(DiskKind::Controller { what, decides });
    if starts(vendor, "DELL") && starts(model, "PERC") {
        return kind("Dell PERC RAID controller", MEGACLI);
    }
    if starts(model, "MegaRAID")
        || (["LSI", "AVAGO", "BROADCOM"]
            .iter()
            .any(|v| starts(vendor, v))
            && starts(model, "MR9"))
        || starts(model, "ServeRAID")
        || starts(model, "PRAID")
        || (starts(vendor, "Lenovo") && starts(model, "RAID "))
    {
        return kind("MegaRAID (Broadcom/LSI) RAID controller", MEGACLI);
    }
    if (starts(vendor, "HP") || starts(vendor, "HPE")) && starts(model, "LOGICAL VOLUME") {
        return kind(
            "HPE Smart Array RAID controller",
            "the controller's own tool (`ssacli ctrl all show config detail`: each \
             physicaldrive's Interface Type, Solid State SAS/SATA or not)",
        );
    }
    if starts(vendor, "LSI") && starts(model, "Logical Volume") {
        return kind(
            "LSI Integrated RAID (mpt3sas) controller",
            "the controller's own tool (`sas3ircu 0 display`: each drive's Drive Type, SSD or HDD)",
        );
    }
    if starts(vendor, "Adaptec") {
        return kind(
            "Adaptec/Microchip RAID controller",
            "the controller's own tool (`arcconf getconfig 1 pd`: each drive's SSD field)",
        );
    }
    None
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
            DiskKind::Controller { what, .. } => format!(
                "{disk} is a virtual disk of a {what}: the controller answers the kernel's \
                 medium inquiry for it and may hide whether the drives behind it are SSDs \
                 (queue/rotational = {shown} is the controller's answer, not the medium's; \
                 Red Hat KB 7008833)"
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
            // hardware RAID virtual disks, as their controllers name them
            (
                id("sda", "DELL    ", "PERC H730P Mini  ", "scsi:t-0x00"),
                "Dell PERC",
            ),
            (
                id("sdb", "DELL    ", "PERC H755 Front  ", "scsi:t-0x00"),
                "Dell PERC",
            ),
            (
                id("sda", "AVAGO   ", "MR9361-8i       ", "scsi:t-0x00"),
                "MegaRAID",
            ),
            (
                id("sda", "LSI     ", "MR9271-8i       ", "scsi:t-0x00"),
                "MegaRAID",
            ),
            (
                id("sda", "BROADCOM", "MR9560-16i      ", "scsi:t-0x00"),
                "MegaRAID",
            ),
            (
                id("sda", "IBM     ", "ServeRAID M5210 ", "scsi:t-0x00"),
                "MegaRAID",
            ),
            (
                id("sda", "HP      ", "LOGICAL VOLUME  ", "scsi:t-0x00"),
                "Smart Array",
            ),
            (
                id("sda", "HPE     ", "LOGICAL VOLUME  ", "scsi:t-0x00"),
                "Smart Array",
            ),
            (
                id("sda", "LSI     ", "Logical Volume  ", "scsi:t-0x00"),
                "Integrated RAID",
            ),
            (
                id("sda", "Adaptec ", "RAID10-DATA     ", "scsi:t-0x00"),
                "Adaptec",
            ),
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
            // drives passed through a controller (HBA/JBOD mode) keep their
            // own identity, and a Dell-branded drive is not a PERC
            id("sda", "ATA     ", "SAMSUNG MZ7LH960", "scsi:t-0x00"),
            id("sda", "SEAGATE ", "ST1200MM0009    ", "scsi:t-0x00"),
            id("sda", "DELL    ", "ST2000NM0055    ", "scsi:t-0x00"),
            id("sda", "HP      ", "MB4000GCWDC     ", "scsi:t-0x00"),
        ] {
            assert_eq!(classify(&d), DiskKind::Physical, "{d:?}");
        }
    }
}
