"""The one numba game loop (engine/play/loop.py): what it records for learning, that every
driver reaches it with one compiled signature per walk marker, and that no other game
loop remains."""

import re
from pathlib import Path

import numpy as np
import pytest

from engine.eval.network import Network
from engine.eval.pubeval import _is_race
from engine.movegen._core import AnyWalk, DirectWalk, new_scratch
from engine.play import loop
from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.scoring import score_table
from engine.rules.variants import get_rules

ROOT = Path(__file__).resolve().parent.parent


def _selfplay_game(variant, net, seed, epsilon, race=None):
    """One recorded network-against-itself game: (its row, rec, rec_meta, rec_vals);
    ``race``: both sides' race network."""
    rules = get_rules(variant)
    games = loop.new_games(1)
    rows = 2 * 3000 + 1
    rec = np.zeros((rows, L.STATE_LEN), np.int16)
    rec_meta = np.zeros((rows, loop.N_META), np.int64)
    rec_vals = np.zeros((rows, 5), np.float32)
    nrec = loop.play_games(*loop.game_args(
        Position.start(variant).to_array(), rules.table(), score_table(rules),
        rules.opening_rolls_both, [loop.KIND_NETWORK, loop.KIND_NETWORK], net, net,
        games=games, st=np.array([seed], np.uint64), epsilon=epsilon, max_turns=3000,
        rec=rec, rec_meta=rec_meta, rec_vals=rec_vals, rec_games=1, check=True,
        race_a=race, race_b=race))
    return games[0], rec[:nrec], rec_meta[:nrec], rec_vals[:nrec]


@pytest.mark.parametrize("variant, epsilon", [("backgammon", 0.0), ("backgammon", 0.5),
                                              ("gul_bara", 0.0)])
def test_recording_holds_what_learning_needs(variant, epsilon):
    """Each state played from, its roll and mover, and the network's rating of the
    successor played (greedy, or explored at random with probability epsilon)."""
    net = Network.create(variant, 8, rng=np.random.default_rng(5), scale=0.3)
    game, rec, meta, vals = _selfplay_game(variant, net, 11, epsilon)
    steps = int(game[loop.G_STEPS])
    assert game[loop.G_ERROR] == 0 and game[loop.G_WINNER] in (0, 1, loop.WINNER_DRAW)
    assert len(rec) == steps + 1 and meta[-1, loop.R_D1] == -1
    assert meta[0, loop.R_MOVER] == game[loop.G_STARTER]
    np.testing.assert_array_equal(rec[0], Position.start(variant).to_array())
    segments = meta[:steps, loop.R_D1] == 0
    assert game[loop.G_PENDING] == segments.sum()
    assert game[loop.G_TURNS] == steps - segments.sum()
    if variant == "gul_bara":
        assert segments.any()
    # a roll hands the move to the other player, a pending segment does not
    flips = meta[1:, loop.R_MOVER] != meta[:-1, loop.R_MOVER]
    np.testing.assert_array_equal(flips, ~segments)
    # the rating of the successor played, for its side to move
    np.testing.assert_allclose(vals[:steps], net.probabilities_of_arrays(rec[1:]),
                               rtol=1e-4, atol=1e-5)
    if epsilon:     # exploration plays other successors than the greedy choice
        _, greedy, _, _ = _selfplay_game(variant, net, 11, 0.0)
        assert not np.array_equal(greedy[:10], rec[:10])


def test_race_networks_rate_the_races_they_play():
    """With a race network, each recorded rating is by the network of the position
    played from: the race network in a race (forced and explored plays too), the
    network in contact."""
    net = Network.load("models/backgammon.npz")
    race = Network.load("models/backgammon.race.npz")
    game, rec, meta, vals = _selfplay_game("backgammon", net, 5, 0.3, race)
    steps = int(game[loop.G_STEPS])
    raced = np.array([bool(_is_race(s)) for s in rec[:steps]])
    assert raced.any() and not raced.all()
    assert (meta[:steps, loop.R_COUNT][raced] == 1).any()          # a forced race play
    want = np.where(raced[:, None], race.probabilities_of_arrays(rec[1:]),
                    net.probabilities_of_arrays(rec[1:]))
    np.testing.assert_allclose(vals[:steps], want, rtol=1e-4, atol=1e-5)


def test_every_driver_shares_one_compiled_loop():
    """The playouts, duels, the heuristic's games, self-play and the strength figure
    all reach the loop with the same argument types: one compiled signature per walk
    marker (backgammon's direct walk, fevga's whole generator), at most one more of
    each than the process had (other tests may have compiled one for another kind of
    feature inputs, which is a type of its own)."""
    from engine.eval.heuristic import weights as heuristic_weights
    before = set(loop.play_games.signatures)
    from engine.play.duel import duel, heuristic_duel
    from engine.play.game import playouts
    from training import td
    net = Network.create("backgammon", 8, rng=np.random.default_rng(1))
    playouts("backgammon", 2, np.random.default_rng(0), record_games=1)
    duel("pubeval", "random", 2, seed=1)
    duel(net, "heuristic", 2, seed=1)
    heuristic_duel("fevga", 2, np.random.default_rng(0))
    rules = get_rules("backgammon")
    args = (Position.start().to_array(), rules.table(), new_scratch(), score_table(rules),
            rules.opening_rolls_both, *net.arrays(), *net.encoder_arrays())
    td.selfplay_games(*args, np.array([0.1, 0.01, 1e5, 0.7, 0.1]), 3000, 1,
                      np.ones(1, np.uint64), np.zeros(1, np.int64), 0, np.zeros(4, np.int64),
                      np.zeros((1, td.N_STATS), np.int64))
    td.evaluate_games(*args, td.OPP_HEURISTIC, np.zeros((2, 122), np.float32), 3000, 2,
                      np.ones(1, np.uint64), np.zeros(2, np.int64),
                      hw=heuristic_weights(rules))
    added = set(loop.play_games.signatures) - before
    walks = [sig[2] for sig in added]
    assert len(walks) == len(set(walks)) <= 2 and loop.play_games.signatures, added


def test_no_other_game_loop_calls_the_move_generator():
    """In play/, the heuristic and training only the loop kernel generates turns."""
    files = [*(ROOT / "engine" / "play").glob("*.py"), ROOT / "engine" / "eval" / "heuristic.py",
             *(ROOT / "training").glob("*.py")]
    callers = sorted(str(f.relative_to(ROOT)) for f in files
                     if re.search(r"\bgenerate_turn\(|\b_walk_direct\(|\bturn\(\s*[\w.]*walk\b",
                                  f.read_text()))
    assert callers == ["engine/play/loop.py"]


def test_arguments_keep_the_types_the_helpers_get_elsewhere():
    """The move generator, the network, PubEval and the heuristic are compiled once for
    the types their other callers pass (a read-only twin of a rules table would compile
    the whole move generator a second time)."""
    from numba import typeof

    from engine.eval.heuristic import weights as heuristic_weights
    from engine.eval.pubeval import weights as pubeval_weights
    rules = get_rules("backgammon")
    net = Network.create("backgammon", 8)
    args = loop.game_args(Position.start().to_array(), rules.table(), score_table(rules),
                          False, [loop.KIND_NETWORK, loop.KIND_HEURISTIC], net,
                          games=loop.new_games(1), st=np.ones(1, np.uint64),
                          pw=np.zeros((2, 122), np.float32), hw=heuristic_weights(rules))
    table, walk, sc, net_a, race_a = args[1], args[2], args[3], args[6], args[8]
    pw, hw = args[11], args[12]
    assert race_a is net_a and not args[10].any()     # no race network: its own plays races
    # backgammon's loop compiles the direct walk alone; a nardy game's the whole generator
    assert isinstance(walk, DirectWalk)
    assert isinstance(loop.game_args(Position.start("plakoto").to_array(),
                                     get_rules("plakoto").table(), score_table(rules), False,
                                     [loop.KIND_RANDOM] * 2, games=loop.new_games(1),
                                     st=np.ones(1, np.uint64))[2], AnyWalk)
    assert typeof(table) == typeof(rules.table()) and typeof(sc) == typeof(score_table(rules))
    assert typeof(pw) == typeof(pubeval_weights())
    assert typeof(hw) == typeof(heuristic_weights(rules))
    assert [typeof(a) for a in net_a] == [typeof(a) for a in (*net.arrays(),
                                                              *net.encoder_arrays())]
    assert net_a[0] is net.w1t          # the same weights: in-place learning is seen
