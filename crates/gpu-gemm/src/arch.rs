//! The kernel crate's own leaf: the one instruction the toolkit and the library do not give in
//! this form. The only place in the crate with inline assembly.

/// `cvta.to.shared.u64 s, g;`: the shared-window address of a generic pointer into this CTA's
/// shared memory. Unlike gpu-pipeline's `cvta_to_shared` it is `pure` and `nomem` (a register
/// computation), so LLVM may reuse and move it; switching to the library's leaf changes the
/// GEMM's PTX, which is left for its own measured change.
///
/// PTX ISA 2.0, sm_20. PTX ISA, "Data Movement and Conversion Instructions: cvta".
pub(crate) fn shared_addr(p: *const u8) -> u32 {
    let generic = p as u64;
    let shared: u64;
    // SAFETY: converts a shared-memory generic address.
    unsafe {
        core::arch::asm!("cvta.to.shared.u64 {s}, {g};", s = out(reg64) shared, g = in(reg64) generic, options(pure, nomem, nostack));
    }
    shared as u32
}
