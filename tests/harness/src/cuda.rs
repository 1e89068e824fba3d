//! The CUDA driver, through cudarc: context, module, launches (with clusters), timed waits.
//!
//! Shared by the suite (`pipeline-harness`) and the benchmarks (`pipeline-bench`); each uses a subset.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr};
use cudarc::nvrtc::Ptx;

/// An open GPU with the suite's module loaded.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    pub name: String,
    pub cc: (i32, i32),
    pub sms: u32,
    pub driver_version: i32,
}

/// Turns a driver status into a result.
pub fn check(status: sys::CUresult, what: &str) -> Result<(), String> {
    if status == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {status:?}"))
    }
}

/// Why [`Gpu::open`] failed. The variant, not the message, chooses the exit status
/// ([`exit_code`](Self::exit_code)): only [`NoDriver`](Self::NoDriver) may be skipped by CI.
#[derive(Debug)]
pub enum OpenError {
    /// The driver library (`libcuda.so`) cannot be loaded: this machine has no CUDA driver.
    NoDriver,
    /// Everything else: the PTX file cannot be read, no device, a driver too old for cudarc, a
    /// GPU older than sm_90, the driver rejected the module. The message says which.
    Setup(String),
}

impl OpenError {
    /// The process exit status for this error (`pipeline_suite::exit`).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::NoDriver => pipeline_suite::exit::NO_DRIVER,
            Self::Setup(_) => pipeline_suite::exit::SETUP,
        }
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoDriver => f.write_str(
                "no CUDA driver found (libcuda.so could not be loaded); run on a machine with an NVIDIA GPU and its driver, or build a bundle for one with `cargo xtask test-nvidia --bundle DIR` (benchmarks: `cargo xtask bench-nvidia --bundle DIR`) and run its script there",
            ),
            Self::Setup(message) => f.write_str(message),
        }
    }
}

impl From<String> for OpenError {
    fn from(message: String) -> Self {
        Self::Setup(message)
    }
}

/// The message of a caught panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("(no message)")
}

impl Gpu {
    /// Opens device 0 and loads the kernels' module. A machine whose driver library cannot be loaded
    /// gives [`OpenError::NoDriver`]; every other failure is [`OpenError::Setup`]. (cudarc loads
    /// the library on first use and panics when it, or a symbol in it, is missing; the library is
    /// looked for first, so a panic caught here means an incomplete or too old driver.)
    ///
    /// `module_path` is PTX (`.ptx`, compiled by the driver) or a cubin made by ptxas for this GPU.
    pub fn open(module_path: &str) -> Result<Self, OpenError> {
        let is_ptx = module_path.ends_with(".ptx");
        let ptx = if is_ptx {
            Ptx::from_src(std::fs::read_to_string(module_path).map_err(|e| {
                format!(
                    "cannot read the kernels' PTX `{module_path}`: {e} (build it with `cargo xtask build`)"
                )
            })?)
        } else {
            if !std::path::Path::new(module_path).exists() {
                return Err(format!("no module file `{module_path}`").into());
            }
            Ptx::from_file(module_path)
        };
        // SAFETY: loads the driver library, running its initialisers as any CUDA program does,
        // and unloads it; cudarc loads it again below.
        if !unsafe { sys::is_culib_present() } {
            return Err(OpenError::NoDriver);
        }
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let opened = std::panic::catch_unwind(|| CudaContext::new(0));
        std::panic::set_hook(previous_hook);
        let ctx = match opened {
            Ok(Ok(ctx)) => ctx,
            Ok(Err(e)) => return Err(format!("no usable CUDA GPU: {e:?}").into()),
            Err(payload) => {
                return Err(format!(
                    "the CUDA driver library was found but cannot be used (too old a driver?): {}",
                    panic_message(payload.as_ref())
                )
                .into());
            }
        };
        let name = ctx.name().map_err(|e| format!("device name: {e:?}"))?;
        let cc = ctx
            .compute_capability()
            .map_err(|e| format!("compute capability: {e:?}"))?;
        if cc.0 < 9 {
            return Err(format!(
                "{name} is sm_{}{}; the suite needs sm_90 or newer (mbarrier try_wait, TMA, clusters)",
                cc.0, cc.1
            )
            .into());
        }
        let sms = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| format!("SM count: {e:?}"))? as u32;
        let mut driver_version = 0;
        check(
            // SAFETY: writes one int.
            unsafe { sys::cuDriverGetVersion(&mut driver_version) },
            "cuDriverGetVersion",
        )?;
        let module = ctx
            .load_module(ptx)
            .map_err(|e| format!("the driver rejected the module `{module_path}`: {e:?}"))?;
        Ok(Self {
            stream: ctx.default_stream(),
            ctx: ctx.clone(),
            module,
            name,
            cc,
            sms,
            driver_version,
        })
    }

    /// Loads another module (PTX, cubin or fatbin file) into the same context.
    pub fn load_file(&self, path: &str) -> Result<Arc<CudaModule>, String> {
        self.ctx
            .load_module(Ptx::from_file(path))
            .map_err(|e| format!("cannot load `{path}`: {e:?}"))
    }

    /// Points the checked builds' device global `GPU_PIPELINE_DIAGNOSTICS` at `capacity` hang
    /// records at device address `records` (host memory mapped into the device).
    pub fn set_diagnostics_sink(&self, records: u64, capacity: u32) -> Result<(), String> {
        let symbol = gpu_pipeline::checked::DIAGNOSTICS_SYMBOL;
        let mut view = self.module.get_global(symbol, &self.stream).map_err(|e| {
            format!("`{symbol}` is not in the module (not a checked build?): {e:?}")
        })?;
        // The `DiagnosticsSink` layout: records pointer, capacity, next.
        let mut sink = [0u8; 16];
        sink[..8].copy_from_slice(&records.to_le_bytes());
        sink[8..12].copy_from_slice(&capacity.to_le_bytes());
        self.stream
            .memcpy_htod(&sink, &mut view)
            .map_err(|e| format!("writing `{symbol}`: {e:?}"))?;
        self.stream
            .synchronize()
            .map_err(|e| format!("synchronize: {e:?}"))
    }

    /// A kernel of the module.
    pub fn function(&self, name: &str) -> Result<CudaFunction, String> {
        self.module
            .load_function(name)
            .map_err(|e| format!("kernel `{name}` is not in the PTX: {e:?}"))
    }

    /// Allocates `n` zeroed words.
    pub fn alloc(&self, n: usize) -> Result<CudaSlice<u32>, String> {
        self.stream
            .alloc_zeros::<u32>(n.max(1))
            .map_err(|e| format!("cannot allocate {} MiB: {e:?}", (n * 4) >> 20))
    }

    /// The raw device address of a buffer.
    pub fn address(&self, buffer: &CudaSlice<u32>) -> sys::CUdeviceptr {
        let (ptr, _sync) = buffer.device_ptr(&self.stream);
        ptr
    }

    /// Fills the first `n` words of `buffer` with `value`.
    pub fn fill(&self, buffer: &CudaSlice<u32>, value: u32, n: usize) -> Result<(), String> {
        // SAFETY: the range is inside the allocation; the stream orders it with the launches.
        check(
            unsafe {
                sys::cuMemsetD32Async(self.address(buffer), value, n, self.stream.cu_stream())
            },
            "cuMemsetD32Async",
        )
    }

    /// A 2D tiled tensor map (`cuTensorMapEncodeTiled`) over `rows` rows of `row_words` `u32`
    /// words at `address` (row-major, rows packed), with boxes of `box_rows` rows by the whole
    /// row, no swizzle, no interleave, no L2 promotion, no out-of-bounds fill: 128 bytes, returned
    /// as 32 words to upload into global memory (the kernel takes it by pointer).
    pub fn tensor_map_2d_u32(
        &self,
        address: sys::CUdeviceptr,
        row_words: u64,
        rows: u64,
        box_rows: u32,
    ) -> Result<[u32; 32], String> {
        let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
        let dims = [row_words, rows];
        let strides = [row_words * 4];
        let boxes = [row_words as u32, box_rows];
        let element_strides = [1u32, 1];
        // SAFETY: every pointer refers to a live local of the rank (2) the call is given; the
        // driver writes the 128-byte map.
        let status = unsafe {
            sys::cuTensorMapEncodeTiled(
                map.as_mut_ptr(),
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
                2,
                address as *mut c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        check(status, "cuTensorMapEncodeTiled")?;
        // SAFETY: initialised by the successful call (zeroed before, in any case); a
        // `CUtensorMap` is 128 plain bytes.
        Ok(unsafe { std::mem::transmute::<sys::CUtensorMap, [u32; 32]>(map.assume_init()) })
    }

    /// Copies `host` into the start of `buffer`.
    pub fn upload(&self, host: &[u32], buffer: &mut CudaSlice<u32>) -> Result<(), String> {
        let mut view = buffer.slice_mut(0..host.len());
        self.stream
            .memcpy_htod(host, &mut view)
            .map_err(|e| format!("upload: {e:?}"))
    }

    /// Copies the first `host.len()` words of `buffer` to the host (synchronises).
    pub fn download(&self, buffer: &CudaSlice<u32>, host: &mut [u32]) -> Result<(), String> {
        let view = buffer.slice(0..host.len());
        self.stream
            .memcpy_dtoh(&view, host)
            .map_err(|e| format!("download: {e:?}"))?;
        self.stream
            .synchronize()
            .map_err(|e| format!("synchronize: {e:?}"))
    }

    /// Launches `function` (`cuLaunchKernelEx`, with a cluster dimension when `cluster > 1`).
    pub fn launch(
        &self,
        function: &CudaFunction,
        grid: u32,
        block: u32,
        cluster: u32,
        smem: u32,
        args: &mut [*mut c_void],
    ) -> Result<(), String> {
        if smem > 48 * 1024 {
            function
                .set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    smem as i32,
                )
                .map_err(|e| format!("dynamic shared memory {smem}: {e:?}"))?;
        }
        // SAFETY: a plain-old-data attribute; the union member written is the one the id names.
        let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attribute.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
            x: cluster,
            y: 1,
            z: 1,
        };
        let config = sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: smem,
            hStream: self.stream.cu_stream(),
            attrs: &mut attribute,
            numAttrs: u32::from(cluster > 1),
        };
        // SAFETY: `args` points to one value per kernel parameter, of the parameter's type, alive
        // for the call (the driver copies them); the function belongs to this context.
        check(
            unsafe {
                sys::cuLaunchKernelEx(
                    &config,
                    function.cu_function(),
                    args.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernelEx",
        )
    }

    /// Waits for the stream, polling, up to `timeout`. `Ok(elapsed)`, or `Err((hung, message))`.
    pub fn wait(&self, timeout: Duration) -> Result<Duration, (bool, String)> {
        let start = Instant::now();
        loop {
            // SAFETY: queries the stream's status.
            let status = unsafe { sys::cuStreamQuery(self.stream.cu_stream()) };
            match status {
                sys::CUresult::CUDA_SUCCESS => return Ok(start.elapsed()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {
                    if start.elapsed() > timeout {
                        return Err((
                            true,
                            format!(
                                "did not finish within {} s: the kernel hangs",
                                timeout.as_secs()
                            ),
                        ));
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                error => return Err((false, format!("kernel failed: {error:?}"))),
            }
        }
    }
}
