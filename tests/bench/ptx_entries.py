#!/usr/bin/env python3
"""Compares the kernels (`.entry` functions) of two PTX files, byte for byte.

Usage: python3 ptx_entries.py OLD.ptx NEW.ptx [NAME_PREFIX]

Prints how many kernels whose name starts with NAME_PREFIX (all when empty) are identical, and
names the ones that differ or are missing from NEW. Used to show that building without the
library's `checked` feature leaves the generated code unchanged.
"""
import re
import sys


def entries(path):
    text = open(path).read()
    return {m.group(1): m.group(0)
            for m in re.finditer(r"\.visible \.entry (\w+)\((.*?)\n\}\n", text, re.S)}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = entries(sys.argv[1]), entries(sys.argv[2])
    prefix = sys.argv[3] if len(sys.argv) > 3 else ""
    same, differ = 0, []
    for name in sorted(old):
        if not name.startswith(prefix):
            continue
        if name not in new:
            differ.append(f"{name} (missing)")
        elif old[name] == new[name]:
            same += 1
        else:
            differ.append(name)
    print(f"{prefix or 'all'}: {same} identical, {len(differ)} different")
    for name in differ:
        print(f"  differs: {name}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
