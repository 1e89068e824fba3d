//! A kernel launch's place in its stream: whether the stream is being captured into a CUDA graph
//! (what a host API asks before it enqueues work a capture cannot hold, an upload or an
//! allocation, or frees memory a capture may use), and the attribute that launches a kernel as a
//! programmatic dependent of the kernel before it.

use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::{CudaStream, DriverError, sys};

use crate::plan_cache::Capture;

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

/// [`capture_id`] as a plan cache's [`Capture`]: whether `stream` is being captured into a CUDA
/// graph, and the capture sequence's id. A capture that failed and is still open counts as one
/// (the driver refuses its launches; a plan must not be made or freed in it either).
pub fn capture_state(stream: &CudaStream) -> Result<Capture, DriverError> {
    Ok(match capture_id(stream)? {
        None => Capture::None,
        Some(id) => Capture::Active(id),
    })
}

/// Whether a kept plan made on `stream` may be freed now (a plan cache's `evictable`): not while
/// the stream is being captured (the free would join the capture). A stream whose state cannot
/// be read is not captured by this process's calls either way.
///
/// The answer is of the moment it is read: a capture that another thread begins on `stream`
/// between this query and the free that follows it (microseconds later, outside any lock the
/// host API holds) is not seen, and that free then joins the capture (the memory is freed by
/// the graph instead). Begin captures on a stream whose plans may be evicted only while no other
/// thread calls the host API, or release the cache's eager plans first (`clear_cache`).
pub fn may_free_on(stream: &CudaStream) -> bool {
    !matches!(capture_state(stream), Ok(Capture::Active(_)))
}

/// A host API's programmatic-launch setting (`set_programmatic_launch`), over a module whose
/// entries wait for the stream's previous kernel before they touch global memory, or not (its
/// ABI version says which): off at first; on only for a module whose entries wait, unless set
/// unchecked (a negative control's).
#[derive(Debug)]
pub struct ProgrammaticLaunch {
    on: AtomicBool,
    waits: bool,
}

impl ProgrammaticLaunch {
    /// Off, over a module whose entries wait (`waits`) or not.
    pub const fn new(waits: bool) -> Self {
        Self {
            on: AtomicBool::new(false),
            waits,
        }
    }

    /// Sets it to `on`, and says so; for `on` over a module whose entries do not wait, leaves it
    /// unchanged and returns `false` (a programmatic launch of it would race the kernel before).
    pub fn set(&self, on: bool) -> bool {
        if on && !self.waits {
            return false;
        }
        self.on.store(on, Ordering::Relaxed);
        true
    }

    /// Sets it to `on` whatever the module.
    ///
    /// # Safety
    ///
    /// The host API's `set_programmatic_launch_unchecked` contract: with `on` over a module whose
    /// entries do not wait, its launches may race the kernel before them, which the caller allows
    /// only on buffers it owns and expects wrong results in.
    pub unsafe fn set_unchecked(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    /// Whether launches are programmatic dependents.
    pub fn get(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Whether the module's entries wait.
    pub fn entries_wait(&self) -> bool {
        self.waits
    }
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
    use super::{ProgrammaticLaunch, per_thread_handle};

    /// On only over a module whose entries wait; off always; unchecked whatever the module.
    #[test]
    fn programmatic_launch_is_refused_where_the_entries_do_not_wait() {
        let waiting = ProgrammaticLaunch::new(true);
        assert!(!waiting.get() && waiting.entries_wait());
        assert!(waiting.set(true) && waiting.get());
        assert!(waiting.set(false) && !waiting.get());
        let unwaited = ProgrammaticLaunch::new(false);
        assert!(!unwaited.set(true) && !unwaited.get());
        assert!(unwaited.set(false) && !unwaited.get());
        // SAFETY: nothing is launched here.
        unsafe { unwaited.set_unchecked(true) };
        assert!(unwaited.get());
    }

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
