//! Events. Every command has run when its enqueue returns, so an event is born complete (or
//! with the error of a faulted kernel), with its profiling times.

use std::ffi::c_void;
use std::sync::atomic::AtomicI32;
use std::sync::Arc;

use crate::ffi::*;
use crate::handles::{self, new_handle, Obj};
use crate::objects::{now_ns, Event};

pub fn is_event(o: &Obj) -> bool {
    matches!(o, Obj::Event(_))
}

/// Checks a wait list: every entry an event; one that failed fails the command
/// (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), as the specification says.
pub fn wait_list(n: u32, events: *const Handle) -> Result<(), i32> {
    if (n == 0) != events.is_null() {
        return Err(CL_INVALID_EVENT_WAIT_LIST);
    }
    let mut failed = false;
    for h in read_array(events, n as usize) {
        let e = handles::event(h).map_err(|_| CL_INVALID_EVENT_WAIT_LIST)?;
        failed |= e.status() < 0;
    }
    if failed {
        return Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    }
    Ok(())
}

/// A command of type `command` on queue `q`, started at `start` (ns), has finished with
/// `status` (CL_COMPLETE or an error): its event, when the caller asked for one.
pub fn complete(q: Handle, command: u32, start: u64, event: *mut Handle, status: i32) -> Result<(), i32> {
    if event.is_null() {
        return Ok(());
    }
    let queue = handles::queue(q)?;
    let end = now_ns().max(start);
    let e = Event {
        context: queue.context,
        queue: q as usize,
        command,
        status: AtomicI32::new(status),
        times: [start, start, start, end],
    };
    write_out(event, new_handle(Obj::Event(Arc::new(e))));
    Ok(())
}

pub extern "C" fn wait_for_events(n: u32, events: *const Handle) -> i32 {
    guard(|| {
        if n == 0 || events.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        wait_list(n, events)
    })
}

pub extern "C" fn get_event_info(
    e: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let ev = handles::event(e)?;
        let bytes = match param {
            0x11D0 => usizeb(ev.queue),
            0x11D1 => u32b(ev.command),
            0x11D2 => u32b(handles::ref_count(e as usize)),
            0x11D3 => ev.status().to_ne_bytes().to_vec(),
            0x11D4 => usizeb(ev.context),
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(bytes)
    })
}

pub extern "C" fn get_event_profiling_info(
    e: Handle,
    param: u32,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> i32 {
    answer(size, value, size_ret, || {
        let ev = handles::event(e)?;
        let profiled = handles::queue(ev.queue as Handle).is_ok_and(|q| q.properties & 2 != 0);
        if !profiled || ev.queue == 0 {
            return Err(CL_PROFILING_INFO_NOT_AVAILABLE);
        }
        let t = match param {
            0x1280..=0x1283 => ev.times[(param - 0x1280) as usize],
            0x1284 => ev.times[3],
            _ => return Err(CL_INVALID_VALUE),
        };
        Ok(u64b(t))
    })
}

retain_release!(retain_event, release_event, is_event, CL_INVALID_EVENT);

/// The event is already complete (or failed): the callback runs now, as the specification
/// allows for an event past the status asked for.
pub extern "C" fn set_event_callback(
    e: Handle,
    callback_type: i32,
    callback: Option<extern "C" fn(Handle, i32, *mut c_void)>,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let ev = handles::event(e)?;
        let Some(f) = callback else {
            return Err(CL_INVALID_VALUE);
        };
        if !(0..=2).contains(&callback_type) {
            return Err(CL_INVALID_VALUE);
        }
        f(e, ev.status(), user_data);
        Ok(())
    })
}

pub extern "C" fn enqueue_marker_with_wait_list(
    q: Handle,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        handles::queue(q)?;
        wait_list(num_events, events)?;
        complete(q, 0x11FE, now_ns(), event, 0)
    })
}

pub extern "C" fn enqueue_barrier_with_wait_list(
    q: Handle,
    num_events: u32,
    events: *const Handle,
    event: *mut Handle,
) -> i32 {
    guard(|| {
        handles::queue(q)?;
        wait_list(num_events, events)?;
        complete(q, 0x1205, now_ns(), event, 0)
    })
}

pub extern "C" fn enqueue_marker(q: Handle, event: *mut Handle) -> i32 {
    guard(|| {
        handles::queue(q)?;
        if event.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        complete(q, 0x11FE, now_ns(), event, 0)
    })
}

pub extern "C" fn enqueue_barrier(q: Handle) -> i32 {
    guard(|| handles::queue(q).map(drop))
}

pub extern "C" fn enqueue_wait_for_events(q: Handle, n: u32, events: *const Handle) -> i32 {
    guard(|| {
        handles::queue(q)?;
        if n == 0 {
            return Err(CL_INVALID_VALUE);
        }
        wait_list(n, events)
    })
}
