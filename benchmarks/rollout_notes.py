"""The figures behind the notes under "Rollouts" in benchmarks/README.md, one command.

    python benchmarks/rollout_notes.py
    python benchmarks/rollout_notes.py --only race [--no-race]

1. Where a rollout's time goes: a 1296-trial rollout of the middle-game position of
   ``rollout.py`` truncated at 7, on one thread, profiled by ``cProfile`` (the share of
   the search's ``expand`` kernel), and the positions it rated (``evaluated``).
2. How many of a position's plays over the 21 rolls are distinct (the first 60
   ``contact`` positions of ``tests/data/perft``): what a cache of ratings inside one
   expansion could save.
3. The race position of ``rollout.py`` at the bear-off tables' border: its 1- and 2-ply
   value, a 1296-trial rollout (truncated at 7 and played out), the 0-ply play of 4-4
   and how the network and the tables value it, and the rolls whose 0-ply play leaves
   a checker out of home.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine import Position  # noqa: E402
from engine.eval import bearoff  # noqa: E402
from engine.eval.evaluator import Evaluator  # noqa: E402
from engine.movegen.generate import successor_arrays  # noqa: E402
from engine.notation.parse import parse_position  # noqa: E402
from engine.rules.dice import ALL_21  # noqa: E402
from engine.rules.scoring import equities  # noqa: E402
from engine.search.nply import Search  # noqa: E402
from engine.search.rollout import Rollout, RolloutSettings  # noqa: E402

CONTACT, RACE = "mPvNAAC1dcABAw", "uO8HAABtvyMAAA"


def profile(search: Search) -> None:
    pos = parse_position(CONTACT)[0]
    ro = Rollout(search)
    settings = RolloutSettings(truncate=7)
    ro.position(Position.start(), RolloutSettings(trials=36, truncate=2))   # compile
    t0 = time.perf_counter()
    r = ro.position(pos, settings)
    dt = time.perf_counter() - t0
    prof = cProfile.Profile()
    prof.runcall(ro.position, pos, settings)
    stats = pstats.Stats(prof)
    total = stats.total_tt
    expand = sum(v[2] for k, v in stats.stats.items()
                 if k[2] == "expand" and k[0].endswith("nply.py"))
    print(f"middle game, 1296 trials truncated at 7, one thread: {dt:.2f} s, "
          f"{r.evaluated:,} positions rated, {dt / r.evaluated * 1e6:.2f} us each; "
          f"expand {expand / total:.0%} of the profiled time")


def distinct() -> None:
    records = [json.loads(line) for line in open(ROOT / "tests/data/perft/backgammon.jsonl")]
    records = [r for r in records if "contact" in r["tags"]][:60]
    total = unique = 0
    for r in records:
        pos = Position.from_json(r["position"])
        plays = np.concatenate([np.asarray(successor_arrays(pos, tuple(d)))
                                for d, _ in ALL_21])
        total += len(plays)
        unique += len(np.unique(plays, axis=0))
    print(f"plays over the 21 rolls of {len(records)} contact positions: {total:,}, "
          f"distinct {unique:,} ({unique / total:.0%})")


def race(search: Search) -> None:
    ev = search.evaluator
    pos = parse_position(RACE)[0]
    print(f"race: 1-ply {search.evaluate(pos, 1).equity:+.4f}, "
          f"2-ply {search.evaluate(pos, 2).equity:+.4f}")
    for truncate in (7, 0):
        r = Rollout(search).position(pos, RolloutSettings(truncate=truncate))
        print(f"race rollout, truncate {truncate or 'none'}: {r.equity:+.4f} +- "
              f"{r.se['equity']:.4f} (plain {r.equity_plain:+.4f} +- "
              f"{r.se_plain['equity']:.4f})")
    best = search.analyse(pos, (4, 4), ply=0).best
    rater = ev.race if ev.race is not None else ev.network     # what rates the race
    net = -float(rater.evaluate([best.position])[0])
    table = (f"{-float(equities(ev.bearoff.probabilities(best.position))):+.4f}"
             if bearoff.applies(best.position, ev.rules) else "- (not a home race)")
    who = "race network" if ev.race is not None else "network"
    print(f"race, 4-4 at 0-ply: {best.move}; that play by the {who} {net:+.4f}, "
          f"by the tables {table}")
    out = [d for d, _ in ALL_21
           if not bearoff.applies(search.analyse(pos, tuple(d), ply=0).best.position,
                                  ev.rules)]
    print(f"race, rolls whose 0-ply play leaves a checker out of home: {len(out)} of 21 "
          f"{[tuple(int(x) for x in d) for d in out]}")


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=("profile", "distinct", "race"),
                    default=["profile", "distinct", "race"], help="the parts to run")
    ap.add_argument("--no-race", action="store_true",
                    help="without the race network (models/backgammon.race.npz)")
    args = ap.parse_args(argv)
    search = Search(Evaluator.load("backgammon", race=False if args.no_race else None),
                    threads=1)
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), search.evaluator)
    if "profile" in args.only:
        profile(search)
    if "distinct" in args.only:
        distinct()
    if "race" in args.only:
        race(search)
    return 0


if __name__ == "__main__":
    sys.exit(main())
