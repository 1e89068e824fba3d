#!/usr/bin/env bash
# Issue 13, run 18 (same device session as run 17): the GEMM benchmark bundle, quick mode, the
# language-model shapes.
GEMM_TIMEOUT=500 bash target/gemm-bundle/run_gemm.sh --quick --shapes llm
