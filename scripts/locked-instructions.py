#!/usr/bin/env python3
"""How many locked (atomic read-modify-write) instructions a run executed, and where.

    valgrind --tool=callgrind --dump-instr=yes --toggle-collect='arcbatch::run::run_on_task*' \\
        --callgrind-out-file=PROFILE target/release/arcbatch run --threads 1 --repeat 3 ...
    python3 scripts/locked-instructions.py PROFILE target/release/arcbatch [--top N]

Callgrind counts every instruction it executes; `objdump -d` of the binary lists which of them
carry a `lock` prefix (reference counts of shared values, mostly). Each one is a full memory
barrier, so a count of them says what sharing costs beside the instruction total. Prints the
total, the locked ones, and the functions that executed the most of them.
"""

import argparse
import collections
import re
import subprocess


def locked_addresses(binary: str) -> set:
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True, check=True)
    return {int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):\s+lock ", out.stdout, re.M)}


def executions(profile: str):
    """(function, address, count) for every instruction line of a callgrind profile written
    with `--dump-instr=yes` (positions `instr line`, relative addresses resolved)."""
    names, function, address, after_call = {}, None, 0, False
    for line in open(profile):
        # A name is spelled out once, where its id first comes (`fn=` or a call's `cfn=`).
        named = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line.strip())
        if named:
            if named.group(3):
                names[named.group(2)] = named.group(3)
            if named.group(1) == "fn":
                function = names.get(named.group(2), named.group(2))
            continue
        if line.startswith("calls="):
            after_call = True  # the next line is a call's inclusive cost, not an instruction's
            continue
        m = re.match(r"^(0x[0-9a-f]+|\+\d+|-\d+|\*)\s+\S+\s+(\d+)", line)
        if not m:
            continue
        pos = m.group(1)
        if pos.startswith("0x"):
            address = int(pos, 16)
        elif pos[0] == "+":
            address += int(pos[1:])
        elif pos[0] == "-":
            address -= int(pos[1:])
        if after_call:
            after_call = False
            continue
        yield function, address, int(m.group(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile")
    parser.add_argument("binary")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    locked = locked_addresses(args.binary)
    total, by_function = 0, collections.Counter()
    for function, address, count in executions(args.profile):
        total += count
        if address in locked:
            by_function[function] += count
    print(f"instructions: {total:,}; locked: {sum(by_function.values()):,}")
    for function, count in by_function.most_common(args.top):
        print(f"{count:>12,}  {function}")


if __name__ == "__main__":
    main()
