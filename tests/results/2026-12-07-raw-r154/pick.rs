use gpu_gemm_plan::*;
fn main() {
    for line in std::io::stdin().lines() {
        let l = line.unwrap();
        let v: Vec<u32> = l.split('x').map(|x| x.trim().parse().unwrap()).collect();
        let s = Shape { m: v[0], n: v[1], k: v[2] };
        println!("{} {}", l.trim(), default_kernel_on(s, 132, |_: &KernelSpec| H100_CLUSTER_FIT).name);
    }
}
