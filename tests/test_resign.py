"""Resignations (:mod:`engine.play.resign`): when a side resigns (GNU Backgammon's
``getResignation``), when the opponent accepts, and a game ended by one
(:func:`engine.play.game.play`, :func:`engine.play.match.play_cube_game`)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.cli._decide import accepts_resignation, resignation_offer, search_for
from engine.cube.decision import CubeState
from engine.cube.met import default_table
from engine.play.game import CubeRules, play
from engine.play.match import NoCube, play_cube_game
from engine.play.players import RandomPlayer
from engine.play.resign import (
    ResignationError,
    Resigned,
    accepts,
    check_level,
    most,
    offer,
    play_on,
    points,
)
from engine.rules.dice import Dice
from engine.rules.position import Position
from engine.rules.variants import get_rules

BG = get_rules("backgammon")
MONEY = CubeState(1, "centre", 0, (0, 0), False, True, False, None)
MONEY_NO_JACOBY = CubeState(1, "centre", 0, (0, 0), False, False, False, None)


def match(value=1, owner="centre", score=(0, 0), length=5):
    return CubeState(value, owner, length, score, False, False, False, None)


def test_the_levels_each_game_may_offer():
    assert [most(get_rules(v)) for v in ("backgammon", "portes", "plakoto", "fevga",
                                         "long_nardy", "gul_bara")] == [3, 2, 2, 2, 2, 2]
    assert most(get_rules("long_nardy", koks=True)) == 3
    for bad in (0, 4, 1.0, True, "1", None):
        with pytest.raises(ResignationError, match="resignation level"):
            check_level(bad, BG)
    with pytest.raises(ResignationError, match=r"1 \(single\), 2 \(a double game\) in plakoto"):
        check_level(3, get_rules("plakoto"))


def test_a_side_resigns_only_what_it_is_sure_to_lose():
    """GNU Backgammon's rule: a backgammon when sure to lose one, a gammon when sure to
    lose one and sure to save the backgammon, a single game when playing on is worth
    exactly a single loss; any chance to win, or a gammon that may be saved, plays on."""
    cases = [([0, 0, 0, 1, 1], 3), ([0, 0, 0, 1, 0], 2), ([0, 0, 0, 0, 0], 1),
             ([0, 0, 0, 1, 0.5], 0), ([0, 0, 0, 0.5, 0], 0), ([1e-4, 0, 0, 0, 0], 0)]
    for probs, level in cases:
        assert offer(probs, MONEY_NO_JACOBY, BG) == level, probs
        assert offer(probs, None, BG) == level, probs
    # no backgammon in portes: a sure gammon is the most
    assert offer([0, 0, 0, 1, 1], None, get_rules("portes")) == 2
    # the Jacoby rule with the cube centred: every resignation is a single game
    assert offer([0, 0, 0, 1, 1], MONEY, BG) == 1
    assert offer([0, 0, 0, 1, 0.5], MONEY, BG) == 1
    # double match point: losing anything loses the match, so no chance to win is enough
    # (and the backgammon offered, as GNU Backgammon offers it there)
    assert offer([0, 0, 0, 0.4, 0.1], match(score=(4, 4)), BG) == 3
    assert offer([0, 0, 0, 0.4, 0.0], match(score=(4, 4)), BG) == 2
    assert offer([0, 0, 0, 0.0, 0.0], match(score=(4, 4)), BG) == 1
    with pytest.raises(ResignationError, match="five numbers"):
        offer([0, 0, np.nan, 0, 0], None, BG)


def test_the_value_of_playing_on_is_the_score_s():
    p = [0.6, 0.2, 0.05, 0.1, 0.02]
    assert play_on(p, None) == pytest.approx(2 * 0.6 - 1 + 0.2 - 0.1 + 0.05 - 0.02)
    st = match(score=(1, 2))
    table = default_table()
    want = (0.05 * table.after(4, 3, 3) + 0.15 * table.after(4, 3, 2)
            + 0.4 * table.after(4, 3, 1) + 0.02 * table.after(4, 3, -3)
            + 0.08 * table.after(4, 3, -2) + 0.3 * table.after(4, 3, -1))
    assert play_on(p, st) == pytest.approx(want)


def test_a_resignation_is_accepted_when_it_is_worth_no_more_than_playing_on():
    """GNU Backgammon's getResignEquities rule: the resigner's cubeless chances valued at
    the score against the resignation's value, the same scale."""
    sure_single, sure_gammon = [0, 0, 0, 0, 0], [0, 0, 0, 1, 0]
    even = [0.5, 0.15, 0.01, 0.15, 0.01]
    assert accepts(1, sure_single, None, BG) and accepts(1, even, None, BG)
    assert not accepts(1, sure_gammon, None, BG) and accepts(2, sure_gammon, None, BG)
    assert not accepts(2, [0, 0, 0, 1, 1], None, BG) and accepts(3, [0, 0, 0, 1, 1], None, BG)
    # the Jacoby rule with the cube centred: a gammon counts single, so does its offer
    assert accepts(1, sure_gammon, MONEY, BG) and not accepts(1, sure_gammon,
                                                               MONEY_NO_JACOBY, BG)
    assert points(2, CubeState(2, "me", 0, (0, 0), False, True, False, None)) == 4
    assert points(3, MONEY) == 1 and points(3, MONEY_NO_JACOBY) == 3
    # double match point: any loss loses the match, a single game's resignation does
    assert accepts(1, sure_gammon, match(score=(4, 4)), BG)
    # a match, cube 2: the gammon's match winning chance against the chances'
    st = match(2, "them", (2, 1))
    table = default_table()
    p = [0.05, 0.0, 0.0, 0.5, 0.0]
    value = (0.05 * table.after(3, 4, 2) + 0.5 * table.after(3, 4, -4)
             + 0.45 * table.after(3, 4, -2))
    assert accepts(1, p, st, BG) == (table.after(3, 4, -2) <= value + 1e-9)
    assert accepts(2, p, st, BG)
    # levels the game has not, and chances that are not five numbers
    with pytest.raises(ResignationError):
        accepts(3, sure_gammon, None, get_rules("plakoto"))
    with pytest.raises(ResignationError, match="five numbers"):
        accepts(1, [0, 0, 0], None, BG)


def _lost_race():
    """The side on roll has 10 checkers on its 6-point, 5 off; the opponent one checker
    on his 1-point: a sure single loss (the bear-off tables are exact here)."""
    me = [0] * 24
    me[5] = 10
    them = [0] * 24
    them[0] = 1
    return Position("backgammon", tuple(me), tuple(them), (0, 0), (5, 14))


def test_the_engine_resigns_a_lost_race_and_accepts_a_fair_resignation():
    search = search_for("backgammon")
    lost = _lost_race()
    assert resignation_offer(search, lost, None) == 1
    assert resignation_offer(search, lost, MONEY) == 1
    assert resignation_offer(search, lost, match(score=(2, 3))) == 1
    assert resignation_offer(search, lost.flip(), None) == 0     # the winner plays on
    assert resignation_offer(search, Position.start(), None) == 0
    # the side on roll at the start resigning a single game gives the opponent more
    # than he expects; a side sure to lose resigning a single game gives him all
    assert accepts_resignation(search, Position.start(), None, 1)
    assert accepts_resignation(search, Position.start(), MONEY, 1)
    assert accepts_resignation(search, lost, MONEY, 1)
    # the winner of the race resigning is accepted at any level
    assert accepts_resignation(search, lost.flip(), None, 1)
    with pytest.raises(ResignationError):
        accepts_resignation(search, Position.start(), None, 4)


def test_a_sure_gammon_is_not_let_off_with_a_single():
    """The side on roll, all fifteen checkers still on its 13-point against an opponent
    with one checker left: a single game's resignation is declined (it loses a gammon),
    a gammon's accepted (a single under the Jacoby rule, the cube centred)."""
    search = search_for("backgammon")
    me = [0] * 24
    me[12] = 15
    them = [0] * 24
    them[0] = 1
    pos = Position("backgammon", tuple(me), tuple(them), (0, 0), (0, 14))
    assert not accepts_resignation(search, pos, MONEY_NO_JACOBY, 1)
    assert accepts_resignation(search, pos, MONEY_NO_JACOBY, 2)
    assert accepts_resignation(search, pos, MONEY, 1)            # Jacoby: gammons single


class _Resigner(RandomPlayer):
    """Resigns ``level`` on its third turn; accepts resignations as told."""

    def __init__(self, level=0, accept=True):
        super().__init__(np.random.default_rng(1))
        self.level, self.accept, self.turns = level, accept, 0

    def resign(self, position, state):
        self.turns += 1
        return self.level if self.turns == 3 else 0

    def accept_resignation(self, position, state, level):
        return self.accept


def test_a_game_ends_at_an_accepted_resignation():
    rng = np.random.default_rng(5)
    rec = play_cube_game([_Resigner(2), _Resigner()], rng)
    assert rec.resigned == 2 and rec.winner == 1 and rec.points == 2 and rec.kind is None
    # declined: the game is played out
    rec = play_cube_game([_Resigner(2), _Resigner(accept=False)], np.random.default_rng(5))
    assert rec.resigned == 0 and rec.kind is not None
    # a player without accept_resignation declines
    rec = play_cube_game([_Resigner(1), RandomPlayer(np.random.default_rng(2))],
                         np.random.default_rng(5))
    assert rec.resigned == 0
    # with the cube: times its value; money play's Jacoby rule makes a gammon single
    # while the cube was never turned
    rec = play_cube_game([_Resigner(2), _Resigner()], np.random.default_rng(5),
                         cube_policies=[NoCube(), NoCube()])
    assert (rec.resigned, rec.points) == (2, 1)
    rec = play_cube_game([_Resigner(2), _Resigner()], np.random.default_rng(5),
                         cube_policies=[NoCube(), NoCube()], jacoby=False)
    assert (rec.resigned, rec.points) == (2, 2)


def test_a_player_may_resign_in_the_middle_of_a_turn():
    """A turn (a person at a prompt, the engine accepting) raises Resigned: the game ends
    there, the cube's value counted."""
    rules = get_rules("plakoto")
    calls = []

    def turn(mover, pos, dice):
        calls.append(mover)
        if len(calls) == 4:
            raise Resigned(mover, 2)
        from engine.movegen.generate import successors
        return successors(pos, None if dice is None else tuple(dice), rules)[0]

    rng = np.random.default_rng(3)
    rec = play(turn, rules, opening=(0, None), roll=lambda: Dice.roll(rng))
    assert rec.resigned == 2 and rec.winner == 1 - calls[-1] and rec.points == 2
    assert rec.turns == 3

    def bad(mover, pos, dice):
        raise Resigned(mover, 3)                # plakoto has no triple game
    with pytest.raises(ResignationError):
        play(bad, rules, opening=(0, None), roll=lambda: Dice.roll(rng))
    cube = CubeRules([NoCube(), NoCube()], jacoby=False)

    def cubed(mover, pos, dice, state=None):
        raise Resigned(mover, 3)
    rec = play(cubed, BG, opening=(1, Dice(3, 1)), roll=lambda: Dice.roll(rng), cube=cube)
    assert (rec.winner, rec.points, rec.resigned) == (0, 3, 3)


def _doomed():
    """The side on roll: 14 checkers on its 6-point, one on its 7-point, none off,
    against one checker on the opponent's 1-point: no chance to win, a gammon likely but
    not sure (the 0-ply chances pinned: win exactly 0, a gammon 0.861, no backgammon)."""
    me = [0] * 24
    me[5], me[6] = 14, 1
    them = [0] * 24
    them[0] = 1
    return Position("backgammon", tuple(me), tuple(them), (0, 0), (0, 14))


def test_an_empty_answer_to_the_engine_s_double_asks_again():
    """Regression: the terminal's take prompt read an empty line's first word for
    ``resign`` and stopped on an IndexError."""
    import io

    from engine.cli.play import Session, _HumanCube
    out = io.StringIO()
    session = Session("heuristic", np.random.default_rng(1), io.StringIO("\ntake\n"), out,
                      cube=True)
    assert _HumanCube(session).take(Position.start(), MONEY)
    assert "type 'take' or 'pass'" in out.getvalue()


def test_the_engine_resigns_at_the_score_in_a_match_without_the_cube(monkeypatch):
    """Regression: in a backgammon match played without the cube the game loop gives
    no cube state, and the engine (terminal and web board) valued its resignation as
    money play: at double match point, lost with a gammon uncertain, it played on where
    GNU Backgammon resigns (any loss loses the match)."""
    import io
    from types import SimpleNamespace

    import engine.cli.play as terminal
    from engine.web.session import _Engine
    search = search_for("backgammon")
    doomed = _doomed()
    assert resignation_offer(search, doomed, None) == 0
    assert resignation_offer(search, doomed, match(score=(6, 6), length=7)) == 2

    class Stop(Exception):
        pass
    hooks = []

    def fake_play(turn, rules, **kw):
        hooks.append(kw["resign"])
        raise Stop
    monkeypatch.setattr(terminal, "play", fake_play)
    session = terminal.Session("heuristic", np.random.default_rng(1),
                               io.StringIO("accept\n"), io.StringIO())
    with pytest.raises(Stop):
        session.play_game("backgammon", terminal.HUMAN, 7, (6, 6))
    assert hooks[0](terminal.ENGINE, doomed, None) == 2

    notes = []
    web = SimpleNamespace(mode="match", length=7, score=[6, 6], ply=0, _declined=0,
                          lock=__import__("threading").Lock(),
                          search_of=lambda variant: search,
                          _note=lambda *a, **k: notes.append(a))
    assert _Engine(web).resign(doomed, None) == 2 and notes


def test_after_the_roll_the_resigner_s_best_play_is_valued():
    """GNU Backgammon values a resignation after the resigner's roll by his best play of
    it: 14 checkers on the 6-point and one on the 7-point against one checker left
    (money, no Jacoby): a single game's resignation is declined before the roll (a
    gammon is likely), accepted after 6-1 (the straggler in and a checker off: the
    gammon saved) and declined after 5-4; as GNU Backgammon 1.07 answers the same."""
    search = search_for("backgammon")
    pos = _doomed()
    assert [accepts_resignation(search, pos, MONEY_NO_JACOBY, 1, dice=d)
            for d in (None, (6, 1), (5, 4))] == [False, True, False]
    assert accepts_resignation(search, pos, MONEY_NO_JACOBY, 2, dice=(5, 4))


def test_resign_words_and_a_level_declined_once(monkeypatch):
    """The terminal takes the levels by any start of their words (GNU Backgammon's
    ``norm``, ``gam``, ``back``) and will not offer the engine a level it declined in
    the game again."""
    import io

    import engine.cli.play as terminal
    assert [terminal.resign_level(w) for w in ("", "1", "3", "norm", "n", "s", "gam", "g",
                                               "d", "mars", "back", "b", "koks", "x",
                                               "gammons")] == [
        1, 1, 3, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, None, None]
    monkeypatch.setattr(terminal, "accepts_resignation", lambda *a, **k: False)
    out = io.StringIO()
    session = terminal.Session("heuristic", np.random.default_rng(1), io.StringIO(), out)
    for word in ("resign norm", "resign", "resign gam"):
        session.resign(word, Position.start(), None, (3, 1))
    text = out.getvalue()
    assert text.count("The engine declines your resignation") == 2
    assert "declined your resignation of a single game in this game: offer more" in text
