"""Match files (:mod:`engine.notation.matfile`) and their review (:mod:`engine.cli.review`):
the files GNU Backgammon 1.07 exported of a 5-point match and a money session between
its own players (``tests/data/matches``, made with ``export match mat``), replayed on
the board, and hand-written files with known mistakes."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import pytest

from engine.cli._decide import cube_advice, rank_cubefully, search_for
from engine.cli.review import MARKS, Reviewer, main, review, totals
from engine.cube.decision import CubeState
from engine.movegen.generate import successors
from engine.notation import matfile
from engine.notation.matfile import (
    Action,
    GameRecord,
    MatchRecord,
    MatFileError,
    format_mat,
    parse_mat,
    played_action,
    read_mat,
    replay,
)
from engine.notation.movetext import format_move, parse_move
from engine.rules.position import Position
from engine.rules.scoring import result

DATA = Path(__file__).parent / "data" / "matches"
FIVE = DATA / "gnubg_5_point.mat"
MONEY = DATA / "gnubg_money.mat"

# the tests that read one file's 0-ply review share it: one worker runs them all
pytestmark = pytest.mark.xdist_group("review")


@lru_cache(maxsize=None)
def _reviewed(path: Path) -> tuple:
    """The 0-ply review of the match file ``path`` by the shipped network, made once
    (several tests read the same review; none changes it)."""
    return tuple(review(read_mat(path), search_for("backgammon"), 0))


def _line(left: str = "", right: str = "", number: int | None = None) -> str:
    """A numbered line in GNU Backgammon's columns (the right one from column 33)."""
    head = f"{number:3d}) " if number is not None else "     "
    return (head + f"{left:<28}" + right).rstrip()


def _mat(*lines: str, length: int = 3, names=("Alice", "Bob"), score=(0, 0)) -> str:
    top = f" {names[0] + ' : ' + str(score[0]):<31}{names[1]} : {score[1]}"
    return "\n".join([f" {length} point match", "", " Game 1", top, *lines]) + "\n"


def test_a_gnubg_match_file_is_read_and_replayed():
    record = read_mat(FIVE)
    assert record.length == 5 and record.players == ("gnubg", "root")
    assert len(record.games) == 6
    # each game's score is the last one's plus the points its winner won
    for before, after in zip(record.games, record.games[1:]):
        score = list(before.score)
        score[before.winner] += before.points
        assert tuple(score) == after.score
    plays = cubes = answers = 0
    for d in replay(record):
        if d.kind == "play":
            plays += 1
            succ = successors(d.position, d.dice)
            assert any(s.key() == d.after.key() for s in succ)
            text = format_move(d.position, d.after, d.dice)
            if text != "no move":
                assert parse_move(text, d.position, d.dice).key() == d.after.key()
        elif d.kind == "cube":
            cubes += 1
            assert not d.crawford
        else:
            answers += 1
    rolls = sum(a.kind == "roll" for g in record.games for a in g.actions)
    doubles = sum(a.kind == "double" for g in record.games for a in g.actions)
    assert plays == rolls and answers == doubles == 5
    # the Crawford game (the first with a player 1-away) has no cube decisions
    crawford = [g.number for g in record.games if 4 in g.score][0]
    assert not any(d.kind == "cube" and d.game == crawford for d in replay(record))


@pytest.mark.parametrize("path", [FIVE, MONEY])
def test_a_match_file_written_back_reads_the_same(path):
    """format_mat writes what parse_mat reads: GNU Backgammon's files round trip, action
    for action (their lines aside)."""
    record = read_mat(path)
    again = parse_mat(format_mat(record))

    def plain(r):
        return [(g.number, g.score, [(a.player, a.kind, a.dice, a.move, a.value)
                                     for a in g.actions]) for g in r.games]

    assert (again.length, again.players, again.header) == (record.length, record.players,
                                                           record.header)
    assert plain(again) == plain(record)


def test_a_gnubg_money_session_is_read():
    record = read_mat(MONEY)
    assert record.length == 0 and len(record.games) == 4
    assert [g.points for g in record.games] == [2, 2, 2, 4]
    assert sum(1 for d in replay(record) if d.kind == "answer") == 6


def test_one_action_on_a_line_goes_to_its_column():
    text = _mat(_line("31: 8/5 6/5", "", 1), _line("", "Doubles => 2", 2),
                _line("Takes", "", 3))
    record = parse_mat(text)
    acts = record.games[0].actions
    assert [(a.player, a.kind) for a in acts] == [(0, "roll"), (1, "double"), (0, "take")]
    assert acts[0].dice == (3, 1) and acts[0].move == "8/5 6/5" and acts[1].value == 2
    assert [a.number for a in acts] == [1, 2, 3]       # the lines' move numbers
    assert [d.number for d in replay(record)] == [1, 2, 3]


@pytest.mark.parametrize("first, second", [
    ("44: 8/4(2) 6/2(2)", "44: 8/4 8/4 6/2 6/2"),
    ("64: 24/14", "64: 24/18 18/14"),
    ("64: 24/14", "64: 24/20 20/14"),
])
def test_the_spellings_of_one_play_replay_alike(first, second):
    keys = []
    for text in (first, second):
        record = parse_mat(_mat(_line(text, "", 1)))
        keys.append(next(d for d in replay(record) if d.kind == "play").after.key())
    assert keys[0] == keys[1]


def test_bar_and_off_may_be_spelled_out():
    """25 and 0 are the bar and off in the match files' numbering; the words work too."""
    body = FIVE.read_text()
    spelled = body.replace("25/", "bar/").replace("/0 ", "/off ").replace("/0\n", "/off\n")
    assert spelled != body
    a = [d.after.key() for d in replay(parse_mat(body)) if d.kind == "play"]
    b = [d.after.key() for d in replay(parse_mat(spelled)) if d.kind == "play"]
    assert a == b


@pytest.mark.parametrize("lines, words", [
    ([_line("31: 24/10", "", 1)], "line 5 (game 1): 31: 24/10"),
    ([_line("31: 8/5 6/5", "", 1), _line("42: 8/4 6/4", "", 2)], "out of turn"),
    ([_line("31: 8/5 6/5", "Doubles => 4", 1)], "expected 2"),
    ([_line("31: 8/5 6/5", "Doubles => 2", 1), _line("Takes", "Doubles => 4", 2)],
     "a double with the opponent's cube"),
    ([_line("31: 8/5 6/5", "Doubles => 2", 1), _line("", "42: 8/4 6/4", 2)],
     "doubler acts before"),
    ([_line("31: 8/5 6/5", "Takes", 1)], "no double on offer"),
    ([_line("31: 8/5 6/5", "Doubles => 2", 1), _line("Beavers => 4", "", 2)],
     "beaver in match play"),
    ([_line("Doubles => 2", "Takes", 1)], "a double before the opening roll"),
    ([_line("31:", "42: 8/4 6/4", 1)], "no play written"),
    ([_line("31: 8/5 6/5 hello", "", 1)], "line 5: '1) 31: 8/5 6/5 hello'"),
    ([_line("31: 8/5 6/5", "Doubles => 2", 1), _line("Drops", "", 2),
      _line("", "Wins 1 point"), _line("", "42: 8/4 6/4", 3)], "after the game was over"),
])
def test_a_match_file_that_cannot_have_been_played_names_its_line(lines, words):
    with pytest.raises(MatFileError, match=None) as info:
        list(replay(parse_mat(_mat(*lines))))
    assert words in str(info.value), str(info.value)


@pytest.mark.parametrize("text, words", [
    ("hello\n", "expected the match length first"),
    (" 3 point match\n", "no games"),
    (" 3 point match\n Game 1\n  1) 31: 8/5 6/5\n", "expected the score line"),
    (" 3 point match\n  1) 31: 8/5 6/5\n", "expected 'Game 1'"),
    (b"bytes", "expected the file's text"),
])
def test_what_is_not_a_match_file(text, words):
    with pytest.raises(MatFileError, match=words):
        parse_mat(text)


def test_read_mat_names_the_file(tmp_path):
    with pytest.raises(MatFileError, match="cannot read"):
        read_mat(tmp_path / "missing.mat")
    bad = tmp_path / "bad.mat"
    bad.write_text("nothing\n")
    with pytest.raises(MatFileError, match=r"bad\.mat: line 1"):
        read_mat(bad)


def _written(rec, length: int = 7, points: int | None = None) -> str:
    """A game the engine played (``play_game(..., record=True)``) written as a match
    file (:func:`format_mat`), each play in the match files' notation."""
    actions, mover = [], rec.starter
    for before, after, roll in zip(rec.positions, rec.positions[1:], rec.dice):
        actions.append(played_action(mover, before, after, (roll.high, roll.low)))
        mover = 1 - mover
    points = rec.points if points is None else points
    actions.append(Action(rec.winner, "win", 0, value=points))
    game = GameRecord(1, (0, 0), tuple(actions), 0)
    return format_mat(MatchRecord(length, ("Alice", "Bob"), (game,)))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_games_the_engine_played_are_read_back_move_for_move(seed):
    """Random games written in the engine's move text (bar entries, hits, bear-offs,
    doubles' repeats, plays merged through a point) replay to the same positions, and
    the points written must be what the board gives."""
    import numpy as np

    from engine.play.game import play_game
    from engine.play.players import RandomPlayer
    rng = np.random.default_rng(seed)
    rec = play_game(RandomPlayer(rng), RandomPlayer(rng), rng, record=True)
    record = parse_mat(_written(rec))
    plays = [d for d in replay(record) if d.kind == "play"]
    assert [d.after.key() for d in plays] == [p.key() for p in rec.positions[1:]]
    assert record.games[0].points == rec.points
    wrong = parse_mat(_written(rec, points=rec.points % 3 + 1))
    with pytest.raises(MatFileError, match=f"board gives the {'first' if rec.winner == 0 else 'second'} "
                                           f"player {rec.points}"):
        list(replay(wrong))


def _writer_opening():
    """A :class:`matfile.MatchWriter` after an opening 3-1 and a reply 4-2."""
    w = matfile.MatchWriter()
    start = Position.start()
    after = parse_move("8/5 6/5", start, (3, 1))
    w.roll(0, start, after, (3, 1))
    w.roll(1, after, parse_move("8/4 6/4", after, (4, 2)), (4, 2))
    return w


def test_a_beaver_the_game_loop_recorded_is_written_as_gnu_backgammon_writes_it():
    """The game loop asks the taker to take, then whether he beavers (the terminal game
    and the web board record both): the beaver answers the double in the take's place,
    ``Doubles => 2`` and ``Beavers => 4`` on one line as in GNU Backgammon's own files.
    With the take kept the engine's own replay (and so the review and the ``.sgf``
    writer) refused the file, 'beaver with no double on offer', and GNU Backgammon 1.07
    exported it back as a second double of the doubler's, taken."""
    w = _writer_opening()
    w.double(0, 2)
    w.answer(1, True)
    w.beaver(1, 4)
    w.end(1, (0, 0), 1, 4)
    record = w.record(0, ("you", "nardy"), {}, 2, (0, 4))
    text = format_mat(record)
    assert "  2)  Doubles => 2                Beavers => 4\n" in text and "Takes" not in text
    answers = [(d.player, d.action) for d in replay(parse_mat(text)) if d.kind == "answer"]
    assert answers == [(1, "beaver")]
    from engine.notation.sgf import format_sgf, parse_sgf
    assert [d.action for d in replay(parse_sgf(format_sgf(record)))
            if d.kind == "answer"] == ["beaver"]


def test_a_roll_resigned_after_is_written_unplayed():
    """``rolled``: the dice of a side that resigned instead of playing them, written
    with no play as GNU Backgammon writes them, so that a game resigned at its opening
    roll has a line (GNU Backgammon 1.07 imported a game of a ``Wins`` line alone as
    unfinished, its points lost from the score)."""
    w = matfile.MatchWriter()
    w.rolled(0, (3, 1))
    w.end(1, (0, 0), 1, 2)
    text = format_mat(w.record(0, ("you", "nardy"), {}, 2, (0, 2)))
    record = parse_mat(text)
    assert [(a.player, a.kind, a.dice, a.move) for a in record.games[0].actions] == [
        (0, "roll", (3, 1), ""), (1, "win", None, "")]
    assert record.games[0].winner == 1 and record.games[0].points == 2
    assert list(replay(record)) == []                # a roll not played: no decision


def test_a_game_ending_play_is_written_as_gnu_backgammon_reads_it():
    """With 5-1, a checker on my 2 point and his blot on my 1 point, ``2/off`` and
    ``2/1*/off`` both end the game with a backgammon (docs/rules.md); GNU Backgammon's
    generator lists only the second, and its ``import mat`` stopped at a file holding
    ``2/0`` (the terminal game and the web board wrote the play as chosen)."""
    last = Position.from_literal("x 2:1; o 24:1 6:3 5:3 4:3 3:3 2:2")
    off, hit = (parse_move(t, last, (5, 1)) for t in ("2/off", "2/1*/off"))
    assert off != hit
    assert [played_action(0, last, a, (5, 1)).move for a in (off, hit)] == ["2/1* 1/0"] * 2
    written = parse_move("2/1* 1/0", last, (5, 1))     # read back: the same result
    assert written == hit and result(written) == result(off)
    alone = Position.from_literal("x 2:1; o 24:2 6:3 5:3 4:3 3:2 2:2")   # 1 point closed
    assert played_action(0, alone, parse_move("2/off", alone, (5, 1)), (5, 1)).move == "2/0"


def test_the_review_finds_the_mistakes_of_a_hand_written_match():
    """Alice plays 31 as 24/20 (not 8/5 6/5); Bob doubles at once (too early) and Alice
    passes (a take): three mistakes, each costing what the engine's own ratings say."""
    text = _mat(_line("31: 24/20", "Doubles => 2", 1), _line("Drops", "", 2),
                _line("", "Wins 1 point"))
    record = parse_mat(text)
    search = search_for("backgammon")
    assessed = review(record, search, 0)
    play, double, drop = assessed
    assert play.decision.kind == "play" and play.best == "8/5 6/5" and play.chosen == "24/20"
    state = CubeState(1, "centre", 3, (0, 0))
    ranked = rank_cubefully(search, play.decision.position, (3, 1), 0, state).candidates
    assert play.cost > 0.05 and play.cost == pytest.approx(play.best_value - play.value)
    assert play.best_value == pytest.approx(ranked[0].cubeful_equity, abs=1e-9)
    assert play.value == pytest.approx(next(c.cubeful_equity for c in ranked
                                            if c.move == "24/20"), abs=1e-9)
    cube = cube_advice(search, double.decision.position, state, 0)
    assert double.chosen == "double" and double.best == "no double"
    assert double.cost == pytest.approx(cube.no_double - min(cube.double_take,
                                                             cube.double_pass))
    assert drop.chosen == "pass" and drop.best == "take"
    assert drop.cost == pytest.approx(cube.double_pass - cube.double_take)
    assert all(a.mark for a in assessed)
    t = totals(record, assessed)
    assert t[0].plays == 1 and t[0].cube == 1 and t[1].cube == 1 and t[1].plays == 0
    assert t[0].play_cost == pytest.approx(play.cost)
    assert t[1].cube_cost == pytest.approx(double.cost)


def test_the_review_of_a_gnubg_match(capsys):
    """Every decision of the file rated: the plays the engine would make cost nothing,
    forced ones are not counted, the totals add up, and the JSON says the same."""
    record = read_mat(FIVE)
    assessed = _reviewed(FIVE)
    decisions = list(replay(record))

    def key(d):
        return d.game, d.line, d.player, d.kind, d.action

    rated = {key(a.decision) for a in assessed}
    assert all(d.kind == "cube" for d in decisions if key(d) not in rated)  # dead cubes
    assert sum(d.kind != "cube" for d in decisions) == sum(
        a.decision.kind != "cube" for a in assessed)
    assert all(a.cost >= 0 for a in assessed)
    assert all(a.cost == 0 for a in assessed if a.chosen == a.best)
    forced = [a for a in assessed if a.forced]
    assert forced and all(a.cost == 0 for a in forced)
    t = totals(record, assessed)
    for player in (0, 1):
        mine = [a for a in assessed if a.decision.player == player]
        assert t[player].plays == sum(a.decision.kind == "play" and not a.forced
                                      for a in mine)
        assert t[player].play_cost + t[player].cube_cost == pytest.approx(
            sum(a.cost for a in mine))
    limits = {m: lo for lo, m, _ in MARKS}
    assert all(a.cost > limits[a.mark] for a in assessed if a.mark)
    # GNU Backgammon's test is strict: a cost at a threshold has the mark below it
    from engine.cli.review import Assessment
    marks = [Assessment(None, c, "", "", 0.0, 0.0).mark for c in (0.03, 0.0301, 0.06,
                                                                  0.12, 0.1201)]
    assert marks == ["", "?!", "?!", "?", "??"]
    assert main([str(FIVE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["players"] == ["gnubg", "root"] and len(out["decisions"]) == len(assessed)
    assert [p["plays"] for p in out["totals"]] == [t[0].plays, t[1].plays]
    assert main([str(MONEY)]) == 0
    text = capsys.readouterr().out
    assert "money session, 4 game(s)" in text and "mEMG/play" in text


def test_a_money_session_s_rules_come_from_its_header():
    text = MONEY.read_text()
    record = parse_mat('; [Jacoby "Off"]\n; [Beaver "On"]\n' + text)
    search = search_for("backgammon")
    reviewer = Reviewer(record, search)
    d = next(d for d in replay(record) if d.kind == "play")
    state = reviewer.state(d, d.player)
    assert state.money and not state.jacoby and state.beavers
    assert Reviewer(read_mat(MONEY), search).state(d, d.player).jacoby
    assert not Reviewer(read_mat(MONEY), search, jacoby=False).state(d, d.player).jacoby
    with pytest.raises(MatFileError, match="Jacoby 'maybe'"):
        Reviewer(parse_mat('; [Jacoby "maybe"]\n' + text), search)


def test_the_review_s_move_filters_reach_its_search(capsys):
    """``--filters`` sets the search's filters: at 1-ply keeping one play, the best
    play of every roll is the 0-ply best (only it is searched deeper), and the values
    are the 1-ply search's. Where the cube caps every play's value (the opponent's
    double and pass after any of them: -1), both take the best cubeless play of the tie."""
    said = []

    def best(flags):
        assert main([str(MONEY), "--json", *flags]) == 0
        out = json.loads(capsys.readouterr().out)
        said.append(out["filters"])
        return [(d["best"], d["best_value"]) for d in out["decisions"]
                if d["kind"] == "play" and not d["forced"]]

    zero, kept_one = best(["--ply", "0"]), best(["--ply", "1", "--filters", "1/0"])
    assert said == ["", "1/0.0"]        # the JSON says which filters the search used
    assert [b for b, _ in kept_one] == [b for b, _ in zero]
    assert any(v == -1.0 for _, v in zero)          # such a tie is among them
    assert [v for _, v in kept_one] != [v for _, v in zero]
    for flags, words in ((["--filters", "2/0.1"], "a 0-ply search has no filters"),
                         (["--ply", "2", "--filters", "8/0.16"], "1 level(s) for a 2-ply"),
                         (["--ply", "1", "--filters", "x"], "level 0 'x'")):
        with pytest.raises(SystemExit):
            main([str(MONEY), *flags])
        err = capsys.readouterr().err
        assert "--filters" in err and words in err


def test_the_command_line_errors(tmp_path, capsys):
    assert main([str(tmp_path / "none.mat")]) == 2
    assert "cannot read" in capsys.readouterr().err
    for flags, words in ((["--ply", "4"], "--ply 4"),
                         (["--threads", "0"], "--threads: '0': expected a number of search")):
        with pytest.raises(SystemExit):
            main([str(FIVE), *flags])
        assert words in capsys.readouterr().err


def test_what_gnu_backgammon_writes_besides_plain_games():
    """Files GNU Backgammon 1.07 wrote that the first reader refused: a raccoon, a double
    still on offer where the file ends, a roll not played (the file written, or the game
    resigned, after the roll; GNU Backgammon rolls a new game's opening at once), a
    1-point match (no Crawford game), a first name long enough to touch the second, a
    byte-order mark, ``Cannot Move`` for a dance; and chances to double with a dead cube
    are not counted as cube decisions."""
    from engine.notation.matfile import crawford_games
    search = search_for("backgammon")
    raccoon = read_mat(DATA / "raccoon.mat")
    ds = list(replay(raccoon))
    assert [d.action for d in ds if d.kind == "answer"][:1] == ["beaver"]
    after = [d for d in ds if d.game == 1 and d.kind == "play"][-1]
    # the raccooner plays on; the cube stays with the side not on roll, as GNU
    # Backgammon has it (tests/test_sgf.py: its files let that side redouble)
    assert (after.cube_value, after.cube_owner, after.player) == (8, 1, 0)
    assert review(raccoon, search, 0)              # beavers on: the file holds one
    pending = list(replay(read_mat(DATA / "pending_double.mat")))
    assert pending[-1].action == "double"
    resigned = read_mat(DATA / "setdice_resigns_5pt.mat")
    last = resigned.games[-1]
    assert last.winner == 1 and [a.kind for a in last.actions] == ["roll", "roll", "win"]
    plays = [d for d in replay(resigned) if d.game == last.number and d.kind == "play"]
    assert len(plays) == 1                         # the 65 rolled was not played
    one = read_mat(DATA / "one_point_match.mat")
    assert crawford_games(one) == set() and review(one, search, 0)
    long_name = read_mat(DATA / "long_name_gnubg.mat")
    assert long_name.players[0] == "AVeryLongPlayerNameForTesting1"
    assert sum(1 for _ in replay(long_name)) > 100
    dead = read_mat(DATA / "dead_cube_3pt.mat")
    assessed = review(dead, search, 0)
    assert all(cube_advice(search, a.decision.position,
                           Reviewer(dead, search).state(a.decision, a.decision.player),
                           0).double_take is not None
               for a in assessed if a.decision.kind == "cube")
    assert sum(a.decision.kind == "cube" for a in assessed) < sum(
        d.kind == "cube" for d in replay(dead))
    text = FIVE.read_text()
    plain = [d.after.key() for d in replay(parse_mat(text)) if d.kind == "play"]
    dance = text.replace(" 12) 66:                         22:",
                         " 12) 66: Cannot Move             22:")
    assert dance != text
    assert [d.after.key() for d in replay(parse_mat(dance)) if d.kind == "play"] == plain


@pytest.mark.parametrize("change, words", [
    (("A : 5", "A : 2"), None),
    (("Bob : 0", "Bob : 3"), r"line 4: score \[0, 3\] in a 3-point match"),
])
def test_a_score_beyond_the_match_is_refused(change, words):
    text = _mat(_line("31: 8/5 6/5", "", 1), names=("A", "Bob"))
    text = text.replace(*change)
    if words is None:
        parse_mat(text)
    else:
        with pytest.raises(MatFileError, match=words):
            parse_mat(text)


def test_the_winner_of_a_pass_is_the_doubler_at_the_cube_before():
    lines = (_line("31: 8/5 6/5", "Doubles => 2", 1), _line("Drops", "", 2))
    assert len(list(replay(parse_mat(_mat(*lines, _line("", " Wins 1 point")))))) == 3
    for wrong in (_line("", " Wins 2 points"), _line(" Wins 1 point", "")):
        with pytest.raises(MatFileError, match="the pass gives the second player 1"):
            list(replay(parse_mat(_mat(*lines, wrong))))


def test_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.mat"
    path.write_bytes(b"\xef\xbb\xbf" + FIVE.read_bytes())
    assert len(read_mat(path).games) == 6


@contextmanager
def _deadline(seconds: float):
    """Fails the block with TimeoutError once it runs ``seconds`` (the regular
    expression engine looks for signals as it backtracks), so a reader gone slow fails
    rather than hangs the suite; where no alarm is to be had (not Unix, not the main
    thread) the block runs unguarded, its caller's clock alone judging it."""
    if (not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    before = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


_GAME_1 = " 3 point match\n Game 1\n"


@pytest.mark.parametrize("text, words", [
    ("; [" + " " * 100_000 + "x\n", "no match length"),      # cubic: hours
    ("; [a" + " " * 100_000 + 'x"\n', "no match length"),    # quadratic
    (_GAME_1 + " a " + ":1 " * 1_300 + "x\n",                 # quadratic: minutes
     r"line 3: 'a :1 :1 .*\(3,905 chars\): expected the score line"),
    (_GAME_1 + " a" + " " * 4_000 + "x\n", "line 3: 'a .*expected the score line"),
    (_GAME_1 + " a : 1 b" + " " * 4_000 + "x\n", "line 3: 'a : 1 b .*expected the score"),
    (_GAME_1 + " a : 1 b" + " " * 100_000 + "x\n",
     r"line 3: 100,009 characters \(tabs as 8 spaces\): expected at most 4,096 in a "
     r"game's line"),
    (_GAME_1 + " Alice : 0    Bob : 0\n  1)" + "\t" * 1_000_000 + "31: 8/5 6/5\n",
     r"line 4: 8,000,015 characters \(tabs as 8 spaces\): expected at most 4,096 in a "
     r"game's line"),
], ids=["header spaces", "header key spaces", "score colons", "score spaces",
        "score second name spaces", "a long line of play", "a megabyte of tabs"])
def test_a_long_hostile_line_is_refused_at_once(text, words):
    """Lines of 100,000 characters on which the regular expressions that read the header
    and the score line backtracked in cubic or quadratic time (the web board's review
    holding every session meanwhile) are refused at once, with the usual error."""
    start = time.perf_counter()
    with _deadline(30), pytest.raises(MatFileError, match=words):
        parse_mat(text)
    assert time.perf_counter() - start < 5


def test_header_and_score_lines_read_as_before():
    """What the header and score lines read (:func:`engine.notation.matfile._header_line`
    and ``_score_line``, which replaced backtracking regular expressions): a key with a
    space, a value holding quotes, a long value; a line that is no header is a comment;
    a name may hold a colon, and a long first name may touch the second."""
    long = "x" * 100_000
    text = ('; [Player 1 "Alice"]\n;  [ Event   "a "b" c" ] \n; [Round "' + long + '"]\n'
            '; [Bad "no close"\n; [Bad]"x"]\n; no header\n; [ "' + " " * 100_000 + "]\n")
    body = FIVE.read_text()
    record = parse_mat(text + body)
    assert record.header == {"Player 1": "Alice", "Event": 'a "b" c', "Round": long,
                             "EventDate": "2026.12.05"}          # the file's own
    assert record.players == ("Alice", "root")
    assert [[replace(a, line=a.line - 7) for a in g.actions] for g in record.games] == [
        list(g.actions) for g in parse_mat(body).games]          # the 7 lines added
    for line, players, score in [
        (" A:B : 2                         C : 0", ("A:B", "C"), (2, 0)),
        (" AVeryLongPlayerNameForTesting1 : 0Bob : 1", ("AVeryLongPlayerNameForTesting1",
                                                      "Bob"), (0, 1)),
        ("Alice:1 Bob:2", ("Alice", "Bob"), (1, 2)),
    ]:
        record = parse_mat(_GAME_1 + line + "\n")
        assert (record.players, record.games[0].score) == (players, score), line


def _piped(path: Path, data: bytes) -> threading.Thread:
    """A pipe made at ``path``, a thread writing ``data`` into it (stopping quietly
    where the reader stops first)."""
    os.mkfifo(path)

    def feed() -> None:
        try:
            with open(path, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    return writer


def test_a_match_file_is_read_up_to_the_limit_whatever_its_size_says(tmp_path,
                                                                    monkeypatch):
    """A file over :data:`~engine.notation.matfile.MAX_BYTES` is refused by its size; a
    pipe or a device, whose size is 0, by what is read, which stops one byte past the
    limit (``/dev/zero`` was read until memory ran out)."""
    monkeypatch.setattr(matfile, "MAX_BYTES", 1000)
    big = tmp_path / "big.mat"
    big.write_bytes(b" " * 1001)
    with pytest.raises(MatFileError,
                       match=r"big\.mat: 1,001 bytes; a match file is read up to 1,000"):
        read_mat(big)
    big.write_bytes(b" " * 1000)                       # at the limit: read
    with pytest.raises(MatFileError, match=r"big\.mat: no match length"):
        read_mat(big)
    if not hasattr(os, "mkfifo"):
        return
    writer = _piped(tmp_path / "pipe.mat", FIVE.read_bytes() * 10)
    with _deadline(30), pytest.raises(MatFileError, match=r"pipe\.mat: more than 1,000 "
                                      r"bytes; a match file is read up to 1,000"):
        read_mat(tmp_path / "pipe.mat")
    writer.join(10)
    assert not writer.is_alive()
    monkeypatch.undo()                                 # a match file in a pipe is read
    writer = _piped(tmp_path / "small.mat", FIVE.read_bytes())
    with _deadline(30):
        assert len(read_mat(tmp_path / "small.mat").games) == 6
    writer.join(10)


def test_a_double_made_with_a_dead_cube_and_its_answer_are_rated():
    """Post-Crawford the leader at 1-away doubles (his cube is dead) and the trailer
    passes, losing the match: both were left out of the review, with the chances to
    double that a dead cube makes no decision. (GNU Backgammon's own match, game 6
    edited so.)"""
    record = read_mat(DATA / "dead_cube_double_dropped.mat")
    assessed = review(record, search_for("backgammon"), 0)
    game = [a for a in assessed if a.decision.game == 6 and a.decision.kind != "play"]
    assert [(a.chosen, a.best) for a in game] == [("double", "no double"), ("pass", "take")]
    assert game[0].cost > 0.12 and game[1].cost > 1.0
    doubles = sum(a.kind == "double" for g in record.games for a in g.actions)
    assert sum(a.decision.kind == "answer" for a in assessed) == doubles


def test_luck_is_the_roll_against_the_mean_of_the_21():
    """A roll's luck is its best play's cubeless equity less the 21 rolls' mean: over
    the 21 rolls, weighted, the luck is zero; a game's opening roll is measured against
    the 30 opening rolls (GNU Backgammon's LuckFirst): its own value, which over the 15
    non-doubles either player may get averages nil; a player's total is the sum of his
    rolls'."""
    from engine.cli.review import roll_luck
    from engine.cube.decision import ROLLS
    search = search_for("backgammon")
    record = read_mat(FIVE)
    some = [d for d in replay(record) if d.kind == "play"][5:8]
    for d in some:
        lucks = [roll_luck(search, d.position, r) for r in ROLLS]
        weights = [(1 if a == b else 2) / 36 for a, b in ROLLS]
        assert abs(sum(w * x for w, x in zip(weights, lucks))) < 1e-9
        assert roll_luck(search, d.position, d.dice[::-1]) == roll_luck(
            search, d.position, d.dice)
    assessed = _reviewed(FIVE)
    plays = [a for a in assessed if a.decision.kind == "play"]
    openings = {}
    for a in plays:
        openings.setdefault(a.decision.game, a)
    assert all(a.luck is not None for a in plays)
    from engine.rules.position import Position
    start = Position.start()
    non_doubles = [r for r in ROLLS if r[0] != r[1]]
    first = [roll_luck(search, start, r, opening=True) for r in non_doubles]
    assert all(abs(x - search.analyse(start, r, 0, top=1).best.equity) < 1e-6
               for x, r in zip(first, non_doubles))
    # the review values each roll cubefully where the cube is in play (a match here),
    # as GNU Backgammon does
    reviewer = Reviewer(record, search)
    for a in plays[:12] + list(openings.values()):
        d = a.decision
        opening = a is openings[d.game]
        assert a.luck == pytest.approx(roll_luck(search, d.position, d.dice, opening,
                                                 reviewer.state(d, d.player)), abs=1e-9)
    t = totals(record, assessed)
    for player in (0, 1):
        mine = [a.luck for a in plays if a.decision.player == player and a.luck is not None]
        assert t[player].rolls == len(mine)
        assert t[player].luck == pytest.approx(sum(mine))


def test_cubeful_luck_is_the_roll_against_the_mean_too():
    """GNU Backgammon values a roll's best play cubefully where the cube is in play (its
    luck analysis is cubeful at 0-ply); the review measured luck cubeless, which at a
    match score weighs a roll as if the score were not there. Cubefully too the 21
    rolls' luck averages nil; the 30 opening rolls' (15 falling to either player) too,
    where the opponent's roll is worth to us what his best play leaves us; in money
    play with the cube centred that is minus his value of it, so an opening roll's luck
    is its own value."""
    from engine.cli.review import _roll_values, rank_cubefully, roll_luck
    from engine.cube.decision import ROLLS
    from engine.rules.position import Position
    search = search_for("backgammon")
    weights = [(1 if a == b else 2) / 36 for a, b in ROLLS]
    record = read_mat(FIVE)
    d = [d for d in replay(record) if d.kind == "play"][20]
    for state in (CubeState(1, "centre", 7, (5, 2)), CubeState(2, "them", 5, (1, 3)),
                  CubeState(2, "me")):
        lucks = [roll_luck(search, d.position, r, state=state) for r in ROLLS]
        assert abs(sum(w * x for w, x in zip(weights, lucks))) < 1e-9
    start = Position.start()
    non_doubles = [r for r in ROLLS if r[0] != r[1]]
    money = CubeState()
    own = {r: v for r, (_, v, _, _) in zip(ROLLS, _roll_values(search, start, money))}
    for r in non_doubles:
        assert roll_luck(search, start, r, True, money) == pytest.approx(own[r], abs=1e-9)
    # each roll's play picked cubefully among all its plays, as GNU Backgammon picks it
    # (the best four by cubeless equity missed it at double match point: this 6-2 by
    # 0.016, and in the Crawford game)
    plays = [d for d in replay(record) if d.kind == "play"]
    for case, state in ((d, CubeState(1, "centre", 7, (5, 2))),
                        (plays[82], CubeState(1, "centre", 7, (6, 6))),
                        (plays[38], CubeState(1, "centre", 7, (6, 5), True))):
        for r, (_, v, _, _) in zip(ROLLS, _roll_values(search, case.position, state)):
            every = rank_cubefully(search, case.position, r, 0, state, top=1).best
            assert v == pytest.approx(every.cubeful_equity, abs=1e-5), r  # (float32 outputs)
    # at 4-away against 2-away the opening rolls' values do not cancel: the luck of
    # every opening roll, over the 30, still averages nil
    uneven = CubeState(1, "centre", 5, (1, 3))
    mine = [roll_luck(search, start, r, True, uneven) for r in non_doubles]
    values = {r: v for r, (_, v, _, _) in zip(ROLLS, _roll_values(search, start, uneven))}
    assert max(abs(mine[i] - values[r]) for i, r in enumerate(non_doubles)) > 1e-3
    shift = values[non_doubles[0]] - mine[0]         # the 30 rolls' mean, for us
    assert all(abs(values[r] - m - shift) < 1e-9 for r, m in zip(non_doubles, mine))


def test_each_decision_carries_an_xgid_that_reads_back():
    """Each rated decision names its position as an XGID with the cube, the score and
    the dice (an answer: the doubler's position, the double on offer), which the
    engine's own notation reads back to the same board, dice and cube."""
    from engine.cube.decision import CubeState
    from engine.notation.parse import parse_position
    search = search_for("backgammon")
    for path in (FIVE, MONEY):
        record = read_mat(path)
        reviewer = Reviewer(record, search)
        for a in _reviewed(path):
            d = a.decision
            pos, info = parse_position(a.xgid)
            board = (tuple(pos.me), tuple(pos.them), tuple(pos.bar), tuple(pos.off))
            assert board == (tuple(d.position.me), tuple(d.position.them),
                             tuple(d.position.bar), tuple(d.position.off)), a.xgid
            side = d.player if d.kind != "answer" else 1 - d.player
            want = reviewer.state(d, side)
            got = CubeState.from_info(info, beavers=want.beavers)
            assert (got.value, got.owner, got.match_length, got.score, got.crawford) == (
                want.value, want.owner, want.match_length, want.score, want.crawford)
            assert info.dice == (d.dice if d.kind == "play" else None)
            assert (info.cube_action == "double") == (d.kind == "answer")


def test_a_play_written_for_a_dance_says_there_is_only_no_move():
    """The illegal-move message where the roll has one play read "the 1 legal plays
    include 'no move'"."""
    from engine.errors import IllegalMoveError
    dance = next(d for d in replay(read_mat(FIVE)) if d.kind == "play" and not d.move)
    with pytest.raises(IllegalMoveError, match="the only legal play is 'no move'"):
        parse_move("25/19", dance.position, dance.dice)


def test_gnu_backgammon_s_statistics():
    """The error rates, ratings, close cube decisions, luck rate, luck rating and luck
    marks of GNU Backgammon's ``show statistics match``, by its thresholds; on the test
    match, beside GNU Backgammon 1.07's own 0-ply analysis of it (close or actual cube
    decisions 10 and 10; luck ratings Bad dice, man! and None: the first player's luck
    rate below -31 mEMG a roll, the second's near 0)."""
    from engine.cli.review import (
        Totals,
        format_review,
        luck_rating,
        rating,
        totals,
    )
    assert [rating(x) for x in (0.0019, 0.002, 0.0049, 0.0079, 0.0119, 0.0179, 0.0259,
                                0.0349, 0.035, 1.0)] == [
        "Supernatural", "World class", "World class", "Expert", "Advanced", "Intermediate",
        "Casual player", "Beginner", "Awful!", "Awful!"]
    assert [luck_rating(x) for x in (0.061, 0.031, 0.0, -0.031, -0.061)] == [
        "Go to Las Vegas", "Good dice, man!", "None", "Bad dice, man!", "Go to bed"]
    record = read_mat(FIVE)
    assessed = _reviewed(FIVE)
    for a in assessed:
        if a.decision.kind == "answer" or a.decision.action == "double":
            assert a.close
        elif a.best == "double":            # a missed double is close (optimal <= take)
            assert a.close
        if a.luck is not None:
            assert a.luck_mark == ("very lucky" if a.luck > 0.6 else "lucky" if a.luck > 0.3
                                   else "very unlucky" if a.luck < -0.6 else "unlucky"
                                   if a.luck < -0.3 else "")
    t = totals(record, assessed)
    assert [abs(x.close - 10) <= 1 for x in t] == [True, True]
    # the luck rates by the engine's network: the first player's near GNU Backgammon's
    # (-28.7 mEMG a roll by the released network, -33.6 by the TD network before it)
    assert -40 < t[0].luck_rate < -25 and abs(t[1].luck_rate) < 10
    assert [x.ratings()["luck"] for x in t] == [luck_rating(x.luck_rate / 1000) for x in t]
    for x in t:
        assert x.rate == pytest.approx(1000 * (x.play_cost + x.cube_cost) / (x.plays + x.close))
        assert x.ratings()["overall"] == rating(x.rate / 1000)
        assert sum(x.luck_marks.values()) <= x.rolls
    assert Totals().ratings() == {"chequerplay": None, "cube": None, "overall": None,
                                  "luck": None}
    assert "GNU Backgammon's statistics" in format_review(record, assessed, 0)


def test_gnu_backgammon_s_cube_statistics(monkeypatch):
    """GNU Backgammon's cube statistics of each player: doubles, takes, passes, and each
    cube decision that cost something by its kind (``CUBE_ERRORS``: a missed double
    above the cash point where double/take beats the pass, a wrong double above the
    too-good point where no double does, a wrong take, a wrong pass), the kinds' costs
    adding up to the cube decisions' cost; and the plays' marks apart from the cube's
    (GNU Backgammon's moves marked). On the test match GNU Backgammon 1.07 counts 2 and
    3 doubles, 1 and 1 takes, 2 and 1 passes. The kinds by the equities of a stubbed
    cube analysis."""
    from types import SimpleNamespace

    import engine.cli.review as rv
    record = read_mat(FIVE)
    search = search_for("backgammon")
    assessed = _reviewed(FIVE)
    t = totals(record, assessed)
    assert [(x.doubles, x.takes, x.passes) for x in t] == [(2, 1, 2), (3, 1, 1)]
    for player, x in enumerate(t):
        assert sum(c for _, c, _ in x.cube_errors.values()) == pytest.approx(x.cube_cost)
        assert sum(c for _, _, c in x.cube_errors.values()) == pytest.approx(x.cube_cost_u)
        plays = [a for a in assessed if a.decision.player == player
                 and a.decision.kind == "play"]
        assert x.play_marks == {m: sum(a.mark == m for a in plays) for _, m, _ in MARKS}
    reviewer = Reviewer(read_mat(MONEY), search)
    chance, double = (next(d for d in replay(reviewer.record)
                           if d.kind == "cube" and d.action == action)
                      for action in ("no_double", "double"))
    take, drop = (replace(double, kind="answer", player=1 - double.player, action=action)
                  for action in ("take", "drop"))
    for d, (nd, dt), error in [(chance, (0.5, 1.2), "missed doubles above CP"),
                               (chance, (0.5, 0.8), "missed doubles below CP"),
                               (chance, (0.9, 0.8), ""),
                               (double, (1.1, 1.3), "wrong doubles above TG"),
                               (double, (0.6, 0.4), "wrong doubles below DP"),
                               (double, (0.4, 0.6), ""),
                               (take, (0.5, 1.2), "wrong takes"),
                               (drop, (0.5, 0.8), "wrong passes"),
                               (drop, (0.5, 1.2), ""),
                               # a tie but for rounding (a last roll's cash): no error
                               (chance, (1.0 - 1e-16, 1.3), ""),
                               (take, (0.5, 1.0 + 2e-16), ""), (drop, (0.5, 1.0 - 2e-16), "")]:
        advice = SimpleNamespace(no_double=nd, double_take=dt, double_pass=1.0)
        monkeypatch.setattr(rv, "cube_advice", lambda *_, advice=advice: advice)
        a = reviewer.assess(d)
        assert (a.error, a.cost > 0) == (error, bool(error)), (d.action, nd, dt)
        assert error or a.best == a.chosen
        x = rv.Totals()
        x.add(a)
        assert {k: n for k, (n, _, _) in x.cube_errors.items() if n} == (
            {error: 1} if error else {})
        assert (x.doubles, x.takes, x.passes) == (d.action == "double", d.action == "take",
                                                  d.action == "drop")


def test_a_chance_to_double_before_a_roll_not_played_is_no_decision():
    """A roll not played (the game resigned after it, or the file written) is no
    decision, and neither is the chance to double before it: GNU Backgammon's record of
    such a roll holds no cube decision. GNU Backgammon 1.07 counts 2 and 4 cube
    decisions in this match of its own (the second player's chance before the 31 of
    game 1, resigned after, was counted as a fifth)."""
    record = read_mat(DATA / "setdice_resigns_5pt.mat")
    first = [d for d in replay(record) if d.game == 1]
    assert [(d.player, d.kind) for d in first] == [(0, "play")]
    t = totals(record, review(record, search_for("backgammon"), 0))
    assert [x.cube for x in t] == [2, 4]
    assert [(x.doubles, x.takes, x.passes) for x in t] == [(1, 1, 0), (1, 1, 0)]


def test_an_opening_double_s_luck_is_measured_against_the_21():
    """A game whose first roll is a double (files from elsewhere hold them): its luck
    is measured against the 21 rolls, as GNU Backgammon's LuckAnalysis measures any
    roll but a non-double at the start (its luck was left out, and with it the roll
    from the luck rate's count)."""
    from engine.cli.review import roll_luck
    record = parse_mat(_mat(_line("33: 13/10 13/10 6/3 6/3", "21: 13/11 6/5", 1),
                            _line("31: 8/5 6/5", "", 2), "      Wins 1 point"))
    search = search_for("backgammon")
    assessed = review(record, search, 0)
    reviewer = Reviewer(record, search)
    opening = assessed[0]
    assert opening.decision.dice == (3, 3)
    assert opening.luck == pytest.approx(roll_luck(
        search, Position.start(), (3, 3), False, reviewer.state(opening.decision, 0)))
    assert [(x.rolls, x.moves) for x in totals(record, assessed)] == [(2, 2), (1, 1)]


def test_statistics_in_match_winning_chance_and_points():
    """GNU Backgammon's bracketed figures: each cost and roll's luck on its decision's
    scale (in a match the match winning chance between winning and losing the cube's
    value at its score, halved; in money play the cube's value), the Snowie error rate
    over every play of both players (GNU Backgammon 1.07 counts 94 and 96 plays in the
    5-point match, 86 and 88 not forced; 77 and 78, 56 and 74 in the money session), the
    actual result (a finished match +-50%; the money session +2 and -2 points, as GNU
    Backgammon gives them) and the luck-adjusted result (the actual result less the
    player's luck plus his opponent's)."""
    from engine.cli.review import actual_results, luck_adjusted, snowie_rate, to_json
    from engine.cube.met import default_table
    search = search_for("backgammon")
    table = default_table()
    for path, moves, plays, actual in ((FIVE, (94, 96), (86, 88), (-0.5, 0.5)),
                                       (MONEY, (77, 78), (56, 74), (2.0, -2.0))):
        record = read_mat(path)
        assessed = _reviewed(path)
        reviewer = Reviewer(record, search)
        for a in assessed:
            d = a.decision
            st = reviewer.state(d, d.player)
            if st.money:
                assert a.scale == d.cube_value
            else:
                me, them = st.away
                assert a.scale == pytest.approx((table.after(me, them, d.cube_value)
                                                 - table.after(me, them, -d.cube_value)) / 2)
                assert 0 < a.scale < 1
            assert a.unnormalised == (a.cost * a.scale,
                                      None if a.luck is None else a.luck * a.scale)
        t = totals(record, assessed)
        assert tuple(x.moves for x in t) == moves and tuple(x.plays for x in t) == plays
        for player, x in enumerate(t):
            mine = [a for a in assessed if a.decision.player == player]
            assert x.play_cost_u == pytest.approx(sum(
                a.cost * a.scale for a in mine if a.decision.kind == "play" and not a.forced))
            assert x.cube_cost_u == pytest.approx(sum(
                a.cost * a.scale for a in mine if a.decision.kind != "play"))
            assert x.luck_u == pytest.approx(sum(a.luck * a.scale for a in mine
                                                 if a.luck is not None))
            assert x.rates_u()["chequerplay"] == pytest.approx(x.play_cost_u / x.plays)
            assert snowie_rate(x, t) == pytest.approx(
                1000 * (x.play_cost + x.cube_cost) / sum(moves))
        assert actual_results(record) == pytest.approx(actual)
        adjusted = luck_adjusted(record, t)
        assert adjusted == pytest.approx((actual[0] - t[0].luck_u + t[1].luck_u,
                                          actual[1] - t[1].luck_u + t[0].luck_u))
        out = to_json(record, assessed, 0)
        assert out["unit"] == ("mwc" if record.length else "points")
        assert out["actual_result"] == pytest.approx(list(actual))
        assert out["luck_adjusted_result"] == pytest.approx(list(adjusted), abs=1e-6)
        assert all(d["scale"] is not None for d in out["decisions"])


def test_actual_results_of_unfinished_and_crawford_games():
    """A game the file leaves unfinished gives nothing; the Crawford game's result is
    taken from the Crawford score (the pre-Crawford row at 1-away), a later game's from
    the post-Crawford one; a match beyond the match equity table is given in points."""
    from engine.cli.review import actual_results
    from engine.cube.met import default_table
    table = default_table()

    def game(number, score, winner, points):
        actions = () if winner is None else (Action(winner, "win", number, value=points),)
        return GameRecord(number, score, actions, line=number)

    record = MatchRecord(5, ("A", "B"), (game(1, (0, 0), 0, 4), game(2, (4, 0), 1, 1),
                                         game(3, (4, 1), 1, 2), game(4, (4, 3), None, 0)))
    first = table.after(5, 5, 4) - table.mwc(5, 5)            # A 4 points from 0-0
    crawford = table.after(5, 1, 1) - table.mwc(5, 1, False)  # B 1 in the Crawford game
    post = table.after(4, 1, 2) - table.mwc(4, 1, True)       # B 2 after it
    a, b = actual_results(record)
    assert a == pytest.approx(first - crawford - post) and b == pytest.approx(-a)
    assert crawford != pytest.approx(table.after(5, 1, 1) - table.mwc(5, 1, True))
    assert actual_results(MatchRecord(99, ("A", "B"), (game(1, (0, 0), 1, 2),))) == (-2.0, 2.0)


def test_what_other_programs_write_is_read_as_gnu_backgammon_reads_it():
    """Match files of programs other than GNU Backgammon, which GNU Backgammon 1.07's
    ``import mat`` reads (helper 110's audit of real files): Backgammon Galaxy's loser's
    ``Losses 1 point``, its points capped at the match and a second name left empty,
    Backgammon Studio's last line of a number alone, GridGammon's plays left out where the
    roll has one, ratings after the names, a match resigned for ``Wins 100 points``, a
    file starting after the Crawford game; eXtreme Gammon's ``42: ????`` (a roll not
    played), ``Resigns``; and Snowie's ``Illegal play`` refused by name."""
    import numpy as np

    from engine.notation.matfile import crawford_games
    from engine.notation.movetext import NO_MOVE
    from engine.play.game import play_game
    from engine.play.players import RandomPlayer
    rng = np.random.default_rng(1)
    rec = play_game(RandomPlayer(rng), RandomPlayer(rng), rng, record=True)   # a backgammon
    actions, mover, forced = [], rec.starter, 0
    for before, after, roll in zip(rec.positions, rec.positions[1:], rec.dice):
        dice = (roll.high, roll.low)
        a = played_action(mover, before, after, dice)
        if len(successors(before, dice)) == 1 and a.move:
            a, forced = replace(a, move=""), forced + 1      # GridGammon leaves it out
        actions.append(a)
        mover = 1 - mover
    assert rec.points == 3 and forced

    def galaxy(points: int, length: int = 1) -> str:
        game = GameRecord(1, (0, 0), (*actions, Action(rec.winner, "win", 0, value=points)), 0)
        lines = format_mat(MatchRecord(length, ("lasse", "x"), (game,))).replace(
            "x : 0", "  : 0").rstrip("\n").split("\n")
        losses = ("", "Losses 1 point") if rec.winner == 0 else ("Losses 1 point", "")
        lines.insert(len(lines) - 1, _line(*losses))
        return "\n".join(lines) + "\n 99)     \n"            # Backgammon Studio's last line
    record = parse_mat(galaxy(1))
    assert record.players == ("lasse", "") and record.games[0].points == 1
    plays = [d for d in replay(record) if d.kind == "play"]
    assert [d.after.key() for d in plays] == [p.key() for p in rec.positions[1:]]
    assert all(d.move or format_move(d.position, d.after, d.dice) == NO_MOVE for d in plays)
    for wrong in (galaxy(1, length=7), galaxy(4)):      # a game that does not end the match
        with pytest.raises(MatFileError, match="board gives"):
            list(replay(parse_mat(wrong)))

    grid = _mat(_line("31: 8/5 6/5", "Doubles => 2", 1), _line(" Takes", "42: 8/4 6/4", 2),
                _line("63:", "Wins 100 points", 3), names=("willvlc,1757", "nori,1779"),
                score=(2, 1))
    record = parse_mat(grid)
    assert record.players == ("willvlc", "nori") and crawford_games(record) == set()
    assert [(d.kind, d.action) for d in replay(record)][-1] == ("play", "")
    xg = _mat(_line("31: 8/5 6/5", "42: ????", 1), _line(" Wins 1 point", ""))
    assert [d.kind for d in replay(parse_mat(xg))] == ["play"]
    assert parse_mat(xg).games[0].winner == 0
    jf = _mat(_line("31: 8/5 6/5", "42: 8/4 6/4", 1), _line("Resigns", "Wins 2 points", 2))
    assert (parse_mat(jf).games[0].winner, parse_mat(jf).games[0].points) == (1, 2)
    # the game's last roll, with one legal play that does not end the game, before the
    # resignation: a roll not played (as MatchWriter.rolled writes it, XG's '????')
    k = next(i for i, (b, a, roll) in enumerate(zip(rec.positions, rec.positions[1:], rec.dice))
             if len(successors(b, (roll.high, roll.low))) == 1 and not a.is_over()
             and format_move(b, a, (roll.high, roll.low)) != "no move")
    roller = actions[k].player
    cut = GameRecord(1, (0, 0), (*actions[:k], replace(actions[k], move=""),
                                 Action(1 - roller, "win", 0, value=1)), 0)
    plays = [d for d in replay(parse_mat(format_mat(MatchRecord(0, ("A", "B"), (cut,)))))
             if d.kind == "play"]
    assert len(plays) == k and [d.after.key() for d in plays] == [
        p.key() for p in rec.positions[1:k + 1]]
    # more points than the game is worth, by a resignation that does not end the file:
    # refused at its own line, not at the next game's score
    bad = (DATA / "setdice_resigns_5pt.mat").read_text().replace("Wins 1 point", "Wins 7 points", 1)
    with pytest.raises(MatFileError, match="wins 7 point.*by a resignation at cube 1"):
        list(replay(parse_mat(bad)))
    snowie = _mat(_line("31: 8/5 6/5", "11: Illegal play (25;0;1) 11:", 1))
    with pytest.raises(MatFileError, match="line 5: .*an illegal play"):
        parse_mat(snowie)
