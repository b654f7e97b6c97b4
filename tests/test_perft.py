"""Move generation agrees with every record of ``tests/data/perft`` (all six games):
the count and the SHA-256 of the sorted canonical keys of each roll's successors, as
the golden move lists give them (GNU Backgammon's for backgammon, an independent
reference generator's for the other games)."""

import json
import os
from pathlib import Path

import pytest
from conftest import DATA

from engine import Position, successors
from engine.movegen.generate import successor_arrays
from engine.movegen.keys import keys_sha256
from engine.rules.variants import VARIANTS


def _dice(rec):
    return tuple(rec["dice"]) if rec["dice"] is not None else None


@pytest.mark.parametrize("variant", VARIANTS)
def test_perft(perft, variant):
    records = perft(variant)
    assert len(records) > 600
    wrong = []
    for r in records:
        rows = successor_arrays(Position.from_json(r["position"]), _dice(r))
        assert len({row.tobytes() for row in rows}) == len(rows), f"{r['id']}: duplicates"
        if len(rows) != r["count"] or keys_sha256(rows, variant) != r["successors_sha256"]:
            wrong.append((r["id"], r["tags"], len(rows), r["count"]))
    assert not wrong, f"{len(wrong)} of {len(records)} records disagree, e.g. {wrong[:5]}"


def test_opening_counts():
    data = json.loads((DATA / "backgammon_opening_counts.json").read_text())
    start = Position.start("backgammon")
    assert len(data["non_doubles"]) == 15 and len(data["doubles"]) == 6
    for group in ("non_doubles", "doubles"):
        for roll, count in data[group].items():
            d1, d2 = map(int, roll.split("-"))
            assert len(successors(start, (d1, d2))) == count, roll


@pytest.mark.parametrize("variant", VARIANTS)
def test_play_successors_are_legal(perft, variant):
    """What players choose from (``play=True``) is every legal play for turns of up to
    four steps, and a non-empty subset of them for gul bara's long turns (sampled)."""
    sampled = 0
    for r in perft(variant):
        pos = Position.from_json(r["position"])
        exact = {a.tobytes() for a in successor_arrays(pos, _dice(r))}
        play = {a.tobytes() for a in successor_arrays(pos, _dice(r), play=True)}
        assert play and play <= exact, r["id"]
        if play != exact:
            assert "cascade" in r["tags"] or "pending" in r["tags"], r["id"]
            sampled += 1
    if variant == "gul_bara":
        assert sampled > 0          # the set has cascades large enough to sample


GOLDEN = os.environ.get("NARDY_GOLDEN")
"""A folder of the full golden move lists (``<variant>_movegen.jsonl``), if at hand."""


@pytest.mark.skipif(not GOLDEN, reason="NARDY_GOLDEN (the folder of the full golden move "
                                       "lists) is not set; tests/data/perft stands in")
def test_perft_files_are_the_golden_files():
    """tests/data is what ``tests/data/make_perft.py`` writes from the golden files."""
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "make_perft.py"
        script.write_text((DATA / "make_perft.py").read_text())
        subprocess.run([sys.executable, str(script), GOLDEN], check=True,
                       capture_output=True)
        for variant in VARIANTS:
            made = (Path(tmp) / "perft" / f"{variant}.jsonl").read_text()
            assert made == (DATA / "perft" / f"{variant}.jsonl").read_text(), variant
        assert ((Path(tmp) / "backgammon_opening_counts.json").read_bytes()
                == (DATA / "backgammon_opening_counts.json").read_bytes())


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_plays_do_not_depend_on_the_output_arrays_size(perft, variant):
    """The kernels write a roll's plays into the caller's array and grow it when it is
    too small (the direct walk is then made again into one twice as large,
    ``engine.movegen._core._walk_direct``): the same plays in the same order from 0, 1
    or 5 rows as from 4,096."""
    import numpy as np

    from engine.movegen._core import generate_turn, new_scratch
    from engine.rules import _layout as L
    from engine.rules.variants import get_rules

    table = get_rules(variant).table()
    many = 0
    for r in perft(variant):
        d1, d2 = _dice(r) or (0, 0)
        state = Position.from_json(r["position"]).to_array()
        n, ref = generate_turn(state, d1, d2, table, new_scratch(),
                               np.empty((4096, L.STATE_LEN), np.int16), 0)
        for rows in (0, 1, 5):
            m, out = generate_turn(state, d1, d2, table, new_scratch(),
                                   np.empty((rows, L.STATE_LEN), np.int16), 0)
            assert m == n and np.array_equal(out[:m], ref[:n]), (r["id"], rows)
        many += n > 64
    assert many > 0
