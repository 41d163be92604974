#!/usr/bin/env python3
"""How long each P of a Go execution trace was idle, and in gaps of what
length: where a server's cores idle under load (bench/load.sh DIAG=N).

    go tool trace -d=parsed bench/out/diag/full@2.r1.trace | python3 bench/trace-idle.py
"""
import collections
import re
import sys

state, since, total = {}, {}, collections.Counter()
gaps = collections.Counter()  # idle gaps by length: under 10 µs, 100 µs, 1 ms, longer
first = last = None
for line in sys.stdin:
    m = re.search(r"Time=(\d+)", line)
    if not m:
        continue
    t = int(m.group(1))
    first = t if first is None else first
    last = t
    m = re.search(r"StateTransition Time=\d+ ProcID=(\d+) (\w+)->(\w+)", line)
    if not m:
        continue
    p, to = m.group(1), m.group(3)
    if p in state:
        total[(p, state[p])] += t - since[p]
        if state[p] == "Idle":
            d = t - since[p]
            gaps[next(b for b in (10_000, 100_000, 1_000_000, float("inf")) if d < b)] += 1
    state[p], since[p] = to, t
if first is None:
    sys.exit("no events")
for p in state:
    total[(p, state[p])] += last - since[p]
span = last - first
for (p, s), d in sorted(total.items()):
    print(f"P{p} {s:8s} {d / 1e6:8.1f} ms {100 * d / span:5.1f}%")
print(f"over {span / 1e6:.1f} ms; idle gaps: " + ", ".join(
    f"{n} under {b / 1000:g} µs" if b != float("inf") else f"{n} longer"
    for b, n in sorted(gaps.items())))
