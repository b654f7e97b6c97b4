"""Cubeful games and matches: doubles, takes, passes, the Jacoby rule, Crawford
bookkeeping, the nardy matches' starter rule and the tavli rotation."""

import numpy as np
import pytest

from engine.cube.decision import CubeState
from engine.cube.met import MatchError
from engine.play.match import (
    TAVLI_GAMES,
    DecisionCubePolicy,
    NoCube,
    crawford_game,
    play_cube_game,
    play_match,
    play_money_game,
    play_tavli_match,
)
from engine.play.players import RandomPlayer
from engine.rules.position import Position
from engine.rules.scoring import Kind


def randoms(seed):
    rng = np.random.default_rng(seed)
    return [RandomPlayer(rng), RandomPlayer(rng)]


class Scripted:
    """Doubles / takes as told, and records every state it was shown."""

    def __init__(self, double=False, take=True):
        self.d, self.t = double, take
        self.seen = []

    def double(self, position, state):
        self.seen.append(("double", state))
        return self.d

    def take(self, position, state):
        self.seen.append(("take", state))
        return self.t


# one checker left for the side to move; the opponent has borne off none
ENDGAME = Position.from_json({"variant": "backgammon", "me": [1] + [0] * 23,
                              "them": [0] * 11 + [15] + [0] * 12, "off": [14, 0]})


def test_pass_ends_the_game_at_the_cube_before_the_double():
    rng = np.random.default_rng(1)
    doubler, passer = Scripted(double=True), Scripted(take=False)
    rec = play_money_game(randoms(1), [doubler, passer], rng, starter=0)
    assert rec.passed and rec.winner == 0 and rec.points == 1 and rec.kind is None
    assert rec.doubles == ((0, 2, False),)


def test_take_turns_the_cube_and_ownership_alternates():
    rng = np.random.default_rng(2)
    a, b = Scripted(double=True), Scripted(double=True)
    rec = play_money_game(randoms(2), [a, b], rng, starter=0, max_cube=8)
    # A starts (no opening roll) and may not double before the game's first roll
    assert [d[:2] for d in rec.doubles] == [(1, 2), (0, 4), (1, 8)]
    assert rec.cube_value == 8 and rec.cube_owner == 0
    assert rec.points % 8 == 0
    # a double is offered only by the owner (or on a centred cube)
    for who, states in ((0, a.seen), (1, b.seen)):
        for kind, s in states:
            if kind == "double":
                assert s.owner in ("centre", "me")


def test_jacoby_counts_a_gammon_as_single_on_a_centred_cube():
    for jacoby, points in ((True, 1), (False, 2)):
        rec = play_money_game(randoms(3), [NoCube(), NoCube()], np.random.default_rng(3),
                              jacoby=jacoby, starter=0, start=ENDGAME)
        assert rec.winner == 0 and rec.kind == Kind.GAMMON and rec.points == points


def test_cubeless_loop_matches_play_game_scoring():
    rec = play_cube_game(randoms(4), np.random.default_rng(4), "portes")
    assert rec.cube_value == 1 and rec.points in (1, 2) and rec.winner in (0, 1)
    with pytest.raises(MatchError):
        play_cube_game(randoms(4), np.random.default_rng(4), "portes",
                       cube_policies=[NoCube(), NoCube()])


@pytest.mark.parametrize("take", [True, False])
def test_backgammon_match_with_crawford(take):
    """Both players double whenever they may. Taking, the first game's cube climbs
    until a gammon ends the match; passing, each double ends a game at one point, so
    someone reaches 4 and the Crawford game (no cube) must come, exactly once."""
    rng = np.random.default_rng(5)
    a, b = Scripted(double=True, take=take), Scripted(double=True, take=take)
    m = play_match(5, randoms(5), rng, cube_policies=[a, b])
    assert max(m.score) >= 5 and m.score[m.winner] == max(m.score)
    assert m.score[1 - m.winner] < 5
    totals = [0, 0]
    crawford_games = 0
    for g in m.games:
        assert tuple(totals) == g.score_before
        if g.crawford:
            crawford_games += 1
            assert 4 in g.score_before and g.record.doubles == ()
        totals[g.record.winner] += g.record.points
    assert tuple(totals) == m.score
    reached = any(4 in g.score_before for g in m.games)
    assert crawford_games == (1 if reached else 0)
    assert reached or take
    # post-Crawford: a player 1-away never doubles; states shown were consistent
    for kind, s in a.seen + b.seen:
        if kind == "double":
            assert not s.crawford and s.away[0] > s.value


def test_a_match_to_one_point_has_no_crawford_game():
    """Nobody reaches 0 away: a 1-point match's only game is not the Crawford game (it
    was flagged so, and with the cube the match stopped on an impossible Crawford
    state at 0-0)."""
    assert not crawford_game((0, 0), 1, False)
    assert crawford_game((0, 1), 2, False) and not crawford_game((1, 1), 2, False)
    rng = np.random.default_rng(1)
    m = play_match(1, randoms(1), rng, cube_policies=[Scripted(double=True),
                                                      Scripted(double=True)])
    assert len(m.games) == 1 and not m.games[0].crawford and max(m.score) >= 1


def test_decision_policy_plays_a_match():
    table = {"p": [0.5, 0.1, 0.0, 0.1, 0.0]}
    policy = DecisionCubePolicy(lambda pos, ply: np.array(table["p"]))
    m = play_match(3, randoms(6), np.random.default_rng(6), cube_policies=[policy, policy])
    assert m.score[m.winner] >= 3
    assert policy.decide(Position.start(), CubeState(1, "centre", 3, (2, 0), True)).action \
        == "no_double"


@pytest.mark.parametrize("variant", ["long_nardy", "gul_bara"])
def test_nardy_match_winner_starts_the_next_game(variant):
    m = play_match(3, randoms(7), np.random.default_rng(7), variant)
    assert m.score[m.winner] >= 3
    for prev, nxt in zip(m.games, m.games[1:]):
        assert nxt.record.starter == prev.record.winner
    assert all(not g.crawford for g in m.games)


def test_tavli_rotation_and_starter():
    m = play_tavli_match(5, randoms(8), np.random.default_rng(8))
    assert m.score[m.winner] >= 5 and m.score[1 - m.winner] < 5
    assert [g.variant for g in m.games] == [TAVLI_GAMES[k % 3] for k in range(len(m.games))]
    for prev, nxt in zip(m.games, m.games[1:]):
        assert nxt.record.starter == prev.record.winner
    assert sum(g.record.points_for(0) for g in m.games) == m.score[0] - m.score[1]


def test_bad_lengths():
    with pytest.raises(MatchError):
        play_match(0, randoms(9), np.random.default_rng(9))
    with pytest.raises(MatchError):
        play_tavli_match(True, randoms(9), np.random.default_rng(9))


class Beaverer(Scripted):
    """Takes every double and beavers it."""

    def beaver(self, position, state):
        self.seen.append(("beaver", state))
        return True


def test_a_beaver_doubles_the_cube_again_and_the_taker_keeps_it():
    doubler, taker = Scripted(double=True), Beaverer()
    rec = play_money_game(randoms(5), [doubler, taker], np.random.default_rng(5),
                          starter=0, beavers=True, max_cube=4)
    assert rec.doubles[:2] == ((0, 2, True), (1, 4, True))
    assert rec.cube_value == 4 and rec.cube_owner == 1 and rec.points % 4 == 0
    assert [k for k, _ in taker.seen].count("beaver") == 1
    # the cube at its limit after the take: the taker is not asked (a beaver asked for
    # is announced and written to the match file)
    capped = Beaverer()
    rec = play_money_game(randoms(5), [Scripted(double=True), capped],
                          np.random.default_rng(5), starter=0, beavers=True, max_cube=2)
    assert rec.doubles == ((0, 2, True),) and "beaver" not in [k for k, _ in capped.seen]
    # beavers off (the rules' default): the same taker only takes
    off = play_money_game(randoms(5), [Scripted(double=True), Beaverer()],
                          np.random.default_rng(5), starter=0, max_cube=2)
    assert off.doubles == ((0, 2, True),) and off.cube_value == 2
    # never in match play
    rec = play_cube_game(randoms(6), np.random.default_rng(6),
                         cube_policies=[Scripted(double=True), Beaverer()],
                         match_length=7, beavers=True, starter=0, max_cube=2)
    assert rec.doubles == ((0, 2, True),)


def test_the_cube_rules_reach_the_policies_and_the_first_roll():
    """``max_cube`` was enforced by the loop but not handed to the policies (a cube
    decision near the limit took doubles it should pass); with ``starter`` given, a
    double was offered before the game's first roll; a Crawford game at a score that
    has none was refused only after a turn, and in money play not at all."""
    a, b = Scripted(double=True), Scripted(double=True)
    rec = play_money_game(randoms(2), [a, b], np.random.default_rng(2), starter=0,
                          max_cube=8)
    states = [s for _, s in a.seen + b.seen]
    assert states and all(s.max_value == 8 for s in states)
    # no double before the game's first roll (player A starts, without the opening roll)
    class When(Scripted):
        def double(self, position, state):
            self.seen.append(("turns", position.turns))
            return self.d
    first = When(double=True)
    rec = play_money_game(randoms(4), [first, Scripted(take=False)],
                          np.random.default_rng(4), starter=0)
    assert rec.passed and rec.winner == 0
    assert first.seen and all(t != (0, 0) for k, t in first.seen if k == "turns")
    with pytest.raises(MatchError, match="crawford at score"):
        play_cube_game(randoms(7), np.random.default_rng(7),
                       cube_policies=[Scripted(), Scripted()], match_length=5,
                       score=(0, 0), crawford=True, on_turn=_no_turn)
    with pytest.raises(MatchError, match="money play"):
        play_cube_game(randoms(7), np.random.default_rng(7),
                       cube_policies=[Scripted(), Scripted()], crawford=True)


def _no_turn(*args):
    raise AssertionError("a turn was played before the settings were refused")


class AtScore(RandomPlayer):
    """A random player that records the cube and score it is asked to play at."""

    def __init__(self, rng):
        super().__init__(rng)
        self.seen = []

    def choose_with_cube(self, position, dice, successors, cube):
        self.seen.append(cube)
        return self.choose(position, dice, successors)


def test_a_player_may_play_for_the_score():
    """With the cube, a player with choose_with_cube is asked it, with the cube and score
    as the mover sees them, in a match and in money play; without the cube, choose."""
    rng = np.random.default_rng(4)
    a, b = AtScore(rng), AtScore(rng)
    rec = play_cube_game([a, b], rng, cube_policies=[Scripted(True), Scripted()],
                         match_length=7, score=(2, 4))
    assert a.seen and b.seen and rec.winner is not None
    assert {(c.match_length, c.score) for c in a.seen} == {(7, (2, 4))}
    assert {(c.match_length, c.score) for c in b.seen} == {(7, (4, 2))}
    assert {c.value for c in a.seen + b.seen} > {1}            # the double reached them
    assert any(c.owner == "me" for c in a.seen) or any(c.owner == "me" for c in b.seen)
    money = [AtScore(rng), AtScore(rng)]
    play_cube_game(money, rng, cube_policies=[NoCube(), NoCube()])
    assert money[0].seen and money[1].seen
    assert all(c.money and c.jacoby and c.value == 1 for c in money[0].seen + money[1].seen)
    cubeless = [AtScore(rng), AtScore(rng)]
    play_cube_game(cubeless, rng, match_length=7, score=(2, 4))
    assert cubeless[0].seen == cubeless[1].seen == []


def test_a_match_without_a_cube_may_be_longer_than_the_tables():
    """Matches without a cube (nardy, tavli) were refused above 64 points, the match
    equity tables' reach, which they do not use; docs/rules.md promised any length."""
    from engine.play.match import play_tavli_match
    with pytest.raises(MatchError, match=r"1\.\.64 with the cube"):
        play_match(65, randoms(8), np.random.default_rng(8),
                   cube_policies=[Scripted(), Scripted()])
    with pytest.raises(MatchError, match="1,000,000"):
        play_tavli_match(10 ** 6 + 1, randoms(8), np.random.default_rng(8))
    with pytest.raises(RuntimeError, match="match to 65 not over after 1 games"):
        play_match(65, randoms(8), np.random.default_rng(8), "gul_bara", max_games=1)
