/work/main/crates/gpu-gemm/target/release/build/gpu-gemm/f441f4c6b77e7449/out/gpu_gemm-f441f4c6b77e7449.d: src/lib.rs src/wgmma.rs Cargo.toml

/work/main/crates/gpu-gemm/target/release/build/gpu-gemm/f441f4c6b77e7449/out/libgpu_gemm-f441f4c6b77e7449.rmeta: src/lib.rs src/wgmma.rs Cargo.toml

src/lib.rs:
src/wgmma.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
