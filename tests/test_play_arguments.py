"""Bad arguments to the play and hand-written evaluator APIs raise the project's typed
errors naming the argument, at the entry point (not an IndexError, a numba TypingError
or a silently wrong result from inside)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.cube.met import MatchError
from engine.errors import NardyError, PositionError, VariantError
from engine.eval import heuristic as H, pubeval as P
from engine.eval.heuristic import HeuristicError, HeuristicPlayer
from engine.play import duel as D, match as M
from engine.play.game import GameError, play_game
from engine.play.players import GreedyPlayer, PlayerError, PubEvalPlayer, RandomPlayer
from engine.rules.position import Position
from engine.rules.variants import get_rules

S = Position.start("backgammon")
PK = Position.start("plakoto")


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def randoms(seed: int = 0) -> list:
    return [RandomPlayer(rng(seed)), RandomPlayer(rng(seed + 1))]


def test_heuristic_weights_game_and_position_are_checked():
    for w in ([1, 2], [], np.zeros((15, 2)), [np.nan] * 15, ["a"] * 15):
        with pytest.raises(HeuristicError, match="w = "):
            H.value(S, w=w)
    with pytest.raises(HeuristicError, match="w = "):
        HeuristicPlayer("backgammon", w=[])
    with pytest.raises(VariantError, match="rules"):
        H.value(S, rules=get_rules("plakoto"))
    with pytest.raises(PositionError, match=r"positions\[1\]"):
        H.values([S, PK])
    with pytest.raises(PositionError, match="me"):
        H.value(Position("backgammon", (9999,) + (0,) * 23, S.them))
    with pytest.raises(GameError, match="player_a"):
        play_game(HeuristicPlayer("backgammon"), RandomPlayer(rng()), rng(1), "plakoto")
    with pytest.raises(D.DuelError, match="player A"):
        D.duel_players(HeuristicPlayer("backgammon"), RandomPlayer(rng()), 2, 1, "plakoto")


def test_pubeval_position_race_and_successors_are_checked():
    with pytest.raises(PositionError, match="me"):
        P.pubeval(Position("backgammon", (40,) + (0,) * 23, S.them))
    with pytest.raises(PositionError, match=r"successors\[0\]"):
        P.score_successors(S, [PK])
    with pytest.raises(NardyError, match="race"):
        P.pubeval(S, race="no")
    with pytest.raises(PlayerError, match="successors"):
        PubEvalPlayer().choose(S, (3, 1), [])


@pytest.mark.parametrize("bad", [0, -1, 1.5, None, "x", 10**30])
def test_duel_max_turns(bad):
    with pytest.raises(D.DuelError, match="max_turns"):
        D.duel("random", "random", 2, 1, max_turns=bad)


def test_duel_games_first_pair_and_heuristic_duel():
    for bad in (-1, 1.5, None):
        with pytest.raises(D.DuelError, match="first_pair"):
            D.duel("random", "random", 2, 1, first_pair=bad)
    with pytest.raises(D.DuelError, match="n_games"):
        D.duel("random", "random", 10**30, 1)
    for bad in (0, -1, 2.5):
        with pytest.raises(D.DuelError, match="n_games"):
            D.heuristic_duel("backgammon", bad, rng())
    with pytest.raises(D.DuelError, match="max_turns"):
        D.heuristic_duel("backgammon", 2, rng(), max_turns=0)


def test_cube_game_arguments():
    cp = [M.NoCube(), M.NoCube()]
    for bad in (3, 0, -1, 1, 2.5, "x", 1 << 31):
        with pytest.raises(MatchError, match="max_cube"):
            M.play_cube_game(randoms(), rng(), cube_policies=cp, max_cube=bad)
    with pytest.raises(MatchError, match="starter"):
        M.play_cube_game(randoms(), rng(), starter=0.0)
    for bad in ((1, 2, 3), None):
        with pytest.raises(MatchError, match="score"):
            M.play_cube_game(randoms(), rng(), cube_policies=cp, match_length=5, score=bad)
    for bad in ([M.NoCube()], [], [1, 2]):
        with pytest.raises(MatchError, match="cube_policies"):
            M.play_cube_game(randoms(), rng(), cube_policies=bad)
    with pytest.raises(MatchError, match="jacoby"):
        M.play_cube_game(randoms(), rng(), cube_policies=cp, jacoby=2)
    with pytest.raises(MatchError, match="beavers"):
        M.play_cube_game(randoms(), rng(), cube_policies=cp, beavers="y")
    with pytest.raises(MatchError, match="probability_fn"):
        M.DecisionCubePolicy(None)


def test_match_arguments():
    r = RandomPlayer(rng())
    for play in (lambda pl, **kw: M.play_match(1, pl, rng(), **kw),
                 lambda pl, **kw: M.play_tavli_match(1, pl, rng(), **kw)):
        for bad in ([r], None, [r, r, r]):
            with pytest.raises(MatchError, match="players"):
                play(bad)
        for bad in (0, None, 1.5):
            with pytest.raises(MatchError, match="max_games"):
                play([r, r], max_games=bad)
    with pytest.raises(MatchError, match="length"):
        M.play_match(10**30, [r, r], rng())
    for bad in ([], ["backgammon"], "portes"):
        with pytest.raises(MatchError, match="games"):
            M.play_tavli_match(1, [r, r], rng(), games=bad)


def test_game_players_and_generators():
    r = RandomPlayer(rng())
    for bad in (None, "random"):
        with pytest.raises(GameError, match="player_a"):
            play_game(bad, r, rng())
    for bad in (None, np.random.RandomState(0)):
        with pytest.raises(PlayerError, match="rng"):
            play_game(r, r, bad)
        with pytest.raises(PlayerError, match="rng"):
            RandomPlayer(bad)
    with pytest.raises(PlayerError, match="evaluator"):
        GreedyPlayer(None)


def test_valid_calls_still_work():
    assert H.values([S, S]).shape == (2,) and H.value(S, w=H.weights("backgammon")) == 0.0
    assert HeuristicPlayer("plakoto").choose(PK, (3, 1), [PK, PK]) == 0
    assert P.pubeval(S, race=np.bool_(False)) == P.pubeval(S, race=False)
    assert D.duel("random", "random", 2, 1, max_turns=np.int64(50),
                  first_pair=np.int64(3)).games == 2
    assert D.heuristic_duel("backgammon", 1, rng(), max_turns=100).shape == (1,)
    rec = M.play_cube_game(randoms(), rng(), cube_policies=[M.NoCube(), M.NoCube()],
                           max_cube=4, starter=np.int64(1), match_length=5, score=[1, 2])
    assert rec.winner in (0, 1)
    assert M.play_match(1, randoms(), rng()).winner in (0, 1)
    assert M.play_tavli_match(1, randoms(), rng(), games=["fevga"]).winner in (0, 1)
    assert play_game(HeuristicPlayer("plakoto"), RandomPlayer(rng()), rng(), "plakoto").turns
