#!/usr/bin/env python3
"""Why overload.sh places its costly queries at random: a simulation of one
worker shedding by age (what waited longer than 10 ms is dropped from the
head), FIFO and newest-first, at 17,000 queries a second, 5% of them costing
1.7 ms and the rest 25 us (about 1.5x capacity, as measured in
bench/overload.sh). With a costly query every 20th, sent at a fixed rate,
they arrive at a fixed period and the queue serves them out of proportion
(8.7% of the answers) and answers far fewer; at random places, 4.9%.

    python3 bench/shedsim.py
"""
import collections
import random


def simulate(periodic, lifo, rate=17000, cheap=25e-6, costly=1.7e-3, shed=10e-3, seconds=5.0):
    n = int(rate * seconds)
    arrival = [i / rate for i in range(n)]
    is_costly = [(i % 20 == 0) if periodic else (random.random() < 0.05) for i in range(n)]
    queue, i, now = collections.deque(), 0, 0.0
    served = [0, 0]  # cheap, costly
    while i < n or queue:
        while i < n and arrival[i] <= now:
            queue.append(i)
            i += 1
        if not queue:
            now = arrival[i]
            continue
        while queue and now - arrival[queue[0]] > shed:
            queue.popleft()
        if not queue:
            continue
        j = queue.pop() if lifo else queue.popleft()
        served[is_costly[j]] += 1
        now += costly if is_costly[j] else cheap
    return served


random.seed(1)
for periodic in (True, False):
    for lifo in (False, True):
        cheap, costly = simulate(periodic, lifo)
        print(f"{'every 20th' if periodic else 'random 5%':10} {'newest-first' if lifo else 'FIFO':12} "
              f"answered {cheap + costly:6} in 5 s, {100 * costly / (cheap + costly):.1f}% of them costly")
