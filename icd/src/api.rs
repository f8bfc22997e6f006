//! The calls vdb implements, by dispatch-table slot name. Everything else is a generated
//! stub (`dispatch_gen.rs`) that returns CL_INVALID_OPERATION and says so once.

use std::ffi::c_void;

use crate::api_mem as m;
use crate::api_platform as p;
use crate::api_program as g;
use crate::events as e;
use crate::launch as l;

/// (slot name, function) for every implemented call.
pub fn implemented() -> Vec<(&'static str, *const c_void)> {
    vec![
        ("clGetPlatformIDs", p::get_platform_ids as *const c_void),
        ("clGetPlatformInfo", p::get_platform_info as *const c_void),
        ("clGetDeviceIDs", p::get_device_ids as *const c_void),
        ("clGetDeviceInfo", p::get_device_info as *const c_void),
        ("clRetainDevice", p::retain_device as *const c_void),
        ("clReleaseDevice", p::retain_device as *const c_void),
        ("clCreateContext", p::create_context as *const c_void),
        ("clCreateContextFromType", p::create_context_from_type as *const c_void),
        ("clRetainContext", p::retain_context as *const c_void),
        ("clReleaseContext", p::release_context as *const c_void),
        ("clGetContextInfo", p::get_context_info as *const c_void),
        ("clCreateCommandQueue", p::create_command_queue as *const c_void),
        ("clCreateCommandQueueWithProperties", p::create_command_queue_with_properties as *const c_void),
        ("clRetainCommandQueue", p::retain_command_queue as *const c_void),
        ("clReleaseCommandQueue", p::release_command_queue as *const c_void),
        ("clGetCommandQueueInfo", p::get_command_queue_info as *const c_void),
        ("clFlush", p::flush as *const c_void),
        ("clFinish", p::finish as *const c_void),
        ("clUnloadCompiler", p::unload_compiler as *const c_void),
        ("clUnloadPlatformCompiler", p::unload_platform_compiler as *const c_void),
        ("clCreateBuffer", m::create_buffer as *const c_void),
        ("clCreateSubBuffer", m::create_sub_buffer as *const c_void),
        ("clRetainMemObject", m::retain_mem as *const c_void),
        ("clReleaseMemObject", m::release_mem as *const c_void),
        ("clGetMemObjectInfo", m::get_mem_object_info as *const c_void),
        ("clEnqueueReadBuffer", m::enqueue_read_buffer as *const c_void),
        ("clEnqueueWriteBuffer", m::enqueue_write_buffer as *const c_void),
        ("clEnqueueCopyBuffer", m::enqueue_copy_buffer as *const c_void),
        ("clEnqueueFillBuffer", m::enqueue_fill_buffer as *const c_void),
        ("clEnqueueMapBuffer", m::enqueue_map_buffer as *const c_void),
        ("clEnqueueUnmapMemObject", m::enqueue_unmap_mem_object as *const c_void),
        ("clCreateProgramWithSource", g::create_program_with_source as *const c_void),
        ("clCreateProgramWithBinary", g::create_program_with_binary as *const c_void),
        ("clRetainProgram", g::retain_program as *const c_void),
        ("clReleaseProgram", g::release_program as *const c_void),
        ("clBuildProgram", g::build_program as *const c_void),
        ("clGetProgramInfo", g::get_program_info as *const c_void),
        ("clGetProgramBuildInfo", g::get_program_build_info as *const c_void),
        ("clCreateKernel", g::create_kernel as *const c_void),
        ("clCreateKernelsInProgram", g::create_kernels_in_program as *const c_void),
        ("clRetainKernel", g::retain_kernel as *const c_void),
        ("clReleaseKernel", g::release_kernel as *const c_void),
        ("clSetKernelArg", g::set_kernel_arg as *const c_void),
        ("clGetKernelInfo", g::get_kernel_info as *const c_void),
        ("clGetKernelArgInfo", g::get_kernel_arg_info as *const c_void),
        ("clGetKernelWorkGroupInfo", g::get_kernel_work_group_info as *const c_void),
        ("clEnqueueNDRangeKernel", l::enqueue_nd_range_kernel as *const c_void),
        ("clEnqueueTask", l::enqueue_task as *const c_void),
        ("clWaitForEvents", e::wait_for_events as *const c_void),
        ("clGetEventInfo", e::get_event_info as *const c_void),
        ("clGetEventProfilingInfo", e::get_event_profiling_info as *const c_void),
        ("clRetainEvent", e::retain_event as *const c_void),
        ("clReleaseEvent", e::release_event as *const c_void),
        ("clSetEventCallback", e::set_event_callback as *const c_void),
        ("clEnqueueMarkerWithWaitList", e::enqueue_marker_with_wait_list as *const c_void),
        ("clEnqueueBarrierWithWaitList", e::enqueue_barrier_with_wait_list as *const c_void),
        ("clEnqueueMarker", e::enqueue_marker as *const c_void),
        ("clEnqueueBarrier", e::enqueue_barrier as *const c_void),
        ("clEnqueueWaitForEvents", e::enqueue_wait_for_events as *const c_void),
        ("clGetExtensionFunctionAddress", crate::clGetExtensionFunctionAddress as *const c_void),
        (
            "clGetExtensionFunctionAddressForPlatform",
            crate::clGetExtensionFunctionAddressForPlatform as *const c_void,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::dispatch_gen::SLOT_NAMES;

    #[test]
    fn every_implemented_call_has_a_slot() {
        for (name, _) in super::implemented() {
            assert!(SLOT_NAMES.contains(&name), "{name} is not a dispatch slot");
        }
    }
}
