//! Rebuilds the harness when the commit it reports changes.
fn main() {
    println!("cargo::rerun-if-env-changed=GPU_PIPELINE_COMMIT");
}
