"""Canonical keys of many states at once agree with :meth:`Position.key`, byte for byte,
in order and in their digest (the protocol's ``successors_sha256``)."""

import hashlib
import json

import numpy as np
import pytest

from engine import Position
from engine.movegen.generate import successor_arrays
from engine.movegen.keys import key_bytes, key_order, keys_sha256
from engine.rules import _layout as L
from engine.rules.variants import VARIANTS


def _check(rows, variant):
    keys = [Position.from_array(row, variant).key() for row in rows]
    want = sorted(range(len(keys)), key=lambda i: keys[i])
    order = key_order(rows)
    assert list(order) == want
    assert key_bytes(rows, variant).decode() == "".join(k + "\n" for k in keys)
    digest = hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()
    assert keys_sha256(rows, variant) == digest
    assert keys_sha256(rows, variant, order) == digest


@pytest.mark.parametrize("variant", VARIANTS)
def test_successors_of_perft_records(perft, variant):
    """The successors of the perft records (pins, pending dice, the bar, game ends),
    and the records' digest itself."""
    for r in perft(variant)[:150]:
        pos = Position.from_json(r["position"])
        dice = tuple(r["dice"]) if r["dice"] is not None else None
        rows = successor_arrays(pos, dice)
        _check(rows, variant)
        assert keys_sha256(rows, variant) == r["successors_sha256"]


def test_rows_that_differ_everywhere():
    """Rows of positions from many turns of a game (every field varies, numbers of
    one to three digits, lists of different lengths, pins of both sides)."""
    rng = np.random.default_rng(5)
    for variant in ("plakoto", "gul_bara", "backgammon"):
        rows = []
        for _ in range(30):
            pos = Position.start(variant)
            for _ in range(rng.integers(1, 60)):
                if pos.is_over():
                    break
                dice = None if pos.pending else tuple(int(d) for d in rng.integers(1, 7, 2))
                succ = successor_arrays(pos, dice, play=True)
                pos = Position.from_array(succ[rng.integers(len(succ))], variant)
            row = pos.to_array()
            row[L.TURNS_ME] = rng.choice([0, 7, 10, 99, 100, 250, 12345])   # turns: digits differ
            rows.append(row)
        rows = np.array(rows + rows[:5])                        # and some repeats
        _check(rows, variant)


def test_small_inputs():
    rows = successor_arrays(Position.start("backgammon"), (6, 5))[:1]
    _check(rows, "backgammon")
    assert list(key_order(rows[:0])) == []
    assert keys_sha256(rows[:0], "backgammon") == hashlib.sha256(b"").hexdigest()


def test_a_cascade_of_thousands_of_plays():
    """Past a few thousand rows the order comes from the radix sort."""
    from pathlib import Path
    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascade_tail.jsonl"
    record = next(r for r in map(json.loads, data.read_text().splitlines())
                  if 4096 < r["count"] < 20000)
    rows = successor_arrays(Position.from_json(record["position"]), tuple(record["dice"]))
    assert len(rows) == record["count"]
    _check(rows, "gul_bara")


def test_threads_give_the_same_order_bytes_and_digest(monkeypatch):
    """Large sets rank their rows and write their keys on threads: the same results
    (here with the thresholds lowered so that a cascade of thousands takes that path,
    its keys in many small blocks)."""
    from pathlib import Path

    from engine.movegen import keys
    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascade_tail.jsonl"
    record = next(r for r in map(json.loads, data.read_text().splitlines())
                  if 4096 < r["count"] < 20000)
    rows = successor_arrays(Position.from_json(record["position"]), tuple(record["dice"]))
    order = key_order(rows)
    text = key_bytes(rows, "gul_bara", order)
    digest = keys_sha256(rows, "gul_bara", order)
    monkeypatch.setattr(keys, "PARALLEL_ROWS", 1000)
    monkeypatch.setattr(keys, "_BLOCK", 300)
    for threads in (2, 3):
        assert keys._row_ranges(len(rows), threads)[-1].stop == len(rows)
        assert list(key_order(rows, threads)) == list(order)
        assert key_bytes(rows, "gul_bara", order, threads) == text
        assert keys_sha256(rows, "gul_bara", None, threads) == digest
