"""Rollout speed: wall time and trials per second of a 1296-trial rollout, beside GNU
Backgammon's own rollout (``gnubg_nn.rollout``) on the same positions.

    python benchmarks/rollout.py                    # 1296 trials, threads 1 and 2
    python benchmarks/rollout.py --trials 324 --threads 1 --quick

Positions (backgammon, the side to move's view, before its roll): the opening position,
a middle-game contact position and a race. Each is rolled out with 0-ply checker play
and variance reduction, truncated after 7 rolls and played to the end (to a finished
game or a race the bear-off tables value), on each number of threads of ``--threads``
(:class:`engine.search.nply.Search`'s threads; the trials' results do not depend on
them). The first rollout of a run compiles the search kernels when the cache is cold
and is not timed (a warm-up rollout of 36 trials goes first).

When the PyPI package ``gnubg-nn`` is installed, ``gnubg_nn.rollout(board, 1296, 0,
nt=7 or 500, std=1)`` (0-ply play, its own variance reduction and race / bear-off
databases, one thread) is timed on the same positions beside ours, with its equity and
standard error. A benchmark only: the tests never need ``gnubg_nn``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine import Position  # noqa: E402
from engine.eval.evaluator import Evaluator  # noqa: E402
from engine.notation.gnubg_id import position_id  # noqa: E402
from engine.notation.parse import parse_position  # noqa: E402
from engine.rules.scoring import equities  # noqa: E402
from engine.search.nply import Search  # noqa: E402
from engine.search.rollout import Rollout, RolloutSettings  # noqa: E402

POSITIONS = {
    "opening": "start",
    # a middle game, the side to move with two back checkers (tests/data/perft, contact)
    "contact": "mPvNAAC1dcABAw",
    # a race, 73 pips each (tests/data/perft, race)
    "race": "uO8HAABtvyMAAA",
}


_GNUBG = """
import json, sys, time
import gnubg_nn
key = gnubg_nn.key_of_board(gnubg_nn.board_from_position_id(sys.argv[1]))
t0 = time.perf_counter()
probs, se = gnubg_nn.rollout(key, int(sys.argv[2]), 0, gnubg_nn.ro_auto, int(sys.argv[3]), 1)
print(json.dumps([time.perf_counter() - t0, list(probs), list(se)]))
"""


def _gnubg(pos: Position, trials: int, truncate: int) -> str:
    """GNU Backgammon's rollout of ``pos`` in a child process (the binding has crashed
    on some arguments): its time, equity and standard error, or why there are none."""
    import json
    import subprocess
    try:
        import gnubg_nn  # noqa: F401
    except ImportError:
        return "gnubg_nn not installed"
    proc = subprocess.run([sys.executable, "-c", _GNUBG, position_id(pos), str(trials),
                           str(truncate or 500)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return f"gnubg_nn.rollout failed (exit {proc.returncode})"
    dt, probs, se = json.loads(proc.stdout.splitlines()[-1])
    import numpy as np
    return f"{dt:7.2f} {float(equities(np.array(probs))):+8.3f} {float(se[0]):8.4f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model file (default the released one)")
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--threads", default="1,2", help="thread counts, comma separated")
    ap.add_argument("--quick", action="store_true", help="truncated rollouts only")
    args = ap.parse_args(argv)
    evaluator = Evaluator.load("backgammon", args.model)
    threads = [int(t) for t in args.threads.split(",")]
    modes = [7] if args.quick else [7, 0]
    Rollout(Search(evaluator, threads=1)).position(Position.start(),
                                                   RolloutSettings(trials=36, truncate=2))
    print(f"{args.trials} trials, 0-ply play, variance reduction; "
          f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs")
    print(f"{'position':<9} {'truncate':>8} {'threads':>7} {'wall s':>7} {'trials/s':>9} "
          f"{'equity':>8} {'se':>6} {'se plain':>8} | {'gnubg s':>7} {'gnubg eq':>8} "
          f"{'gnubg se':>8}")
    for name, text in POSITIONS.items():
        pos = parse_position(text)[0]
        for truncate in modes:
            settings = RolloutSettings(trials=args.trials, truncate=truncate)
            gtext = _gnubg(pos, args.trials, truncate)
            for t in threads:
                ro = Rollout(Search(evaluator, threads=t))
                t0 = time.perf_counter()
                r = ro.position(pos, settings)
                dt = time.perf_counter() - t0
                print(f"{name:<9} {truncate or 'full':>8} {t:7d} {dt:7.2f} "
                      f"{args.trials / dt:9.0f} {r.equity:+8.3f} {r.se['equity']:6.4f} "
                      f"{r.se_plain['equity']:8.4f} | {gtext}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
