//! Loading the kernels' module, and refusing one this host API cannot launch.
//!
//! A module built from another version of `gpu-gemm` (a stale `target/gpu/sm_90a/gpu_gemm.ptx`)
//! can have the same entry names and other parameters: launched with this crate's parameters, the
//! kernel reads garbage, and the host process was seen to crash (a module with 11 parameters,
//! launched with 10, ended the process with a segmentation fault). So `Gemm::load` checks, before
//! any launch, in this order (and `Gemm::new` checks the module embedded in this crate the same
//! way):
//!
//! 1. the module's ABI version global ([`ABI_SYMBOL`], a `u32` the kernel crate exports) equals
//!    [`ABI_VERSION`]: a module of another launch ABI, or one built before the global existed, is
//!    refused (one whose entries do not wait for their prerequisite grid, [`ABI_VERSION`] with
//!    [`ABI_UNWAITED`], loads, and is never launched as a programmatic dependent);
//! 2. every entry point exists;
//! 3. every entry takes exactly the parameters `launch` passes, at the same offsets and sizes
//!    (`cuFuncGetParamInfo`, CUDA 12.4; [`LAYOUT`]), and no more: counted in the text of
//!    a PTX module, or for a binary image by asking for one parameter past the last (which the
//!    driver answers with an error, and compute-sanitizer reports as an API error; the driver
//!    of CUDA 13.0 has no `cuFuncGetParamCount`, which came with 13.2);
//! 4. every entry allows exactly the threads it is launched with, and in a PTX text every entry
//!    carries `.maxntid` (rustc has no launch bounds: `cargo xtask build` adds them to rustc's
//!    PTX, and without them ptxas ignores `setmaxnreg` and some kernels cannot run 384 threads).
//!
//! Each refusal is a [`GemmError::Module`] that names the entry and says to rebuild (or, for the
//! embedded module, to regenerate it).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, sys};
use cudarc::nvrtc::Ptx;

use crate::{GemmError, Kernel};

pub use gpu_gemm_plan::abi::{ABI_UNWAITED, ABI_VERSION};

/// The name of the module's global that holds its launch ABI version.
pub const ABI_SYMBOL: &str = "GPU_GEMM_ABI";

/// What to do about a module given by path that this host API refuses.
const REBUILD: &str = "rebuild it with `cargo xtask build` (it writes target/gpu/sm_90a/gpu_gemm.ptx) from the same checkout as this program";

/// What to do about an embedded module this host API refuses: it is this crate's own, so the
/// crate's files disagree.
const REGENERATE: &str = "the module embedded in gpu-gemm-host is not the one its kernel crate builds: regenerate it with `cargo xtask codegen` in the repository (CI's `cargo xtask codegen --check` catches this)";

/// Where a module comes from: the words of its errors.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// A file the caller names (`Gemm::load`).
    Path(&'a str),
    /// The module embedded in this crate ([`crate::PTX`], `Gemm::new`).
    Embedded,
}

impl Source<'_> {
    /// The module's name in an error: "the GEMM module {name}".
    fn name(self) -> String {
        match self {
            Source::Path(path) => path.to_string(),
            Source::Embedded => format!("embedded in gpu-gemm-host {}", env!("CARGO_PKG_VERSION")),
        }
    }

    /// What to do when the module is refused.
    fn remedy(self) -> &'static str {
        match self {
            Source::Path(_) => REBUILD,
            Source::Embedded => REGENERATE,
        }
    }

    /// What to do when the module lacks its launch bounds.
    fn bounds_remedy(self) -> &'static str {
        match self {
            Source::Path(_) => "load target/gpu/sm_90a/gpu_gemm.ptx, not rustc's own output",
            Source::Embedded => REGENERATE,
        }
    }
}

/// The one parameter of every entry point: the plan's [`gpu_gemm_plan::abi::Params`] block,
/// passed by value. `load` checks that the driver lays each entry's parameters out as
/// [`LAYOUT`] (one parameter of [`PARAMS_BYTES`] at offset 0) and `launch` passes
/// [`pointers`]: the kernel-parameter array of `cuLaunchKernelEx`, one pointer to the block.
pub(crate) use gpu_gemm_plan::abi::{PARAMS_BYTES, Params};

/// How many parameters an entry takes.
pub(crate) const COUNT: usize = 1;

/// `(offset, size)` of each parameter, in order: the one block.
pub(crate) const LAYOUT: [(usize, usize); COUNT] = [(0, PARAMS_BYTES)];

/// The kernel-parameter array of `cuLaunchKernelEx` for `params`: a pointer to the block.
pub(crate) fn pointers(params: &mut Params) -> [*mut c_void; COUNT] {
    [(params as *mut Params).cast()]
}

/// A loaded module: its handle and an entry point per kernel, in the order of [`Kernel::ALL`];
/// `None` for a step kernel (the `steps` feature) that the module does not hold: only the steps
/// module does, and a program built with the feature may still load the production module.
pub(crate) struct Loaded {
    pub module: Arc<CudaModule>,
    pub functions: Vec<Option<CudaFunction>>,
    /// Whether every entry waits for its prerequisite grid before it touches global memory (the
    /// ABI version without [`ABI_UNWAITED`]): only then may it be a programmatic dependent.
    pub waits: bool,
}

/// Loads the module at `path` (PTX text or a cubin) into `ctx`, and checks it as the module
/// docs say.
pub(crate) fn load(ctx: &Arc<CudaContext>, path: &str) -> Result<Loaded, GemmError> {
    let bytes = std::fs::read(path)
        .map_err(|e| GemmError::Module(format!("cannot read the GEMM module {path}: {e}")))?;
    load_image(ctx, bytes, Source::Path(path))
}

/// Loads the module embedded in this crate ([`crate::PTX`]) into `ctx`, with the checks of
/// [`load`].
pub(crate) fn load_embedded(ctx: &Arc<CudaContext>) -> Result<Loaded, GemmError> {
    load_image(ctx, crate::PTX.as_bytes().to_vec(), Source::Embedded)
}

/// Loads `bytes` (PTX text or a cubin) from `source` into `ctx`, and checks the module.
fn load_image(
    ctx: &Arc<CudaContext>,
    bytes: Vec<u8>,
    source: Source<'_>,
) -> Result<Loaded, GemmError> {
    let name = source.name();
    let path = name.as_str();
    // PTX is text; anything else goes to the driver as an image (a cubin or a fatbin).
    let text = String::from_utf8(bytes)
        .map_err(|e| e.into_bytes())
        .and_then(|t| {
            if t.contains(".entry") {
                Ok(t)
            } else {
                Err(t.into_bytes())
            }
        });
    let (image, text) = match text {
        Ok(text) => {
            check_launch_bounds_in_text(&text, source)?;
            (Ptx::from_src(text.clone()), Some(text))
        }
        Err(bytes) => (Ptx::from_binary(bytes), None),
    };
    let text = text.as_deref();
    let module = ctx
        .load_module(image)
        .map_err(|e| GemmError::Cuda(format!("loading the GEMM module {path}: {e:?}")))?;
    let Abi { waits } = check_abi_version(ctx, &module, source)?;
    let functions = Kernel::ALL
        .iter()
        .map(|&kernel| {
            // A step kernel the module lacks (the production module in a build with the
            // steps): found absent in the text without asking the driver where there is a text,
            // so that loading raises no API error (compute-sanitizer counts each as an error: 12
            // failed `cuModuleGetFunction` calls failed gemm-test's memcheck in run 128).
            if kernel.spec().step {
                let absent = match text {
                    Some(text) => !text.contains(&format!(".entry {}(", kernel.entry())),
                    None => module.load_function(kernel.entry()).is_err(),
                };
                if absent {
                    return Ok(None);
                }
            }
            let count = text.and_then(|text| parameters_in_text(text, kernel.entry()));
            entry(&module, kernel, count, source).map(Some)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Loaded {
        module,
        functions,
        waits,
    })
}

/// Step 1: the module's [`ABI_SYMBOL`] holds [`ABI_VERSION`], with [`ABI_UNWAITED`] or not;
/// what that says ([`abi_of`]).
fn check_abi_version(
    ctx: &Arc<CudaContext>,
    module: &Arc<CudaModule>,
    source: Source<'_>,
) -> Result<Abi, GemmError> {
    let (path, rebuild) = (source.name(), source.remedy());
    let stream = ctx.default_stream();
    let global = module.get_global(ABI_SYMBOL, &stream).map_err(|_| {
        GemmError::Module(format!(
            "the GEMM module {path} has no {ABI_SYMBOL} (the launch ABI version this host API checks, {ABI_VERSION}): it was built from an older gpu-gemm; {rebuild}"
        ))
    })?;
    if global.len() != 4 {
        return Err(GemmError::Module(format!(
            "the GEMM module {path}'s {ABI_SYMBOL} is {} bytes, not a u32; {rebuild}",
            global.len()
        )));
    }
    let bytes = stream
        .clone_dtoh(&global)
        .map_err(|e| GemmError::Cuda(format!("reading {ABI_SYMBOL}: {e:?}")))?;
    let version = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    abi_of(version).ok_or_else(|| {
        GemmError::Module(format!(
            "the GEMM module {path} has launch ABI version {version}, this host API launches version {ABI_VERSION}: the module was built from another gpu-gemm; {rebuild}"
        ))
    })
}

/// What a module's exported ABI version says beyond the version itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Abi {
    /// Its entries wait for their prerequisite grid (no [`ABI_UNWAITED`]).
    pub waits: bool,
}

/// What a module exporting ABI `version` is: [`ABI_VERSION`], with or without the flag
/// [`ABI_UNWAITED`] (the negative control's: its entries do not wait); `None` for any other
/// version.
pub(crate) fn abi_of(version: u32) -> Option<Abi> {
    (version & !ABI_UNWAITED == ABI_VERSION).then_some(Abi {
        waits: version & ABI_UNWAITED == 0,
    })
}

/// Steps 2 to 4 for `kernel`'s entry, and its dynamic shared memory raised to the kernel's.
/// `count` is the entry's parameter count where the module's text gives it.
fn entry(
    module: &Arc<CudaModule>,
    kernel: Kernel,
    count: Option<usize>,
    source: Source<'_>,
) -> Result<CudaFunction, GemmError> {
    let name = kernel.entry();
    let (path, rebuild) = (source.name(), source.remedy());
    let function = module.load_function(name).map_err(|_| {
        GemmError::Module(format!(
            "the GEMM module {path} has no entry point {name}: it was built from another gpu-gemm; {rebuild}"
        ))
    })?;
    check_parameters(&function, count, name, source)?;
    let threads = function
        .get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        .map_err(|e| GemmError::Cuda(format!("{name}: its thread limit: {e:?}")))?;
    if u32::try_from(threads) != Ok(kernel.threads()) {
        return Err(GemmError::Module(format!(
            "the GEMM module {path}'s entry {name} allows {threads} threads per block, not the {} it is launched with: the module lacks the launch bounds (.maxntid {}, 1, 1) that `cargo xtask build` adds to rustc's PTX; {}",
            kernel.threads(),
            kernel.threads(),
            source.bounds_remedy()
        )));
    }
    function
        .set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            kernel.smem_bytes() as i32,
        )
        .map_err(|e| GemmError::Cuda(format!("{name}: dynamic shared memory: {e:?}")))?;
    Ok(function)
}

/// Step 3: the entry's parameters, as the driver lays them out, are [`LAYOUT`], and
/// there are no more (`count`, from the module's text, or else one more index asked for).
fn check_parameters(
    function: &CudaFunction,
    count: Option<usize>,
    name: &str,
    source: Source<'_>,
) -> Result<(), GemmError> {
    let (path, rebuild) = (source.name(), source.remedy());
    let mut found = Vec::new();
    // Without the text's count, one index past the expected count: a module with more
    // parameters answers for it too.
    let asked = match count {
        Some(count) => count.min(COUNT + 1),
        None => COUNT + 1,
    };
    for index in 0..asked {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a live function handle; the driver writes both values or fails for an index
        // past the last parameter (CUDA_ERROR_INVALID_VALUE).
        let status = unsafe {
            sys::cuFuncGetParamInfo(function.cu_function(), index, &mut offset, &mut size)
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            break;
        }
        found.push((offset, size));
    }
    if found != LAYOUT || count.is_some_and(|count| count != COUNT) {
        return Err(GemmError::Module(format!(
            "the GEMM module {path}'s entry {name} takes {} parameters (offset, bytes) {found:?}{}, but this host API launches it with {} parameters {:?}: the module was built from another gpu-gemm; {rebuild}",
            count.unwrap_or(found.len()),
            if count.is_none() && found.len() > COUNT {
                " or more"
            } else {
                ""
            },
            COUNT,
            LAYOUT
        )));
    }
    Ok(())
}

/// The parameters of `entry` in a PTX text: the `.param` lines of its parameter list; `None`
/// without the entry.
fn parameters_in_text(text: &str, entry: &str) -> Option<usize> {
    let at = text.find(&format!(".entry {entry}("))?;
    let list = &text[at..];
    let end = list.find("\n)").unwrap_or(list.len());
    Some(
        list[..end]
            .lines()
            .filter(|line| line.trim_start().starts_with(".param"))
            .count(),
    )
}

/// Step 4 in a PTX text: each entry's parameter list is followed by `.maxntid`.
fn check_launch_bounds_in_text(text: &str, source: Source<'_>) -> Result<(), GemmError> {
    let path = source.name();
    for kernel in Kernel::ALL {
        let name = kernel.entry();
        let Some(at) = text.find(&format!(".entry {name}(")) else {
            // A missing entry is reported by name when the module is loaded.
            continue;
        };
        let after = &text[at..];
        let header_end = after.find("\n)").map_or(after.len(), |i| i + 2);
        let bounds = after[header_end..]
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty());
        let want = format!(".maxntid {}, 1, 1", kernel.threads());
        if !bounds.is_some_and(|line| line.starts_with(&want)) {
            return Err(GemmError::Module(format!(
                "the GEMM module {path}'s entry {name} lacks the launch bounds ({want}) that `cargo xtask build` adds to rustc's PTX (rustc has none; without them ptxas ignores setmaxnreg): {}",
                source.bounds_remedy()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameter_is_one_block_of_56_bytes() {
        // What rustc makes of the entries' `params: Params` (`.param .align 8 .b8 p[56]`), and so
        // what `cuFuncGetParamInfo` must report for each entry.
        assert_eq!(LAYOUT, [(0, 56)]);
        let mut params = Params {
            maps: 1,
            c: 2,
            d: 3,
            m: 4,
            n: 5,
            k: 6,
            alpha: 7.0,
            beta: 8.0,
            splits: 9,
            work: 10,
        };
        let base = (&raw const params) as usize;
        assert_eq!(pointers(&mut params).map(|p| p as usize), [base]);
    }

    const ENTRY: &str =
        ".visible .entry gemm_bf16_ws(\n\t.param .align 8 .b8 gemm_bf16_ws_param_0[56]\n)\n";

    fn module(bounds: &str) -> String {
        Kernel::ALL
            .iter()
            .map(|k| {
                let threads = k.threads();
                ENTRY.replace("gemm_bf16_ws", k.entry())
                    + &bounds.replace("THREADS", &threads.to_string())
                    + "{\n\tret;\n}\n"
            })
            .collect()
    }

    #[test]
    fn the_parameters_of_an_entry_are_counted_in_its_text() {
        let text = module(".maxntid THREADS, 1, 1\n");
        assert_eq!(parameters_in_text(&text, "gemm_bf16_persistent"), Some(1));
        let two = text.replace(
            "gemm_bf16_persistent_param_0[56]\n)",
            "gemm_bf16_persistent_param_0[56],\n\t.param .u32 extra\n)",
        );
        assert_eq!(parameters_in_text(&two, "gemm_bf16_persistent"), Some(2));
        assert_eq!(parameters_in_text(&two, "gemm_bf16_missing"), None);
    }

    /// What of `Gemm::new`'s checks holds without a GPU: the embedded module's text has every
    /// entry, each with this crate's parameter count and its launch bounds, and the ABI global
    /// with this crate's version.
    #[test]
    fn the_embedded_module_has_every_entry_with_its_parameters_and_bounds() {
        let text = crate::PTX;
        check_launch_bounds_in_text(text, Source::Embedded).unwrap();
        // The production kernels: the step kernels (the `steps` feature) are the steps module's.
        for kernel in Kernel::ALL.iter().filter(|k| !k.spec().step) {
            assert_eq!(
                parameters_in_text(text, kernel.entry()),
                Some(COUNT),
                "{}",
                kernel.entry()
            );
        }
        let abi = format!(".visible .global .align 4 .b8 {ABI_SYMBOL}[4] = {{{ABI_VERSION}}};");
        assert!(text.contains(&abi), "{abi}");
    }

    /// A module without the wait loads (it is the programmatic chains' negative control), marked
    /// as one that may not be launched programmatically; any other version is refused.
    #[test]
    fn the_abi_version_says_whether_the_entries_wait() {
        let abi = |waits| Some(Abi { waits });
        assert_eq!(abi_of(ABI_VERSION), abi(true));
        assert_eq!(abi_of(ABI_VERSION | ABI_UNWAITED), abi(false));
        assert_eq!(abi_of(ABI_VERSION - 1), None);
        assert_eq!(abi_of((ABI_VERSION - 1) | ABI_UNWAITED), None);
        // Version 4's modules took 128-row A boxes below one tile of M: refused.
        assert_eq!(abi_of(4), None);
        assert_eq!(abi_of(1 << 30 | ABI_VERSION), None);
        assert_eq!(abi_of(ABI_VERSION + 1), None);
        assert_eq!(abi_of(ABI_VERSION | 1 << 29), None);
    }

    #[test]
    fn a_ptx_text_without_launch_bounds_is_refused_by_name() {
        let built = module(".maxntid THREADS, 1, 1 // @entry\n");
        assert!(check_launch_bounds_in_text(&built, Source::Path("m.ptx")).is_ok());
        let raw = module("");
        let e = check_launch_bounds_in_text(&raw, Source::Path("m.ptx"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(Kernel::ALL[0].entry()) && e.contains(".maxntid 384, 1, 1"),
            "{e}"
        );
        // Bounds of other threads than the kernel's are refused too.
        let wrong = module(".maxntid 128, 1, 1\n");
        let e = check_launch_bounds_in_text(&wrong, Source::Path("m.ptx"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(Kernel::ALL[0].entry()), "{e}");
    }
}
