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

    /// How many hardware threads the thread number IGC computes can tell apart: the number
    /// it multiplies by a thread's share of stateless private memory to find the thread's
    /// stack. Gen9 and Gen12LP code reads `%hw_id` (32 bits); XeHPG and Xe-HPC code takes
    /// `%sr0` bits 13:0 less the two unused bits 3 and 6 (12 bits); Xe2 code takes `%sr0`
    /// bits 6:0 less bit 3 and, above them, `%msg0` bits 7:0 (14 bits).
    pub fn hw_thread_ids(self) -> u64 {
        match self {
            Platform::Gen9 | Platform::Gen12Lp => 1 << 32,
            Platform::XeHpg | Platform::XeHpc => 1 << 12,
            Platform::Xe2 => 1 << 14,
        }
    }

    /// The `%sr0.0` and `%msg0.0` from which the platform's code computes thread number `id`
    /// (below [`Platform::hw_thread_ids`]); `%hw_id` is `id` itself.
    pub fn hw_thread_regs(self, id: u32) -> (u32, u32) {
        // `x` with a zero bit inserted at `bit`.
        let gap = |x: u32, bit: u32| (x & ((1 << bit) - 1)) | ((x >> bit) << (bit + 1));
        match self {
            Platform::Gen9 | Platform::Gen12Lp => (0, 0),
            Platform::XeHpg | Platform::XeHpc => (gap(gap(id & 0xfff, 3), 6), 0),
            Platform::Xe2 => (gap(id & 0x3f, 3), (id >> 6) & 0xff),
        }
    }
}

#[cfg(test)]
mod hw_thread_tests {
    use super::Platform;

    /// What the code IGC emits computes from `%sr0` and `%msg0` (read from its dumps: the
    /// prologs of stack-call kernels for acm-g10 and Xe2).
    fn igc_thread_number(platform: Platform, sr0: u32, msg0: u32) -> u32 {
        match platform {
            Platform::XeHpg | Platform::XeHpc => {
                let x = sr0 & 0x3fff;
                let x = (x & 0x3f) | ((x >> 1) & 0xffff_ffc0);
                (x & 7) | ((x >> 1) & 0xffff_fff8)
            }
            _ => {
                let x = sr0 & 0x7f;
                ((msg0 & 0xff) << 6) | (x & 7) | ((x >> 1) & 0xffff_fff8)
            }
        }
    }

    /// Every thread number the platform tells apart comes back from its registers.
    #[test]
    fn the_state_registers_give_back_each_thread_number() {
        for platform in [Platform::XeHpg, Platform::XeHpc, Platform::Xe2] {
            for id in 0..platform.hw_thread_ids() as u32 {
                let (sr0, msg0) = platform.hw_thread_regs(id);
                assert_eq!(igc_thread_number(platform, sr0, msg0), id, "{platform:?} {id}");
            }
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
