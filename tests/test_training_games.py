"""Training for every game: exact terminal values and the kernels on each game's rules."""

import numpy as np
import pytest

from engine.eval.heuristic import weights as heuristic_weights
from engine.eval.network import Network
from engine.movegen._core import new_scratch
from engine.rules.position import Position
from engine.rules.scoring import result, result_probs, score_table
from engine.rules.variants import VARIANTS, get_rules
from training import td


def probs(pos, rules=None):
    rules = rules or get_rules(pos.variant)
    o = np.full(5, -1.0, np.float32)
    over = result_probs(pos.to_array(), score_table(rules), o)
    return over, o.tolist()


@pytest.mark.parametrize("literal, variant, options, expect", [
    # the side to move lost: O bore off all 15
    ("x 20:1 6:14; o off:15", "backgammon", {}, [0, 0, 0, 1, 1]),
    ("x 20:1 6:14; o off:15", "portes", {}, [0, 0, 0, 1, 0]),
    ("x 6:14 off:1; o off:15", "backgammon", {}, [0, 0, 0, 0, 0]),
    ("x 24:15; o off:15", "fevga", {}, [0, 0, 0, 1, 0]),
    ("x 24:15; o off:15", "long_nardy", {}, [0, 0, 0, 1, 0]),
    ("x 24:15; o off:15", "long_nardy", {"koks": True}, [0, 0, 0, 1, 1]),
    ("x 24:15; o off:15", "gul_bara", {"koks": True}, [0, 0, 0, 1, 1]),
    # plakoto: X's mother pinned (O's checker on O's 1 = X's 24) is 2 for O
    ("x 24:1 6:14 pin:24; o 1:1 6:14", "plakoto", {}, [0, 0, 0, 1, 0]),
    # ... and O's mother pinned by X: X, the side to move, has won 2
    ("x 1:1 6:14; o 24:1 6:14 pin:24", "plakoto", {}, [1, 1, 0, 0, 0]),
    # the side to move bore off all 15 (a gul bara pending segment can end the game)
    ("x off:15; o 24:15", "gul_bara", {}, [1, 1, 0, 0, 0]),
    ("x off:15; o 24:14 off:1", "gul_bara", {}, [1, 0, 0, 0, 0]),
])
def test_result_probs_per_game(literal, variant, options, expect):
    pos = Position.from_literal(literal, variant)
    rules = get_rules(variant, **options)
    over, o = probs(pos, rules)
    assert over and o == expect
    pts = result(pos, rules).points
    assert pts == 1 + o[1] + o[2] + o[3] + o[4]


def test_result_probs_of_a_game_going_on_and_a_draw():
    over, _ = probs(Position.start("plakoto"))
    assert not over
    draw = Position.from_literal("x 24:1 1:1 6:13 pin:24; o 24:1 1:1 6:13 pin:24", "plakoto")
    over, o = probs(draw, get_rules("plakoto", mother=2))
    assert over and o == [0.5, 0, 0, 0, 0]


def test_score_arg_accepts_the_old_triple_flag():
    for variant in VARIANTS:
        rules = get_rules(variant)
        old = td.score_arg(rules.backgammon_triple, rules.table())
        np.testing.assert_array_equal(old, score_table(rules))
    with pytest.raises(TypeError):
        td.score_arg("yes", get_rules("plakoto").table())


def _args(variant, net):
    rules = get_rules(variant)
    return (Position.start(variant).to_array(), rules.table(), new_scratch(),
            score_table(rules), rules.opening_rolls_both, *net.arrays(),
            *net.encoder_arrays())


# one worker for all four: the three nardy games share one compiled self-play kernel,
# which two workers starting at once would both compile
@pytest.mark.xdist_group("training_games")
@pytest.mark.parametrize("variant", ["portes", "plakoto", "fevga", "long_nardy"])
def test_selfplay_and_evaluation_run_on_every_game(variant):
    rules = get_rules(variant)
    net = Network.create(variant, 8, rng=np.random.default_rng(0))
    stats = np.zeros((1, td.N_STATS), np.int64)
    n = td.selfplay_games(*_args(variant, net), np.array([0.1, 0.01, 1e5, 0.7, 0.0]), 3000,
                          10, np.array([3], np.uint64), np.zeros(1, np.int64), 0,
                          np.zeros(4, np.int64), stats)
    assert n == 10 and stats[0, td.ST_GAMES] == 10 and stats[0, td.ST_ABANDONED] == 0
    assert stats[0, td.ST_BACKGAMMONS] == 0          # no game here scores 3
    for opp in (td.OPP_RANDOM, td.OPP_HEURISTIC):
        pts = np.zeros(10, np.int64)
        td.evaluate_games(*_args(variant, net), opp, np.zeros((2, 122), np.float32), 3000,
                          10, np.array([4], np.uint64), pts, hw=heuristic_weights(rules))
        assert set(np.abs(pts)) <= {1, 2}
    with pytest.raises(ValueError, match="heuristic weights"):
        td.evaluate_games(*_args(variant, net), td.OPP_HEURISTIC, None, 3000, 1,
                          np.array([4], np.uint64), np.zeros(1, np.int64))
