//! Buffers and sub-buffers, and the commands that move their bytes: read, write, copy,
//! fill, map, unmap. Images and pipes are not implemented (the device reports no image
//! support).

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::events::{complete, wait_list};
use crate::ffi::*;
use crate::handles::{self, new_handle, Obj};
use crate::objects::{Mem, Store};

pub fn is_mem(o: &Obj) -> bool {
    matches!(o, Obj::Mem(_))
}

const ACCESS: u64 = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
const HOST_FLAGS: u64 = CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR;
/// CL_MEM_HOST_WRITE_ONLY, HOST_READ_ONLY, HOST_NO_ACCESS: accepted, not enforced.
const HOST_ACCESS: u64 = (1 << 7) | (1 << 8) | (1 << 9);

fn check_flags(flags: u64, host_ptr: Handle) -> Result<(), i32> {
    let known = ACCESS | HOST_FLAGS | HOST_ACCESS;
    if flags & !known != 0 || (flags & ACCESS).count_ones() > 1 {
        return Err(CL_INVALID_VALUE);
    }
    if flags & CL_MEM_USE_HOST_PTR != 0 && flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) != 0;
    if wants_ptr == host_ptr.is_null() {
        return Err(CL_INVALID_HOST_PTR);
    }
    Ok(())
}

pub extern "C" fn create_buffer(
    c: Handle,
    flags: u64,
    size: usize,
    host_ptr: Handle,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        handles::context(c)?;
        let flags = if flags == 0 { CL_MEM_READ_WRITE } else { flags };
        check_flags(flags, host_ptr)?;
        if size == 0 || size as u64 > crate::device::MAX_ALLOC {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        let store = if flags & CL_MEM_USE_HOST_PTR != 0 {
            Store::host(host_ptr, size)
        } else {
            let s = Store::owned(size);
            if flags & CL_MEM_COPY_HOST_PTR != 0 {
                s.write(0, &read_bytes(host_ptr, size));
            }
            s
        };
        let keep_ptr = if flags & CL_MEM_USE_HOST_PTR != 0 { host_ptr as usize } else { 0 };
        let mem = Mem {
            context: c as usize,
            store: Arc::new(store),
            offset: 0,
            size,
            flags,
            host_ptr: keep_ptr,
            parent: 0,
            maps: Default::default(),
        };
        Ok(new_handle(Obj::Mem(Arc::new(mem))))
    })
}

pub extern "C" fn create_sub_buffer(
    buffer: Handle,
    flags: u64,
    create_type: u32,
    region: *const c_void,
    errcode_ret: *mut i32,
) -> Handle {
    guard_ptr(errcode_ret, || {
        let parent = handles::mem(buffer)?;
        if parent.parent != 0 {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        if create_type != 0x1220 {
            return Err(CL_INVALID_VALUE);
        }
        let r = read_array(region as *const usize, 2);
        let (origin, size) = match r.as_slice() {
            [o, s] => (*o, *s),
            _ => return Err(CL_INVALID_VALUE),
        };
        if size == 0 {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        if origin.checked_add(size).is_none_or(|end| end > parent.size) {
            return Err(CL_INVALID_VALUE);
        }
        if origin % 128 != 0 {
            return Err(-13); // CL_MISALIGNED_SUB_BUFFER_OFFSET (MEM_BASE_ADDR_ALIGN is 1024 bits)
        }
        let access = if flags & ACCESS == 0 { parent.flags & ACCESS } else { flags & ACCESS };
        let mem = Mem {
            context: parent.context,
            store: parent.store.clone(),
            offset: parent.offset + origin,
            size,
            flags: access | (parent.flags & HOST_FLAGS),
            host_ptr: if parent.host_ptr != 0 { parent.host_ptr + origin } else { 0 },
            parent: buffer as usize,
            maps: Default::default(),
        };
        Ok(new_handle(Obj::Mem(Arc::new(mem))))
    })
}

retain_release!(retain_mem, release_mem, is_mem, CL_INVALID_MEM_OBJECT);

pub extern "C" fn get_mem_object_info(
    m: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let mem = handles::mem(m)?;
        let parent_offset = if mem.parent != 0 { mem.offset } else { 0 };
        let bytes = match param {
            0x1100 => u32b(0x10F0),
            0x1101 => u64b(mem.flags),
            0x1102 => usizeb(mem.size),
            0x1103 => usizeb(mem.host_ptr),
            0x1104 => u32b(mem.maps.load(Ordering::SeqCst)),
            0x1105 => u32b(handles::ref_count(m as usize)),
            0x1106 => usizeb(mem.context),
            0x1107 => usizeb(mem.parent),
            0x1108 => usizeb(parent_offset),
            0x1109 => boolb(false),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

/// `offset..offset+len` lies inside `mem`.
fn check_range(mem: &Mem, offset: usize, len: usize) -> Result<(), i32> {
    match offset.checked_add(len) {
        Some(end) if end <= mem.size => Ok(()),
        _ => Err(CL_INVALID_VALUE),
    }
}

/// The queue, the buffer, and the wait list checked: what every buffer command starts with.
fn begin(q: Handle, m: Handle, num_events: u32, events: *const Handle) -> Result<Arc<Mem>, i32> {
    handles::queue(q)?;
    let mem = handles::mem(m)?;
    wait_list(num_events, events)?;
    Ok(mem)
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn enqueue_read_buffer(
    q: Handle,
    m: Handle,
    _blocking: u32,
    offset: usize,
    size: usize,
    ptr: *mut c_void,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        let mem = begin(q, m, num_events, events)?;
        check_range(&mem, offset, size)?;
        if ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let start = crate::objects::now_ns();
        let mut bytes = vec![0u8; size];
        mem.store.read(mem.offset + offset, &mut bytes);
        copy_to(ptr, &bytes);
        complete(q, 0x11F3, start, event, 0)
    })
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn enqueue_write_buffer(
    q: Handle,
    m: Handle,
    _blocking: u32,
    offset: usize,
    size: usize,
    ptr: *const c_void,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        let mem = begin(q, m, num_events, events)?;
        check_range(&mem, offset, size)?;
        if ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let start = crate::objects::now_ns();
        mem.store.write(mem.offset + offset, &read_bytes(ptr, size));
        complete(q, 0x11F4, start, event, 0)
    })
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn enqueue_copy_buffer(
    q: Handle,
    src: Handle,
    dst: Handle,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        let from = begin(q, src, num_events, events)?;
        let to = handles::mem(dst)?;
        check_range(&from, src_offset, size)?;
        check_range(&to, dst_offset, size)?;
        let (a, b) = (from.offset + src_offset, to.offset + dst_offset);
        if Arc::ptr_eq(&from.store, &to.store) && a < b + size && b < a + size {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let start = crate::objects::now_ns();
        let mut bytes = vec![0u8; size];
        from.store.read(a, &mut bytes);
        to.store.write(b, &bytes);
        complete(q, 0x11F5, start, event, 0)
    })
}

#[allow(clippy::too_many_arguments)]
pub extern "C" fn enqueue_fill_buffer(
    q: Handle,
    m: Handle,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        let mem = begin(q, m, num_events, events)?;
        let sizes = [1, 2, 4, 8, 16, 32, 64, 128];
        if pattern.is_null() || !sizes.contains(&pattern_size) || !offset.is_multiple_of(pattern_size) {
            return Err(CL_INVALID_VALUE);
        }
        if !size.is_multiple_of(pattern_size) {
            return Err(CL_INVALID_VALUE);
        }
        check_range(&mem, offset, size)?;
        let start = crate::objects::now_ns();
        let unit = read_bytes(pattern, pattern_size);
        let bytes: Vec<u8> = unit.iter().copied().cycle().take(size).collect();
        mem.store.write(mem.offset + offset, &bytes);
        complete(q, 0x1207, start, event, 0)
    })
}

/// Maps return the buffer's own bytes (an in-order queue that has finished every command
/// lets the host use them directly, as on an integrated GPU): no copy either way.
#[allow(clippy::too_many_arguments)]
pub extern "C" fn enqueue_map_buffer(
    q: Handle,
    m: Handle,
    _blocking: u32,
    _map_flags: u64,
    offset: usize,
    size: usize,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
    errcode_ret: *mut i32,
) -> *mut c_void {
    guard_ptr(errcode_ret, || {
        let mem = begin(q, m, num_events, events)?;
        check_range(&mem, offset, size)?;
        let start = crate::objects::now_ns();
        mem.maps.fetch_add(1, Ordering::SeqCst);
        complete(q, 0x11FB, start, event, 0)?;
        Ok(mem.store.address(mem.offset + offset))
    })
}

pub extern "C" fn enqueue_unmap_mem_object(
    q: Handle,
    m: Handle,
    _mapped: *mut c_void,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        let mem = begin(q, m, num_events, events)?;
        let start = crate::objects::now_ns();
        let was = mem.maps.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if was.is_err() {
            return Err(CL_INVALID_VALUE);
        }
        complete(q, 0x11FD, start, event, 0)
    })
}
