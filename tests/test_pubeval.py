"""PubEval: the weights as published, the encoding checked against a plain transcription
of pubeval.c, two scores worked out by hand, and the player beating random play."""

import numpy as np
import pytest

from engine import Position, VariantError, successors
from engine.eval.pubeval import (
    CONTACT,
    NUM_INPUTS,
    RACE,
    _best_successor,
    board28,
    inputs,
    is_race,
    pubeval,
    score_successors,
    weights,
)
from engine.movegen.generate import successor_arrays
from engine.play.game import POLICY_PUBEVAL, POLICY_RANDOM, play_game, playouts
from engine.play.players import PubEvalPlayer, RandomPlayer

# ---------------------------------------------------------------- the C code, transcribed
# pubeval.c's setx() and pubeval(), statement for statement, in float32 like the C
# floats (x[] and the weights are float; (float)(n-3)/2.0 is computed in double and
# stored into the float x[]).
F = np.float32


def c_setx(pos):
    x = [F(0.0)] * 122
    for j in range(1, 25):
        jm1 = j - 1
        n = pos[25 - j]
        if n != 0:
            if n == -1:
                x[5 * jm1 + 0] = F(1.0)
            if n == 1:
                x[5 * jm1 + 1] = F(1.0)
            if n >= 2:
                x[5 * jm1 + 2] = F(1.0)
            if n == 3:
                x[5 * jm1 + 3] = F(1.0)
            if n >= 4:
                x[5 * jm1 + 4] = F(float(n - 3) / 2.0)
    x[120] = F(-float(pos[0]) / 2.0)
    x[121] = F(float(pos[26]) / 15.0)
    return x


def c_pubeval(race, pos):
    if pos[26] == 15:
        return F(99999999.0)
    x = c_setx(pos)
    w = weights()[RACE if race else CONTACT]
    score = F(0.0)
    for i in range(122):
        score = F(score + F(w[i] * x[i]))
    return score


def c_board(position):
    """pubeval.c's pos[] for ``position``'s side to move, written from its comment."""
    pos = [0] * 28
    for p in range(1, 25):
        pos[p] = position.me[p - 1]
    for q in range(1, 25):                 # opponent's point q is location 25 - q
        if position.them[q - 1]:
            pos[25 - q] = -position.them[q - 1]
    pos[0] = -position.bar[1]
    pos[25] = position.bar[0]
    pos[26] = position.off[0]
    pos[27] = -position.off[1]
    return pos


# ---------------------------------------------------------------- weights
def test_weights_are_tesauros():
    w = weights()
    assert w.shape == (2, NUM_INPUTS) and w.dtype == np.float32
    # first, the pre-bar and last entries of each set, as printed in pubeval.c
    assert w[CONTACT, 0] == F(0.25696) and w[CONTACT, 119] == F(-4.11520)
    assert w[CONTACT, 120] == F(5.62596) and w[CONTACT, 121] == F(-2.75800)
    assert w[RACE, 0] == F(0.0) and w[RACE, 119] == F(-12.32252)
    assert w[RACE, 120] == F(0.0) and w[RACE, 121] == F(3.42040)
    # the race set never rewards a lone opposing checker (x[5k] weights are all zero)
    assert not w[RACE, 0:120:5].any()
    assert not w.flags.writeable


# ---------------------------------------------------------------- by hand
def test_race_score_by_hand():
    # 15 on my point 1 (location 1 -> inputs 115..119): x[117] = 1, x[119] = (15-3)/2;
    # the opponent's 15 on its point 1 (my location 24, n = -15) give no input.
    p = Position.from_literal("x 1:15; o 1:15")
    assert is_race(p)
    w = weights()[RACE]
    assert pubeval(p) == pytest.approx(-7.26713 + 6 * -12.32252, abs=1e-4)
    assert pubeval(p) == pytest.approx(float(w[117] + 6 * w[119]), abs=1e-5)


def test_contact_score_by_hand():
    # me: a blot on 6 (location 6 -> j = 19, x[91]) and 14 on 1 (x[117] = 1,
    # x[119] = 5.5); the opponent: one on the bar (x[120] = 0.5), 14 on its point 1.
    p = Position.from_literal("x 6:1 1:14; o bar:1 1:14")
    assert not is_race(p)
    x = inputs(p)
    assert set(np.flatnonzero(x)) == {91, 117, 119, 120}
    assert (x[91], x[117], x[119], x[120]) == (1.0, 1.0, 5.5, 0.5)
    expected = -1.18223 + 0.10438 + 5.5 * -4.11520 + 0.5 * 5.62596
    assert pubeval(p, race=False) == pytest.approx(expected, abs=1e-4)


def test_all_off_is_best_possible():
    p = Position.from_literal("x off:15; o 1:15")
    assert pubeval(p) == F(99999999.0)


# ---------------------------------------------------------------- against the transcription
def sample_positions(n_games=4):
    batch = playouts("backgammon", n_games, np.random.default_rng(7), record_games=n_games)
    return [step.position for game in batch.trajectories for step in game]


def test_board_matches_the_c_comment():
    for p in sample_positions(2)[::7] + [Position.start()]:
        assert board28(p).tolist() == c_board(p)


@pytest.mark.parametrize("race", [False, True])
def test_scores_equal_the_c_transcription(race):
    positions = sample_positions() + [Position.start("portes")]
    assert len(positions) > 100
    for p in positions:
        assert np.array_equal(inputs(p), np.array(c_setx(c_board(p)), dtype=np.float32))
        assert pubeval(p, race) == float(c_pubeval(race, c_board(p))), p


def test_race_detection():
    assert not is_race(Position.start())
    assert is_race(Position.from_literal("x 6:5 5:5 4:5; o 6:5 5:5 4:5"))
    # my back checker on 12, theirs on its 12 = my 13: passed each other, a race
    assert is_race(Position.from_literal("x 12:1 1:14; o 12:1 1:14"))
    assert not is_race(Position.from_literal("x 13:1 1:14; o 13:1 1:14"))   # my 13 vs my 12
    assert not is_race(Position.from_literal("x bar:1 1:14; o 1:15"))


def test_unsupported_games_raise():
    with pytest.raises(VariantError, match="long_nardy"):
        pubeval(Position.start("long_nardy"))
    with pytest.raises(VariantError):
        playouts("plakoto", 1, np.random.default_rng(0), policies=(POLICY_PUBEVAL,
                                                                   POLICY_RANDOM))


# ---------------------------------------------------------------- the player
def test_player_and_kernel_choose_the_same_position():
    rng = np.random.default_rng(3)
    for p in sample_positions(2)[::3]:
        if p.is_over():
            continue
        dice = tuple(int(d) for d in rng.integers(1, 7, size=2))
        succ = successors(p, dice)
        if len(succ) < 2:
            continue
        scores = score_successors(p, succ)
        for s, v in zip(succ, scores):        # each successor flipped back to the mover
            assert v == F(pubeval(s.flip(), race=is_race(p)))
        chosen = succ[PubEvalPlayer().choose(p, dice, succ)]
        arrays = successor_arrays(p, dice)
        best = _best_successor(arrays, len(arrays), is_race(p), weights())
        kernel_choice = Position.from_array(arrays[best], p.variant)
        assert scores.max() == F(pubeval(kernel_choice.flip(), race=is_race(p)))
        # ties may pick different positions of equal score; without ties they agree
        if (scores == scores.max()).sum() == 1:
            assert chosen == kernel_choice


@pytest.mark.parametrize("variant", ["backgammon", "portes"])
def test_pubeval_beats_random(variant):
    rng = np.random.default_rng(11)
    a = playouts(variant, 200, rng, policies=(POLICY_PUBEVAL, POLICY_RANDOM))
    b = playouts(variant, 200, rng, policies=(POLICY_RANDOM, POLICY_PUBEVAL))
    assert not a.errors() and not b.errors()
    assert (a.winner == 0).mean() > 0.9
    assert (b.winner == 1).mean() > 0.9
    assert a.points[a.winner == 0].sum() > 5 * a.points[a.winner == 1].sum()


def test_pubeval_player_in_python_games():
    rng = np.random.default_rng(5)
    records = [play_game(PubEvalPlayer(), RandomPlayer(rng), rng) for _ in range(6)]
    assert sum(r.winner == 0 for r in records) >= 5
