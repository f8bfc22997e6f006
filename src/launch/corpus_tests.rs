//! Checks the launch pieces against the compiled corpus copied to `tests/data/launch`: every
//! zebin and `.ze_info` parses, and in the payload of group 0 / thread 0 every `.input` listed
//! in `payload.json` holds what its `what` says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::payload::{build_payload, cross_thread_start, slm_layout, Launch, NdRange};
use super::{ArgValue, Platform, ThreadPayload, ZeInfo, Zebin};
use crate::isa::{InstIdx, VarId};
use crate::program::{FileId, Input, InputVar, Span, Unit, UnitKind};

const DEVICES: &[&str] = &["skl", "tgllp", "acm-g10"];
/// Buffer addresses like `tools/make_payload.py`: above 4 GiB, 16 MiB apart.
const BUFFER_BASE: u64 = 0x1_0000_0000;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/launch")
}

fn kernels() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir())
        .expect("corpus dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("json file");
    serde_json::from_str(&text).expect("valid json")
}

fn u32s(v: &Value) -> [u32; 3] {
    let n = |i: usize| v[i].as_u64().expect("number") as u32;
    [n(0), n(1), n(2)]
}

fn hex(text: &str) -> Vec<u8> {
    let digits = text.as_bytes().chunks(2);
    digits.map(|p| u8::from_str_radix(std::str::from_utf8(p).expect("ascii"), 16).expect("hex")).collect()
}

/// A kernel unit that only carries the `.input`s of payload.json.
fn unit_from(payload: &Value, simd: u32) -> Unit {
    let span = Span { file: FileId(0), line: 1, col: 1, start: 0, end: 0 };
    let inputs = payload["inputs"].as_array().expect("inputs").iter().enumerate();
    let inputs = inputs.map(|(i, inp)| Input {
        var: InputVar::Gen(VarId(i as u32)),
        offset: inp["offset"].as_u64().expect("offset") as u32,
        size: inp["size"].as_u64().expect("size") as u32,
        span,
    });
    Unit {
        name: payload["kernel"].as_str().expect("name").to_string(),
        kind: UnitKind::Kernel,
        file: FileId(0),
        entry: InstIdx(0),
        end: InstIdx(0),
        inputs: inputs.collect(),
        attrs: vec![("SimdSize".into(), crate::program::AttrValue::Int(simd.into()))],
        labels: Vec::new(),
        subroutines: Vec::new(),
        funcdecls: Vec::new(),
    }
}

/// One corpus kernel on one device, loaded.
struct Case {
    name: String,
    device: &'static str,
    manifest: Value,
    payload: Value,
    zeinfo: ZeInfo,
    zebin: Zebin,
}

fn load(name: &str, device: &'static str) -> Case {
    let dir = data_dir().join(name);
    let bytes = std::fs::read(dir.join(device).join("kernel.zebin")).expect("zebin");
    let zebin = Zebin::parse(&bytes).expect("zebin parses");
    let text = zebin.ze_info_text().expect(".ze_info");
    let file_text = std::fs::read_to_string(dir.join(device).join("ze_info.yaml")).expect("yaml");
    assert_eq!(text, file_text, "{name}/{device}: .ze_info differs from ze_info.yaml");
    let zeinfo = ZeInfo::parse(text).unwrap_or_else(|e| panic!("{name}/{device}: {e}"));
    Case {
        name: name.to_string(),
        device,
        manifest: json(&dir.join("manifest.json")),
        payload: json(&dir.join(device).join("payload.json")),
        zeinfo,
        zebin,
    }
}

/// Argument values from the manifest, and the SLM slot of each `__local` argument.
fn args_of(case: &Case) -> (BTreeMap<u32, ArgValue>, BTreeMap<u32, Vec<u8>>) {
    let kernel = case.zeinfo.kernel(&case.name).expect("kernel");
    let margs = case.manifest["args"].as_array().expect("args");
    let index = |a: &Value| a["index"].as_u64().expect("index") as u32;
    let local_sizes: BTreeMap<u32, u32> = margs
        .iter()
        .filter(|a| a["kind"] == "local")
        .map(|a| (index(a), a["size"].as_u64().expect("size") as u32))
        .collect();
    let (_, slots) = slm_layout(kernel, &local_sizes).expect("slm layout");
    let mut values = BTreeMap::new();
    let mut scalars = BTreeMap::new();
    for (n, a) in margs.iter().enumerate() {
        let i = index(a);
        let value = match a["kind"].as_str().expect("kind") {
            "buffer" => ArgValue::Pointer(BUFFER_BASE + ((n as u64) << 24)),
            "local" => ArgValue::Local { slot: slots[&i] },
            _ => {
                let bytes = hex(a["hex"].as_str().expect("hex"));
                scalars.insert(i, bytes.clone());
                ArgValue::Bytes(bytes)
            }
        };
        values.insert(i, value);
    }
    (values, scalars)
}

fn read_u32s(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(4).map(|c| c.iter().rev().fold(0u32, |a, &b| (a << 8) | u32::from(b))).collect()
}

/// Checks one `.input` of thread 0 of group 0 against its meaning.
fn check_input(
    case: &Case,
    args: &BTreeMap<u32, ArgValue>,
    scalars: &BTreeMap<u32, Vec<u8>>,
    inp: &Value,
    got: &[u8],
) {
    let what = inp["what"].as_str().expect("what");
    let m = &case.manifest;
    let ctx = format!("{}/{} {} {what}", case.name, case.device, inp["var"]);
    let arg_index = inp["arg_index"].as_u64().map(|i| i as u32);
    match what {
        "local_id" => check_local_ids(inp, got, u32s(&m["local_size"]), &ctx),
        "payload_header" => {
            let mut want = u32s(&m["global_offset"]).to_vec();
            want.extend(u32s(&m["local_size"]));
            want.extend([0, 0]);
            assert_eq!(read_u32s(got), want, "{ctx}");
        }
        "local_size" | "enqueued_local_size" => {
            assert_eq!(read_u32s(got), u32s(&m["local_size"]), "{ctx}")
        }
        "global_size" => assert_eq!(read_u32s(got), u32s(&m["global_size"]), "{ctx}"),
        "group_count" => assert_eq!(read_u32s(got), u32s(&m["num_work_groups"]), "{ctx}"),
        "work_dimensions" => {
            assert_eq!(read_u32s(got), vec![m["work_dim"].as_u64().expect("wd") as u32], "{ctx}")
        }
        "private_base_stateless" => assert!(got.iter().all(|&b| b == 0), "{ctx}"),
        "arg_bypointer" => {
            let want: Vec<u8> = match &args[&arg_index.expect("index")] {
                ArgValue::Pointer(a) => a.to_le_bytes().to_vec(),
                ArgValue::Local { slot } => slot.to_le_bytes().to_vec(),
                ArgValue::Bytes(_) => panic!("{ctx}: bytes for a pointer"),
            };
            assert_eq!(got, &want[..got.len()], "{ctx}");
        }
        "arg_byvalue" => {
            let bytes = &scalars[&arg_index.expect("index")];
            let from = inp["source_offset"].as_u64().unwrap_or(0) + inp["within"].as_u64().unwrap_or(0);
            let from = from as usize;
            assert_eq!(got, &bytes[from..from + got.len()], "{ctx}");
        }
        other => panic!("{ctx}: unknown input kind {other}"),
    }
}

/// Lane i of thread 0 is work-item l = i: x = l % Lx, y = (l / Lx) % Ly, z = l / (Lx*Ly).
fn check_local_ids(inp: &Value, got: &[u8], local: [u32; 3], ctx: &str) {
    let dim = inp["dim"].as_u64().expect("dim") as usize;
    let first = inp["lanes"][0].as_u64().expect("lane") as u32;
    let last = inp["lanes"][1].as_u64().expect("lane") as u32;
    let items = local[0] * local[1] * local[2];
    for lane in first..=last {
        let at = 2 * (lane - first) as usize;
        let id = u16::from_le_bytes([got[at], got[at + 1]]);
        let l = lane;
        let want = match dim {
            _ if l >= items => 0,
            0 => l % local[0],
            1 => (l / local[0]) % local[1],
            _ => l / (local[0] * local[1]),
        };
        assert_eq!(u32::from(id), want, "{ctx}: lane {lane}");
    }
}

fn launch_thread(case: &Case, args: &BTreeMap<u32, ArgValue>, unit: &Unit, thread: u32) -> ThreadPayload {
    let kernel = case.zeinfo.kernel(&case.name).expect("kernel");
    let m = &case.manifest;
    let simd = case.payload["simd"].as_u64().expect("simd") as u32;
    let platform = Platform::from_device_name(case.device).expect("device");
    let range = NdRange {
        work_dim: m["work_dim"].as_u64().expect("work_dim") as u32,
        global_size: u32s(&m["global_size"]),
        local_size: u32s(&m["local_size"]),
        global_offset: u32s(&m["global_offset"]),
    };
    let launch = Launch { kernel, unit, platform, simd, range, args };
    build_payload(&launch, [0, 0, 0], thread).unwrap_or_else(|e| panic!("{}/{}: {e}", case.name, case.device))
}

#[test]
fn every_corpus_input_holds_its_meaning() {
    let mut checked = 0;
    for name in kernels() {
        for &device in DEVICES {
            let case = load(&name, device);
            let simd = case.payload["simd"].as_u64().expect("simd") as u32;
            let unit = unit_from(&case.payload, simd);
            let (args, scalars) = args_of(&case);
            let kernel = case.zeinfo.kernel(&name).expect("kernel");
            let platform = Platform::from_device_name(device).expect("device");
            assert_eq!(Platform::of_zebin(&case.zebin), Some(platform), "{name}/{device}");
            let ct = cross_thread_start(kernel, platform);
            assert_eq!(u64::from(ct), case.payload["cross_thread_base"].as_u64().expect("ct"));
            let payload = launch_thread(&case, &args, &unit, 0);
            assert_eq!(&payload.image[4..8], &[0; 4], "{name}/{device}: group x");
            for inp in case.payload["inputs"].as_array().expect("inputs") {
                let at = inp["offset"].as_u64().expect("offset") as usize;
                let size = inp["size"].as_u64().expect("size") as usize;
                check_input(&case, &args, &scalars, inp, &payload.image[at..at + size]);
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "only {checked} inputs checked");
}

#[test]
fn misc_info_names_match_the_manifest() {
    for name in kernels() {
        for &device in DEVICES {
            let case = load(&name, device);
            let misc = case.zeinfo.misc_info(&name).expect("misc info");
            let margs = case.manifest["args"].as_array().expect("args");
            assert_eq!(misc.args_info.len(), margs.len(), "{name}/{device}");
            for (info, a) in misc.args_info.iter().zip(margs) {
                assert_eq!(u64::from(info.index), a["index"].as_u64().expect("index"));
                assert_eq!(info.name, a["name"].as_str().expect("name"), "{name}/{device}");
            }
        }
    }
}

#[test]
fn k24_last_thread_is_partial_on_every_device() {
    for &device in DEVICES {
        let case = load("k24_local_arg", device);
        let unit = unit_from(&case.payload, 32);
        let (args, _) = args_of(&case);
        let payload = launch_thread(&case, &args, &unit, 0);
        assert_eq!(payload.dispatch_mask, 0x00FF_FFFF, "{device}");
        // Lanes 24..31 are disabled and carry local id 0.
        assert_eq!(&payload.image[32 + 48..32 + 64], &[0; 16], "{device}");
    }
}

#[test]
fn k24_slm_slots_follow_static_slm() {
    let case = load("k24_local_arg", "skl");
    let kernel = case.zeinfo.kernel("k24_local_arg").expect("kernel");
    let sizes = BTreeMap::from([(2, 96), (3, 96)]);
    let (total, slots) = slm_layout(kernel, &sizes).expect("layout");
    assert_eq!(slots, BTreeMap::from([(2, 0), (3, 96)]));
    assert_eq!(total, 256 + 192);
}

#[test]
fn k29_simd8_has_four_threads_per_group() {
    let case = load("k29_calls", "skl");
    let unit = unit_from(&case.payload, 8);
    let (args, _) = args_of(&case);
    let last = launch_thread(&case, &args, &unit, 3);
    assert_eq!(last.dispatch_mask, 0xFF);
    // Thread 3 lane 0 is work-item 24; SIMD8 x ids fill the first half of r1.
    assert_eq!(u16::from_le_bytes([last.image[32], last.image[33]]), 24);
    assert_eq!(&last.image[48..64], &[0; 16]);
}
