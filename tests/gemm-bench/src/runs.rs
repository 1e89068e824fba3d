//! What the benchmark and the correctness pass share: the device buffers of one problem, and one
//! run of every implementation on them.

use crate::check::POISON;
use crate::cuda::{Device, DeviceBuffer, Timer};
use crate::gemm::{Gemm, Operands};
use crate::problem::{Problem, Shape};

/// Device buffers of one problem: A, B, C and one D per implementation.
pub struct Buffers {
    /// A: M x K.
    pub a: DeviceBuffer,
    /// B: N x K.
    pub b: DeviceBuffer,
    /// C: M x N.
    pub c: DeviceBuffer,
    /// One D (M x N) per implementation, in the implementations' order.
    pub d: Vec<DeviceBuffer>,
}

impl Buffers {
    /// Allocates the buffers of `shape` for `impls` implementations.
    pub fn new(device: &Device, shape: Shape, impls: usize) -> Result<Self, String> {
        let (ea, eb, ec) = shape.elems();
        Ok(Self {
            a: device.alloc(ea, "A")?,
            b: device.alloc(eb, "B")?,
            c: device.alloc(ec, "C")?,
            d: (0..impls)
                .map(|_| device.alloc(ec, "D"))
                .collect::<Result<_, _>>()?,
        })
    }

    /// The operands of implementation `i`: the shared A, B, C and its own D.
    pub fn operands(&self, i: usize) -> Operands {
        Operands {
            a: self.a.ptr,
            b: self.b.ptr,
            c: self.c.ptr,
            d: self.d[i].ptr,
        }
    }

    /// Uploads A, B and C (C poisoned when beta is 0: it must not be read).
    pub fn upload(
        &self,
        device: &Device,
        a: &[u16],
        b: &[u16],
        c: &[u16],
        beta: f32,
    ) -> Result<(), String> {
        device.upload(&self.a, a)?;
        device.upload(&self.b, b)?;
        if beta == 0.0 {
            device.fill(&self.c, POISON)
        } else {
            device.upload(&self.c, c)
        }
    }

    /// Fills every D with NaN, so that an element not written fails every check.
    pub fn poison_d(&self, device: &Device) -> Result<(), String> {
        self.d.iter().try_for_each(|d| device.fill(d, POISON))
    }
}

/// Runs every implementation once on the uploaded data (after poisoning every D) and downloads
/// the results.
pub fn run_once(
    device: &Device,
    impls: &mut [Box<dyn Gemm>],
    problem: &Problem,
    buffers: &Buffers,
) -> Result<Vec<Vec<u16>>, String> {
    buffers.poison_d(device)?;
    for (i, imp) in impls.iter_mut().enumerate() {
        let ops = buffers.operands(i);
        imp.before_run(&device.stream, problem, &ops)
            .and_then(|()| imp.run(&device.stream, problem, &ops))
            .map_err(|e| format!("{}: {e}", imp.name()))?;
    }
    device.sync()?;
    buffers.d.iter().map(|d| device.download(d)).collect()
}

/// Prepares every implementation for `problem` on its operands, then fills every D with NaN
/// again (a preparation may run the GEMM).
pub fn prepare_all(
    device: &Device,
    timer: &mut Timer,
    impls: &mut [Box<dyn Gemm>],
    problem: &Problem,
    buffers: &Buffers,
) -> Result<(), String> {
    for (i, imp) in impls.iter_mut().enumerate() {
        imp.prepare(timer, problem, &buffers.operands(i))
            .map_err(|e| format!("{}: {e}", imp.name()))?;
    }
    buffers.poison_d(device)
}
