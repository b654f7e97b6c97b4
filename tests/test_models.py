"""The shipped networks: one per game, loadable, with a card of measured strength, and
analysis through them for every game (the Python API and the protocol)."""

import json
from pathlib import Path

import pytest

from engine import Position
from engine.cli.protocol import handle_line
from engine.eval.evaluator import model_path
from engine.eval.network import Network
from engine.rules.variants import VARIANTS
from engine.search.nply import Search

# the search kernels take minutes to compile cold: every module that runs them
# stays on one test worker (--dist loadgroup), which compiles them once
pytestmark = pytest.mark.xdist_group("search")

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_game_ships_a_measured_model(variant):
    path = model_path(variant)
    assert path == ROOT / "models" / f"{variant}.npz"
    net = Network.load(path)
    assert net.variant == variant
    card = json.loads(path.with_suffix(".json").read_text())
    info = card["info"]
    assert card["variant"] == variant
    if info.get("method", "").startswith("supervised"):   # trained on labelled positions,
        assert info["positions"] > 0 and info["history"]  # from a network of self-play
        first = info["stages"][0]["card"]                 # (through the supervised stages
        while True:                                       # before it, and a transfer from
            method = first.get("method", "")              # another game's network)
            if method.startswith("supervised"):
                first = first["stages"][0]["card"]
            elif method.startswith("transfer"):
                first = first["transferred_from"]["card"]
            else:
                break
        assert first["trained_games"] > 0
    else:
        assert info["trained_games"] > 0
    measured = {m["opponent"]: m for m in card["info"]["strength_0ply"]}
    assert measured["random"]["games"] >= 2000
    assert measured["random"]["ppg"] > 0          # a trained network beats random play
    if variant not in ("backgammon",):
        assert measured["heuristic"]["games"] >= 5000


@pytest.mark.parametrize("variant", ["backgammon", "portes"])
def test_backgammon_and_portes_ship_their_pruning_networks(variant):
    path = model_path(variant, "prune")
    assert path == ROOT / "models" / f"{variant}.prune.npz"
    prune = Network.load(path)
    assert prune.variant == variant
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["info"]["role"].startswith("pruning network")
    search = Search.load(variant)
    assert search.evaluator.prune is not None
    assert search.evaluator.prune.sizes == prune.sizes != search.evaluator.network.sizes
    # a model given by path searches without it unless asked
    assert Search.load(variant, model_path(variant)).evaluator.prune is None


def test_backgammon_ships_its_race_network():
    path = model_path("backgammon", "race")
    assert path == ROOT / "models" / "backgammon.race.npz"
    race = Network.load(path)
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["info"]["role"].startswith("race network") and card["info"]["train_commands"]
    ev = Search.load("backgammon").evaluator
    # it reads the network's inputs, with zero weights on those it lacks
    assert ev.race is not None and ev.race.hidden == race.hidden
    # the races go to it, the rest to the network, home races to the tables
    in_race = Position.from_literal("x 9:1 6:4 5:4 4:3 3:3; o 8:2 6:4 5:4 4:3 2:2")
    contact = Position.start("backgammon")
    assert ev.probabilities([in_race])[0] == pytest.approx(race.probabilities([in_race])[0],
                                                           abs=1e-6)
    assert ev.probabilities([contact])[0] == pytest.approx(
        ev.network.probabilities([contact])[0], abs=1e-6)
    # a model given by path, or race=False, goes without it
    assert Search.load("backgammon", model_path("backgammon")).evaluator.race is None


def _start_roll(variant):
    pos = Position.start(variant)
    return pos, (6, 4)


@pytest.mark.parametrize("variant", VARIANTS)
def test_analysis_of_every_game(variant):
    search = Search.load(variant)
    pos, dice = _start_roll(variant)
    a0 = search.analyse(pos, dice, ply=0)
    a1 = search.analyse(pos, dice, ply=1)
    assert a0.candidates and len(a0.candidates) == len(a1.candidates)
    assert all(c.ply == 1 for c in a1.candidates[:1])
    eq = [c.equity for c in a0.candidates]
    assert eq == sorted(eq, reverse=True)
    reply = json.loads(json.dumps(handle_line(json.dumps(
        {"id": 1, "cmd": "best", "position": pos.to_json(), "dice": list(dice), "ply": 1}))))
    assert "error" not in reply, reply
    assert reply["move"] == a1.best.move


def test_gul_bara_pending_segment_is_analysed():
    pos = Position.from_json({
        "variant": "gul_bara", "me": [5, 0, 3] + [0] * 14 + [1, 0, 0, 0, 0, 0, 6],
        "them": [11, 1, 1, 1, 0, 0, 0, 0, 0, 1] + [0] * 14, "turns": [23, 24],
        "pending": [4, 5, 5, 5, 5, 6, 6, 6, 6]})
    a = Search.load("gul_bara").analyse(pos, None, ply=1)
    assert a.best.position.pending == () and a.best.position.turns == (23, 24)
    reply = handle_line(json.dumps({"cmd": "evaluate", "position": pos.to_json(), "ply": 1}))
    assert "error" not in reply
    assert reply["equity"] == pytest.approx(Search.load("gul_bara").evaluate(pos, 1).equity,
                                            abs=1e-6)
