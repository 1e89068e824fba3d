//! The checker's unit tests: small entries built around one branch each.

use crate::lex::{int_literal, label_len};
use crate::{EntryReport, check};

/// An entry `k` with one `.u32` parameter and `%tid.x` in `%r1`.
fn kernel(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n\t.param .u32 k_param_0\n)\n.maxntid 384, 1, 1\n{{\n\t.reg .pred \t%p<8>;\n\t.reg .b32 \t%r<32>;\n\t.reg .b64 \t%rd<8>;\n\t.reg .f32 \t%f<8>;\n\n// %bb.0:\n\tmov.u32 \t%r1, %tid.x;\n\tld.param.b32 \t%r2, [k_param_0];\n{body}\n\tret;\n                                        // -- End function\n}}\n"
    )
}

const WGMMA: &str = "\twgmma.fence.sync.aligned;\n\t// begin inline asm\n\t{\n.reg .pred p;\nsetp.ne.b32 p, %r2, 0;\nwgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, p, 1, 1, 0, 0;\n}\n\t// end inline asm\n\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n";

fn under(setup: &str, branch: &str) -> String {
    kernel(&format!(
        "{setup}\n\t{branch} \t$L__BB0_2;\n// %bb.1:\n{WGMMA}$L__BB0_2:"
    ))
}

fn fails(ptx: &str, what: &str) {
    match check(ptx) {
        Ok(r) => panic!("{what}: passed, {r:?}\n{ptx}"),
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("wgmma") || e.contains("bar"), "{e}");
        }
    }
}

fn passes(ptx: &str, what: &str) -> EntryReport {
    match check(ptx) {
        Ok(mut r) => {
            assert_eq!(r.len(), 1, "{what}");
            r.pop().unwrap()
        }
        Err(e) => panic!("{what}: {e}\n{ptx}"),
    }
}

#[test]
fn a_wgmma_under_one_lane_fails_naming_the_branch() {
    let ptx = under("\tsetp.eq.s32 \t%p1, %r1, 0;", "@!%p1 bra");
    let e = check(&ptx).unwrap_err().to_string();
    assert!(e.contains("entry `k`"), "{e}");
    assert!(e.contains("wgmma.mma_async"), "{e}");
    assert!(e.contains("@!%p1 bra $L__BB0_2"), "{e}");
    // The fence, commit and wait too.
    assert_eq!(e.lines().count(), 4, "{e}");
}

#[test]
fn a_wgmma_under_a_warpgroup_test_of_the_thread_passes() {
    let r = passes(
        &under("\tsetp.lt.u32 \t%p1, %r1, 128;", "@!%p1 bra"),
        "tid < 128",
    );
    assert_eq!((r.branches, r.lane_divergent, r.warp_divergent), (1, 0, 0));
    assert_eq!((r.wgmmas, r.aligned), (1, 4));
    passes(
        &under("\tsetp.gt.u32 \t%p1, %r1, 255;", "@%p1 bra"),
        "tid > 255",
    );
    passes(
        &under("\tsetp.lt.u32 \t%p1, 255, %r1;", "@%p1 bra"),
        "255 < tid",
    );
    passes(
        &under(
            "\tshr.u32 \t%r3, %r1, 7;\n\tsetp.eq.s32 \t%p1, %r3, 1;",
            "@%p1 bra",
        ),
        "tid / 128 == 1",
    );
    passes(
        &under(
            "\tadd.s32 \t%r3, %r1, -128;\n\tshr.u32 \t%r4, %r3, 7;\n\tsetp.ne.s32 \t%p1, %r4, 0;",
            "@%p1 bra",
        ),
        "(tid - 128) / 128 != 0",
    );
    passes(
        &under(
            "\tdiv.u32 \t%r3, %r1, 384;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "tid / 384 (a multiple of 128)",
    );
    passes(
        &under(
            "\tand.b32 \t%r3, %r1, -128;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "tid & !127",
    );
    passes(
        &under(
            "\tbfe.u32 \t%r3, %r1, 7, 2;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "bits 7.. of tid",
    );
}

#[test]
fn a_wgmma_under_a_test_finer_than_a_warpgroup_fails() {
    fails(
        &under("\tsetp.lt.u32 \t%p1, %r1, 64;", "@!%p1 bra"),
        "tid < 64",
    );
    fails(
        &under("\tsetp.le.u32 \t%p1, %r1, 128;", "@!%p1 bra"),
        "tid <= 128",
    );
    fails(
        &under("\tsetp.lt.u32 \t%p1, 256, %r1;", "@%p1 bra"),
        "256 < tid",
    );
    fails(
        &under("\tsetp.ne.s32 \t%p1, %r1, 128;", "@!%p1 bra"),
        "tid != 128",
    );
    fails(
        &under(
            "\tshr.u32 \t%r3, %r1, 5;\n\tsetp.eq.s32 \t%p1, %r3, 1;",
            "@%p1 bra",
        ),
        "tid / 32 == 1",
    );
    fails(
        &under(
            "\tadd.s32 \t%r3, %r1, -64;\n\tshr.u32 \t%r4, %r3, 7;\n\tsetp.ne.s32 \t%p1, %r4, 0;",
            "@%p1 bra",
        ),
        "(tid - 64) / 128",
    );
    fails(
        &under(
            "\tand.b32 \t%r3, %r1, 3;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "tid & 3",
    );
    fails(
        &under(
            "\tmov.u32 \t%r3, %laneid;\n\tsetp.lt.u32 \t%p1, %r3, 128;",
            "@%p1 bra",
        ),
        "laneid",
    );
    fails(
        &under(
            "\tmov.u32 \t%r3, %tid.y;\n\tsetp.lt.u32 \t%p1, %r3, 128;",
            "@%p1 bra",
        ),
        "tid.y",
    );
    // An instruction the analysis does not know makes its result lane-varying.
    fails(
        &under(
            "\tfrobnicate.u32 \t%r3, %r2;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "unknown instruction",
    );
    // A register never written.
    fails(
        &under("\tsetp.eq.s32 \t%p1, %r9, 0;", "@%p1 bra"),
        "undefined",
    );
}

#[test]
fn a_warp_level_aligned_instruction_needs_only_its_warp() {
    let warp = |setup: &str| {
        kernel(&format!(
            "{setup}\n\t@%p1 bra \t$L__BB0_2;\n// %bb.1:\n\tbarrier.sync.aligned \t1, 32;\n$L__BB0_2:"
        ))
    };
    let r = passes(&warp("\tsetp.lt.u32 \t%p1, %r1, 32;"), "tid < 32");
    assert_eq!((r.warp_divergent, r.aligned, r.wgmmas), (1, 1, 0));
    assert!(check(&warp("\tsetp.lt.u32 \t%p1, %r1, 16;")).is_err());
    assert!(check(&warp("\tsetp.eq.s32 \t%p1, %r1, 0;")).is_err());
}

#[test]
fn a_wgmma_under_a_uniform_parameter_passes() {
    let r = passes(
        &under("\tsetp.eq.s32 \t%p1, %r2, 0;", "@%p1 bra"),
        "param == 0",
    );
    assert_eq!((r.lane_divergent, r.warp_divergent), (0, 0));
    // The CTA's index is uniform; a load of mutable memory is at most warp-uniform.
    passes(
        &under(
            "\tmov.u32 \t%r3, %ctaid.x;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "ctaid",
    );
    fails(
        &under(
            "\tcvt.u64.u32 \t%rd3, %r2;\n\tld.global.u32 \t%r3, [%rd3];\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "a global load",
    );
    passes(
        &under(
            "\tcvt.u64.u32 \t%rd3, %r2;\n\tld.global.nc.u32 \t%r3, [%rd3];\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "a read-only load",
    );
    fails(
        &under(
            "\tcvt.u64.u32 \t%rd3, %r1;\n\tld.global.nc.u32 \t%r3, [%rd3];\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "a load at a varying address",
    );
    fails(
        &under(
            "\tcvt.u64.u32 \t%rd3, %r2;\n\tatom.global.add.u32 \t%r3, [%rd3], 1;\n\tsetp.eq.s32 \t%p1, %r3, 0;",
            "@%p1 bra",
        ),
        "an atomic",
    );
}

#[test]
fn a_wgmma_in_a_uniform_loop_passes() {
    let r = passes(
        &kernel(&format!(
            "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n{WGMMA}\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r2;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:"
        )),
        "uniform loop",
    );
    assert_eq!((r.branches, r.lane_divergent), (1, 0));
}

#[test]
fn a_wgmma_after_a_divergent_loop_passes_and_inside_it_fails() {
    // Each thread loops %tid.x times; the wgmma after the loop post-dominates its exit.
    let after = kernel(&format!(
        "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r1;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:\n{WGMMA}"
    ));
    let r = passes(&after, "after a divergent loop");
    assert_eq!((r.branches, r.lane_divergent), (1, 1));
    let inside = kernel(&format!(
        "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n{WGMMA}\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r1;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:"
    ));
    fails(&inside, "inside a divergent loop");
    // The loop's counter differs between threads after it (sync dependence): a branch on
    // it is divergent, though the counter is computed from uniform values only.
    let counter = kernel(&format!(
        "\tmov.b32 \t%r3, 0;\n$L__BB0_1:\n\tadd.s32 \t%r3, %r3, 1;\n\tsetp.lt.u32 \t%p1, %r3, %r1;\n\t@%p1 bra \t$L__BB0_1;\n// %bb.2:\n\tsetp.eq.s32 \t%p2, %r3, 5;\n\t@%p2 bra \t$L__BB0_4;\n// %bb.3:\n{WGMMA}$L__BB0_4:"
    ));
    fails(&counter, "a branch on a divergent loop's counter");
}

#[test]
fn a_value_chosen_by_a_divergent_branch_is_divergent() {
    // Phi-like: %r5 is 1 or 2 by a test of the thread finer than a warpgroup.
    let ptx = kernel(&format!(
        "\tsetp.lt.u32 \t%p1, %r1, 64;\n\tmov.b32 \t%r5, 1;\n\t@%p1 bra \t$L__BB0_2;\n// %bb.1:\n\tmov.b32 \t%r5, 2;\n$L__BB0_2:\n\tsetp.eq.s32 \t%p2, %r5, 1;\n\t@%p2 bra \t$L__BB0_4;\n// %bb.3:\n{WGMMA}$L__BB0_4:"
    ));
    fails(&ptx, "phi of a divergent branch");
    // A guarded write is as divergent as its guard.
    let guarded = kernel(&format!(
        "\tsetp.eq.s32 \t%p1, %r1, 0;\n\tmov.b32 \t%r5, 1;\n\t@%p1 mov.b32 \t%r5, 2;\n\tsetp.eq.s32 \t%p2, %r5, 1;\n\t@%p2 bra \t$L__BB0_4;\n// %bb.3:\n{WGMMA}$L__BB0_4:"
    ));
    fails(&guarded, "guarded write");
    // A guarded wgmma.
    fails(
        &kernel("\tsetp.eq.s32 \t%p1, %r1, 0;\n\t@%p1 wgmma.fence.sync.aligned;"),
        "guarded wgmma.fence",
    );
}

#[test]
fn an_mbarrier_wait_loop_before_a_wgmma_passes() {
    // The shape of the GEMM's consumer: a try_wait in an inline-assembly scope, its
    // spin loop, then the wgmma (the scoped `p` is not the wgmma's `p`).
    let wait = "\t{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%r7], %r8;\nselp.u32 %r9, 1, 0, p;\n}\n";
    let ptx = kernel(&format!(
        "\tmov.b32 \t%r7, 0;\n\tmov.b32 \t%r8, 0;\n{wait}\tsetp.ne.s32 \t%p1, %r9, 0;\n\t@%p1 bra \t$L__BB0_2;\n$L__BB0_1:\n{wait}\tsetp.eq.s32 \t%p2, %r9, 0;\n\t@%p2 bra \t$L__BB0_1;\n\tbra.uni \t$L__BB0_2;\n$L__BB0_2:\n{WGMMA}"
    ));
    let r = passes(&ptx, "a wait loop");
    assert_eq!((r.branches, r.warp_divergent, r.wgmmas), (2, 2, 1));
    // But a wgmma under the wait's result is not warpgroup-uniform.
    fails(
        &kernel(&format!(
            "\tmov.b32 \t%r7, 0;\n\tmov.b32 \t%r8, 0;\n{wait}\tsetp.ne.s32 \t%p1, %r9, 0;\n\t@%p1 bra \t$L__BB0_2;\n{WGMMA}$L__BB0_2:"
        )),
        "under a wait's result",
    );
}

#[test]
fn calls_exits_and_scopes_parse() {
    // A call's result is lane-varying; `exit` ends a block; `ret; exit;` on one line.
    let ptx = kernel(&format!(
        "\tsetp.eq.s32 \t%p1, %r2, 0;\n\t@%p1 bra \t$L__BB0_3;\n// %bb.1:\n\t{{ // callseq 0, 0\n\t.param .b32 retval0;\n\tcall.uni (retval0),\n\tf,\n\t(\n\t);\n\tld.param.b32 \t%r6, [retval0];\n\t}} // callseq 0\n\tsetp.eq.s32 \t%p3, %r6, 0;\n\t@%p3 bra \t$L__BB0_3;\n// %bb.2:\n{WGMMA}\texit;\n$L__BB0_3:\n\tret; exit;"
    ));
    fails(&ptx, "under a call's result");
    assert!(check(&ptx.replace("%p3, %r6", "%p3, %r2")).is_ok());
    // Lanes that trap end the kernel: the wgmma after a divergent branch to a trap is not
    // conditional on it. Lanes that exit do not end it.
    assert!(check(&ptx.replace("\tret; exit;", "\ttrap; exit;")).is_ok());
    fails(
        &ptx.replace("\tret; exit;", "\texit;"),
        "after a divergent exit",
    );
}

#[test]
fn a_call_of_a_function_that_always_traps_ends_the_path() {
    // `fail` traps on every path; `report` may return. A divergent branch to a call of `fail`
    // makes nothing after it conditional; one to a call of `report` does.
    let funcs = ".func fail()\n.noreturn\n{\n\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<2>;\n\tmov.u32 \t%r1, %laneid;\n\tsetp.eq.s32 \t%p1, %r1, 0;\n\t@%p1 bra \t$L__BB1_2;\n\ttrap;\n$L__BB1_2:\n\ttrap;\n}\n.func report()\n{\n\t.reg .pred \t%p<2>;\n\t.reg .b32 \t%r<2>;\n\tmov.u32 \t%r1, %laneid;\n\tsetp.eq.s32 \t%p1, %r1, 0;\n\t@%p1 bra \t$L__BB2_2;\n\ttrap;\n$L__BB2_2:\n\tret;\n}\n";
    let body = |callee: &str| {
        let k = kernel(&format!(
            "\tsetp.eq.s32 \t%p1, %r1, 0;\n\t@%p1 bra \t$L__BB0_2;\n{WGMMA}\tret;\n$L__BB0_2:\n\t{{\n\tcall.uni {callee}, ();\n\t}}\n\texit;"
        ));
        k.replace(".visible .entry k(", &format!("{funcs}.visible .entry k("))
    };
    let r = passes(&body("fail"), "a call of fail");
    assert_eq!((r.lane_divergent, r.wgmmas), (1, 1));
    fails(&body("report"), "a call of report");
    // A declaration without a body is not known to trap.
    let declared = body("fail").replacen(
        ".func fail()\n.noreturn\n{",
        ".func fail()\n.noreturn;\n.func unused()\n{",
        1,
    );
    fails(&declared, "a call of a declared function");
}

#[test]
fn literals_and_labels() {
    assert_eq!(int_literal("-128"), Some(-128));
    assert_eq!(int_literal("0x7F"), Some(127));
    assert_eq!(int_literal("017"), Some(15));
    assert_eq!(int_literal("0"), Some(0));
    assert_eq!(int_literal("0f3F800000"), None);
    assert_eq!(label_len("$L__BB0_3:"), Some(9));
    assert_eq!(label_len("mbarrier.init.shared::cta.b64 [%r1], 1"), None);
    assert_eq!(label_len("a::b"), None);
}
