//! Programs (from source, or from the binaries vdb hands out: the source and build options
//! in a small envelope), builds with ocloc (`-g`, for the emulated device) and their logs,
//! kernels and their arguments.

use std::ffi::{c_char, c_void};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use vdb_compile::{CompileError, Request};

use crate::ffi::*;
use crate::handles::{self, new_handle, Obj};
use crate::objects::{lock, ArgValue, Kernel, Program, ProgramState};

/// The start of a vdb program binary: then the build options, a NUL, the source.
const BINARY_MAGIC: &[u8] = b"VDB-OPENCL-PROGRAM-1\0";

pub fn is_program(o: &Obj) -> bool {
    matches!(o, Obj::Program(_))
}
pub fn is_kernel(o: &Obj) -> bool {
    matches!(o, Obj::Kernel(_))
}

fn new_program(c: Handle, source: String, options: String) -> Handle {
    let state = ProgramState { options, status: -1, ..Default::default() };
    let p = Program { context: c as usize, source, state: Mutex::new(state) };
    new_handle(Obj::Program(Arc::new(p)))
}

pub extern "C" fn create_program_with_source(
    c: Handle,
    count: u32,
    strings: *const *const c_char,
    lengths: *const usize,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        handles::context(c)?;
        let ptrs = read_array(strings, count as usize);
        if ptrs.is_empty() || ptrs.iter().any(|p| p.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        let lens = read_array(lengths, count as usize);
        let mut source = String::new();
        for (i, p) in ptrs.iter().enumerate() {
            match lens.get(i).copied().filter(|n| *n > 0) {
                Some(n) => source.push_str(&String::from_utf8_lossy(&read_bytes(*p as *const c_void, n))),
                None => source.push_str(&read_cstr(*p).unwrap_or_default()),
            }
        }
        Ok(new_program(c, source, String::new()))
    })
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn create_program_with_binary(
    c: Handle,
    num_devices: u32,
    devices: *const Handle,
    lengths: *const usize,
    binaries: *const *const u8,
    binary_status: *mut i32,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        handles::context(c)?;
        let devs = read_array(devices, num_devices as usize);
        if devs.len() != 1 {
            return Err(CL_INVALID_VALUE);
        }
        handles::check_device(devs[0])?;
        let len = read_array(lengths, 1).first().copied().unwrap_or(0);
        let ptr = read_array(binaries, 1).first().copied().unwrap_or(std::ptr::null());
        if len == 0 || ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let bytes = read_bytes(ptr as *const c_void, len);
        let parsed = bytes.strip_prefix(BINARY_MAGIC).and_then(|rest| {
            let nul = rest.iter().position(|b| *b == 0)?;
            let options = String::from_utf8_lossy(&rest[..nul]).into_owned();
            Some((options, String::from_utf8_lossy(&rest[nul + 1..]).into_owned()))
        });
        let Some((options, source)) = parsed else {
            crate::log::unsupported(
                "a program binary not made by vdb (vdb takes back only its own binaries)",
            );
            write_out(binary_status, CL_INVALID_BINARY);
            return Err(CL_INVALID_BINARY);
        };
        write_out(binary_status, CL_SUCCESS);
        Ok(new_program(c, source, options))
    })
}

retain_release!(retain_program, release_program, is_program, CL_INVALID_PROGRAM);

/// Where a program's source is written to be compiled: vdb's cache, named by its hash (the
/// path is part of the ocloc cache key, so the same source builds once).
fn source_path(source: &str) -> Result<PathBuf, String> {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    source.hash(&mut h);
    let dir = vdb_compile::cache_root().join("icd-sources");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("program-{:016x}.cl", h.finish()));
    if !path.is_file() {
        std::fs::write(&path, source).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(path)
}

/// Builds with ocloc for the emulated device; the log is the compiler's messages.
fn build(program: &Program, options: String) -> i32 {
    let mut st = lock(&program.state);
    st.options = options;
    let path = match source_path(&program.source) {
        Ok(p) => p,
        Err(e) => {
            (st.status, st.log) = (-2, e);
            return CL_BUILD_PROGRAM_FAILURE;
        }
    };
    let device = crate::device::spec().name;
    let req = Request { source: &path, device, options: &st.options };
    match vdb_compile::compile(&req) {
        Ok(built) => {
            st.log = built.log.clone();
            st.build = Some(Arc::new(built));
            st.status = 0;
            st.source_path = path;
            CL_SUCCESS
        }
        Err(e) => {
            st.log = e.render(&path, device);
            st.status = -2;
            st.build = None;
            if matches!(e, CompileError::NoCompiler) {
                crate::log::warn(&st.log);
                return CL_COMPILER_NOT_AVAILABLE;
            }
            CL_BUILD_PROGRAM_FAILURE
        }
    }
}

pub extern "C" fn build_program(
    p: Handle,
    num_devices: u32,
    devices: *const Handle,
    options: *const c_char,
    notify: Option<extern "C" fn(Handle, *mut c_void)>,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let program = handles::program(p)?;
        if (num_devices == 0) != devices.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        read_array(devices, num_devices as usize).iter().try_for_each(|d| handles::check_device(*d))?;
        if lock(&program.state).kernels_made > 0 {
            return Err(CL_INVALID_OPERATION);
        }
        let options = read_cstr(options).unwrap_or_default();
        let code = build(&program, options);
        if let Some(f) = notify {
            f(p, user_data);
        }
        if code == CL_SUCCESS {
            Ok(())
        } else {
            Err(code)
        }
    })
}

/// The binary vdb hands out for a program: its options and source (see [`BINARY_MAGIC`]).
fn binary_of(program: &Program) -> Vec<u8> {
    let st = lock(&program.state);
    [BINARY_MAGIC, st.options.as_bytes(), &[0], program.source.as_bytes()].concat()
}

fn kernel_names(program: &Program) -> Result<Vec<String>, i32> {
    let st = lock(&program.state);
    let build = st.build.as_ref().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
    Ok(build.info.source_kernels().map(|k| k.name.clone()).collect())
}

pub extern "C" fn get_program_info(
    p: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    // The binaries are written through the pointers the caller passes, not copied out.
    guard(|| {
        let program = handles::program(p)?;
        let bytes = match param {
            0x1160 => u32b(handles::ref_count(p as usize)),
            0x1161 => usizeb(program.context),
            0x1162 => u32b(1),
            0x1163 => usizeb(handles::device() as usize),
            0x1164 => strb(&program.source),
            0x1165 => usizeb(binary_of(&program).len()),
            0x1166 => {
                // An array of one pointer, to a buffer the caller sized with BINARY_SIZES.
                let dst = read_array(value as *const *mut c_void, if value.is_null() { 0 } else { 1 });
                if size < std::mem::size_of::<usize>() && !value.is_null() {
                    return Err(CL_INVALID_VALUE);
                }
                if let Some(d) = dst.first() {
                    copy_to(*d, &binary_of(&program));
                }
                write_out(size_ret, std::mem::size_of::<usize>());
                return Ok(());
            }
            0x1167 => usizeb(kernel_names(&program)?.len()),
            0x1168 => strb(&kernel_names(&program)?.join(";")),
            _ => return Err(CL_INVALID_VALUE),
        };
        info(&bytes, size, value, size_ret)
    })
}

pub extern "C" fn get_program_build_info(
    p: Handle,
    dev: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let program = handles::program(p)?;
        handles::check_device(dev)?;
        let st = lock(&program.state);
        let bytes = match param {
            0x1181 => st.status.to_ne_bytes().to_vec(),
            0x1182 => strb(&st.options),
            0x1183 => strb(&st.log),
            0x1184 => u32b(if st.build.is_some() { 4 } else { 0 }),
            0x1185 => usizeb(0),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

fn new_kernel(p: Handle, program: &Arc<Program>, name: &str) -> Result<Handle, i32> {
    let mut st = lock(&program.state);
    let build = st.build.clone().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
    if build.info.kernel(name).is_none() {
        return Err(CL_INVALID_KERNEL_NAME);
    }
    let compiled = build.kernel(Some(name)).map_err(|m| {
        crate::log::warn(&format!("kernel `{name}`: {m}"));
        CL_INVALID_KERNEL_NAME
    })?;
    let mut args_info = build.info.misc_info(name).map(|m| m.args_info.clone()).unwrap_or_default();
    args_info.sort_by_key(|a| a.index);
    st.kernels_made += 1;
    let k = Kernel {
        program: program.clone(),
        program_handle: p as usize,
        args: Mutex::new(vec![None; args_info.len()]),
        build,
        compiled,
        args_info,
        parsed: Mutex::new(None),
    };
    Ok(new_handle(Obj::Kernel(Arc::new(k))))
}

pub extern "C" fn create_kernel(p: Handle, name: *const c_char, errcode_ret: *mut i32) -> Handle {
    guard_ptr(errcode_ret, || {
        let program = handles::program(p)?;
        let name = read_cstr(name).ok_or(CL_INVALID_VALUE)?;
        new_kernel(p, &program, &name)
    })
}

pub extern "C" fn create_kernels_in_program(
    p: Handle,
    num_kernels: u32,
    kernels: *mut Handle,
    num_ret: *mut u32,
) -> i32 {
    guard(|| {
        let program = handles::program(p)?;
        let names = kernel_names(&program)?;
        if !kernels.is_null() && (num_kernels as usize) < names.len() {
            return Err(CL_INVALID_VALUE);
        }
        if !kernels.is_null() {
            for (i, name) in names.iter().enumerate() {
                write_out(kernels.wrapping_add(i), new_kernel(p, &program, name)?);
            }
        }
        write_out(num_ret, names.len() as u32);
        Ok(())
    })
}

retain_release!(retain_kernel, release_kernel, is_kernel, CL_INVALID_KERNEL);

pub extern "C" fn set_kernel_arg(k: Handle, index: u32, size: usize, value: *const c_void) -> i32 {
    guard(|| {
        let kernel = handles::kernel(k)?;
        let info = kernel.args_info.get(index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
        let arg = match info.address_qualifier.as_str() {
            "__local" => {
                if !value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                if size == 0 {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                ArgValue::Local(size)
            }
            "__global" | "__constant" => {
                if size != std::mem::size_of::<Handle>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                let h =
                    read_array(value as *const Handle, 1).first().copied().unwrap_or(std::ptr::null_mut());
                if h.is_null() {
                    ArgValue::Mem(None)
                } else {
                    let mem = handles::mem(h)?;
                    ArgValue::Mem(Some((h as usize, mem)))
                }
            }
            _ => {
                if value.is_null() {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                let want = vdb::launch::argtypes::Declared::parse(&info.type_name, &info.address_qualifier);
                if want.value.size.is_some_and(|s| s as usize != size && !(size == 12 && s == 16)) {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                ArgValue::Bytes(read_bytes(value, size))
            }
        };
        let mut args = crate::objects::lock(&kernel.args);
        if let Some(slot) = args.get_mut(index as usize) {
            *slot = Some(arg);
        }
        Ok(())
    })
}

pub extern "C" fn get_kernel_info(
    k: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let kernel = handles::kernel(k)?;
        let bytes = match param {
            0x1190 => strb(&kernel.compiled.name),
            0x1191 => u32b(kernel.args_info.len() as u32),
            0x1192 => u32b(handles::ref_count(k as usize)),
            0x1193 => usizeb(kernel.program.context),
            0x1194 => usizeb(kernel.program_handle),
            0x1195 => strb(""),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

fn address_code(q: &str) -> u32 {
    match q {
        "__global" => 0x119B,
        "__local" => 0x119C,
        "__constant" => 0x119D,
        _ => 0x119E,
    }
}

fn access_code(q: &str) -> u32 {
    match q {
        "read_only" | "__read_only" => 0x11A0,
        "write_only" | "__write_only" => 0x11A1,
        "read_write" | "__read_write" => 0x11A2,
        _ => 0x11A3,
    }
}

fn type_qualifier_bits(q: &str) -> u64 {
    let has = |w: &str| q.split_whitespace().any(|x| x == w);
    (has("const") as u64) | ((has("restrict") as u64) << 1) | ((has("volatile") as u64) << 2)
}

pub extern "C" fn get_kernel_arg_info(
    k: Handle,
    index: u32,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let kernel = handles::kernel(k)?;
        let a = kernel.args_info.get(index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
        let bytes = match param {
            0x1196 => u32b(address_code(&a.address_qualifier)),
            0x1197 => u32b(access_code(&a.access_qualifier)),
            0x1198 => strb(a.type_name.split(';').next().unwrap_or("")),
            0x1199 => u64b(type_qualifier_bits(&a.type_qualifiers)),
            0x119A => strb(&a.name),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

pub extern "C" fn get_kernel_work_group_info(
    k: Handle,
    dev: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let kernel = handles::kernel(k)?;
        if !dev.is_null() {
            handles::check_device(dev)?;
        }
        let env = kernel.build.info.kernel(&kernel.compiled.name).map(|z| z.execution_env.clone());
        let bytes = match param {
            0x11B0 => usizeb(crate::device::spec().max_work_group),
            0x11B1 => usizes(&[0, 0, 0]),
            0x11B2 => u64b(env.as_ref().map_or(0, |e| e.slm_size as u64)),
            0x11B3 => usizeb(kernel.compiled.simd.max(1) as usize),
            0x11B4 => u64b(0),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}
