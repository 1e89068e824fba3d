//! gpu-attention-host behind a C ABI for `bench_attention.py` (ctypes): the benchmark passes
//! torch tensors' device addresses and torch's current stream, so ours runs in the process,
//! on the data and on the stream the anchors use, timed by the same CUDA events.
//!
//! - `gpu_attention_prepare_on(module, ...) -> i64`: a handle (>= 0) for a problem over given
//!   addresses on module `module` (0: the first; its tensor maps uploaded and synchronized), or
//!   -1 with the message in `gpu_attention_error`.
//! - `gpu_attention_launch(handle, stream) -> i32`: 0, or -1 with the message.
//! - `gpu_attention_load(path) -> i64`: loads another module beside the first (a variant, to
//!   time against it in the same process), its index (>= 1), or -1 with the message.
//! - `gpu_attention_load_rows(path, rows) -> i64`: as `gpu_attention_load`, and its problems run
//!   on the named rows (`rows` as `$GPU_ATTENTION_KERNEL` below, `+`- or comma-separated); an
//!   empty `path` loads the first module's source again (`$GPU_ATTENTION_MODULE` or the
//!   embedded one), so that a kernel choice is timed against the plan's on the same code in one
//!   process.
//!
//! The module is the one at `$GPU_ATTENTION_MODULE` if set, else the embedded one. The library
//! opens GPU 0's primary context, the one torch uses, so the addresses are valid in it. With
//! `$GPU_ATTENTION_KERNEL` set to rows' names without the prefix and element, comma-separated
//! (`d64_n192,d128_n176`), a problem of the first module with a named row's element and head
//! dimension runs on that row instead of the plan's choice (a measurement:
//! `Attention::kernel_named`), if the row takes the problem (a row of CTA pairs takes no causal
//! or variable-length one); otherwise on the plan's choice, which the printed entry shows.
//!
//! The kernel each handle runs is printed to stderr when it is made, so that a log says which
//! row ran.

use std::ffi::c_char;
use std::sync::{Arc, Mutex, OnceLock};

use gpu_attention_host::{Attention, Element, Mask, Prepared, Problem, Strides, Tensors};

struct State {
    ctx: Arc<cudarc::driver::CudaContext>,
    /// The modules, each with the rows its problems run on where they take them (empty: the
    /// plan's choice): the first (`$GPU_ATTENTION_MODULE` or the embedded one, with
    /// `$GPU_ATTENTION_KERNEL`'s rows), then those `gpu_attention_load` and
    /// `gpu_attention_load_rows` added.
    modules: Mutex<Vec<(Arc<Attention>, Vec<String>)>>,
    /// Each handle's problem, with the module it was prepared on.
    prepared: Mutex<Vec<(Arc<Attention>, Prepared)>>,
}

static STATE: OnceLock<Result<State, String>> = OnceLock::new();
static ERROR: Mutex<String> = Mutex::new(String::new());

fn state() -> Result<&'static State, String> {
    STATE
        .get_or_init(|| {
            let ctx = gpu_attention_host::context(0).map_err(|e| e.to_string())?;
            let attention = first_module(&ctx).map_err(|e| e.to_string())?;
            let rows = rows_of(&std::env::var("GPU_ATTENTION_KERNEL").unwrap_or_default());
            Ok(State {
                ctx,
                modules: Mutex::new(vec![(Arc::new(attention), rows)]),
                prepared: Mutex::new(Vec::new()),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The first module: the one at `$GPU_ATTENTION_MODULE` if set, else the embedded one.
fn first_module(
    ctx: &Arc<cudarc::driver::CudaContext>,
) -> Result<Attention, gpu_attention_host::Error> {
    match std::env::var("GPU_ATTENTION_MODULE") {
        Ok(path) => Attention::load(ctx, &path),
        Err(_) => Attention::new(ctx),
    }
}

/// Rows' names from a list separated by commas or `+` (blanks trimmed, empty names dropped).
fn rows_of(list: &str) -> Vec<String> {
    list.split([',', '+'])
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(String::from)
        .collect()
}

fn fail(message: String) -> i64 {
    *ERROR.lock().unwrap() = message;
    -1
}

/// Loads the module at `path` (a NUL-terminated path) beside the first: its index, or -1 with
/// the message.
///
/// # Safety
///
/// `path` points to a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpu_attention_load(path: *const c_char) -> i64 {
    // SAFETY: the caller's contract; the empty string is NUL-terminated.
    unsafe { gpu_attention_load_rows(path, c"".as_ptr()) }
}

/// Loads the module at `path` beside the first, its problems on the rows named in `rows`
/// (comma- or `+`-separated, as `$GPU_ATTENTION_KERNEL`; empty: the plan's choice); an empty
/// `path` loads the first module's source again. Its index, or -1 with the message.
///
/// # Safety
///
/// `path` and `rows` point to NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpu_attention_load_rows(path: *const c_char, rows: *const c_char) -> i64 {
    let state = match state() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    // SAFETY: the caller's contract.
    let (path, rows) = unsafe {
        (
            std::ffi::CStr::from_ptr(path)
                .to_string_lossy()
                .into_owned(),
            std::ffi::CStr::from_ptr(rows)
                .to_string_lossy()
                .into_owned(),
        )
    };
    let loaded = if path.is_empty() {
        first_module(&state.ctx)
    } else {
        Attention::load(&state.ctx, &path)
    };
    match loaded {
        Ok(a) => {
            let mut modules = state.modules.lock().unwrap();
            modules.push((Arc::new(a), rows_of(&rows)));
            (modules.len() - 1) as i64
        }
        Err(e) => fail(format!("{path}: {e}")),
    }
}

/// Makes a launch ready on module `module` (0: the first; then `gpu_attention_load`'s): Q, K,
/// V, O as `[batch, seq, heads, head_dim]` contiguous (`offsets_q`, `offsets_k`: `batch + 1`
/// host `u32` cumulative offsets of a packed variable-length batch, or null for a fixed one),
/// `LSE` contiguous; `element` 0 for bf16, 1 for f16; `scale` <= 0 for the default.
///
/// # Safety
///
/// The offsets, when not null, point to `batch + 1` values each.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn gpu_attention_prepare_on(
    module: i64,
    q: u64,
    k: u64,
    v: u64,
    o: u64,
    lse: u64,
    batch: u32,
    seq_q: u32,
    seq_k: u32,
    heads_q: u32,
    heads_kv: u32,
    head_dim: u32,
    causal: u32,
    element: u32,
    scale: f32,
    offsets_q: *const u32,
    offsets_k: *const u32,
) -> i64 {
    let state = match state() {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let (attention, rows) = {
        let modules = state.modules.lock().unwrap();
        match usize::try_from(module).ok().and_then(|m| modules.get(m)) {
            Some((a, rows)) => (a.clone(), rows.clone()),
            None => return fail(format!("no module {module} (loaded: {})", modules.len())),
        }
    };
    let varlen = !offsets_q.is_null() && !offsets_k.is_null();
    let (oq, ok): (&[u32], &[u32]) = if varlen {
        // SAFETY: the caller's contract.
        unsafe {
            (
                std::slice::from_raw_parts(offsets_q, batch as usize + 1),
                std::slice::from_raw_parts(offsets_k, batch as usize + 1),
            )
        }
    } else {
        (&[], &[])
    };
    let mut problem = if varlen {
        Problem::varlen(oq, ok, (heads_q, heads_kv), head_dim)
    } else {
        let mut p = Problem::contiguous(batch, (seq_q, seq_k), (heads_q, heads_kv), head_dim);
        p.q = Strides::contiguous(seq_q, heads_q, head_dim);
        p
    };
    if causal != 0 {
        problem = problem.with_mask(Mask::Causal);
    }
    problem.element = if element == 1 {
        Element::F16
    } else {
        Element::Bf16
    };
    if scale > 0.0 {
        problem.scale = Some(scale);
    }
    let stream = state.ctx.default_stream();
    let tensors = Tensors { q, k, v, o, lse };
    // The module's rows by name (`d64_n192`, `d128_n176`): the one of this problem's element
    // and head dimension instead of the plan's choice.
    let named = rows
        .iter()
        .find_map(|name| attention.kernel_named(&problem, name));
    let prepared = match named {
        Some(kernel) => attention.prepare_with(kernel, &stream, &problem, tensors),
        None => attention.prepare(&stream, &problem, tensors),
    };
    if let Ok(p) = &prepared {
        eprintln!("gpu-attention: {} ({} CTAs)", p.entry(), p.grid());
    }
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    if let Err(e) = stream.synchronize() {
        return fail(format!("{e:?}"));
    }
    let mut all = state.prepared.lock().unwrap();
    all.push((attention, prepared));
    (all.len() - 1) as i64
}

/// Launches a prepared problem on `stream` (a `CUstream`, torch's `cuda_stream`).
///
/// # Safety
///
/// The tensors the handle was prepared for are alive; `stream` is a stream of GPU 0's primary
/// context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpu_attention_launch(handle: i64, stream: u64) -> i32 {
    let state = match state() {
        Ok(s) => s,
        Err(e) => return fail(e) as i32,
    };
    let all = state.prepared.lock().unwrap();
    let Some((attention, prepared)) = usize::try_from(handle).ok().and_then(|h| all.get(h)) else {
        return fail(format!("no prepared problem {handle}")) as i32;
    };
    // SAFETY: the caller's contract; the prepare synchronized its upload.
    let result = unsafe { attention.launch_raw(prepared, stream as _) };
    match result {
        Ok(()) => 0,
        Err(e) => fail(e.to_string()) as i32,
    }
}

/// Copies the last error's message (NUL-terminated, truncated to `len - 1` bytes) into `out`.
///
/// # Safety
///
/// `out` has room for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gpu_attention_error(out: *mut c_char, len: usize) {
    let message = ERROR.lock().unwrap();
    let n = message.len().min(len.saturating_sub(1));
    // SAFETY: the caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr().cast(), out, n);
        *out.add(n) = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::rows_of;

    #[test]
    fn rows_split_on_commas_and_pluses_and_drop_blanks() {
        assert_eq!(rows_of("d128_n128"), ["d128_n128"]);
        assert_eq!(
            rows_of(" d64_n192 , d128_n176+d256_n80+"),
            ["d64_n192", "d128_n176", "d256_n80"]
        );
        assert!(rows_of("").is_empty());
        assert!(rows_of(" + , ").is_empty());
    }
}
