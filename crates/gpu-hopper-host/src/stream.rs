//! A kernel launch's place in its stream: whether the stream is being captured into a CUDA graph
//! (what a host API asks before it enqueues work a capture cannot hold, an upload or an
//! allocation, or frees memory a capture may use), and the attribute that launches a kernel as a
//! programmatic dependent of the kernel before it.

use cudarc::driver::{CudaStream, DriverError, sys};

/// The id of the capture sequence `stream` is in (`cuStreamGetCaptureInfo`, one driver call that
/// enqueues nothing: on the H200 a fraction of a microsecond), or `None` when it is not being
/// captured. A capture that failed and is still open counts as one: the driver refuses its
/// launches, and nothing may be enqueued or freed in it either.
///
/// For the legacy default stream the driver reads the calling thread's context: the stream's
/// context is bound to the thread first (a thread that never bound one would otherwise get an
/// error, or another context's answer).
pub fn capture_id(stream: &CudaStream) -> Result<Option<u64>, DriverError> {
    stream.context().bind_to_thread()?;
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id: sys::cuuint64_t = 0;
    // SAFETY: a live stream of cudarc's; the driver writes the status and the id, and the
    // optional outputs (graph, dependencies, edges, their count) are null.
    let result = unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream.cu_stream(),
            &raw mut status,
            &raw mut id,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if result != sys::CUresult::CUDA_SUCCESS {
        return Err(DriverError(result));
    }
    Ok((status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE).then_some(id))
}

/// `CU_STREAM_PER_THREAD` (cuda.h: `((CUstream)0x2)`), the handle of the calling thread's
/// per-thread default stream (cudarc's `CudaContext::per_thread_stream`).
const PER_THREAD: usize = 0x2;

/// Whether `stream`'s handle names a different stream on each thread (the per-thread default
/// stream): memory uploaded on it by one thread must be freed by that thread, in its stream's
/// order, so a host API keeps no plan for it in a cache shared between threads.
pub fn is_per_thread(stream: &CudaStream) -> bool {
    per_thread_handle(stream.cu_stream() as usize)
}

/// [`is_per_thread`] of a stream handle (as an integer).
pub fn per_thread_handle(handle: usize) -> bool {
    handle == PER_THREAD
}

/// The launch attribute `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (for
/// `cuLaunchKernelEx`): the kernel may start once the stream's previous kernel has triggered
/// (`griddepcontrol.launch_dependents`, or its end), and must execute `griddepcontrol.wait`
/// before it touches memory that kernel writes or reads.
pub fn programmatic_attribute() -> sys::CUlaunchAttribute {
    // SAFETY: a launch attribute is plain data; zero is a valid start for every field.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    attribute
}

#[cfg(test)]
mod tests {
    use super::per_thread_handle;

    /// Only `CU_STREAM_PER_THREAD` names another stream on each thread; the legacy default
    /// stream (0, and `CU_STREAM_LEGACY`, 1) is one per context, and a created stream one.
    #[test]
    fn only_the_per_thread_handle_depends_on_the_thread() {
        assert!(per_thread_handle(0x2));
        for handle in [0x0, 0x1, 0x7f00_1234_5000] {
            assert!(!per_thread_handle(handle), "{handle:#x}");
        }
    }
}
