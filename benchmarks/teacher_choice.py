"""Which labels choose better: each labelled set's pick in every decision, judged by GNU
Backgammon's n-ply evaluation.

    python benchmarks/teacher_choice.py runs/t3/d2k_p2.npz runs/t3/d2k_p3.npz
    python benchmarks/teacher_choice.py runs/t3/d2k_p2.npz --search 0 1 --judge-ply 3

The sets hold the same positions (``training.label`` of one position set with different
settings: 2-ply against 3-ply, a rollout, another network): the candidates of each
decision (the plays of one roll, ``decision`` of ``training.positions --candidates``).
A set's pick in a decision is the candidate its labels give the mover the most equity
after his play (cubeless money). ``--search P``: the picks of the shipped search's
``P``-ply values of the same positions as further sets (``P`` 0: what the released
network's 0-ply play would pick among the candidates: the student against its teacher).

Where the picks differ, each picked play is valued by GNU Backgammon
(``gnubg_nn.probabilities(board, --judge-ply)``, the mover's cubeless equity), and a
set's loss in the decision is the best of the picked plays less its own, in mEMG;
reported: the decisions, those where the picks differ, each set's mean loss and, for
each set after the first, its gain over the first (paired) with a 95% interval. The
judge is another engine's evaluation and favours plays like its own: read the sets
against each other. GNU Backgammon only judges here; nothing of it enters training.
Needs the PyPI package ``gnubg-nn``.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from rollout_choice import judge, the_judge  # noqa: E402

from engine.rules.position import Position  # noqa: E402
from engine.rules.scoring import equities  # noqa: E402


def picks(targets: np.ndarray, decision: np.ndarray) -> dict:
    """``{decision: row}``: the candidate whose labels give the mover the most equity
    (the labels are for the side to move after the play: the opponent); ties go to the
    first row."""
    mover = -equities(targets)
    best: dict = {}
    for i, d in enumerate(decision.tolist()):
        if d not in best or mover[i] > mover[best[d]]:
            best[d] = i
    return best


def load(path: str, states=None, decision=None):
    """``(states, targets, decision)`` of a labelled set, checked against the first."""
    try:
        z = np.load(path)
        s, t, d = z["states"], z["targets"], z["decision"]
    except (OSError, ValueError, KeyError) as exc:
        raise SystemExit(f"{path}: not a labelled position set with decisions ({exc})")
    if t.shape != (len(s), 5) or d.shape != (len(s),):
        raise SystemExit(f"{path}: expected targets (n x 5) and decision (n) beside "
                         f"{len(s)} states")
    if states is not None and (s.shape != states.shape or not np.array_equal(s, states)
                               or not np.array_equal(d, decision)):
        raise SystemExit(f"{path}: not the positions and decisions of the first set")
    return s, t, d


def interval(v: np.ndarray) -> str:
    h = 1.96 * v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0
    return f"{v.mean():+.3f} ({v.mean() - h:+.3f} .. {v.mean() + h:+.3f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("sets", nargs="+", help="labelled sets of the same positions")
    ap.add_argument("--search", type=int, nargs="*", default=[],
                    help="plies of the shipped search whose values pick as further sets")
    ap.add_argument("--judge-ply", type=int, default=2)
    args = ap.parse_args(argv)
    if any(p not in (0, 1, 2, 3) for p in args.search):
        ap.error("--search: plies 0 to 3")
    if args.judge_ply not in (0, 1, 2, 3):
        ap.error("--judge-ply: 0 to 3")
    gnubg_nn = the_judge()
    if gnubg_nn is None:
        return 2
    states, targets, decision = load(args.sets[0])
    names, labels = [args.sets[0]], [targets]
    for path in args.sets[1:]:
        names.append(path)
        labels.append(load(path, states, decision)[1])
    if args.search:
        from engine.search.nply import Search
        search = Search.load("backgammon", threads=1)
        for ply in args.search:
            names.append(f"shipped {ply}-ply")
            labels.append(search.values_of(states, ply=ply))
    t0 = time.time()
    chosen = [picks(t, decision) for t in labels]
    values: dict = {}
    loss = []
    for d in sorted(chosen[0]):
        rows = [c[d] for c in chosen]
        if len(set(rows)) == 1:
            loss.append([0.0] * len(rows))
            continue
        for r in set(rows) - values.keys():
            values[r] = judge(gnubg_nn, Position.from_array(states[r], "backgammon"),
                              args.judge_ply)
        top = max(values[r] for r in rows)
        loss.append([1000 * (top - values[r]) for r in rows])
    loss = np.array(loss)
    differ = int((loss.max(axis=1) > 0).sum())
    print(f"{len(loss):,} decisions, {len(states):,} candidates; picks differ in {differ}; "
          f"judged by gnubg {args.judge_ply}-ply; mEMG a decision; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {time.time() - t0:.0f} s")
    w = max(len(n) for n in names)
    print(f"{'labels':{w}s}  {'loss':>7s}  gain over {names[0]}")
    for k, name in enumerate(names):
        gain = interval(loss[:, 0] - loss[:, k]) if k else ""
        print(f"{name:{w}s}  {loss[:, k].mean():7.3f}  {gain}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
