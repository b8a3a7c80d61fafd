"""bench/lib/callgrind-by-library.py: instruction counts of callgrind profiles, split by the
shared object each instruction ran in (self cost), one column per profile. Instruction counts
repeat from run to run where times do not, so this is the split a before/after comparison
rests on (docs/PERFORMANCE_LOG.md, "The profile, split by library").
usage: callgrind-by-library.py NAME=FILE.cg ...   (prints a Markdown table)"""
import collections
import re
import sys

NAMED = re.compile(r"^\((\d+)\)(?: (.*))?$")


def split(path):
    """(total, {library: instructions}) of one callgrind output file, read directly: each cost
    line counts for the object (`ob=`) in force, and the line after a `calls=` line (the
    callee's inclusive cost) is skipped, so each instruction counts once, where it ran. Object
    names are compressed: "(N) name" the first time, in `ob=` or `cob=`, then "(N)"."""
    names, obj, skip, total = {}, "?", False, 0
    by = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("cob="):   # a callee's object: names it, if first seen here
                m = NAMED.match(line[4:].strip())
                if m and m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
            elif line.startswith("ob="):
                value = line[3:].strip()
                m = NAMED.match(value)
                if m:
                    if m.group(2) is not None:
                        names[m.group(1)] = m.group(2)
                    value = names.get(m.group(1), value)
                obj = value.rsplit("/", 1)[-1]
            elif line.startswith("calls="):
                skip = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip:
                    skip = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    count = int(fields[1])
                    total += count
                    # The executable under test, wherever the run installed it.
                    by["keygate (Swift code, static runtime)" if obj.startswith("keygate") else obj] += count
    return total, by


def main(args):
    if not args:
        sys.exit(__doc__)
    columns = []
    for arg in args:
        name, _, path = arg.partition("=")
        columns.append((name, *split(path)))
    libraries = collections.Counter()
    for _, _, by in columns:
        libraries.update(by)
    shown = [lib for lib, n in libraries.most_common() if n >= 20_000 * len(columns)]
    print("| library | " + " | ".join(name for name, _, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for lib in shown:
        print(f"| {lib} | " + " | ".join(f"{by[lib] / 1e6:.2f} M" for _, _, by in columns) + " |")
    print("| **total** | " + " | ".join(f"**{total / 1e6:.2f} M**" for _, total, _ in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
