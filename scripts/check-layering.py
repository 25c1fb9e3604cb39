#!/usr/bin/env python3
"""Checks that every library includes only the libraries docs/architecture.md
says it depends on (directly or through them), so the layering table stays
true and no cycle creeps in. Usage: check-layering.py SOURCE_DIR"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
doc = (root / "docs" / "architecture.md").read_text()
# The table under "## Dependencies": | `Lib` | `Dep`, `Dep` |
section = doc.split("## Dependencies", 1)[1].split("\n## ", 1)[0]
allowed = {}
for lib, deps in re.findall(r"^\| `(\w+)` \| ([^|]*)\|", section, re.M):
    allowed[lib] = set(re.findall(r"`(\w+)`", deps))
if not allowed:
    sys.exit("check-layering: no dependency table in docs/architecture.md")


def closure(lib, seen=()):
    out = set()
    for dep in allowed.get(lib, ()):
        if dep in seen:
            sys.exit(f"check-layering: the table has a cycle through {dep}")
        out |= {dep} | closure(dep, seen + (lib,))
    return out


failures = 0
for d in sorted((root / "lib").iterdir()):
    if d.is_dir() and d.name not in allowed:
        print(f"check-layering: lib/{d.name} is not in docs/architecture.md's table")
        failures += 1
for lib in sorted(allowed):
    ok = closure(lib) | {lib}
    files = [p for d in (root / "lib" / lib, root / "include" / "fuel" / lib)
             if d.is_dir() for p in sorted(d.rglob("*")) if p.suffix in (".cpp", ".h")]
    if not files:
        print(f"check-layering: {lib} has no sources"); failures += 1
    for path in files:
        for used in re.findall(r'#include "fuel/(\w+)/', path.read_text()):
            if used not in ok:
                print(f"{path.relative_to(root)}: {lib} includes {used}, "
                      f"which docs/architecture.md does not let it depend on")
                failures += 1
print(f"{len(allowed)} libraries checked, {failures} violations")
sys.exit(1 if failures else 0)
