//! Loading the kernels' module, and refusing one this host API cannot launch: before any launch,
//! (1) the module's ABI global ([`ABI_SYMBOL`]) equals [`ABI_VERSION`] (or [`ABI_VERSION`] xor
//! [`ABI_UNWAITED`]: a module whose entries do not wait, which loads and is never launched as a
//! programmatic dependent); (2) every entry of the
//! plan's table exists; (3) each takes exactly one parameter of [`PARAMS_BYTES`]
//! (`cuFuncGetParamInfo`, and one index past it must fail); (4) each allows exactly the threads it
//! is launched with (in a PTX text: the `.maxntid` that `cargo xtask build` adds). Each refusal
//! is an [`Error::Module`] that names the entry and says what to do.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, sys};
use cudarc::nvrtc::Ptx;
use gpu_attention_plan::abi::{KERNELS, KernelSpec, PARAMS_BYTES};

pub use gpu_attention_plan::abi::{ABI_UNWAITED, ABI_VERSION};

use crate::Error;

/// The name of the module's global that holds its launch ABI version.
pub const ABI_SYMBOL: &str = "GPU_ATTENTION_ABI";

/// What to do about a module this host API refuses.
fn remedy(embedded: bool) -> &'static str {
    if embedded {
        "the module embedded in gpu-attention-host is not the one its kernel crate builds: regenerate it with `cargo xtask codegen` in the repository"
    } else {
        "rebuild it with `cargo xtask build --only attention` (it writes target/gpu/sm_90a/gpu_attention.ptx) from the same checkout as this program"
    }
}

/// A loaded module: its handle and an entry point per row of the plan's table.
pub(crate) struct Loaded {
    pub module: Arc<CudaModule>,
    pub functions: Vec<CudaFunction>,
    /// Whether every entry waits for the stream's previous kernel before it touches global
    /// memory (the ABI version without [`ABI_UNWAITED`]): only then may it be a programmatic
    /// dependent.
    pub waits: bool,
}

/// Loads `bytes` (PTX text or a cubin) named `name` into `ctx` and checks it.
pub(crate) fn load(
    ctx: &Arc<CudaContext>,
    bytes: Vec<u8>,
    name: &str,
    embedded: bool,
) -> Result<Loaded, Error> {
    let text = String::from_utf8(bytes)
        .map_err(|e| e.into_bytes())
        .and_then(|t| {
            if t.contains(".entry") {
                Ok(t)
            } else {
                Err(t.into_bytes())
            }
        });
    // A PTX text gives each entry's parameter count; a binary image is asked one index past the
    // expected parameter instead (which the driver answers with an error, and compute-sanitizer
    // reports as an API error).
    let mut counts = Vec::new();
    let image = match text {
        Ok(text) => {
            for k in KERNELS {
                check_bound_in_text(&text, k, name, embedded)?;
                counts.push(parameters_in_text(&text, k.entry));
            }
            Ptx::from_src(text)
        }
        Err(bytes) => {
            counts.resize(KERNELS.len(), None);
            Ptx::from_binary(bytes)
        }
    };
    let module = ctx
        .load_module(image)
        .map_err(|e| Error::Cuda(format!("loading the attention module {name}: {e:?}")))?;
    let waits = check_abi_version(ctx, &module, name, embedded)?;
    let functions = KERNELS
        .iter()
        .zip(counts)
        .map(|(&k, count)| entry(&module, k, count, name, embedded))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Loaded {
        module,
        functions,
        waits,
    })
}

/// Step 1, and whether the entries wait ([`abi_waits`]).
fn check_abi_version(
    ctx: &Arc<CudaContext>,
    module: &Arc<CudaModule>,
    name: &str,
    embedded: bool,
) -> Result<bool, Error> {
    let stream = ctx.default_stream();
    let global = module.get_global(ABI_SYMBOL, &stream).map_err(|_| {
        Error::Module(format!(
            "the attention module {name} has no {ABI_SYMBOL} (the launch ABI version this host API checks, {ABI_VERSION}); {}",
            remedy(embedded)
        ))
    })?;
    if global.len() != 4 {
        return Err(Error::Module(format!(
            "the attention module {name}'s {ABI_SYMBOL} is {} bytes, not a u32; {}",
            global.len(),
            remedy(embedded)
        )));
    }
    let bytes = stream
        .clone_dtoh(&global)
        .map_err(|e| Error::Cuda(format!("reading {ABI_SYMBOL}: {e:?}")))?;
    let version = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    abi_waits(version).ok_or_else(|| {
        Error::Module(format!(
            "the attention module {name} has launch ABI version {version}, this host API launches version {ABI_VERSION}; {}",
            remedy(embedded)
        ))
    })
}

/// Whether a module exporting ABI `version` waits for the stream's previous kernel
/// (`Some(true)`: [`ABI_VERSION`]; `Some(false)`: [`ABI_VERSION`] xor [`ABI_UNWAITED`], the
/// negative control's); `None` for any other version.
pub(crate) fn abi_waits(version: u32) -> Option<bool> {
    if version == ABI_VERSION {
        Some(true)
    } else if version == ABI_VERSION ^ ABI_UNWAITED {
        Some(false)
    } else {
        None
    }
}

/// Steps 2 to 4 for one entry, and its dynamic shared memory raised to the kernel's.
fn entry(
    module: &Arc<CudaModule>,
    k: KernelSpec,
    count: Option<usize>,
    name: &str,
    embedded: bool,
) -> Result<CudaFunction, Error> {
    let function = module.load_function(k.entry).map_err(|_| {
        Error::Module(format!(
            "the attention module {name} has no entry point {}; {}",
            k.entry,
            remedy(embedded)
        ))
    })?;
    let mut found = Vec::new();
    for index in 0..count.unwrap_or(2).min(2) {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: a live function handle; the driver writes both values or fails for an index
        // past the last parameter.
        let status = unsafe {
            sys::cuFuncGetParamInfo(function.cu_function(), index, &mut offset, &mut size)
        };
        if status != sys::CUresult::CUDA_SUCCESS {
            break;
        }
        found.push((offset, size));
    }
    if found != [(0, PARAMS_BYTES)] || count.is_some_and(|c| c != 1) {
        return Err(Error::Module(format!(
            "the attention module {name}'s entry {} takes the parameters (offset, bytes) {found:?}, but this host API passes one block of {PARAMS_BYTES} bytes; {}",
            k.entry,
            remedy(embedded)
        )));
    }
    let threads = function
        .get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        .map_err(|e| Error::Cuda(format!("{}: its thread limit: {e:?}", k.entry)))?;
    if u32::try_from(threads) != Ok(k.threads()) {
        return Err(Error::Module(format!(
            "the attention module {name}'s entry {} allows {threads} threads per block, not {}: it lacks the launch bound `cargo xtask build` adds; {}",
            k.entry,
            k.threads(),
            remedy(embedded)
        )));
    }
    function
        .set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            k.smem_bytes() as i32,
        )
        .map_err(|e| Error::Cuda(format!("{}: dynamic shared memory: {e:?}", k.entry)))?;
    Ok(function)
}

/// The parameters of `entry` in a PTX text: the `.param` lines of its parameter list.
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

/// In a PTX text, the entry's parameter list is followed by its `.maxntid`.
fn check_bound_in_text(text: &str, k: KernelSpec, name: &str, embedded: bool) -> Result<(), Error> {
    let Some(at) = text.find(&format!(".entry {}(", k.entry)) else {
        // A missing entry is reported by name when the module is loaded.
        return Ok(());
    };
    let after = &text[at..];
    let header_end = after.find("\n)").map_or(after.len(), |i| i + 2);
    let bound = after[header_end..]
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty());
    let want = format!(".maxntid {}, 1, 1", k.threads());
    if !bound.is_some_and(|line| line.starts_with(&want)) {
        return Err(Error::Module(format!(
            "the attention module {name}'s entry {} lacks the launch bound ({want}) that `cargo xtask build` adds to rustc's PTX (without it ptxas ignores setmaxnreg); {}",
            k.entry,
            remedy(embedded)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module without the wait loads (the programmatic chains' negative control), marked as
    /// one that may not be launched programmatically; any other version is refused.
    #[test]
    fn the_abi_version_says_whether_the_entries_wait() {
        assert_eq!(abi_waits(ABI_VERSION), Some(true));
        assert_eq!(abi_waits(ABI_VERSION ^ ABI_UNWAITED), Some(false));
        assert_eq!(abi_waits(ABI_VERSION.wrapping_add(1)), None);
        assert_eq!(abi_waits(0), None);
    }

    /// The embedded module has every entry of the table, each with one parameter and its bound:
    /// what `load` checks in the text before the driver sees it.
    #[test]
    fn the_embedded_module_has_every_entry_with_its_bound() {
        for k in KERNELS {
            assert_eq!(
                parameters_in_text(crate::PTX, k.entry),
                Some(1),
                "{}",
                k.entry
            );
            check_bound_in_text(crate::PTX, k, "embedded", true).unwrap();
        }
        assert!(crate::PTX.contains(ABI_SYMBOL));
    }

    #[test]
    fn a_missing_bound_is_refused_with_what_to_do() {
        let k = KERNELS[0];
        let text = format!(
            ".visible .entry {}(\n\t.param .align 8 .b8 p[88]\n)\n{{\n\tret;\n}}\n",
            k.entry
        );
        let e = check_bound_in_text(&text, k, "m.ptx", false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(".maxntid 384, 1, 1") && e.contains("cargo xtask build"),
            "{e}"
        );
        let bound = text.replace("\n)\n", "\n)\n.maxntid 384, 1, 1\n");
        check_bound_in_text(&bound, k, "m.ptx", false).unwrap();
        assert_eq!(parameters_in_text(&bound, k.entry), Some(1));
        assert_eq!(parameters_in_text(&bound, "other"), None);
    }
}
