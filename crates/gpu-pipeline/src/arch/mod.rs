//! Architecture leaves: the only place with inline assembly.
//!
//! One file per architecture, one instruction form per function. Each function exists on every
//! target; on a target other than its own it panics with its name (so that the host type-checks
//! and documents the whole API). The `gpu_leaf!` macro writes that host stub: a leaf is written once, as
//! its doc comment, its signature and its device body.

/// Defines one leaf function of architecture `$arch`: the device body on `$arch`, and on every
/// other target a body that panics with the instruction's name through the invoking file's
/// `gpu_only` function. Each leaf file wraps it as `leaf!` with its own architecture:
///
/// ```text
/// leaf! {
///     /// `mov.u32 d, %laneid;`: the calling thread's lane in its warp.
///     ///
///     /// PTX ISA 1.3, all SMs. PTX ISA, "Special Registers: %laneid".
///     #[gpu_only("mov.u32 %laneid")]
///     #[inline(always)]
///     #[must_use]
///     pub fn laneid() -> u32 {
///         // the device body, with its `// SAFETY:` comments
///     }
/// }
/// ```
///
/// The doc comment comes first, then `#[gpu_only("name")]` (the name the host stub panics with:
/// the instruction, not the function), then the other attributes. The device body is the block
/// as written, so the generated code is exactly that of a hand-written `#[cfg]` pair; the host
/// stub consumes the arguments (no unused-variable warnings) and panics.
///
/// Exported (hidden) for the crates built on this one that write their own leaves the same way
/// (`gpu-hopper`): each defines its own `gpu_only` beside its leaves.
#[macro_export]
#[doc(hidden)]
macro_rules! gpu_leaf {
    (
        $arch:literal;
        $(#[doc = $doc:literal])*
        #[gpu_only($instr:expr)]
        $(#[$attr:meta])*
        $vis:vis unsafe fn $name:ident $(<$(const $c:ident: $ct:ty),+>)? ($($arg:ident: $ty:ty),* $(,)?)
            $(-> $ret:ty)? $body:block
    ) => {
        $(#[doc = $doc])*
        $(#[$attr])*
        $vis unsafe fn $name $(<$(const $c: $ct),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = $arch)]
            $body
            #[cfg(not(target_arch = $arch))]
            {
                $(let _ = $arg;)*
                gpu_only($instr)
            }
        }
    };
    (
        $arch:literal;
        $(#[doc = $doc:literal])*
        #[gpu_only($instr:expr)]
        $(#[$attr:meta])*
        $vis:vis fn $name:ident $(<$(const $c:ident: $ct:ty),+>)? ($($arg:ident: $ty:ty),* $(,)?)
            $(-> $ret:ty)? $body:block
    ) => {
        $(#[doc = $doc])*
        $(#[$attr])*
        $vis fn $name $(<$(const $c: $ct),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = $arch)]
            $body
            #[cfg(not(target_arch = $arch))]
            {
                $(let _ = $arg;)*
                gpu_only($instr)
            }
        }
    };
}

pub mod amdgpu;
#[cfg(all(
    feature = "checked",
    feature = "std",
    not(any(target_arch = "nvptx64", target_arch = "amdgpu"))
))]
pub(crate) mod host;
pub mod nvptx;

/// The host stubs that `gpu_leaf!` writes: each panics with its instruction's name.
#[cfg(all(test, not(any(target_arch = "nvptx64", target_arch = "amdgpu"))))]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::string::String;

    /// The panic message of `f`, which must panic.
    fn message(f: impl FnOnce()) -> String {
        let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("a host stub must panic");
        payload
            .downcast_ref::<String>()
            .cloned()
            .expect("a formatted panic message")
    }

    #[test]
    fn nvptx_stubs_panic_with_the_instruction() {
        let laneid = message(|| {
            let _ = super::nvptx::laneid();
        });
        assert_eq!(
            laneid,
            "gpu-pipeline: `mov.u32 %laneid` is an nvptx64 instruction and cannot run on this target"
        );
        // SAFETY: a host stub; it panics before any access.
        let arrive = message(|| unsafe { super::nvptx::mbarrier_arrive_count(0, 1) });
        assert!(arrive.contains("`mbarrier.arrive.release.cta.shared::cta.b64 (count)`"));
        // SAFETY: a host stub; it panics before any access.
        let after = message(|| unsafe { super::nvptx::mbarrier_arrive_after(0, 0, 1) });
        assert!(after.contains("`mbarrier.arrive.release.cta.shared::cta.b64 (guarded)`"));
        let wait = message(super::nvptx::cp_async_bulk_wait_group_read::<0>);
        assert!(wait.contains("`cp.async.bulk.wait_group.read`"));
        let tid = message(|| {
            let _ = super::nvptx::tid();
        });
        assert!(tid.contains("`mov.u32 %tid.x`"));
    }

    #[test]
    fn amdgpu_stubs_panic_with_the_operation() {
        let sleep = message(super::amdgpu::s_sleep_1);
        assert_eq!(
            sleep,
            "gpu-pipeline: `s_sleep 1` is an amdgcn operation and cannot run on this target"
        );
        let below = message(|| {
            let _ = super::amdgpu::lanes_below(1);
        });
        assert!(below.contains("`v_mbcnt_lo/hi_u32_b32`"));
    }
}
