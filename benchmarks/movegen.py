"""Move-generation speed: successors per second on fixed position sets, one core.

    python benchmarks/movegen.py [--seconds 1.0]

Sets come from ``tests/data/perft`` (so every count is also checked against the golden
move lists it was made from): backgammon opening / contact / race / bar / doubles, and every record of each of
the other five games. Each set is timed in the numba core (one process, one thread),
beside the pure-Python reference generator of the tests measured in the same run, and,
when the PyPI package ``gnubg-nn`` is installed, beside GNU Backgammon's C generator on
the same backgammon positions. Also reported: the slowest gul bara cascade of the golden
set and of a set met in random play (``benchmarks/data/gul_bara_cascades.jsonl``), and how long
``python -m engine.protocol`` takes from start to its first ``moves`` reply.

    python benchmarks/movegen.py --tail

times the far tail of the cascades instead (:data:`TAIL`), on one thread and on the
threads :func:`engine.movegen.generate.successor_arrays` uses, and the protocol's ``moves`` and
``best`` on the largest of them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402

from engine import Position, get_rules  # noqa: E402
from engine._jit import njit  # noqa: E402
from engine.movegen._core import SCRATCH_LEN, generate_turn  # noqa: E402
from engine.rules._layout import STATE_LEN  # noqa: E402
from engine.rules.variants import VARIANTS  # noqa: E402

PERFT = ROOT / "tests" / "data" / "perft"


@njit
def _run(states, dice, table, reps):
    out = np.empty((64, STATE_LEN), np.int16)
    scratch = np.zeros(SCRATCH_LEN, np.int64)
    total = 0
    for _ in range(reps):
        for i in range(states.shape[0]):
            n, out = generate_turn(states[i], dice[i, 0], dice[i, 1], table, scratch, out, 0)
            total += n
    return total


def _records(variant):
    return [json.loads(line) for line in open(PERFT / f"{variant}.jsonl")]


def position_sets():
    """``{name: (variant, records)}``: the fixed sets the benchmark times."""
    bg = _records("backgammon")
    sets = {
        "bg opening": [r for r in bg if "opening" in r["tags"]],
        "bg contact": [r for r in bg if "contact" in r["tags"]],
        "bg race": [r for r in bg if "race" in r["tags"]],
        "bg bar": [r for r in bg if "bar" in r["tags"]],
        "bg doubles": [r for r in bg if r["dice"][0] == r["dice"][1]],
        "bg all": bg,
    }
    out = {k: ("backgammon", v) for k, v in sets.items()}
    for v in VARIANTS[1:]:
        out[v] = (v, [r for r in _records(v) if "capped" not in r["tags"]])
    return out


def _arrays(records):
    states = np.array([Position.from_json(r["position"]).to_array() for r in records])
    dice = np.array([r["dice"] if r["dice"] is not None else [0, 0] for r in records])
    return states, dice


def _timed(run, seconds, repeats):
    """``(best, median)`` seconds of one call of ``run(reps)`` per rep: ``reps`` grows
    until a call takes ``seconds``, then that call is timed ``repeats`` times. The best
    is the code's speed (a shared machine only ever adds time; it drifts by up to 2x
    within minutes here), the median what the hour gave."""
    reps, elapsed = 1, 0.0
    while elapsed < seconds:
        reps *= 2
        t0 = time.perf_counter()
        run(reps)
        elapsed = time.perf_counter() - t0
    times = [elapsed]
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        run(reps)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[0] / reps, times[len(times) // 2] / reps


def time_numba(variant, records, seconds, repeats=1):
    """``(best, median, successors)``: seconds a position, best and median of
    ``repeats`` timings (:func:`_timed`), and successors a position."""
    states, dice = _arrays(records)
    table = get_rules(variant).table()
    expected = sum(r["count"] for r in records)
    got = _run(states, dice, table, 1)
    assert got == expected, f"{variant}: {got} successors, golden says {expected}"
    best, median = _timed(lambda reps: _run(states, dice, table, reps), seconds, repeats)
    n = len(records)
    return best / n, median / n, expected / n


def time_reference(records, seconds):
    from reference_movegen import reference_successors
    positions = [(Position.from_json(r["position"]), tuple(r["dice"]) if r["dice"] else None)
                 for r in records]
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds or n < len(positions):   # at least one pass
        pos, dice = positions[n % len(positions)]
        reference_successors(pos, dice)
        n += 1
    return (time.perf_counter() - t0) / n


def time_gnubg(records, seconds, repeats=1):
    """Best seconds a position of GNU Backgammon's generator (``gnubg_nn.moves``, a
    Python call and the result's tuples included), or None without ``gnubg-nn``."""
    try:
        import gnubg_nn
    except ImportError:
        return None
    boards = [(gnubg_nn.board_from_position_id(r["gnubg_id"]), r["dice"], r["count"])
              for r in records]
    for board, (d1, d2), count in boards:
        got = len(gnubg_nn.moves(board, d1, d2))
        assert got == max(count, 1) or count == 1, (got, count)

    def run(reps):
        for _ in range(reps):
            for board, (d1, d2), _ in boards:
                gnubg_nn.moves(board, d1, d2)
    return _timed(run, seconds, repeats)[0] / len(boards)


def slowest_cascade():
    """``(seconds, id, successors)`` of the slowest gul bara cascade or pending record
    of the golden set, timed on a second pass (the first compiles every path met, such
    as the layered walk a six-block fallback calls from Python)."""
    from engine.movegen.generate import successor_arrays
    records = [r for r in _records("gul_bara")
               if "cascade" in r["tags"] or "pending" in r["tags"]]
    for _ in range(2):                    # the second pass counts
        worst = (0.0, None, 0)
        for r in records:
            pos = Position.from_json(r["position"])
            t0 = time.perf_counter()
            n = len(successor_arrays(pos, tuple(r["dice"]) if r["dice"] else None))
            dt = time.perf_counter() - t0
            assert n == r["count"]
            worst = max(worst, (dt, r["id"], n))
    return worst


CASCADES = ROOT / "benchmarks" / "data" / "gul_bara_cascades.jsonl"


def random_play_cascades():
    """Times of the exact cascades in :data:`CASCADES`: the 30 slowest of the 2,325
    cascades (1-1, 2-2 or 3-3 from the 4th turn) met in 600 uniformly random gul bara
    games (``--make-cascades`` makes the file again)."""
    from engine.movegen.generate import successor_arrays
    records = [json.loads(line) for line in CASCADES.read_text().splitlines()]
    successor_arrays(Position.start("gul_bara"), (1, 1))
    times = []
    for r in records:
        pos = Position.from_json(r["position"])
        t0 = time.perf_counter()
        n = len(successor_arrays(pos, tuple(r["dice"])))
        times.append((time.perf_counter() - t0, n))
        assert n == r["count"], (n, r["count"])
    return sorted(times, reverse=True)


TAIL = ROOT / "benchmarks" / "data" / "gul_bara_cascade_tail.jsonl"
"""The 36 slowest cascades of six more samples of 600 random games (seeds 12-17 of
:func:`make_cascades`, keeping 8, 8, 5, 5, 5, 5): about 14,000 cascades in all, the
largest with 869,145 plays."""


def cascade_tail():
    """``(plays, seconds on one thread, seconds on the default threads)`` of each
    cascade of :data:`TAIL`, slowest first."""
    from engine.movegen import generate as movegen
    records = [json.loads(line) for line in TAIL.read_text().splitlines()]
    small = min(records, key=lambda r: r["count"])
    for threads in ("1", None):                   # compile both paths first
        os.environ.pop("NARDY_THREADS", None)
        if threads:
            os.environ["NARDY_THREADS"] = threads
        movegen.successor_arrays(Position.from_json(small["position"]), tuple(small["dice"]))
    rows = []
    for r in records:
        pos, dice = Position.from_json(r["position"]), tuple(r["dice"])
        times = []
        for threads in ("1", None):
            if threads:
                os.environ["NARDY_THREADS"] = threads
            else:
                os.environ.pop("NARDY_THREADS", None)
            t0 = time.perf_counter()
            n = len(movegen.successor_arrays(pos, dice))
            times.append(time.perf_counter() - t0)
            assert n == r["count"], (n, r["count"])
        rows.append((n, *times))
    return sorted(rows, key=lambda row: -row[1])


def protocol_cascade():
    """Seconds the protocol takes (in this process, kernels compiled) for ``moves``
    and for ``best`` with ``limit`` 10 on the largest cascade of :data:`TAIL`:
    ``(plays, moves s, best s)``, or ``(plays, moves s, None)`` with no gul bara
    model."""
    from engine.cli.protocol import handle_line
    from engine.eval.evaluator import model_path
    records = [json.loads(line) for line in TAIL.read_text().splitlines()]
    big = max(records, key=lambda r: r["count"])
    small = min(records, key=lambda r: r["count"])
    has_model = Path(model_path("gul_bara")).exists()
    times = []
    for cmd, extra in (("moves", {}), ("best", {"limit": 10})):
        if cmd == "best" and not has_model:
            times.append(None)
            continue
        for r in (small, big):                    # the small one compiles the kernels
            req = {"cmd": cmd, "position": r["position"], "dice": r["dice"], **extra}
            t0 = time.perf_counter()
            reply = json.loads(json.dumps(handle_line(json.dumps(req))))
            dt = time.perf_counter() - t0
            assert "error" not in reply, reply
        times.append(dt)
    return big["count"], times[0], times[1]


def make_cascades(games=600, seed=11, keep=30):
    """Write :data:`CASCADES` anew from random play (see :func:`random_play_cascades`)."""
    from engine.movegen.generate import successor_arrays
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(games):
        pos = Position.start("gul_bara")
        for _ in range(400):
            if pos.is_over():
                break
            dice = None if pos.pending else (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
            succ = successor_arrays(pos, dice, play=True)
            if dice and dice[0] == dice[1] <= 3 and pos.turns[0] >= 3:
                found.append((pos, dice))
            pos = Position.from_array(succ[rng.integers(len(succ))], "gul_bara")
    timed = []
    for pos, dice in found:
        t0 = time.perf_counter()
        n = len(successor_arrays(pos, dice))
        timed.append((time.perf_counter() - t0, n, pos, dice))
    timed.sort(key=lambda x: -x[0])
    with open(CASCADES, "w") as f:
        for _, n, pos, dice in timed[:keep]:
            f.write(json.dumps({"position": pos.to_json(), "dice": list(dice), "count": n}) + "\n")
    print(f"{CASCADES}: the {keep} slowest of {len(found)} cascades")


def protocol_startup():
    req = json.dumps({"id": 1, "cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": [3, 1]})
    times = []
    for k in range(4):                  # the first start fills numba's cache, untimed
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "engine.protocol"], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        proc.stdin.write(req + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if k:
            times.append(time.perf_counter() - t0)
        proc.stdin.close()
        proc.wait()
        assert json.loads(line)["count"] == 16
    return min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    ap.add_argument("--repeats", type=int, default=5,
                    help="timings per set: the best and the median are printed")
    ap.add_argument("--make-cascades", action="store_true",
                    help="write benchmarks/data/gul_bara_cascades.jsonl anew and stop")
    ap.add_argument("--tail", action="store_true",
                    help="time the cascades of benchmarks/data/gul_bara_cascade_tail.jsonl")
    args = ap.parse_args()
    if args.make_cascades:
        make_cascades()
        return
    if args.tail:
        from engine.movegen.generate import cascade_threads
        rows = cascade_tail()
        print(f"{'plays':>9} {'1 thread s':>10} {f'{cascade_threads()} threads s':>11}")
        for n, one, many in rows:
            print(f"{n:9,} {one:10.3f} {many:11.3f}")
        print(f"slowest: {max(r[1] for r in rows):.3f} s on one thread, "
              f"{max(r[2] for r in rows):.3f} s on {cascade_threads()}")
        n, moves, best = protocol_cascade()
        print(f"protocol on the {n:,}-play cascade: moves (truncated, with its "
              f"successors_sha256) {moves:.2f} s, best at 0-ply with limit 10 "
              + (f"{best:.2f} s" if best is not None else "- (no gul bara model)"))
        return
    print(f"best and median of {args.repeats} timings of {args.seconds} s; gnubg: best")
    print(f"{'set':<12} {'n':>5} {'succ/pos':>8} {'numba us/pos':>12} {'numba succ/s':>13} "
          f"{'median succ/s':>13} {'python us/pos':>13} {'x python':>8} {'gnubg us/pos':>12}")
    for name, (variant, records) in position_sets().items():
        per_pos, median, succ = time_numba(variant, records, args.seconds, args.repeats)
        ref = time_reference(records, args.seconds / 2)
        gnubg = (time_gnubg(records, args.seconds, args.repeats) if variant == "backgammon"
                 else None)
        g = f"{gnubg * 1e6:12.2f}" if gnubg is not None else f"{'-':>12}"
        print(f"{name:<12} {len(records):>5} {succ:8.1f} {per_pos * 1e6:12.2f} "
              f"{succ / per_pos:13,.0f} {succ / median:13,.0f} {ref * 1e6:13.0f} "
              f"{ref / per_pos:8.0f} {g}")
    dt, rid, n = slowest_cascade()
    print(f"slowest gul bara cascade/pending record: {rid}, {n} successors, {dt * 1e3:.1f} ms")
    times = random_play_cascades()
    print(f"gul bara cascades of random play ({len(times)}): slowest "
          + ", ".join(f"{n:,} plays {dt * 1e3:.0f} ms" for dt, n in times[:3])
          + f"; median {times[len(times) // 2][0] * 1e3:.0f} ms")
    lo, hi = protocol_startup()
    print(f"protocol start to first moves reply (warm cache): {lo:.2f}-{hi:.2f} s")


if __name__ == "__main__":
    main()
