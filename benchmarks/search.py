"""Search speed and strength: decisions per second at 0-3 ply, and 2-ply against 0-ply.

    python benchmarks/search.py --model models/backgammon.npz            # full run
    python benchmarks/search.py --model runs/bg80/model.npz --quick      # a smoke run

Speed: the backgammon positions of ``tests/data/perft`` tagged ``contact`` and ``race`` (plays
that end the game left out), each searched once per depth through
:meth:`engine.search.nply.Search.rate` (the kernel and its thin Python wrapper, no move text);
the successor count of every position is checked against the golden file, so the
benchmark doubles as a regression check. Reported per set and depth: milliseconds and
decisions per second, and positions rated statically per decision. A 0-ply row inside
one numba loop shows the kernel without Python's call overhead. When the PyPI package
``gnubg-nn`` is installed, GNU Backgammon's ``best_move(board, d1, d2, n=ply)`` is timed
on the same positions beside ours (its 3-ply takes seconds a decision, so it gets at most
``--gnubg3`` positions). gnubg keeps an evaluation cache that the search here does not
have; each position is timed once per depth, but the shallower depths run first and fill
that cache.

Strength: the same model at 2-ply (``--strength-ply``) against itself at 0-ply, cubeless
money games on duplicate dice (:func:`engine.play.duel.duel_players`: each dice stream played
twice with the seats swapped), reported as points per game with a 95% interval.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine import Position  # noqa: E402
from engine._jit import njit  # noqa: E402
from engine.eval.evaluator import Evaluator, model_path  # noqa: E402
from engine.search.nply import Search, SearchError, SearchPlayer, SearchSettings, expand  # noqa: E402

PERFT = ROOT / "tests" / "data" / "perft"
TARGET_MS = {0: 0.1, 2: 20.0, 3: 300.0}
"""The project's targets, milliseconds a decision."""


def position_sets(limit: int | None) -> dict:
    """``{"contact": records, "race": records}`` from the backgammon perft records."""
    records = [json.loads(line) for line in open(PERFT / "backgammon.jsonl")]
    out = {}
    for tag in ("contact", "race"):
        rs = [r for r in records if tag in r["tags"] and "game_end" not in r["tags"]]
        out[tag] = rs[:limit] if limit else rs
    return out


@njit
def _zero_ply_loop(states, dice, net, ctx, reps):
    total = 0
    roll = np.ones((1, 3), np.int64)
    for _ in range(reps):
        for i in range(states.shape[0]):
            roll[0, 0] = dice[i, 0]
            roll[0, 1] = dice[i, 1]
            n, kids, probs, eq, pair = expand(states[i:i + 1], roll, False, True, -1, 0.0, net,
                                              net, False, 1, -1.0, ctx)
            total += n
    return total


def time_ours(search: Search, records, ply: int, limit: int | None) -> tuple[float, float]:
    """(seconds a decision, positions rated a decision) at ``ply``."""
    rs = records[:limit] if limit else records
    settings = dataclasses.replace(search.settings, ply=ply)      # --prune, --keep
    st = [(Position.from_json(r["position"]).to_array(), tuple(r["dice"]), r["count"])
          for r in rs]
    search.rate(st[0][0], st[0][1], settings)                   # compile / load outside
    rated = 0
    t0 = time.perf_counter()
    for state, dice, count in st:
        kids, _, _, _, n = search.rate(state, dice, settings)
        assert len(kids) == count, f"{len(kids)} successors, golden says {count}"
        rated += n
    dt = time.perf_counter() - t0
    return dt / len(st), rated / len(st)


def time_kernel_zero(search: Search, records, seconds: float) -> float:
    states = np.stack([Position.from_json(r["position"]).to_array() for r in records])
    dice = np.array([r["dice"] for r in records], np.int64)
    net, ctx = search.evaluator.kernel_args()
    _zero_ply_loop(states, dice, net, ctx, 1)
    reps, elapsed = 1, 0.0
    while elapsed < seconds:
        reps *= 2
        t0 = time.perf_counter()
        _zero_ply_loop(states, dice, net, ctx, reps)
        elapsed = time.perf_counter() - t0
    return elapsed / (reps * len(records))


def time_gnubg(records, ply: int, limit: int | None) -> float | None:
    try:
        import gnubg_nn
    except ImportError:
        return None
    rs = records[:limit] if limit else records
    boards = [(gnubg_nn.board_from_position_id(r["gnubg_id"]), r["dice"]) for r in rs]
    # no warm-up call: gnubg caches evaluations, and a repeated position would be free
    t0 = time.perf_counter()
    for board, (d1, d2) in boards:
        gnubg_nn.best_move(board, d1, d2, n=ply)
    return (time.perf_counter() - t0) / len(boards)


def strength(search: Search, ply: int, games: int, seed: int) -> str:
    from engine.play.duel import duel_players
    a, b = SearchPlayer(search, ply), SearchPlayer(search, 0)
    t0 = time.perf_counter()
    r = duel_players(a, b, games, seed, search.variant)
    dt = time.perf_counter() - t0
    ppg, half = r.ppg, r.ci95()
    return (f"{ply}-ply vs 0-ply, same model, {r.games} games ({r.games // 2} duplicate-dice "
            f"pairs), seed {seed}, {dt:.0f} s\n"
            f"{ply}-ply: {ppg:+.3f} ppg +- {half:.3f} (95% CI over pair sums), "
            f"wins {100 * r.rate(0):.1f}%")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None,
                    help="model file (default models/backgammon.npz)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: few positions, 2 strength games")
    ap.add_argument("--plies", default="0,1,2,3", help="depths to time (default 0,1,2,3)")
    ap.add_argument("--limit3", type=int, default=20,
                    help="positions per set timed at 3-ply (default 20)")
    ap.add_argument("--gnubg3", type=int, default=5,
                    help="positions per set gnubg times at 3-ply (default 5)")
    ap.add_argument("--games", type=int, default=None,
                    help="strength games, an even number (default 200, --quick 2; 0 skips)")
    ap.add_argument("--strength-ply", type=int, default=2, help="deep player's ply")
    ap.add_argument("--seed", type=int, default=1, help="dice seed of the strength match")
    ap.add_argument("--prune", nargs="?", const=True, default=None, metavar="FILE",
                    help="inside the search, rank each roll's plays with this pruning "
                         "network (FILE, or the released one) and rate its best --keep "
                         "again with the model (default: as the search ships, the "
                         "released pruning network with the released model, none with "
                         "a model given by --model)")
    ap.add_argument("--no-prune", action="store_true",
                    help="every play inside the search rated by the model")
    ap.add_argument("--keep", type=int, default=None, metavar="K",
                    help="with pruning: each roll's K best by the pruning network rated "
                         "again by the model, the pick among them (default: "
                         "SearchSettings' own)")
    ap.add_argument("--within", type=float, default=None, metavar="W",
                    help="with pruning: of those K, only the ones within W equity of the "
                         "pruning network's best (default: SearchSettings' own)")
    ap.add_argument("--race", nargs="?", const=True, default=None, metavar="FILE",
                    help="the race network beside --model (FILE, or the released one; "
                         "default: the released one with the released model only)")
    args = ap.parse_args(argv)
    path = Path(args.model) if args.model else model_path("backgammon")
    settings = {"prune": False} if args.no_prune else {}
    if args.keep is not None:
        settings["prune_keep"] = args.keep
    if args.within is not None:
        settings["prune_within"] = args.within
    try:
        chosen = SearchSettings(**settings)
    except SearchError as e:
        ap.error(str(e))
    search = Search(Evaluator.load("backgammon", args.model,
                                   prune=False if args.no_prune else args.prune,
                                   race=args.race),
                    chosen)
    plies = [int(p) for p in args.plies.split(",")]
    limit = 8 if args.quick else None
    limit3 = 2 if args.quick else args.limit3
    gnubg3 = 1 if args.quick else args.gnubg3
    games = args.games if args.games is not None else 2 if args.quick else 200

    pr = search.evaluator.prune
    rc = search.evaluator.race
    st = search.settings
    within = f" within {st.prune_within:g}" if st.prune_within != float("inf") else ""
    keep = f" (keep {st.prune_keep}{within})" if pr is not None else ""
    print(f"model {path} ({search.evaluator.network.sizes}); pruning network "
          f"{pr.sizes if pr is not None else 'none'}{keep}; race network "
          f"{rc.sizes if rc is not None else 'none'}; bear-off tables "
          f"{'on' if search.evaluator.bearoff is not None else 'off'}; default filters")
    print(f"{'set':<8} {'n':>4} {'ply':>3} {'ms/dec':>9} {'dec/s':>9} {'rated/dec':>10} "
          f"{'gnubg ms/dec':>12} {'target ms':>9}")
    for name, records in position_sets(limit).items():
        for ply in plies:
            lim = limit3 if ply == 3 else None
            sec, rated = time_ours(search, records, ply, lim)
            g = time_gnubg(records, ply, gnubg3 if ply == 3 else lim)
            gs = f"{g * 1e3:12.2f}" if g is not None else f"{'-':>12}"
            tgt = f"{TARGET_MS[ply]:9g}" if ply in TARGET_MS else f"{'':>9}"
            n = min(len(records), lim or len(records))
            print(f"{name:<8} {n:>4} {ply:>3} {sec * 1e3:9.3f} {1 / sec:9.0f} {rated:10.0f} "
                  f"{gs} {tgt}")
        k = time_kernel_zero(search, records, 0.2 if args.quick else 1.0)
        print(f"{name:<8} {len(records):>4}   0 {k * 1e3:9.3f} {1 / k:9.0f}  (0-ply inside "
              f"one numba loop, no Python per decision)")
    if games:
        print(strength(search, args.strength_ply, games, args.seed))


if __name__ == "__main__":
    main()
