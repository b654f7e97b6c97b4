"""What a second core adds on this machine: one numba loop timed alone, then the same in
two processes at once.

    python benchmarks/cores.py [--seconds 3]

The loop is arithmetic on a 4 KiB float32 array (in the first level cache, no memory
traffic, no Python inside). Were the cores independent, two copies at once would each
take the time of one alone; the ratio printed is how much longer they take, which bounds
every "two cores" speed-up of the project's benchmarks (self-play workers, search and
rollout threads).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
from numba import njit


@njit(cache=True)
def _work(rounds):
    x = np.arange(1024).astype(np.float32) / np.float32(1024.0)
    acc = 0.0
    for r in range(rounds):
        for j in range(1024):
            x[j] = x[j] * np.float32(0.999) + np.float32(0.001)
        acc += x[r % 1024]
    return acc


def _timed(rounds: int) -> float:
    t0 = time.perf_counter()
    _work(rounds)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="about how long one loop runs")
    ap.add_argument("--rounds", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    _work(10)                                            # compiled (or loaded), untimed
    if args.rounds:                                      # a child: time its loop, say it
        print(f"{_timed(args.rounds):.4f}")
        return 0
    rounds = max(1, int(args.seconds / _timed(100_000) * 100_000))
    cmd = [sys.executable, __file__, "--rounds", str(rounds)]
    alone = [float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
             for _ in range(2)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    both = [float(p.communicate()[0]) for p in procs]
    print(f"one loop alone: {min(alone):.2f} s (runs {alone[0]:.2f}, {alone[1]:.2f})")
    print(f"two at once:    {both[0]:.2f} s and {both[1]:.2f} s, "
          f"x{both[0] / min(alone):.2f} and x{both[1] / min(alone):.2f} the time alone")
    print(f"work done in the time of one: x{2 * min(alone) / max(both):.2f} "
          f"(2.00 for two independent cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
