//! The GPU generations the payload ABI distinguishes: the blank r1 of abi.md §1 and the GRF
//! size (64 bytes on Xe-HPC and Xe2), so the enum is small; it can be named by the device string ocloc
//! takes or read from the zebin's `.note.intelgt.compat` PRODUCT_FAMILY note.

use super::zebin::Zebin;

/// Target platform of a compiled kernel.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Gen9 (`skl`).
    Gen9,
    /// Gen12LP (`tgllp`).
    Gen12Lp,
    /// XeHPG (`acm-g10`, DG2).
    XeHpg,
    /// Xe-HPC (`pvc`, Data Center GPU Max): 64-byte GRF.
    XeHpc,
    /// Xe2 (`bmg`, `lnl`): 64-byte GRF.
    Xe2,
}

impl Platform {
    /// What a device name vdb does not know is told: the names it does.
    pub fn unknown_device(name: &str) -> String {
        format!("unknown device `{name}` (vdb runs skl, tgllp, acm-g10 or dg2, pvc, bmg, lnl or xe2)")
    }

    /// From an `ocloc -device` name as used in the kernel corpus directories.
    pub fn from_device_name(name: &str) -> Option<Platform> {
        match name {
            "skl" => Some(Platform::Gen9),
            "tgllp" => Some(Platform::Gen12Lp),
            "acm-g10" | "dg2" => Some(Platform::XeHpg),
            "pvc" | "xe-hpc" => Some(Platform::XeHpc),
            "xe2" | "bmg" | "lnl" => Some(Platform::Xe2),
            _ => None,
        }
    }

    /// From a PRODUCT_FAMILY value (IGFX_SKYLAKE = 18, IGFX_TIGERLAKE_LP = 29,
    /// IGFX_DG2 = 1270).
    pub fn from_product_family(family: u32) -> Option<Platform> {
        match family {
            18 => Some(Platform::Gen9),
            29 => Some(Platform::Gen12Lp),
            1270 => Some(Platform::XeHpg),
            _ => None,
        }
    }

    /// The platform a zebin was compiled for, from its compatibility note.
    pub fn of_zebin(zebin: &Zebin) -> Option<Platform> {
        zebin.product_family().and_then(Platform::from_product_family)
    }

    /// Whether a kernel without per-thread data still gets a blank r1 before its
    /// cross-thread data. Gen9/Gen12LP hardware needs some per-thread data whenever there is
    /// cross-thread data; XeHPG loads the payload in a prolog and does not.
    pub fn blank_r1_without_local_ids(self) -> bool {
        matches!(self, Platform::Gen9 | Platform::Gen12Lp)
    }

    /// Bytes per GRF register.
    pub fn grf_size(self) -> u32 {
        match self {
            Platform::XeHpc | Platform::Xe2 => 64,
            _ => 32,
        }
    }
}

#[cfg(test)]
mod device_name_tests {
    use super::Platform;

    /// Every device the message offers is one vdb accepts, and every platform is offered.
    #[test]
    fn the_unknown_device_message_lists_the_accepted_names() {
        let msg = Platform::unknown_device("gen1");
        let list = msg.split("runs ").nth(1).and_then(|l| l.strip_suffix(')')).expect("a list");
        let names: Vec<&str> = list.split(", ").flat_map(|n| n.split(" or ")).collect();
        let platforms: Vec<Platform> =
            names.iter().map(|n| Platform::from_device_name(n).unwrap_or_else(|| panic!("{n}"))).collect();
        for p in [Platform::Gen9, Platform::Gen12Lp, Platform::XeHpg, Platform::XeHpc, Platform::Xe2] {
            assert!(platforms.contains(&p), "{p:?} is not offered: {msg}");
        }
        assert!(msg.contains("`gen1`"));
    }
}
