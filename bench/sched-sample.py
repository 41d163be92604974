#!/usr/bin/env python3
"""Where a server's threads are while a load runs, as the kernel sees them:
for the CPUs it is pinned to, how their time went (user, system, softirq,
steal, idle, from /proc/stat); for its threads, the time they ran and the
time they waited, runnable, for a CPU (schedstat), their context switches,
and, sampled, which state each was in and where in the kernel it slept
(wchan). A Go execution trace shows a goroutine in a raw system call as
running; this shows whether its thread was on a CPU then.

    python3 bench/sched-sample.py PID SECONDS CPUS   # CPUS: 0-1, or 0,3
"""
import collections
import glob
import os
import sys
import time


def cpus_of(spec):
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out


def cpu_times(cpus):
    """Per CPU: user, nice, system, idle, iowait, irq, softirq, steal (ticks)."""
    t = {}
    for line in open("/proc/stat"):
        f = line.split()
        if f[0].startswith("cpu") and f[0] != "cpu" and int(f[0][3:]) in cpus:
            t[int(f[0][3:])] = [int(x) for x in f[1:9]]
    return t


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def tasks(pid):
    return [os.path.basename(p) for p in glob.glob(f"/proc/{pid}/task/*")]


def task_counts(pid):
    """Per thread: run ns, runqueue wait ns, voluntary and involuntary switches."""
    out = {}
    for tid in tasks(pid):
        s = read(f"/proc/{pid}/task/{tid}/schedstat")
        st = read(f"/proc/{pid}/task/{tid}/status")
        if s is None or st is None:
            continue
        run, wait, _ = (int(x) for x in s.split())
        sw = {l.split(":")[0]: int(l.split()[1]) for l in st.splitlines() if "ctxt_switches" in l}
        out[tid] = (run, wait, sw.get("voluntary_ctxt_switches", 0), sw.get("nonvoluntary_ctxt_switches", 0))
    return out


def softirqd(cpus):
    """CPU ticks of each ksoftirqd on cpus, the processes read once."""
    names = {f"ksoftirqd/{c}\n": c for c in cpus}
    out = {}
    for p in glob.glob("/proc/[0-9]*/comm"):
        c = names.get(read(p))
        stat = read(p.replace("comm", "stat")) if c is not None else None
        if stat is not None:
            f = stat.rsplit(")", 1)[1].split()
            out[c] = int(f[11]) + int(f[12])
    return out


def main():
    pid, secs, cpus = sys.argv[1], float(sys.argv[2]), cpus_of(sys.argv[3])
    c0, t0, k0, w0 = cpu_times(cpus), task_counts(pid), softirqd(cpus), time.monotonic()
    states = collections.Counter()
    samples = stacked = 0
    end = w0 + secs
    while time.monotonic() < end:
        on = collections.Counter()  # runnable threads by the CPU they are on, or queued for
        for tid in tasks(pid):
            stat = read(f"/proc/{pid}/task/{tid}/stat")
            if stat is None:
                continue
            f = stat.rsplit(")", 1)[1].split()
            state = f[0]
            where = "" if state == "R" else (read(f"/proc/{pid}/task/{tid}/wchan") or "?")
            states[(state, where)] += 1
            if state == "R":
                on[int(f[36])] += 1
        samples += 1
        if any(n > 1 for n in on.values()) and len(on) < len(cpus):
            stacked += 1
    c1, t1, k1, w1 = cpu_times(cpus), task_counts(pid), softirqd(cpus), time.monotonic()
    span = w1 - w0
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"]
    print(f"over {span:.2f} s, {samples} samples of each thread")
    for c in cpus:
        d = [b - a for a, b in zip(c0[c], c1[c])]
        total = sum(d) or 1
        print(f"cpu{c}: " + " ".join(f"{n} {100 * x / total:.0f}%" for n, x in zip(names, d) if x))
        if c in k0 and c in k1:
            print(f"  ksoftirqd/{c}: {100 * (k1[c] - k0[c]) / os.sysconf('SC_CLK_TCK') / span:.0f}% of a CPU")
    run = wait = vol = invol = 0
    for tid, (r, w, v, i) in t1.items():
        r0, w_0, v0, i0 = t0.get(tid, (0, 0, 0, 0))
        run, wait, vol, invol = run + r - r0, wait + w - w_0, vol + v - v0, invol + i - i0
    print(f"threads: ran {run / 1e9 / span:.2f} CPUs, waited runnable for a CPU {wait / 1e9 / span:.2f} CPUs; "
          f"{vol / span:.0f} voluntary and {invol / span:.0f} involuntary switches a second")
    print(f"samples with two runnable threads on one CPU while one of its CPUs had none: {100 * stacked / samples:.0f}%")
    print("sampled thread states (threads on average): state, where it slept")
    for (state, where), n in states.most_common(12):
        print(f"  {n / samples:5.2f}  {state} {where}")


main()
