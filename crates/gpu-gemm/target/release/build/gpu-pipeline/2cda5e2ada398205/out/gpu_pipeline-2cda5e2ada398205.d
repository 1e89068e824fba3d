/work/main/crates/gpu-gemm/target/release/build/gpu-pipeline/2cda5e2ada398205/out/gpu_pipeline-2cda5e2ada398205.d: /work/main/crates/gpu-pipeline/src/lib.rs /work/main/crates/gpu-pipeline/src/arch/mod.rs /work/main/crates/gpu-pipeline/src/arch/amdgpu.rs /work/main/crates/gpu-pipeline/src/arch/nvptx.rs /work/main/crates/gpu-pipeline/src/backend/mod.rs /work/main/crates/gpu-pipeline/src/backend/counter/mod.rs /work/main/crates/gpu-pipeline/src/backend/counter/amdgpu.rs /work/main/crates/gpu-pipeline/src/backend/nvidia.rs /work/main/crates/gpu-pipeline/src/checked/mod.rs /work/main/crates/gpu-pipeline/src/checked/record.rs /work/main/crates/gpu-pipeline/src/cursor.rs /work/main/crates/gpu-pipeline/src/epilogue.rs /work/main/crates/gpu-pipeline/src/half.rs /work/main/crates/gpu-pipeline/src/pipeline.rs /work/main/crates/gpu-pipeline/src/role.rs /work/main/crates/gpu-pipeline/src/stage.rs /work/main/crates/gpu-pipeline/src/threshold.rs

/work/main/crates/gpu-gemm/target/release/build/gpu-pipeline/2cda5e2ada398205/out/libgpu_pipeline-2cda5e2ada398205.rmeta: /work/main/crates/gpu-pipeline/src/lib.rs /work/main/crates/gpu-pipeline/src/arch/mod.rs /work/main/crates/gpu-pipeline/src/arch/amdgpu.rs /work/main/crates/gpu-pipeline/src/arch/nvptx.rs /work/main/crates/gpu-pipeline/src/backend/mod.rs /work/main/crates/gpu-pipeline/src/backend/counter/mod.rs /work/main/crates/gpu-pipeline/src/backend/counter/amdgpu.rs /work/main/crates/gpu-pipeline/src/backend/nvidia.rs /work/main/crates/gpu-pipeline/src/checked/mod.rs /work/main/crates/gpu-pipeline/src/checked/record.rs /work/main/crates/gpu-pipeline/src/cursor.rs /work/main/crates/gpu-pipeline/src/epilogue.rs /work/main/crates/gpu-pipeline/src/half.rs /work/main/crates/gpu-pipeline/src/pipeline.rs /work/main/crates/gpu-pipeline/src/role.rs /work/main/crates/gpu-pipeline/src/stage.rs /work/main/crates/gpu-pipeline/src/threshold.rs

/work/main/crates/gpu-pipeline/src/lib.rs:
/work/main/crates/gpu-pipeline/src/arch/mod.rs:
/work/main/crates/gpu-pipeline/src/arch/amdgpu.rs:
/work/main/crates/gpu-pipeline/src/arch/nvptx.rs:
/work/main/crates/gpu-pipeline/src/backend/mod.rs:
/work/main/crates/gpu-pipeline/src/backend/counter/mod.rs:
/work/main/crates/gpu-pipeline/src/backend/counter/amdgpu.rs:
/work/main/crates/gpu-pipeline/src/backend/nvidia.rs:
/work/main/crates/gpu-pipeline/src/checked/mod.rs:
/work/main/crates/gpu-pipeline/src/checked/record.rs:
/work/main/crates/gpu-pipeline/src/cursor.rs:
/work/main/crates/gpu-pipeline/src/epilogue.rs:
/work/main/crates/gpu-pipeline/src/half.rs:
/work/main/crates/gpu-pipeline/src/pipeline.rs:
/work/main/crates/gpu-pipeline/src/role.rs:
/work/main/crates/gpu-pipeline/src/stage.rs:
/work/main/crates/gpu-pipeline/src/threshold.rs:

# env-dep:GPU_PIPELINE_WAIT_BUDGET_MS
