//! The device runtime of checked builds: the bounded wait, the report (record, sink, printed
//! line, trap or panic), the diagnostics word, and the device global the host points at its sink.
//!
//! Compiled only with the `checked` feature (see `mod.rs`), so nothing here reaches the generated
//! code of other builds. The instructions come from `crate::arch`; the few lines that differ by
//! target are gathered in the private module `target` at the end of this file.

use core::convert::Infallible;
use core::panic::Location;

use super::Diagnostics;
use super::record::{Call, Fault, HangRecord, Role};
#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
use super::record::{DiagnosticsSink, RECORD_MAGIC};
#[cfg(target_arch = "nvptx64")]
use super::record::{ROLE_PARTICIPANT, ROLE_PRODUCER, Verdict};

/// The device global of checked GPU builds: see [`DiagnosticsSink`].
#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
#[unsafe(no_mangle)]
pub static mut GPU_PIPELINE_DIAGNOSTICS: DiagnosticsSink = DiagnosticsSink {
    records: core::ptr::null_mut(),
    capacity: 0,
    next: 0,
};

/// What the pipeline layer knows about a failing wait; the reporting thread adds where it runs.
#[derive(Clone, Copy)]
pub(crate) struct Report {
    pub fault: Fault,
    pub call: Call,
    pub role: Role,
    pub diagnostics: u64,
    pub storage: u32,
    pub stages: u32,
    pub stage: u32,
    pub sub_stage: u32,
    pub lap: u32,
    pub per_phase: u32,
    pub expected: u32,
    pub observed: u32,
    pub tracked: bool,
    /// The stages the reporting half held (acquired, not released).
    pub held: u32,
    pub elapsed_ns: u64,
    pub location: &'static Location<'static>,
}

/// Now, in nanoseconds, from the platform's constant-rate clock.
#[inline(always)]
pub(crate) fn now_ns() -> u64 {
    target::now_ns()
}

/// The budget in nanoseconds from a diagnostics word.
#[inline(always)]
pub(crate) fn budget_ns(word: u64) -> u64 {
    u64::from(word as u32) * 1000
}

/// Polls `ready` until it returns true; past the budget of `diagnostics`, calls `expired` with
/// the time spent. The clock is read only after the first probe failed. `settle` runs right after
/// the first probe: the previous wait's count check, whose shared-memory read has had the whole
/// probe to arrive (compared before the probe, its latency showed in every round trip).
/// `expired` never returns: its result type is the uninhabited `Infallible`, because naming `!`
/// in a closure bound (`FnOnce(u64) -> !`) needs the unstable never type; a closure whose body
/// calls a `-> !` function coerces to it.
#[inline(always)]
pub(crate) fn bounded_wait(
    mut ready: impl FnMut() -> bool,
    settle: impl FnOnce(),
    diagnostics: impl Fn() -> u64,
    expired: impl FnOnce(u64) -> Infallible,
) {
    let first = ready();
    settle();
    if first {
        return;
    }
    slow_wait(&mut ready, diagnostics, expired);
}

/// Probes between two clock reads in [`slow_wait`].
const PROBES_PER_CLOCK_READ: u32 = 32;

/// The loop after a failed first probe: the clock is read once per [`PROBES_PER_CLOCK_READ`]
/// probes (first after that many), so a wait that ends within them reads no clock at all.
/// Inlined: an out-of-line call would need its closures' captures in local memory, and LLVM builds
/// them before the first probe (seen in the SASS: nine `STL.64` per wait on the fast path).
#[inline(always)]
fn slow_wait(
    ready: &mut impl FnMut() -> bool,
    diagnostics: impl Fn() -> u64,
    expired: impl FnOnce(u64) -> Infallible,
) {
    let mut start = None;
    loop {
        for _ in 0..PROBES_PER_CLOCK_READ {
            if ready() {
                return;
            }
            target::pause();
        }
        let now = now_ns();
        match start {
            None => start = Some(now),
            Some(start) => {
                let elapsed = now.wrapping_sub(start);
                if elapsed > budget_ns(diagnostics()) {
                    expired(elapsed);
                }
            }
        }
    }
}

/// A wait on a barrier outside this crate's pipelines, for the checked builds of crates built on
/// it (gpu-hopper's named barriers and ordered-sequence barrier): the bounded wait and the
/// [`HangRecord`] of the pipelines, with the record's fields given by the caller. Each field is the
/// record's field of the same name (see [`HangRecord`] and the [`Call`] variant for what the
/// fields mean for that call); `diagnostics` gives the label and the budget.
///
/// Only with the `checked` feature.
#[derive(Clone, Copy, Debug)]
pub struct BarrierWait {
    /// The call that waits.
    pub call: Call,
    /// The waiting thread's side.
    pub role: Role,
    /// The label in the record, and the wait's budget.
    pub diagnostics: Diagnostics,
    /// The low 32 bits of the barrier's address (its shared-memory offset on a GPU).
    pub storage: u32,
    /// `HangRecord::stages`.
    pub stages: u32,
    /// `HangRecord::stage`.
    pub stage: u32,
    /// `HangRecord::sub_stage`.
    pub sub_stage: u32,
    /// `HangRecord::lap`.
    pub lap: u32,
    /// Arrivals per phase (0: not tracked).
    pub per_phase: u32,
    /// The total arrivals, modulo 2^32, at which the awaited phase is complete.
    pub expected: u32,
    /// `HangRecord::held`.
    pub held: u32,
}

impl BarrierWait {
    /// Polls `ready` until it returns true. Past the budget, reports a [`Fault::Timeout`] with the
    /// arrivals `observed` returns then (`None`: not tracked) and stops the kernel (on the host,
    /// panics with the record). The clock is read only after a failed first probe.
    #[track_caller]
    #[inline(always)]
    pub fn wait(self, ready: impl FnMut() -> bool, observed: impl FnOnce() -> Option<u32>) {
        let location = Location::caller();
        let word = self.diagnostics.word();
        bounded_wait(
            ready,
            || {},
            move || word,
            move |elapsed_ns| self.stop(Fault::Timeout, observed(), elapsed_ns, location),
        );
    }

    /// Reports `fault` with `observed` arrivals (`None`: not tracked) and stops the kernel (on the
    /// host, panics with the record).
    #[track_caller]
    #[cold]
    #[inline(never)]
    pub fn fail(self, fault: Fault, observed: Option<u32>) -> ! {
        self.stop(fault, observed, 0, Location::caller())
    }

    /// As [`fail`](Self::fail), naming `location` instead of the caller's: for a report made
    /// where a value is dropped (drop glue has no caller location of the user's), naming where
    /// the value was made.
    #[cold]
    #[inline(never)]
    pub fn fail_at(
        self,
        fault: Fault,
        observed: Option<u32>,
        location: &'static Location<'static>,
    ) -> ! {
        self.stop(fault, observed, 0, location)
    }

    #[cold]
    #[inline(never)]
    fn stop(
        self,
        fault: Fault,
        observed: Option<u32>,
        elapsed_ns: u64,
        location: &'static Location<'static>,
    ) -> ! {
        fail(&Report {
            fault,
            call: self.call,
            role: self.role,
            diagnostics: self.diagnostics.word(),
            storage: self.storage,
            stages: self.stages,
            stage: self.stage,
            sub_stage: self.sub_stage,
            lap: self.lap,
            per_phase: self.per_phase,
            expected: self.expected,
            observed: observed.unwrap_or(0),
            tracked: observed.is_some() && self.per_phase != 0,
            held: self.held,
            elapsed_ns,
            location,
        })
    }
}

/// Builds the full record of `report` for the calling thread.
fn record(report: &Report, lanes: u32) -> HangRecord {
    let mut record = HangRecord::EMPTY;
    record.fault = report.fault as u32;
    record.call = report.call as u32;
    record.role = report.role as u32;
    record.label = (report.diagnostics >> 32) as u32;
    record.storage = report.storage;
    record.stages = report.stages;
    record.stage = report.stage;
    record.sub_stage = report.sub_stage;
    record.lap = report.lap;
    record.per_phase = report.per_phase;
    record.expected = report.expected;
    record.observed = report.observed;
    record.tracked = u32::from(report.tracked);
    record.held = report.held;
    record.elapsed_ns = report.elapsed_ns;
    record.budget_ns = budget_ns(report.diagnostics);
    record.line = report.location.line();
    record.column = report.location.column();
    let file = report.location.file().as_bytes();
    let keep = if file.len() > 63 { file.len() - 63 } else { 0 };
    let mut i = 0;
    while keep + i < file.len() {
        record.file[i] = file[keep + i];
        i += 1;
    }
    let place = target::where_am_i();
    record.block = place.block;
    record.cluster_rank = place.cluster_rank;
    record.thread = place.thread;
    record.lanes = lanes;
    record
}

/// Where the reporting thread runs.
struct Place {
    block: [u32; 3],
    cluster_rank: u32,
    thread: u32,
}

/// Reports `report` and stops: on a GPU, the lowest active lane of the warp writes the record and
/// prints one line, then every lane traps; on the host, a panic with the explanation.
#[cold]
#[inline(never)]
pub(crate) fn fail(report: &Report) -> ! {
    #[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
    {
        let (lanes, lowest) = target::reporting_lanes();
        if lowest {
            let record = record(report, lanes);
            // SAFETY: the sink is the host's to set before the launch; a slot index below the
            // capacity addresses one record of it, written by this lane only.
            unsafe { publish(&record) };
            target::print_line(&record);
        }
        target::stop(lanes)
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        let record = record(report, 1);
        panic!("{record}")
    }
}

/// Writes `record` to the next free slot of the sink, `magic` last, after a system-scope fence.
///
/// # Safety
///
/// The host set `GPU_PIPELINE_DIAGNOSTICS` to null or to `capacity` writable records.
#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
unsafe fn publish(record: &HangRecord) {
    use core::ptr::{addr_of, addr_of_mut};
    use core::sync::atomic::{AtomicU32, Ordering};
    // SAFETY: plain reads of the device global, which only the host writes (before the launch).
    let (records, capacity) = unsafe {
        (
            addr_of!(GPU_PIPELINE_DIAGNOSTICS.records).read_volatile(),
            addr_of!(GPU_PIPELINE_DIAGNOSTICS.capacity).read_volatile(),
        )
    };
    if records.is_null() {
        return;
    }
    // SAFETY: `next` is a 4-byte aligned word of the device global, only ever accessed atomically
    // by the device.
    let next = unsafe { AtomicU32::from_ptr(addr_of_mut!(GPU_PIPELINE_DIAGNOSTICS.next)) };
    let slot = next.fetch_add(1, Ordering::Relaxed);
    if slot >= capacity {
        return;
    }
    // SAFETY: slot < capacity (the caller's contract covers the memory).
    unsafe {
        let dst = records.add(slot as usize);
        let mut body = *record;
        body.magic = 0;
        dst.write_volatile(body);
        target::fence_system();
        addr_of_mut!((*dst).magic).write_volatile(RECORD_MAGIC);
        target::fence_system();
    }
}

/// One line on the device's printf stream: `vprintf` with every argument 8 bytes wide.
#[cfg(target_arch = "nvptx64")]
fn print_line(record: &HangRecord) {
    let verdict: &'static [u8] = match record.verdict() {
        Verdict::NoArrivals => b"no arrivals for this lap\0",
        Verdict::MissingArrivals => b"missing arrivals\0",
        Verdict::ExtraArrivals => b"extra arrivals, or the waiter's lap is behind\0",
        Verdict::CountedButIncomplete => b"all arrivals counted, barrier incomplete\0",
        Verdict::NotTracked => b"not tracked\0",
        Verdict::WrongRole => b"a value used for both sides\0",
        Verdict::StageNotReleased => b"a stage never released\0",
        Verdict::NotInPair => b"this CTA does not run this role of its pair\0",
    };
    let fault: &'static [u8] = match Fault::from_raw(record.fault) {
        Some(Fault::Timeout) => b"HANG\0",
        Some(Fault::WrongCount) => b"WRONG ARRIVAL COUNT\0",
        Some(Fault::StageNotReleased) => b"STAGE NOT RELEASED\0",
        Some(Fault::NotInPair) => b"ROLE NOT IN THIS CTA OF THE PAIR\0",
        _ => b"WRONG ROLE\0",
    };
    let role: &'static [u8] = match record.role {
        ROLE_PRODUCER => b"producer\0",
        ROLE_PARTICIPANT => b"participant\0",
        _ => b"consumer\0",
    };
    let mut file = [0u8; 65];
    file[..64].copy_from_slice(&record.file);
    #[repr(C)]
    struct Args {
        values: [u64; 13],
    }
    let args = Args {
        values: [
            fault.as_ptr() as u64,
            u64::from(record.label),
            role.as_ptr() as u64,
            u64::from(record.stage),
            u64::from(record.lap),
            record.arrived_this_lap() as u64,
            u64::from(record.per_phase),
            verdict.as_ptr() as u64,
            u64::from(record.block[0]),
            u64::from(record.thread),
            record.elapsed_ns / 1000,
            file.as_ptr() as u64,
            u64::from(record.line),
        ],
    };
    // SAFETY: the format's conversions match the 13 8-byte arguments in order; the strings are
    // NUL-terminated.
    unsafe {
        crate::arch::nvptx::vprintf(
            b"gpu-pipeline %s: pipeline %llu, %s, stage %llu lap %llu: %lld of %llu arrivals (%s); block %llu thread %llu, %llu us; %s:%llu\n\0"
                .as_ptr(),
            (&raw const args).cast(),
        );
    }
}

/// Checked builds: where a pipeline keeps its [`Diagnostics`](super::Diagnostics) word (the
/// element after the backend's storage), and the storage's base, for records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DiagnosticsWord {
    base: *mut u8,
    word: *mut u64,
}

// SAFETY: a description of shared memory used by all threads of a pipeline, like the backends'
// pointers; the word is written once by `init` before the block barrier and only read after.
unsafe impl Send for DiagnosticsWord {}
// SAFETY: as above.
unsafe impl Sync for DiagnosticsWord {}

impl DiagnosticsWord {
    /// # Safety
    ///
    /// `word` is an 8-byte aligned word of the pipeline's storage starting at `base`.
    #[inline(always)]
    pub(crate) unsafe fn new(base: *mut u8, word: *mut u64) -> Self {
        Self { base, word }
    }

    /// # Safety
    ///
    /// Only the initialising thread, before the block barrier.
    #[inline(always)]
    pub(crate) unsafe fn store(self, value: u64) {
        // SAFETY: the word is valid (`new`) and 8-byte aligned; no other thread reads it before
        // the block barrier (the caller's contract).
        unsafe { target::store_word(self.word, value) }
    }

    /// The word `init` stored.
    #[inline(always)]
    pub(crate) fn load(self) -> u64 {
        // SAFETY: the word is valid (`new`), 8-byte aligned, and was written before the block
        // barrier.
        unsafe { target::load_word(self.word) }
    }

    /// The low 32 bits of the storage's address: its shared-memory offset on NVIDIA.
    #[inline(always)]
    pub(crate) fn storage(self) -> u32 {
        // SAFETY: the storage is in shared memory on a GPU (the pipeline's contract).
        unsafe { target::storage_offset(self.base) }
    }
}

// ---------------------------------------------------------------- what differs by target
//
// Each function below is a line or two over `crate::arch` leaves; the three versions of the module
// have the same functions with the same signatures, so the code above has no per-target lines
// except the GPU/host split of `fail` and the device-only sink.

/// NVIDIA: `%globaltimer`, `nanosleep 0`, the special registers, `vprintf`, `trap`.
#[cfg(target_arch = "nvptx64")]
mod target {
    use super::{HangRecord, Place};
    use crate::arch::nvptx as ptx;

    /// The GPU's nanosecond timer.
    #[inline(always)]
    pub(super) fn now_ns() -> u64 {
        ptx::globaltimer()
    }

    /// Between two failed probes: `nanosleep 0` (cheaper than a spin, as the counter backend's
    /// own wait measured; an mbarrier `try_wait` has already suspended in hardware).
    #[inline(always)]
    pub(super) fn pause() {
        ptx::nanosleep(0);
    }

    /// Block index, cluster rank, and the thread's linear index in its block.
    pub(super) fn where_am_i() -> Place {
        let [tx, ty, tz] = ptx::tid();
        let [nx, ny, _] = ptx::ntid();
        Place {
            block: ptx::ctaid(),
            cluster_rank: ptx::cluster_ctarank(),
            thread: tx + nx * (ty + ny * tz),
        }
    }

    /// The active lanes of the warp, and whether the calling lane is the lowest of them.
    #[inline(always)]
    pub(super) fn reporting_lanes() -> (u32, bool) {
        let lanes = ptx::activemask();
        (lanes, lanes & ptx::lanemask_lt() == 0)
    }

    /// The system-scope fence around the record's `magic`.
    #[inline(always)]
    pub(super) fn fence_system() {
        ptx::fence_sc_sys();
    }

    /// One line on the device's printf stream.
    #[inline(always)]
    pub(super) fn print_line(record: &HangRecord) {
        super::print_line(record);
    }

    /// Every lane of `lanes` meets the reporting lane, then traps.
    #[inline(always)]
    pub(super) fn stop(lanes: u32) -> ! {
        // SAFETY: every lane of `lanes` runs this call with the same mask.
        unsafe { ptx::bar_warp_sync(lanes) };
        ptx::trap()
    }

    /// A plain volatile store: Rust atomics on NVIDIA are system scope, and no other thread
    /// reads the word before the block barrier.
    ///
    /// # Safety
    ///
    /// `word` is valid and 8-byte aligned; no other thread accesses it now.
    #[inline(always)]
    pub(super) unsafe fn store_word(word: *mut u64, value: u64) {
        // SAFETY: guaranteed by the caller.
        unsafe { word.write_volatile(value) }
    }

    /// # Safety
    ///
    /// `word` is valid, 8-byte aligned, and written before the block barrier.
    #[inline(always)]
    pub(super) unsafe fn load_word(word: *mut u64) -> u64 {
        // SAFETY: guaranteed by the caller.
        unsafe { word.read_volatile() }
    }

    /// The shared-memory offset of `base`.
    ///
    /// # Safety
    ///
    /// `base` points into this block's shared memory.
    #[inline(always)]
    pub(super) unsafe fn storage_offset(base: *mut u8) -> u32 {
        // SAFETY: guaranteed by the caller.
        unsafe { ptx::cvta_to_shared(base) }
    }
}

/// AMD: the real-time counter, work-group and work-item ids, `s_trap 2`; no device printf
/// without the HIP runtime's host-call buffer, and no pause between probes.
#[cfg(target_arch = "amdgpu")]
mod target {
    use super::{HangRecord, Place};
    use crate::arch::amdgpu as amd;

    /// The real-time counter, in nanoseconds.
    #[inline(always)]
    pub(super) fn now_ns() -> u64 {
        amd::realtime_ns()
    }

    /// Polls on.
    #[inline(always)]
    pub(super) fn pause() {}

    /// The work-group's index and the work-item's x index. The work-group size is in the dispatch
    /// packet, not in a register: the record keeps the x index of the work-item (kernels of this
    /// library are one-dimensional).
    pub(super) fn where_am_i() -> Place {
        Place {
            block: amd::workgroup_id(),
            cluster_rank: 0,
            thread: amd::workitem_id_x(),
        }
    }

    /// The active lanes of the wave (the low 32 in the record), and whether the calling lane is
    /// the lowest of them.
    #[inline(always)]
    pub(super) fn reporting_lanes() -> (u32, bool) {
        let lanes = amd::active_lanes();
        (lanes as u32, amd::lanes_below(lanes) == 0)
    }

    /// The system-scope fence around the record's `magic`.
    #[inline(always)]
    pub(super) fn fence_system() {
        amd::fence_seq_cst();
    }

    /// No device printf: the record alone.
    #[inline(always)]
    pub(super) fn print_line(_record: &HangRecord) {}

    /// Every lane traps.
    #[inline(always)]
    pub(super) fn stop(_lanes: u32) -> ! {
        amd::trap()
    }

    /// A relaxed atomic store, not a volatile one: LLVM keeps inferring the LDS address space of
    /// atomics (a volatile access through a generic pointer stays `flat_*`).
    ///
    /// # Safety
    ///
    /// `word` is valid and 8-byte aligned.
    #[inline(always)]
    pub(super) unsafe fn store_word(word: *mut u64, value: u64) {
        // SAFETY: guaranteed by the caller.
        unsafe { amd::ds_write_u64_relaxed(word.cast_const().cast(), value) }
    }

    /// # Safety
    ///
    /// `word` is valid and 8-byte aligned.
    #[inline(always)]
    pub(super) unsafe fn load_word(word: *mut u64) -> u64 {
        // SAFETY: guaranteed by the caller.
        unsafe { amd::ds_read_u64_relaxed(word.cast_const().cast()) }
    }

    /// The low 32 bits of the address of `base`.
    ///
    /// # Safety
    ///
    /// None here; NVIDIA's version needs `base` in shared memory.
    #[inline(always)]
    pub(super) unsafe fn storage_offset(base: *mut u8) -> u32 {
        base as usize as u32
    }
}

/// The host: `Instant`, `yield_now`, a thread number, a panic (see `fail`).
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
mod target {
    use super::Place;
    use crate::arch::host;

    /// Nanoseconds since the first call.
    #[inline(always)]
    pub(super) fn now_ns() -> u64 {
        host::now_ns()
    }

    /// Between two failed probes: lets the other threads of the model run.
    #[inline(always)]
    pub(super) fn pause() {
        host::yield_now();
    }

    /// The thread's number in the process (block 0, no cluster).
    pub(super) fn where_am_i() -> Place {
        Place {
            block: [0; 3],
            cluster_rank: 0,
            thread: host::thread_number(),
        }
    }

    /// A relaxed atomic store.
    ///
    /// # Safety
    ///
    /// `word` is valid and 8-byte aligned.
    #[inline(always)]
    pub(super) unsafe fn store_word(word: *mut u64, value: u64) {
        // SAFETY: guaranteed by the caller.
        unsafe {
            core::sync::atomic::AtomicU64::from_ptr(word)
                .store(value, core::sync::atomic::Ordering::Relaxed);
        }
    }

    /// A relaxed atomic load.
    ///
    /// # Safety
    ///
    /// `word` is valid and 8-byte aligned.
    #[inline(always)]
    pub(super) unsafe fn load_word(word: *mut u64) -> u64 {
        // SAFETY: guaranteed by the caller.
        unsafe {
            core::sync::atomic::AtomicU64::from_ptr(word)
                .load(core::sync::atomic::Ordering::Relaxed)
        }
    }

    /// The low 32 bits of the address of `base`.
    ///
    /// # Safety
    ///
    /// None here; NVIDIA's version needs `base` in shared memory.
    #[inline(always)]
    pub(super) unsafe fn storage_offset(base: *mut u8) -> u32 {
        base as usize as u32
    }
}
