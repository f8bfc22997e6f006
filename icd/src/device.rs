//! The one platform and device: vdb emulating the Intel GPU chosen with `VDB_DEVICE` (skl,
//! tgllp or acm-g10; `vdb record --device`), reporting that GPU's limits as Intel's driver
//! does (work-group size: 256 on Gen9, 512 on Xe-LP, 1024 on Xe-HPG; 64 KiB of local memory;
//! sub-groups of 8, 16 and 32), and OpenCL 1.2.

use crate::ffi::{boolb, strb, u32b, u64b, usizeb, usizes};

/// The emulated device.
pub struct DeviceSpec {
    /// ocloc's `-device` name.
    pub name: &'static str,
    pub marketing: &'static str,
    pub max_work_group: usize,
    pub compute_units: u32,
    pub clock_mhz: u32,
    pub fp64: bool,
}

const DEVICES: [DeviceSpec; 3] = [
    DeviceSpec {
        name: "skl",
        marketing: "Intel(R) HD Graphics (Gen9, Skylake GT2)",
        max_work_group: 256,
        compute_units: 24,
        clock_mhz: 1150,
        fp64: true,
    },
    DeviceSpec {
        name: "tgllp",
        marketing: "Intel(R) Iris(R) Xe Graphics (Xe-LP, Tiger Lake)",
        max_work_group: 512,
        compute_units: 96,
        clock_mhz: 1350,
        fp64: false,
    },
    DeviceSpec {
        name: "acm-g10",
        marketing: "Intel(R) Arc(TM) A770 Graphics (Xe-HPG, DG2)",
        max_work_group: 1024,
        compute_units: 512,
        clock_mhz: 2400,
        fp64: false,
    },
];

/// The device `VDB_DEVICE` names (skl when unset or unknown: `vdb record` checks the name).
pub fn spec() -> &'static DeviceSpec {
    let wanted = std::env::var("VDB_DEVICE").unwrap_or_default();
    let wanted = if wanted == "dg2" { "acm-g10".to_string() } else { wanted };
    DEVICES.iter().find(|d| d.name == wanted).unwrap_or(&DEVICES[0])
}

pub const LOCAL_MEM: u64 = 64 * 1024;
/// The engine maps at most 1 GiB a buffer.
pub const MAX_ALLOC: u64 = vdb::launch::opencl::MAX_BUFFER;
pub const GLOBAL_MEM: u64 = 4 << 30;
pub const SUB_GROUP_SIZES: [usize; 3] = [8, 16, 32];

pub fn extensions() -> String {
    let mut e = vec![
        "cl_khr_byte_addressable_store",
        "cl_khr_global_int32_base_atomics",
        "cl_khr_global_int32_extended_atomics",
        "cl_khr_local_int32_base_atomics",
        "cl_khr_local_int32_extended_atomics",
        "cl_khr_int64_base_atomics",
        "cl_khr_int64_extended_atomics",
        "cl_khr_fp16",
        "cl_khr_subgroups",
        "cl_intel_subgroups",
        "cl_intel_subgroups_short",
        "cl_intel_required_subgroup_size",
    ];
    if spec().fp64 {
        e.push("cl_khr_fp64");
    }
    e.join(" ")
}

pub const PLATFORM_VERSION: &str = "OpenCL 1.2 vdb";

/// clGetPlatformInfo values.
pub fn platform_info(param: u32) -> Option<Vec<u8>> {
    Some(match param {
        0x0900 => strb("FULL_PROFILE"),
        0x0901 => strb(PLATFORM_VERSION),
        0x0902 => strb("vdb"),
        0x0903 => strb("vdb (time-travel debugger for Intel vISA kernels)"),
        0x0904 => strb("cl_khr_icd"),
        0x0905 => u64b(1),
        0x0920 => strb("vdb"),
        _ => return None,
    })
}

/// Floating-point capabilities: denormals, inf/nan, all roundings, fma.
const FP_CONFIG: u64 = 0x3f;

/// clGetDeviceInfo values.
pub fn device_info(param: u32) -> Option<Vec<u8>> {
    let d = spec();
    let half = d.max_work_group;
    Some(match param {
        0x1000 => u64b(1 << 2), // CL_DEVICE_TYPE_GPU
        0x1001 => u32b(0x8086),
        0x1002 => u32b(d.compute_units),
        0x1003 => u32b(3),
        0x1004 => usizeb(d.max_work_group),
        0x1005 => usizes(&[half, half, half]),
        0x1006 => u32b(16),
        0x1007 => u32b(8),
        0x1008 => u32b(4),
        0x1009 | 0x100A => u32b(1),
        0x100B => u32b(d.fp64 as u32),
        0x100C => u32b(d.clock_mhz),
        0x100D => u32b(64),
        0x100E | 0x100F | 0x1018 => u32b(0),
        0x1010 => u64b(MAX_ALLOC),
        0x1011..=0x1015 | 0x1040 | 0x1041 => usizeb(0),
        0x1016 => boolb(false),
        0x1017 => usizeb(2048),
        0x1019 => u32b(1024),
        0x101A => u32b(128),
        0x101B => u64b(FP_CONFIG | 0x80),
        0x101C => u32b(2),
        0x101D => u32b(64),
        0x101E => u64b(512 * 1024),
        0x101F => u64b(GLOBAL_MEM),
        0x1020 => u64b(MAX_ALLOC),
        0x1021 => u32b(8),
        0x1022 => u32b(1),
        0x1023 => u64b(LOCAL_MEM),
        0x1024 => boolb(false),
        0x1025 => usizeb(1),
        0x1026 | 0x1027 | 0x1028 | 0x103E | 0x1035 | 0x1048 => boolb(true),
        0x1029 => u64b(1),
        0x102A => u64b(2), // CL_QUEUE_PROFILING_ENABLE (in order only)
        0x102B => strb(&format!("vdb (emulating Intel {})", d.name)),
        0x102C => strb("Intel(R) Corporation (emulated by vdb)"),
        0x102D => strb(env!("CARGO_PKG_VERSION")),
        0x102E => strb("FULL_PROFILE"),
        0x102F => strb(&format!("OpenCL 1.2 vdb emulating {}", d.marketing)),
        0x1030 => strb(&extensions()),
        0x1031 => crate::ffi::usizeb(crate::handles::platform() as usize),
        0x1032 => u64b(if d.fp64 { FP_CONFIG } else { 0 }),
        0x1033 => u64b(FP_CONFIG),
        0x1034 | 0x103C => u32b(8),
        0x1036 => u32b(16),
        0x1037 => u32b(8),
        0x1038 => u32b(4),
        0x1039 => u32b(1),
        0x103A => u32b(1),
        0x103B => u32b(d.fp64 as u32),
        0x103D => strb("OpenCL C 1.2 "),
        0x103F => strb(""),
        0x1042 => usizeb(0),
        0x1043 => u32b(0),
        0x1044 | 0x1046 => usizeb(0),
        0x1045 => u64b(0),
        0x1047 => u32b(1),
        0x1049 => usizeb(4 << 20),
        0x105C => u32b((d.max_work_group / 8) as u32), // CL_DEVICE_MAX_NUM_SUB_GROUPS
        0x4108 => usizes(&SUB_GROUP_SIZES),            // CL_DEVICE_SUB_GROUP_SIZES_INTEL
        _ => return None,
    })
}
