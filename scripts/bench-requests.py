"""Counts the FUSE requests of a `seal run` logged with
SEAL_LOG=sealfs::requests=debug, per step (the lines "@@step NAME" the
benchmark scripts print between steps), by opcode. Used by bench-session.sh
and bench-repo.sh.

Usage: python3 scripts/bench-requests.py LOG TITLE
"""
import collections
import re
import sys

log, title = sys.argv[1], sys.argv[2]
steps, current = {}, None
for line in open(log, errors="replace"):
    if line.startswith("@@step "):
        current = line[7:].strip()
        steps.setdefault(current, collections.Counter())
        continue
    m = re.search(r"FUSE\(\s*\d+\)\s+ino\s+\S+\s+([A-Z_]+)", line)
    if m and current:
        steps[current][m.group(1)] += 1
print()
print(f"FUSE requests {title} SEAL_LOG=sealfs::requests=debug")
for step, c in steps.items():
    top = ", ".join(f"{op} {n}" for op, n in c.most_common(6))
    print(f"{step:<32}{sum(c.values()):>8}  {top}")
