"""The terminal game: scripted input through ``main(argv, stdin, stdout)``."""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import Position, successors
from engine.cli.play import main
from engine.notation.movetext import format_move

ROOT = Path(__file__).resolve().parent.parent


def run(argv, lines):
    """Run a session with ``lines`` as input; returns (exit code, output)."""
    out = io.StringIO()
    code = main(argv, io.StringIO("".join(line + "\n" for line in lines)), out)
    return code, out.getvalue()


class TypingPlayer(io.TextIOBase):
    """Input that reads the session's output: at each prompt it asks for ``moves``, then
    types the text of the first listed play (the input is not echoed, so the newest
    listing in the output is the one just asked for) (so moves go through the notation parser),
    after a few scripted lines."""

    def __init__(self, out: io.StringIO, script=()):
        self.out = out
        self.script = list(script)
        self.listed = False

    def readline(self):
        if self.script:
            return self.script.pop(0) + "\n"
        if not self.listed:
            self.listed = True
            return "moves\n"
        self.listed = False
        listed = re.findall(r"^(?:> )? {3}1\. (.+)$", self.out.getvalue(), re.M)
        return listed[-1] + "\n"


def test_single_game_with_numbers_and_bad_input():
    code, text = run(["--variant", "long_nardy", "--engine", "heuristic", "--seed", "3"],
                     ["hello", "24/30", "99", "hint 3", "board", "help", "",
                      "  MOVES   all "] + ["1"] * 3000)
    assert code == 0
    assert "illegal input: " in text and "'hello'" in text
    assert "no play numbered 99" in text
    assert "the engine (heuristic) prefers:" in text
    # the game's own resignation words (helper 135: backgammon's were offered in every
    # game, koks refused in long nardy's default rules); spaces do not matter
    assert "Type a move" in text and "resign [oyn|mars]" in text
    assert "single|gammon" not in text and "cannot read 'moves" not in text
    assert re.search(r"(You win|The engine wins) (oyn|mars): [12] points?\.", text)


def test_typed_moves_in_notation_finish_a_backgammon_game():
    out = io.StringIO()
    code = main(["--variant", "backgammon", "--engine", "heuristic", "--seed", "5"],
                TypingPlayer(out, ["bar/22*"]), out)
    text = out.getvalue()
    assert code == 0
    assert "illegal input: " in text
    assert "you play " in text
    assert re.search(r"(You win|The engine wins) a (single game|gammon|backgammon)", text)


def test_match_keeps_score():
    code, text = run(["--variant", "plakoto", "--match", "3", "--engine", "heuristic",
                      "--seed", "1"], ["1"] * 20000)
    assert code == 0
    scores = re.findall(r"Score: you (\d+), the engine (\d+) \(match to 3\)", text)
    assert scores and max(map(int, scores[-1])) >= 3
    assert "wins the match." in text
    if len(scores) > 1:
        assert "as the winner of the last game" in text


class CubePlayer(io.TextIOBase):
    """Input that answers the prompt the session's output ends with: asks the engine's
    cube advice once, doubles at the ``double_at``-th chance, takes every double, and
    plays the first listed play at a move prompt."""

    def __init__(self, out: io.StringIO, double_at: int = 2):
        self.out = out
        self.chances = 0
        self.double_at = double_at
        self.advised = False

    def readline(self):
        text = self.out.getvalue()
        if text.endswith("cube> "):
            if not self.advised:
                self.advised = True
                return "cube\n"
            self.chances += 1
            return "double\n" if self.chances == self.double_at else "roll\n"
        if text.endswith("take> "):
            return "take\n"
        return "1\n"


def test_a_backgammon_match_with_the_cube():
    """--cube: the cube prompts, the engine's advice, doubles taken both ways, the
    points at the cube, the Crawford game."""
    out = io.StringIO()
    code = main(["--variant", "backgammon", "--match", "3", "--cube", "--seed", "2"],
                CubePlayer(out), out)
    text = out.getvalue()
    assert code == 0, text[-2000:]
    assert "Before your roll: the cube is at 1, in the middle." in text
    assert "the engine's advice: " in text
    assert "you double to 2." in text and ("The engine takes." in text
                                           or "The engine passes." in text)
    # the board drawn at the cube prompt is not drawn again for the roll that follows
    after_prompt = text.split("cube> ")[-1].split("Your move")[0]
    assert "(to move)" not in after_prompt
    scores = re.findall(r"Score: you (\d+), the engine (\d+) \(match to 3\)", text)
    assert scores and max(map(int, scores[-1])) >= 3 and "wins the match." in text
    # the Crawford game has no cube; the game after it has
    from engine.cli.play import Session
    for crawford in (True, False):
        out = io.StringIO()
        session = Session("auto", np.random.default_rng(5), CubePlayer(out, 99), out,
                          cube=True)
        winner, points, _ = session.play_game("backgammon", None, 3, (2, 0), crawford)
        text = out.getvalue()
        assert ("(the Crawford game: no cube)" in text) == crawford
        assert ("cube> " in text or "The engine doubles" in text) != crawford
        assert points >= 1 and winner in (0, 1)
    # a money game: the engine's double answered, the result at the cube
    out = io.StringIO()
    assert main(["--cube", "--seed", "11"], CubePlayer(out, double_at=99), out) == 0
    assert re.search(r"(You win|The engine wins) .*point", out.getvalue())


def test_the_terminal_engine_plays_a_match_for_the_score():
    """In a backgammon match the terminal engine ranks its plays (and your hints) by match
    equity, as the other engines do: at double match point 4-3 from the start is 24/20 13/10,
    the best winning chance, where the cubeless money play is 13/10 13/9."""
    from engine.cli.play import make_engine
    from engine.cube.decision import CubeState
    engine = make_engine("auto", "backgammon")
    start = Position.start()
    succ = successors(start, (4, 3))
    dmp = CubeState(match_length=7, score=(6, 6))
    assert format_move(start, succ[engine.choose(start, (4, 3), succ, dmp)],
                       (4, 3)) == "24/20 13/10"
    assert format_move(start, succ[engine.choose(start, (4, 3), succ)], (4, 3)) == \
        "13/10 13/9"
    assert engine.cubeful(CubeState()) and engine.cubeful(dmp)
    assert not engine.cubeful(None) and not engine.cubeful(CubeState(match_length=65))
    # money play with the Jacoby rule: a gammon counts for nothing while the cube is
    # centred, and 24/20 13/10 is best by cubeful equity
    assert format_move(start, succ[engine.choose(start, (4, 3), succ, CubeState())],
                       (4, 3)) == "24/20 13/10"


def test_the_terminal_engine_ranks_plays_into_a_short_bear_off_exactly():
    """The terminal engine ranks plays as the protocol's cubeful ranking does: a play
    into a short bear-off in money play by the two-sided table's exact equity (minus
    the opponent's under his proper cube action), not the model's."""
    from engine.cli.play import make_engine
    from engine.cube.decision import CubeState, play_value
    from engine.eval import bearoff
    from engine.rules.scoring import flip_probs
    engine = make_engine("auto", "backgammon")
    db = bearoff.load()
    pos = Position.from_literal("x 6:2 5:1; o 6:2 5:2")
    succ = successors(pos, (2, 1))
    money = CubeState()
    scores = engine.scores((2, 1), succ, money)
    exact = [-max(nd, min(dt, 1.0)) for nd, dt in (db.money_cube(s, "centre") for s in succ)]
    assert scores == pytest.approx(exact, abs=1e-12)
    mover = flip_probs(np.asarray(engine.network.probabilities(list(succ)), dtype=np.float64))
    model = [play_value(p, s, money)[0] for p, s in zip(mover, succ)]
    # the model (at GNU Backgammon's bear-off efficiency) would pick another play
    assert np.argmax(model) != np.argmax(exact)
    assert engine.choose(pos, (2, 1), succ, money) == int(np.argmax(exact))


def test_a_match_without_the_cube_still_plays_for_the_score(monkeypatch):
    """A backgammon match played without ``--cube`` gave the engine no score, and it
    played for money (gammons the score made worthless): each turn now has the match's
    score with the cube dead at 1, seen from the mover; a tavli match has none."""
    from engine.cli import play as play_cli
    seen = []
    real = play_cli.Engine.choose

    def spy(self, position, dice, succ, cube=None):
        seen.append(cube)
        return real(self, position, dice, succ, cube)

    monkeypatch.setattr(play_cli.Engine, "choose", spy)
    code, text = run(["--match", "2", "--seed", "3"], ["1"] * 5000)
    assert code == 0 and "wins the match." in text and seen
    assert all(c is not None and c.match_length == 2 and c.value == 1 and c.at_max
               and not c.can_double() for c in seen)
    assert {c.score for c in seen} >= {(0, 0)}
    seen.clear()
    code, text = run(["--variant", "tavli", "--match", "1", "--seed", "3"], ["1"] * 5000)
    assert code == 0 and seen and all(c is None for c in seen)


def test_the_games_are_saved_as_a_match_file(tmp_path, capsys):
    """``--save``: the backgammon games written as a match file after each, which reads
    back and replays to the scores the session printed; refused for other games and
    for a path that cannot be a file."""
    from engine.notation.matfile import read_mat, replay
    path = tmp_path / "games.mat"
    out = io.StringIO()
    code = main(["--match", "3", "--cube", "--seed", "2", "--save", str(path)],
                CubePlayer(out, double_at=2), out)
    assert code == 0
    record = read_mat(path)
    assert record.length == 3 and record.players == ("you", "nardy")
    decisions = list(replay(record))
    assert any(d.action == "double" for d in decisions)
    scores = re.findall(r"Score: you (\d+), the engine (\d+)", out.getvalue())
    won = [0, 0]
    for g in record.games:
        won[g.winner] += g.points
    assert tuple(won) == tuple(map(int, scores[-1]))
    # the same games as GNU Backgammon's SGF, by the file's name
    from engine.notation.sgf import read_sgf
    sgf = tmp_path / "games.sgf"
    out = io.StringIO()
    assert main(["--match", "3", "--cube", "--seed", "2", "--save", str(sgf)],
                CubePlayer(out, double_at=2), out) == 0
    assert sgf.read_text().startswith("(;FF[4]GM[6]")
    key = [(d.game, d.kind, d.position, d.dice, d.after, d.action, d.cube_value)
           for d in decisions]
    assert [(d.game, d.kind, d.position, d.dice, d.after, d.action, d.cube_value)
            for d in replay(read_sgf(sgf))] == key
    for argv, words in ((["--variant", "plakoto", "--save", str(path)], "backgammon"),
                        (["--save", str(tmp_path)], "expected a file"),
                        (["--save", str(tmp_path / "no" / "x.mat")], "expected a file")):
        with pytest.raises(SystemExit):
            main(argv, io.StringIO(""), io.StringIO())
        assert words in capsys.readouterr().err


@pytest.mark.parametrize("argv, words", [
    (["--variant", "plakoto", "--cube"], "plakoto has no doubling cube"),
    (["--cube", "--engine", "heuristic"], "need a network"),
    (["--cube", "--match", "65"], "covers matches to 64"),
])
def test_the_cube_option_is_refused_where_it_cannot_be_played(argv, words, capsys):
    with pytest.raises(SystemExit):
        main(argv, io.StringIO(""), io.StringIO())
    assert words in capsys.readouterr().err


def test_tavli_rotation():
    code, text = run(["--variant", "tavli", "--match", "3", "--engine", "heuristic",
                      "--seed", "2"], ["1"] * 20000)
    assert code == 0
    games = re.findall(r"^=== (\w+) ===$", text, re.M)
    assert games[:3] == ["portes", "plakoto", "fevga"][:len(games)]
    assert "wins the match." in text


def test_gul_bara_game_with_pending_dice_ends():
    # with this seed the cascade passes dice both to the engine and to you
    code, text = run(["--variant", "gul_bara", "--engine", "heuristic", "--seed", "4"],
                     ["1"] * 5000)
    assert code == 0
    assert "O has the pending dice " in text
    assert "X pending dice " in text and "(play them before your roll)" in text
    assert re.search(r"(You win|The engine wins) (oyn|mars)", text)


def test_quit_and_end_of_input():
    code, text = run(["--variant", "portes", "--engine", "heuristic", "--seed", "1"],
                     ["quit"])
    assert code == 0 and text.rstrip().endswith("Bye.")
    code, text = run(["--variant", "fevga", "--engine", "heuristic", "--seed", "1"], [])
    assert code == 0 and "Bye." in text


def test_seed_must_be_a_whole_number(capsys):
    """Regression: ``--seed -1`` ended in a traceback from numpy."""
    for seed in ("-1", "1.5", "x"):
        with pytest.raises(SystemExit) as info:
            run(["--seed", seed], [])
        err = capsys.readouterr().err
        assert info.value.code == 2 and "--seed" in err and "Traceback" not in err


def test_missing_model_is_an_error(capsys):
    code, text = run(["--variant", "fevga", "--engine", "nope.npz"], [])
    assert code == 2 and "nope.npz" in capsys.readouterr().err and text == ""
    code, text = run(["--variant", "fevga", "--engine", "heurstic"], [])
    err = capsys.readouterr().err
    assert code == 2 and "--engine 'heurstic': expected auto, heuristic, model" in err
    assert "(no such file)" in err
    code, text = run(["--variant", "fevga", "--engine", str(ROOT / "models")], [])
    err = capsys.readouterr().err     # a folder was called "no such file"
    assert code == 2 and "(not a regular file)" in err and "no such file" not in err


def test_a_model_of_another_game_is_an_error(capsys):
    """It fell back to the game's released model without a word."""
    code, text = run(["--variant", "backgammon", "--engine", str(ROOT / "models/plakoto.npz")], [])
    err = capsys.readouterr().err
    assert code == 2 and "a model of plakoto, not of backgammon" in err and text == ""
    code, text = run(["--variant", "tavli", "--match", "1", "--engine", str(ROOT / "models/plakoto.npz"),
                      "--seed", "1"], [])
    assert code == 0 and "plakoto.npz" in text        # a tavli match plays plakoto too


def test_command_line_pipe():
    proc = subprocess.run([sys.executable, "-m", "engine.play", "--variant", "portes",
                           "--engine", "heuristic", "--seed", "9"],
                          input="moves\n" + "1\n" * 500, capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "1. " in proc.stdout and "point" in proc.stdout


def test_a_play_number_in_other_digits_is_not_read():
    """'²' passed ``str.isdigit`` and then failed ``int`` with a traceback; '\u0663' was
    taken as play 3."""
    from engine.cli.play import Session
    from engine.rules.dice import Dice
    from engine.rules.variants import get_rules
    pos = Position.start()
    out = io.StringIO()
    session = Session("heuristic", np.random.default_rng(1),
                      io.StringIO("\u00b2\nhint \u00b2\n\u0663\n2\n"), out)
    chosen = session._human_turn(pos, Dice(3, 1), get_rules("backgammon"))
    text = out.getvalue()
    assert "cannot read '\u00b2'" in text and "hint '\u00b2': expected" in text
    assert "cannot read '\u0663'" in text
    assert chosen == successors(pos, (3, 1))[1]


def test_moves_lists_the_first_thousand_plays_of_a_cascade():
    """A gul bara cascade of 1,238 plays: ``moves`` lists 1,000 and says so, ``moves
    all`` lists every one, and a play typed in notation is taken."""
    import json

    from engine.cli.play import Session
    from engine.rules.dice import Dice
    from engine.rules.variants import get_rules
    data = Path(__file__).resolve().parent.parent / "benchmarks/data/gul_bara_cascade_tail.jsonl"
    record = next(r for r in map(json.loads, data.read_text().splitlines())
                  if r["count"] == 1238)
    pos = Position.from_json(record["position"])
    first = format_move(pos, successors(pos, (1, 1))[0], (1, 1))
    out = io.StringIO()
    session = Session("heuristic", np.random.default_rng(1),
                      io.StringIO(f"moves\nmoves all\n{first}\n"), out)
    chosen = session._human_turn(pos, Dice(1, 1), get_rules("gul_bara"))
    text = out.getvalue()
    assert "(the first 1,000 of 1,238 plays; 'moves all' lists every one" in text
    assert text.count("1000. ") == 2 and text.count("1238. ") == 1
    assert chosen == successors(pos, (1, 1))[0]


def test_ctrl_c_and_huge_numbers_end_or_go_on_without_a_traceback():
    """Ctrl-C at the prompt ended the game in a traceback (only 'quit' was caught), and
    a number of 5,000 digits at the prompt or after 'hint' passed the digit test and
    then failed Python's 4,300-digit limit."""
    class CtrlC(io.TextIOBase):
        def readline(self):
            raise KeyboardInterrupt
    out = io.StringIO()
    assert main(["--variant", "portes", "--engine", "heuristic", "--seed", "1"], CtrlC(),
                out) == 130
    assert "Interrupted. Bye." in out.getvalue()
    from engine.cli.play import Session
    from engine.rules.dice import Dice
    from engine.rules.variants import get_rules
    pos = Position.start()
    out = io.StringIO()
    big = "9" * 5000
    session = Session("heuristic", np.random.default_rng(1),
                      io.StringIO(f"{big}\nhint {big}\nhint 0000\n2\n"), out)
    chosen = session._human_turn(pos, Dice(3, 1), get_rules("backgammon"))
    text = out.getvalue()
    assert "no play numbered 0" not in text           # the huge number was read as 0
    assert "no play numbered 9999999999" in text and "(5,000 chars)" in text
    assert "the engine (heuristic) prefers:" in text
    assert "hint '0000': expected a positive number" in text
    assert chosen == successors(pos, (3, 1))[1]


def test_a_command_line_program_stopped_by_ctrl_c_says_so_in_one_line(capsys):
    from engine.cli import _common

    def interrupted():
        raise KeyboardInterrupt
    with pytest.raises(SystemExit) as exc:
        _common.run(interrupted)
    assert exc.value.code == 130 and capsys.readouterr().err == "interrupted\n"


def test_a_save_folder_that_takes_no_file_is_refused_before_play(tmp_path, capsys):
    """``--save /proc/x.mat`` passed the start-up check (the folder exists), and the
    write after the first game raised FileNotFoundError with a traceback, the match
    lost. The folder is now written into (and the file removed) before play: a folder
    that takes no file, a file in place of the folder, a path that is not a regular
    file are each a usage error naming --save. (Refused for root as well: chmod would
    not be.)"""
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    cases = [(str(afile / "x.mat"), f"{str(afile)!r} is a file; expected a folder"),
             (os.devnull, "is not a regular file; expected a file")]
    if os.path.isdir("/proc/self"):
        cases.append(("/proc/x.mat", "cannot write into the folder '/proc'"))
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        cases.append((str(locked / "x.mat"), "cannot write into the folder"))
    for path, words in cases:
        out = io.StringIO()
        with pytest.raises(SystemExit) as info:
            main(["--engine", "heuristic", "--save", path], io.StringIO(""), out)
        err = capsys.readouterr().err
        assert info.value.code == 2 and words in err and "--save" in err, err
        assert out.getvalue() == ""                      # no game was begun
    assert afile.read_text() == "mine\n"
    assert not list(tmp_path.glob("**/.nardy-probe-*"))


def test_a_save_that_fails_during_play_is_reported_and_play_goes_on(tmp_path, capsys,
                                                                    monkeypatch):
    """A write that fails after a game (a full disk) prints one line naming the file,
    no traceback, and the match goes on; the next write that works holds every game."""
    import errno

    from engine.cli import play as play_cli
    from engine.notation.matfile import read_mat
    real = play_cli.atomic_write_bytes
    calls = []

    def full_once(path, data):
        calls.append(path)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(play_cli, "atomic_write_bytes", full_once)
    path = tmp_path / "games.mat"
    code, text = run(["--match", "3", "--engine", "heuristic", "--seed", "2", "--save",
                      str(path)], ["1"] * 5000)
    err = capsys.readouterr().err
    assert code == 0 and "wins the match." in text
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert (f"error: --save: cannot write {path}: {os.strerror(errno.ENOSPC)}; play goes "
            f"on") in err
    games = len(re.findall(r"^=== backgammon ===$", text, re.M))
    assert games >= 2 and len(calls) == games + 1        # after each game, and at quit
    assert len(read_mat(path).games) == games


def test_a_save_that_fails_at_quit_puts_the_games_in_the_temporary_folder(
        tmp_path, capsys, monkeypatch):
    """When the last write fails too, the games go to a file in the temporary folder,
    named in the error, and the exit status is 1: the match is not lost."""
    import tempfile

    from engine.cli import play as play_cli
    from engine.notation.matfile import read_mat

    def gone(path, data):
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(play_cli, "atomic_write_bytes", gone)
    rescue = tmp_path / "tmp"
    rescue.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(rescue))
    path = tmp_path / "games.mat"
    code, text = run(["--engine", "heuristic", "--seed", "2", "--save", str(path)],
                     ["1"] * 5000)
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and not path.exists(), err
    (kept,) = rescue.glob("nardy-*.mat")
    assert (f"error: --save: cannot write {path}: No such file or directory; the games "
            f"are in {kept} instead") in err.splitlines()
    assert len(read_mat(kept).games) == 1


def test_resignations_at_the_terminal(monkeypatch):
    """``resign [level]`` at the move prompt (and at the cube prompt): the engine
    accepts what gives it more than it expects (a gammon at the start; under the Jacoby
    rule with the cube centred a backgammon's resignation counts single); a level the
    game has not is refused; the engine's own resignation is accepted or rejected."""
    code, out = run(["--seed", "3"], ["resign foo", "resign gammon"])
    assert code == 0 and "resign 'foo': expected single, gammon or backgammon" in out
    assert "The engine wins 2 points: you resigned a gammon." in out
    code, out = run(["--variant", "plakoto", "--seed", "3"], ["resign 3", "resign"])
    assert "resignation level 3: expected 1 (single), 2 (a double game) in plakoto" in out
    assert "The engine wins 1 point: you resigned a single game." in out
    code, out = run(["--cube", "--seed", "3"], ["1", "resign backgammon"])
    assert "the engine accepts (1 point)" in out
    assert "The engine wins 1 point: you resigned a backgammon." in out
    import engine.cli.play as terminal
    monkeypatch.setattr(terminal, "resignation_offer", lambda *a, **k: 2)
    code, out = run(["--variant", "fevga", "--seed", "4"], ["1", "maybe", "accept"])
    assert "The engine resigns a double game (2 points to you). Accept or reject?" in out
    assert "'maybe': type 'accept' or 'reject'" in out
    assert "You win 2 points: the engine resigned a double game." in out


def test_a_resignation_at_the_opening_roll_is_saved_with_the_roll(tmp_path):
    """Resigning at the move prompt, the dice rolled are saved with no play, as GNU
    Backgammon writes a roll resigned after: a game resigned at its opening roll had a
    ``Wins`` line alone, which GNU Backgammon 1.07 imported as unfinished (its points
    lost from the score)."""
    from engine.notation.matfile import read_mat, replay
    save = tmp_path / "r.mat"
    code, out = run(["--seed", "3", "--save", str(save)], ["resign gammon"])
    assert code == 0 and "you resigned a gammon" in out
    (game,) = read_mat(save).games
    assert [(a.player, a.kind, a.move) for a in game.actions] == [
        (0, "roll", ""), (1, "win", "")] and (game.winner, game.points) == (1, 2)
    rolled = re.search(r"Opening roll: you (\d), the engine (\d)", out).groups()
    assert sorted(game.actions[0].dice) == sorted(int(d) for d in rolled)
    assert list(replay(read_mat(save))) == []


def test_beavers_at_the_terminal(monkeypatch, tmp_path):
    """``--beavers`` (money play with the cube): after taking the engine's double you are
    asked to beaver; the engine beavers your double where its policy says (made to
    here); the match file says ``Beaver "On"`` and holds the beaver; outside a money
    game with the cube the option is refused."""
    for argv in (["--beavers"], ["--cube", "--match", "3", "--beavers"]):
        with pytest.raises(SystemExit):
            run(argv, [])
    from engine.play.match import DecisionCubePolicy
    monkeypatch.setattr(DecisionCubePolicy, "double", lambda self, p, s: False)
    monkeypatch.setattr(DecisionCubePolicy, "take", lambda self, p, s: True)
    monkeypatch.setattr(DecisionCubePolicy, "beaver", lambda self, p, s: True)
    save = tmp_path / "b.mat"
    code, out = run(["--cube", "--beavers", "--seed", "3", "--save", str(save)],
                    ["1", "double", "double", "quit"])
    assert "The engine takes." in out and "The engine beavers to 4." in out
    text = save.read_text()
    assert 'Beaver "On"' in text and "Beavers => 4" in text
    # the beaver answers the double in the take's place, as GNU Backgammon writes it:
    # the file replays (it was refused, 'beaver with no double on offer'), and so the
    # same game saved as .sgf is written (it was a traceback)
    from engine.notation.matfile import read_mat, replay
    assert "Takes" not in text
    assert [d.action for d in replay(read_mat(save)) if d.kind == "answer"] == ["beaver"]
    code, out = run(["--cube", "--beavers", "--seed", "3", "--save", str(save.with_suffix(
        ".sgf"))], ["1", "double", "double", "quit"])
    assert code == 0 and ";B[double]" in save.with_suffix(".sgf").read_text()
    monkeypatch.setattr(DecisionCubePolicy, "double", lambda self, p, s: True)
    code, out = run(["--cube", "--beavers", "--seed", "3"],
                    ["1", "roll", "take", "beaver", "take", "maybe", "b", "quit"])
    assert "you beaver to 4." in out


def test_gnu_backgammon_commands_at_the_prompts(monkeypatch):
    """What a GNU Backgammon user types: ``move 24/18 13/11``, ``show board``, ``show
    pipcount``; ``roll``, ``double``, ``take``, ``new game``, ``undo`` at the move prompt
    are told why they do nothing there (not a move-text error); at the cube prompts
    ``hint`` is the engine's cube advice and ``board`` draws the board; a double is
    taken with ``accept`` and passed with ``reject``, and with beavers ``beaver`` takes
    and beavers at once; the engine's resignation is accepted with ``agree``."""
    code, out = run(["--cube", "--seed", "2"],
                    ["roll", "double", "take", "new game", "undo", "show pipcount",
                     "show score", "move 24/18 13/11", "hint", "board", "quit"])
    assert code == 0 and "cannot read" not in out
    assert "the dice are rolled already: you rolled 6-2" in out
    assert "a double is offered before your roll, at the 'cube>' prompt" in out
    assert "no double or resignation is offered now" in out
    assert "no new game or match from here" in out and "cannot be taken back" in out
    assert "> backgammon: X (to move) pips 167" in out
    assert "'show score': 'show board' and 'show pipcount'" in out
    assert "you play 24/18 13/11" in out
    assert "cube> the engine's advice: " in out and "cube>  13 14 15" in out
    from engine.play.match import DecisionCubePolicy
    monkeypatch.setattr(DecisionCubePolicy, "double", lambda self, p, s: True)
    code, out = run(["--cube", "--seed", "3"], ["1", "hint", "beaver", "accept", "quit"])
    assert "take> the engine would " in out and "beavers are off" in out
    assert "you take." in out
    code, out = run(["--cube", "--seed", "3"], ["1", "reject"])
    assert "you pass." in out and "the double is passed" in out
    monkeypatch.setattr(DecisionCubePolicy, "beaver", lambda self, p, s: False)
    code, out = run(["--cube", "--beavers", "--seed", "3"], ["1", "beaver", "quit"])
    assert "you take.\nyou beaver to 4." in out and "beaver> " not in out
    import engine.cli.play as terminal
    monkeypatch.setattr(terminal, "resignation_offer", lambda *a, **k: 2)
    code, out = run(["--seed", "4"], ["1", "agree"])
    assert "You win 2 points: the engine resigned a gammon." in out
