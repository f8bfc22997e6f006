//! Platform, device, context and queue calls.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::device;
use crate::ffi::*;
use crate::handles::{self, new_handle, Obj};
use crate::objects::{lock, Context, Queue};

pub extern "C" fn get_platform_ids(num_entries: u32, platforms: *mut Handle, num_platforms: *mut u32) -> i32 {
    guard(|| {
        if (num_entries == 0 && !platforms.is_null()) || (platforms.is_null() && num_platforms.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        write_out(platforms, handles::platform());
        write_out(num_platforms, 1);
        Ok(())
    })
}

pub extern "C" fn get_platform_info(
    platform: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        handles::check_platform(platform)?;
        device::platform_info(param).ok_or(CL_INVALID_VALUE)
    })
}

/// CL_DEVICE_TYPE_DEFAULT, GPU or ALL find the one device.
fn matches_type(device_type: u64) -> bool {
    device_type & (1 | (1 << 2)) != 0 || device_type == 0xFFFF_FFFF
}

pub extern "C" fn get_device_ids(
    platform: Handle,
    device_type: u64,
    num_entries: u32,
    devices: *mut Handle,
    num_devices: *mut u32,
) -> i32 {
    guard(|| {
        handles::check_platform(platform)?;
        if (num_entries == 0 && !devices.is_null()) || (devices.is_null() && num_devices.is_null()) {
            return Err(CL_INVALID_VALUE);
        }
        if !matches_type(device_type) {
            write_out(num_devices, 0);
            return Err(-1); // CL_DEVICE_NOT_FOUND
        }
        write_out(devices, handles::device());
        write_out(num_devices, 1);
        Ok(())
    })
}

pub extern "C" fn get_device_info(
    dev: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        handles::check_device(dev)?;
        device::device_info(param).ok_or(CL_INVALID_VALUE)
    })
}

pub extern "C" fn retain_device(dev: Handle) -> i32 {
    guard(|| handles::check_device(dev))
}

/// Zero-terminated (key, value) pairs at `p` (at most 64 pairs read).
pub fn read_properties<T: Copy + Default + PartialEq>(p: *const T) -> Vec<T> {
    let mut out = Vec::new();
    if p.is_null() {
        return out;
    }
    for i in 0..129 {
        let v = read_array(p.wrapping_add(i), 1)[0];
        out.push(v);
        if v == T::default() && i % 2 == 0 {
            break;
        }
    }
    out
}

fn new_context(properties: *const isize) -> Result<Handle, i32> {
    let props = read_properties(properties);
    for pair in props.chunks(2).filter(|p| p.len() == 2) {
        match pair[0] {
            0x1084 => handles::check_platform(pair[1] as Handle)?, // CL_CONTEXT_PLATFORM
            0x1085 => {}                                           // CL_CONTEXT_INTEROP_USER_SYNC
            _ => return Err(CL_INVALID_PROPERTY),
        }
    }
    Ok(new_handle(Obj::Context(Arc::new(Context { properties: props }))))
}

pub extern "C" fn create_context(
    properties: *const isize,
    num_devices: u32,
    devices: *const Handle,
    _notify: *const c_void,
    _user_data: *mut c_void,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        let list = read_array(devices, num_devices as usize);
        if list.is_empty() {
            return Err(CL_INVALID_VALUE);
        }
        list.iter().try_for_each(|d| handles::check_device(*d))?;
        new_context(properties)
    })
}

pub extern "C" fn create_context_from_type(
    properties: *const isize,
    device_type: u64,
    _notify: *const c_void,
    _user_data: *mut c_void,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        if !matches_type(device_type) {
            return Err(-1); // CL_DEVICE_NOT_FOUND
        }
        new_context(properties)
    })
}

pub fn is_context(o: &Obj) -> bool {
    matches!(o, Obj::Context(_))
}
pub fn is_queue(o: &Obj) -> bool {
    matches!(o, Obj::Queue(_))
}

retain_release!(retain_context, release_context, is_context, CL_INVALID_CONTEXT);

pub extern "C" fn get_context_info(
    c: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let ctx = handles::context(c)?;
        let bytes = match param {
            0x1080 => u32b(handles::ref_count(c as usize)),
            0x1081 => usizeb(handles::device() as usize),
            0x1082 => ctx.properties.iter().flat_map(|p| p.to_ne_bytes()).collect(),
            0x1083 => u32b(1),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

fn new_queue(c: Handle, dev: Handle, properties: u64) -> Result<Handle, i32> {
    handles::context(c)?;
    handles::check_device(dev)?;
    // Out-of-order execution is allowed to run in order; on-device queues are not here.
    if properties & !3 != 0 {
        crate::log::unsupported("a command queue on the device (CL_QUEUE_ON_DEVICE)");
        return Err(CL_INVALID_QUEUE_PROPERTIES);
    }
    let q = Queue { context: c as usize, properties, failed: Mutex::new(None) };
    Ok(new_handle(Obj::Queue(Arc::new(q))))
}

pub extern "C" fn create_command_queue(
    c: Handle,
    dev: Handle,
    properties: u64,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || new_queue(c, dev, properties))
}

pub extern "C" fn create_command_queue_with_properties(
    c: Handle,
    dev: Handle,
    properties: *const u64,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        let props = read_properties(properties);
        let mut flags = 0;
        for pair in props.chunks(2).filter(|p| p.len() == 2) {
            match pair[0] {
                0x1093 => flags = pair[1], // CL_QUEUE_PROPERTIES
                _ => return Err(CL_INVALID_VALUE),
            }
        }
        new_queue(c, dev, flags)
    })
}

retain_release!(retain_command_queue, release_command_queue, is_queue, CL_INVALID_COMMAND_QUEUE);

pub extern "C" fn get_command_queue_info(
    q: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let queue = handles::queue(q)?;
        let bytes = match param {
            0x1090 => usizeb(queue.context),
            0x1091 => usizeb(handles::device() as usize),
            0x1092 => u32b(handles::ref_count(q as usize)),
            0x1093 => u64b(queue.properties),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

pub extern "C" fn flush(q: Handle) -> i32 {
    guard(|| handles::queue(q).map(drop))
}

/// Every command has run; a kernel that faulted since the last clFinish makes it fail.
pub extern "C" fn finish(q: Handle) -> i32 {
    guard(|| {
        let queue = handles::queue(q)?;
        let failed = lock(&queue.failed).take();
        failed.map_or(Ok(()), Err)
    })
}

pub extern "C" fn unload_compiler() -> i32 {
    CL_SUCCESS
}

pub extern "C" fn unload_platform_compiler(platform: Handle) -> i32 {
    guard(|| handles::check_platform(platform))
}
