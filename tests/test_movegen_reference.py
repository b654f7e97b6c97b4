"""The numba move generator agrees with the slow reference on random positions,
for every game and every rule option."""

import numpy as np
import pytest
from reference_movegen import check_rows

from engine import Position, get_rules
from engine.movegen.generate import successor_arrays
from engine.movegen.keys import key_order
from engine.rules.variants import (
    BLOCK_EACH,
    BLOCK_QUARTER,
    CASCADE_GAME,
    HEAD_FIRST_ANY_DOUBLE,
    HEAD_FIRST_NONE,
    MOTHER_DEFERRED,
    VARIANTS,
)

OPTIONS = [
    ("long_nardy", dict(head_first=HEAD_FIRST_ANY_DOUBLE)),
    ("long_nardy", dict(head_first=HEAD_FIRST_NONE)),
    ("long_nardy", dict(head=False)),
    ("long_nardy", dict(block=BLOCK_EACH)),
    ("gul_bara", dict(cascade=CASCADE_GAME)),
    ("gul_bara", dict(block=BLOCK_EACH)),
    ("fevga", dict(block=BLOCK_QUARTER)),
    ("plakoto", dict(mother=MOTHER_DEFERRED)),
]


def random_positions(variant, rules, rng, games, per_game):
    """Positions met in random games (every legal successor equally likely)."""
    found = []
    for _ in range(games):
        pos = Position.start(variant)
        seen = []
        for _ply in range(400):
            if pos.pending:
                dice = None
            else:
                dice = tuple(int(d) for d in rng.integers(1, 7, size=2))
            seen.append((pos, dice))
            nxt = successor_arrays(pos, dice, rules)        # successors(), in its order,
            order = key_order(nxt)                           # without a position of each
            pos = Position.from_array(nxt[order[rng.integers(len(nxt))]], variant)
            if pos.off[1] == 15 or pos.off[0] == 15 or 24 in pos.pinned[0]:
                break
        picks = rng.choice(len(seen), size=min(per_game, len(seen)), replace=False)
        found += [seen[i] for i in picks]
    return found


def _check(variant, rules, seed, games, per_game):
    rng = np.random.default_rng(seed)
    for pos, dice in random_positions(variant, rules, rng, games, per_game):
        # also try the position with a fresh random roll (and every double now and then)
        rolls = [dice]
        if dice is not None:
            rolls.append(tuple(int(d) for d in rng.integers(1, 7, size=2)))
        for roll in rolls:
            check_rows(successor_arrays(pos, roll, rules), pos, roll, rules)


@pytest.mark.parametrize("variant", VARIANTS)
def test_random_positions_agree(variant):
    _check(variant, get_rules(variant), seed=VARIANTS.index(variant), games=12, per_game=25)


@pytest.mark.parametrize("variant,options", OPTIONS,
                         ids=[f"{v}-{'-'.join(f'{k}={x}' for k, x in o.items())}"
                              for v, o in OPTIONS])
def test_rule_options_agree(variant, options):
    _check(variant, get_rules(variant, **options), seed=7, games=6, per_game=25)


def test_cascade_strategy_matches_layered_walk():
    """Gul bara's cascades and pending segments, met in random play, come out of the
    cascade walk (``generate_turn``) exactly as out of the general layered walk."""
    from engine.movegen._core import (
        _dice_sequence,
        _head_limit,
        _layered,
        generate_turn,
        new_scratch,
    )
    from engine.rules._layout import STATE_LEN
    rules = get_rules("gul_bara")
    t = rules.table()
    rng = np.random.default_rng(3)
    checked = {"cascade": 0, "pending": 0, "over": 0}
    for _ in range(40):
        pos = Position.start("gul_bara")
        for _ply in range(400):
            if pos.is_over():
                break
            dice = None if pos.pending else tuple(int(d) for d in rng.integers(1, 7, 2))
            s = pos.to_array()
            d1, d2 = dice if dice else (0, 0)
            seq, total, nondouble, cascade = _dice_sequence(s, d1, d2, t)
            if (cascade or dice is None) and total <= 12:
                n, out = generate_turn(s, d1, d2, t, new_scratch(),
                                       np.empty((64, STATE_LEN), np.int16), 0)
                m, ref = _layered(s, d1, d2, t, seq, total, nondouble, cascade,
                                  _head_limit(s, d1, d2, t),
                                  np.empty((64, STATE_LEN), np.int16), 0)
                got = sorted(map(bytes, out[:n]))
                assert got == sorted(map(bytes, ref[:m])), (pos, dice)
                checked["cascade" if cascade else "pending"] += 1
                checked["over"] += any(r[26] == 15 for r in out[:n])
            nxt = successor_arrays(pos, dice, rules, play=True)
            pos = Position.from_array(nxt[rng.integers(len(nxt))], "gul_bara")
    assert checked["cascade"] >= 20 and checked["pending"] >= 5 and checked["over"] > 0, checked


def test_large_cascades_of_random_play():
    """Cascades of random play with layers of 10^4-10^5 boards (benchmarks/data): as
    many plays as when the file was made (then checked against the layered walk), each
    a distinct position."""
    import json
    from pathlib import Path

    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascades.jsonl"
    records = [json.loads(line) for line in data.read_text().splitlines()]
    for r in [r for r in records if 20_000 <= r["count"] <= 70_000][:4]:
        out = successor_arrays(Position.from_json(r["position"]), tuple(r["dice"]))
        assert len(out) == r["count"]
        assert len(set(map(bytes, out))) == r["count"]


def test_cascade_on_threads_matches_one_thread(monkeypatch, perft):
    """The exact successors of the Python API, whose cascade walk splits large layers
    over threads, equal the one-thread kernel's row for row (same order too): on the
    cascades of benchmarks/data and on every gul bara cascade and pending segment of
    the golden file, with layers split from 50 boards on (so that the split and merge,
    plays that bear off the last checker and the six-block fallback all run)."""
    import json
    from pathlib import Path

    from engine.movegen import generate as movegen
    from engine.movegen._core import generate_turn, new_scratch
    from engine.rules._layout import STATE_LEN
    monkeypatch.setenv("NARDY_THREADS", "3")
    monkeypatch.setattr(movegen, "SPLIT_LAYER", 50)
    rules = get_rules("gul_bara")
    t = rules.table()

    def same(pos, dice):
        d1, d2 = dice if dice else (0, 0)
        n, ref = generate_turn(pos.to_array(), d1, d2, t, new_scratch(),
                               np.empty((64, STATE_LEN), np.int16), 0)
        got = movegen.successor_arrays(pos, dice, rules)
        assert np.array_equal(got, ref[:n]), (pos, dice)
        return n

    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascades.jsonl"
    records = [json.loads(line) for line in data.read_text().splitlines()]
    for r in sorted(records, key=lambda r: r["count"])[:6]:
        assert same(Position.from_json(r["position"]), tuple(r["dice"])) == r["count"]
    # the work arrays are kept between calls, for one call at a time: a call that finds
    # them in use (another thread's) walks with arrays of its own
    assert 3 in movegen._work
    with movegen._work_lock:
        assert same(Position.from_json(records[0]["position"]),
                    tuple(records[0]["dice"])) == records[0]["count"]
    met = 0
    for r in perft("gul_bara"):
        dice = tuple(r["dice"]) if r["dice"] else None
        if dice is None or dice[0] == dice[1]:
            assert same(Position.from_json(r["position"]), dice) == r["count"], r["id"]
            met += 1
    assert met >= 100, met


def test_a_cascade_too_large_to_list_is_refused_not_walked_to_the_end(monkeypatch):
    """A cascade whose walk would outgrow the machine's memory is refused with
    ``too_many_plays`` (the protocol's code): here with the limits lowered to fit a
    cascade of the benchmark data (tens of thousands of plays); one of tens of millions
    of boards ran a 24 GB machine out of memory before."""
    import json
    from pathlib import Path

    from engine.cli.protocol import handle_line
    from engine.errors import TooManyPlaysError
    from engine.movegen import generate as movegen
    monkeypatch.setenv("NARDY_THREADS", "2")
    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascades.jsonl"
    r = next(r for r in map(json.loads, data.read_text().splitlines())
             if 20_000 <= r["count"] <= 70_000)
    pos, dice = Position.from_json(r["position"]), tuple(r["dice"])
    monkeypatch.setattr(movegen, "MAX_PLAYS", r["count"] - 1)
    with pytest.raises(TooManyPlaysError, match=f"{r['count']:,} plays"):
        movegen.successor_arrays(pos, dice)
    assert not movegen._work          # the kept work arrays, maybe grown huge, let go
    monkeypatch.setattr(movegen, "MAX_PLAYS", r["count"])
    assert len(movegen.successor_arrays(pos, dice)) == r["count"]
    monkeypatch.setattr(movegen, "MAX_LAYER_BOARDS", 1000)
    reply = handle_line(json.dumps({"id": 1, "cmd": "moves", "position": r["position"],
                                    "dice": r["dice"]}))
    assert reply["error"]["code"] == "too_many_plays", reply
    assert "boards" in reply["error"]["message"]


def test_cascade_layers_do_not_depend_on_the_chunks():
    """The cascade walk expands its parents in chunks and merges the chunks' sorted
    runs: with chunks of 1, 5 and 64 boards (a layer merged from up to thousands of
    runs, in odd and even numbers of rounds, arrays grown from a few words) every layer
    is the same as with the default, on cascades of benchmarks/data."""
    import json
    from pathlib import Path
    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascades.jsonl"
    records = [json.loads(line) for line in data.read_text().splitlines()]
    picked = [r for r in records if 2_000 <= r["count"] <= 12_000][:3]
    assert picked
    for r in picked:
        want, want_over = _cascade_layers(r["position"], r["dice"])
        assert max(len(a) for a in want) > 1_000
        for chunk in (1, 5, 64):
            got, got_over = _cascade_layers(r["position"], r["dice"], chunk)
            assert len(got) == len(want)
            for a, b in zip(got, want):
                assert np.array_equal(a, b), chunk
            assert np.array_equal(got_over, want_over)


@pytest.mark.parametrize("variant,options", [("gul_bara", {}), ("long_nardy", {}),
                                             ("fevga", {}),
                                             ("fevga", dict(block=BLOCK_QUARTER))])
def test_block_masks_agree_with_the_six_block_rule(variant, options):
    """The cascade walk's end check (:func:`engine.movegen._core._block_masks`, my occupied
    points against masks made once a turn) gives the verdict of the six-block rule as
    the other walks check it, on random boards against positions of random play."""
    from engine.movegen import _core as core
    from engine.rules._layout import ME
    rules = get_rules(variant, **options)
    t = rules.table()
    rng = np.random.default_rng(5)
    broken = 0
    for pos, _ in random_positions(variant, rules, rng, games=4, per_game=10):
        s = pos.to_array()
        masks = core._block_masks(s, t)
        for _ in range(200):
            mine = np.zeros_like(s)
            held = rng.random(24) < rng.uniform(0.2, 0.8)
            mine[ME + 1:ME + 25] = held
            occupied = int(held.astype(np.int64) @ (1 << np.arange(1, 25)))
            by_masks = not any(occupied & int(m) == int(m) for m in masks)
            assert by_masks == core._block_legal(mine, s, t), (pos, held)
            broken += not by_masks
    assert broken > 50


def _cascade_layers(position_json, dice, chunk=0):
    """The cascade walk's layers (the words, bounds included) and the sorted plays
    that ended the game, from the gul bara position and cascade roll; ``chunk``: the
    parents expanded together (0: the default)."""
    from engine.movegen import _core as core
    t = get_rules("gul_bara").table()
    state = Position.from_json(position_json).to_array()
    _, seq, total, _, _, head_limit = core.cascade_plan(state, dice[0], dice[1], t)
    cur, step, free = core.cascade_start(state, t, head_limit)
    if chunk:
        step[core._X_CHUNK] = chunk
    n, over, nover = 1, np.empty(1, np.int64), 0
    kids, tmp = np.empty(1, np.int64), np.empty(1, np.int64)
    found = []
    for k in range(total):
        core.cascade_step(step, seq, total, k, free)
        kids, n, over, nover, tmp = core.cascade_layer(cur, 0, n, step, kids, over,
                                                       nover, tmp)
        found.append(kids[:n].copy())
        cur, kids = kids, cur
    return found, np.sort(over[:nover])


def _cascade_digest(position_json, dice):
    """SHA-256 of :func:`_cascade_layers`."""
    import hashlib
    layers, over = _cascade_layers(position_json, dice)
    h = hashlib.sha256()
    for a in layers + [over]:
        h.update(a.tobytes())
    return h.hexdigest()


def test_board_decodes_agree():
    """The cascade walk's two decodes of a 40-bit board (a loop over its runs of 1s;
    BMI2's pext/pdep where the CPU has them fast) give the occupied slots and where
    every slot begins as counted out in Python, on random boards of 15 checkers."""
    from engine.movegen import _core as core
    from engine.movegen._bits import FAST_BMI2
    rng = np.random.default_rng(11)
    start, me = np.zeros(25, np.int64), np.zeros(25, np.int64)
    for _ in range(2_000):
        counts = np.bincount(rng.integers(0, 25, 15) if rng.random() < 0.5
                             else rng.choice([0, 3, 7, 24], 15), minlength=25)
        board = np.int64(core._cb_encode(counts.astype(np.int64)))
        begins = np.concatenate([[0], np.cumsum(counts + 1)[:-1]])
        occupied = int(sum(1 << j for j in range(25) if counts[j]))
        assert core._cb_slots(board, start, me) == occupied
        for j in range(25):
            if counts[j]:
                assert start[j] == begins[j] and me[j] == counts[j]
            if occupied >> j:             # the loop needs an occupied slot above
                assert core._cb_start(occupied, start, j) == begins[j]
            if FAST_BMI2:
                assert core._cb_start_bmi2(board, occupied, start, j) == begins[j]
        if FAST_BMI2:
            assert core._cb_occupied_bmi2(board, start, me) == occupied


def test_cascade_walk_without_bmi2(tmp_path):
    """The cascade walk compiled without BMI2 (``NARDY_BMI2=0``, in a process with a
    numba cache of its own) makes the same layers as this process's walk, on a cascade
    whose layers reach tens of thousands of boards."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from engine.movegen._bits import FAST_BMI2
    if not FAST_BMI2:
        pytest.skip("this process's walk does not use BMI2 either")
    root = Path(__file__).resolve().parent.parent
    data = root / "benchmarks/data/gul_bara_cascades.jsonl"
    r = next(r for r in map(json.loads, data.read_text().splitlines())
             if 20_000 <= r["count"] <= 70_000)
    code = ("import json, sys; from test_movegen_reference import _cascade_digest; "
            "r = json.loads(sys.argv[1]); print(_cascade_digest(r['position'], r['dice']))")
    env = dict(os.environ, NARDY_BMI2="0", NUMBA_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([str(root), str(root / "tests")]))
    out = subprocess.run([sys.executable, "-c", code, json.dumps(r)], env=env,
                         capture_output=True, text=True, timeout=600, check=True)
    assert out.stdout.strip() == _cascade_digest(r["position"], r["dice"])
