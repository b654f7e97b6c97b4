"""Checkpoint ladder: does a training run get stronger as it goes?

    python benchmarks/ladder.py runs/ladder/plakoto80/*.npz [--games 2000] [--seed 1]

Takes checkpoints (or model files) of one game in training order (sorted by the games
they had trained) and plays, on duplicate dice (:mod:`engine.play.duel`), each of them
against the hand-written heuristic of :mod:`engine.eval.heuristic` and against the
checkpoint before it. A rising ladder shows points per game against the heuristic going
up and each rung beating the one below it. Networks play greedy 0-ply, as in training.
``training.selfplay`` keeps only its newest checkpoints (``keep_checkpoints``, 3 by
default): pass ``--set keep_checkpoints=50`` to keep a run's whole ladder, or copy the
checkpoints aside while it goes (as was done for the released models).
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

from engine.eval.network import Network, NetworkFileError  # noqa: E402
from engine.play.duel import duel  # noqa: E402


def load(path: Path) -> tuple[int, Network]:
    """``(trained games, network)`` of a checkpoint or model file."""
    if path.name.startswith("checkpoint-"):
        from training import checkpoint
        state = checkpoint.load(path)
        return int(state.games), state.net
    net = Network.load(path)
    return int(net.info.get("trained_games") or 0), net


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("files", nargs="+", type=Path, help="checkpoints or models of one game")
    ap.add_argument("--games", type=int, default=2000, help="games per match, even")
    ap.add_argument("--seed", type=int, default=1, help="dice seed")
    args = ap.parse_args(argv)
    if args.games < 2 or args.games % 2:
        ap.error(f"--games {args.games}: expected an even number >= 2")
    rungs = []
    for f in args.files:
        try:
            rungs.append((*load(f), f))
        except (NetworkFileError, ValueError, OSError) as exc:
            sys.exit(f"{f}: {exc}")
    rungs.sort(key=lambda r: r[0])
    variants = {net.variant for _, net, _ in rungs}
    if len(variants) != 1:
        sys.exit(f"the checkpoints play different games: {sorted(variants)}")
    variant = variants.pop()
    t0 = time.perf_counter()
    print(f"$ python benchmarks/ladder.py {' '.join(str(f) for f in args.files)} "
          f"--games {args.games} --seed {args.seed}")
    print(f"{variant}: {args.games} duplicate-dice games per match, seed {args.seed}")
    print(f"{'trained games':>14} {'vs heuristic':>17} {'wins':>6} {'vs previous rung':>18}")
    prev = None
    for games, net, _ in rungs:
        h = duel(net, "heuristic", args.games, args.seed, variant)
        step = ""
        if prev is not None:
            r = duel(net, prev, args.games, args.seed, variant)
            step = f"{r.ppg:+.3f} +- {r.ci95():.3f}"
        print(f"{games:>14,} {h.ppg:+8.3f} +- {h.ci95():.3f} {100 * h.rate(0):5.1f}% "
              f"{step:>18}", flush=True)
        prev = net
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
