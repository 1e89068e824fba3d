"""Side-by-side SASS instruction counts of the Rust and C++ benchmark kernels.

Usage: python3 sass_compare.py RUST.sass CPP.sass > sass_compare.txt
(both from `cuobjdump --dump-sass` of the sm_90a cubins). For each Rust kernel with a C++ twin,
prints the number of instructions (NOPs and the trailing self-branch excluded) and, where they
differ, the opcodes whose counts differ. The elected-lane rings exist once per library API on the
Rust side (`..._handles_flat`, `..._scopes_flat`, `..._direct_flat`) and once in C++ (`..._flat`).
"""
import collections
import re
import sys


def functions(path):
    funcs, name = {}, None
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(.*?);", line)
        if name and m:
            text = m.group(1).strip()
            op = re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]
            if op != "NOP":
                funcs[name].append(op)
    for ops in funcs.values():
        if ops and ops[-1] == "BRA":
            ops.pop()  # the trailing `BRA self` after EXIT
    return funcs


def twin(name):
    """The C++ kernel a Rust kernel is compared with."""
    return re.sub(r"_(handles|scopes|direct)_(flat|x4|llvm)$", r"_\2", name)


rust, cpp = functions(sys.argv[1]), functions(sys.argv[2])
print(f"{'kernel':<44} {'Rust':>5} {'C++':>5}  opcode differences (Rust - C++)")
for name in sorted(n for n in rust if twin(n) in cpp):
    r, c = collections.Counter(rust[name]), collections.Counter(cpp[twin(name)])
    diff = {op: r[op] - c[op] for op in set(r) | set(c) if r[op] != c[op]}
    shown = ", ".join(f"{op} {d:+d}" for op, d in sorted(diff.items())) or "same opcodes"
    print(f"{name:<44} {len(rust[name]):>5} {len(cpp[twin(name)]):>5}  {shown}")
