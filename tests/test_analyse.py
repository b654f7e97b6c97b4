"""The analysis CLI and the protocol's ``best`` / ``evaluate``, with a small random
model standing in for ``models/backgammon.npz``."""

import json

import numpy as np
import pytest

from engine import Position
from engine.cli.analyse import main
from engine.cli.protocol import handle_line
from engine.eval.network import Network
from engine.notation.movetext import parse_move

# the search kernels take minutes to compile cold: every module that runs them
# stays on one test worker (--dist loadgroup), which compiles them once
pytestmark = pytest.mark.xdist_group("search")


@pytest.fixture()
def models(tmp_path, monkeypatch):
    """A models folder holding only a random backgammon network."""
    Network.create("backgammon", 16, rng=np.random.default_rng(5), scale=0.3).save(
        tmp_path / "backgammon.npz")
    monkeypatch.setenv("NARDY_MODELS", str(tmp_path))
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def ask(**req):
    return handle_line(json.dumps(req))


def test_hint_lists_ranked_plays(models, capsys):
    code, out, _ = run(capsys, "--position", "start", "--dice", "31", "--ply", "1",
                       "--top", "3", "--board")
    assert code == 0
    assert "backgammon, 3-1 to play" in out and "1-ply" in out
    ranked = [line for line in out.splitlines() if "Eq.:" in line]
    assert len(ranked) == 3 and ranked[0].lstrip().startswith("1.")
    assert " - " in out.splitlines()[out.splitlines().index(ranked[0]) + 1]


def test_json_output(models, capsys):
    code, out, _ = run(capsys, "--position", "4HPwATDgc/ABMA", "--dice", "3-1", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["count"] == 16 and data["model"]["sizes"] == "198-16-5"
    eq = [c["equity"] for c in data["candidates"]]
    assert eq == sorted(eq, reverse=True)
    assert set(data["candidates"][0]["probabilities"]) == {
        "win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon"}
    assert data["candidates"][0]["diff"] == 0


def test_evaluate_without_dice(models, capsys):
    code, out, _ = run(capsys, "--position", "start", "--json", "--ply", "1")
    data = json.loads(out)
    assert code == 0 and data["ply"] == 1
    from engine.search.nply import Search  # the models folder's network at 1-ply
    want = Search.load("backgammon").evaluate(Position.start(), 1)
    assert data["equity"] == pytest.approx(want.equity, abs=1e-6)


def test_a_double_offered_is_pointed_to_the_cube_advice(models, capsys):
    from engine.notation.gnubg_id import MatchInfo, match_id
    offered = match_id(MatchInfo(doubled=True, turn=1))
    code, out, err = run(capsys, "--position", f"4HPwATDgc/ABMA:{offered}")
    assert code == 0 and "before the roll" in out
    assert "the ID holds a double offered; python -m engine.cube_cli" in err
    code, out, err = run(capsys, "--position", "4HPwATDgc/ABMA:cAkAAAAAAAAA")
    assert code == 0 and "double offered" not in err


def test_dice_that_override_the_ids_dice_are_noted(models, capsys):
    # the ID's rolled 5-2 was replaced by --dice 31 without a word
    from engine.notation.gnubg_id import MatchInfo, match_id
    rolled = match_id(MatchInfo(dice=(5, 2)))
    code, out, err = run(capsys, "--position", f"4HPwATDgc/ABMA:{rolled}", "--dice", "31")
    assert code == 0 and "3-1 to play" in out
    assert "the ID's dice 5-2 are not used: --dice 3-1 is played instead" in err
    code, out, err = run(capsys, "--position", f"4HPwATDgc/ABMA:{rolled}", "--dice", "25")
    assert code == 0 and "not used" not in err
    code, out, err = run(capsys, "--position", f"4HPwATDgc/ABMA:{rolled}")
    assert code == 0 and "5-2 to play" in out and "not used" not in err


def test_game_without_a_model_still_lists_plays(models, capsys):
    code, out, _ = run(capsys, "--position", "start", "--variant", "long_nardy",
                       "--dice", "63")
    assert code == 0
    assert "no trained model for long_nardy yet" in out
    assert "unranked" in out and "24/15" in out
    code, out, _ = run(capsys, "--position", "start", "--variant", "long_nardy",
                       "--dice", "63", "--json")
    data = json.loads(out)
    assert data["model"] is None and data["count"] == len(data["candidates"]) > 0
    code, out, _ = run(capsys, "--position", "start", "--variant", "portes", "--dice", "31",
                       "--top", "2")
    assert code == 0 and "16 legal play(s), unranked:" in out
    assert "    2. " in out and "    3. " not in out
    assert "(the first 2 of 16 plays; --top N shows N, --top 0 all)" in out


def test_bad_input_is_an_error(models, capsys):
    with pytest.raises(SystemExit):
        run(capsys, "--position", "start", "--dice", "31", "--top", "-1")
    code, _, err = run(capsys, "--position", "start", "--dice", "71")
    assert code == 2 and "71" in err
    # flags that were ignored without a word
    for flags, words in ((["--top", "3"], "--top 3 lists a roll's plays"),
                         (["--dice", "31", "--json", "--board"], "--json has none")):
        with pytest.raises(SystemExit):
            run(capsys, "--position", "start", *flags)
        assert words in capsys.readouterr().err


def test_a_model_asked_for_must_exist(models, capsys):
    code, out, err = run(capsys, "--position", "start", "--dice", "31", "--model",
                         str(models / "none.npz"))
    assert code == 2 and out == "" and "none.npz' does not exist" in err


def test_a_finished_game_has_no_plays(models, capsys):
    over = Position.start().to_json()
    over["them"], over["bar"], over["off"] = [0] * 24, [0, 0], [0, 15]
    for extra in ((), ("--ply", "2"), ("--rollout", "--trials", "36")):
        code, out, err = run(capsys, "--position", json.dumps(over), "--dice", "31", *extra)
        assert code == 2 and out == "", extra
        assert "the game is over (won by the opponent with a backgammon, 3 points)" in err
    for cmd in ("moves", "best"):
        # the game's end before the dice: [7, 1] was invalid_dice from `best`
        for dice in ([3, 1], [7, 1], None):
            reply = ask(cmd=cmd, position=over, dice=dice)
            assert reply["error"]["code"] == "invalid_position", (cmd, dice, reply)
            assert "the game is over" in reply["error"]["message"]
    # in the game's own words: nardy's mars, not the kind's name "gammon"
    nardy = Position.start("long_nardy").to_json()
    nardy["them"], nardy["off"] = [0] * 24, [0, 15]
    reply = ask(cmd="moves", position=nardy, dice=[3, 1])
    assert "(won by the opponent with mars, 2 points)" in reply["error"]["message"]
    # its value before a roll is its result
    assert ask(cmd="evaluate", position=over)["equity"] == -3.0


def test_a_value_that_starts_with_a_dash_reaches_the_program_s_check(models, capsys):
    """argparse took '-3,1' and '-,8/0.16' (a skipped filter level) for options and
    stopped with "expected one argument"; the program's own checks name the problem."""
    code, out, err = run(capsys, "--position", "start", "--dice", "-3,1")
    assert code == 2 and out == "" and "dice '-3,1'" in err
    code, out, err = run(capsys, "--position", "start", "--dice", "31", "--ply", "2",
                         "--filters", "-,x")
    assert code == 2 and "level 1 'x'" in err and "expected one argument" not in err


def test_dice_with_a_stray_sign_are_an_error(models, capsys):
    """Regression: ``--dice -31`` was read as 3-1."""
    for text in ("-31", "3-1-", "3--1"):
        code, out, err = run(capsys, "--position", "start", "--dice", text)
        assert code == 2 and out == "" and repr(text) in err and err.count("\n") == 1


def test_protocol_best_and_evaluate(models):
    start = Position.start().to_json()
    reply = ask(id=3, cmd="best", position=start, dice=[3, 1], ply=1)
    assert reply["id"] == 3 and len(reply["candidates"]) + reply["cut"] == 16
    assert reply["best"] == reply["candidates"][0]["position"]
    assert reply["move"] == reply["candidates"][0]["move"]
    eq = [c["equity"] for c in reply["candidates"]]
    assert all(c["ply"] == 1 for c in reply["candidates"])
    assert eq == sorted(eq, reverse=True) and reply["equity"] == eq[0]
    cut = ask(cmd="best", position=start, dice=[3, 1], ply=1, limit=5)
    assert cut["truncated"] is True and cut["count"] == 16
    assert cut["candidates"] == reply["candidates"][:5] and cut["best"] == reply["best"]
    assert "truncated" not in reply and "count" not in reply
    zero = ask(cmd="evaluate", position="4HPwATDgc/ABMA")
    one = ask(cmd="evaluate", position=start, ply=1)
    assert set(zero["probabilities"]) == set(one["probabilities"])
    assert zero["equity"] != one["equity"]


def test_protocol_errors(models):
    start = Position.start().to_json()
    assert ask(cmd="best", position=start, dice=[3, 1], ply=4)["error"]["code"] == "invalid_ply"
    assert ask(cmd="evaluate", position=start, ply="2")["error"]["code"] == "invalid_ply"
    assert ask(cmd="best", position=start)["error"]["code"] == "missing_field"
    assert ask(cmd="best", position=start, dice=[3, 1],
               limit=-1)["error"]["code"] == "invalid_limit"
    err = ask(cmd="evaluate", position=Position.start("fevga").to_json())["error"]
    assert err["code"] == "no_model" and "no trained model for fevga yet" in err["message"]


def test_large_cascade_shows_the_top_plays_with_their_text(models, capsys):
    """A gul bara 1-1 cascade of 122,226 plays: every play rated, the text written for
    the plays shown only (through the cascade walk's layers)."""
    Network.create("gul_bara", 8, rng=np.random.default_rng(5), scale=0.3).save(
        models / "gul_bara.npz")
    pos = Position.from_literal("x 24:6 20:3 17:3 13:3; o 24:10 21:3 19:2",
                                variant="gul_bara", turns=(5, 5))
    code, out, _ = run(capsys, "--position", json.dumps(pos.to_json()), "--dice", "11",
                       "--top", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["count"] == 122226 and len(data["candidates"]) == 2
    best = Position.from_json(data["candidates"][0]["position"])
    assert parse_move(data["candidates"][0]["move"], pos, (1, 1)) == best
    # without --top: the first 10,000 plays (of 122,226), the cut said in text
    code, out, _ = run(capsys, "--position", json.dumps(pos.to_json()), "--dice", "11")
    assert code == 0 and out.count("Eq.:") == 10000
    assert "(the first 10,000 of 122,226 plays; --top N shows N, --top 0 all)" in out
    # the protocol's best: the top of the list, marked as cut
    reply = ask(cmd="best", position=pos.to_json(), dice=[1, 1], limit=3)
    assert reply["truncated"] is True and reply["count"] == 122226
    assert [c["move"] for c in reply["candidates"][:2]] == [
        c["move"] for c in data["candidates"]]
    assert reply["best"] == data["candidates"][0]["position"]


def test_the_board_draws_a_pinned_plakoto_checker_as_its_owner_s():
    """A pinned checker was drawn with its pinner's letter (``X`` over ``X`` for one X
    pinning one O, a made point to the eye), and the opponent's pins were listed in
    his numbering, which the board's labels do not use."""
    from engine.notation.board import render
    pos = Position.from_json({"variant": "plakoto", "me": [0] * 19 + [1] + [0] * 3 + [14],
                              "them": [0] * 4 + [1] + [0] * 18 + [14], "pinned": [[], [5]]})
    lines = render(pos).splitlines()
    col = lines[0].split().index("20")
    assert [lines[r].split()[col] for r in (1, 2, 3)] == ["o", "X", "."]
    assert "O on [20] (points as drawn)" in lines[-1]
    mine = Position.from_json({"variant": "plakoto", "me": [0] * 4 + [1] + [0] * 18 + [14],
                               "them": [0] * 19 + [2] + [0] * 3 + [13],
                               "pinned": [[5], []]})
    text = render(mine).splitlines()
    col = text[12].split().index("5")            # the bottom labels, 12 .. 1
    assert [text[r].split()[col] for r in (11, 10, 9, 8)] == ["x", "O", "O", "."]


@pytest.mark.parametrize("argv, words", [
    (["--rollout", "--dice", "31", "--trials", "36", "--top", "2"], "--top 2 lists"),
    (["--rollout", "--ply", "3"], "--ply 3: expected 0..2 with --rollout"),
])
def test_analyse_refuses_options_it_would_ignore_or_misname(argv, words, capsys):
    """``--top`` with ``--rollout`` was ignored without a word, and a ply out of range
    was named by the API's parameter (``ply = 4``), its rollout limit in no help."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and words in capsys.readouterr().err


def test_analyse_names_the_rollout_options_and_reads_a_bare_xgid(capsys):
    """Rollout settings out of range were named ``trials = 0``; an XGID without its
    ``XGID=`` prefix (GNU Backgammon's ``set xgid`` takes both) was "neither ... an
    XGID"; the rollout footer explained a ``?`` that was not printed; ``--help``
    showed reStructuredText roles."""
    assert main(["--rollout", "--dice", "31", "--trials", "0"]) == 2
    assert "error: --trials 0: expected" in capsys.readouterr().err
    bare = "--BFabCa-------aAbbcb--aC-:1:-1:1:12:0:0:0:0:10"
    assert main(["--position=" + bare, "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(["--position", "XGID=" + bare, "--json"]) == 0
    assert a == json.loads(capsys.readouterr().out)
    assert main(["--rollout", "--dice", "31", "--trials", "36", "--truncate", "1",
                 "--candidates", "2"]) == 0
    out = capsys.readouterr().out
    assert ("?" in out.split("(?:")[0]) == ("(?:" in out)
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert ":func:" not in text and "``" not in text and "DEFAULT_SHOWN" not in text


def test_plays_at_a_match_score_are_ranked_by_match_equity(capsys):
    """A Match ID's score was passed over (cubeless money ranking), where GNU
    Backgammon's hint ranks by match equity. At double match point a play is worth its
    winning chance; 4-away against 2-away, gammons count."""
    from engine.notation.gnubg_id import MatchInfo, format_gnubg
    for score in ((6, 6), (3, 5)):
        text = format_gnubg(Position.start(), MatchInfo(match_length=7, score=score,
                                                        dice=(6, 4)))
        assert main(["--position", text, "--json"]) == 0
        cands = json.loads(capsys.readouterr().out)["candidates"]
        values = [c["cubeful_equity"] for c in cands]
        assert values == sorted(values, reverse=True) and len(cands) == 14
        if score == (6, 6):
            assert all(c["mwc"] == pytest.approx(c["probabilities"]["win"], abs=2e-6)
                       for c in cands)
            assert [c["move"] for c in cands] == [c["move"] for c in sorted(
                cands, key=lambda c: -c["probabilities"]["win"])]
        else:   # not the cubeless order: the gammonish 8/2 6/2 gains
            assert [c["move"] for c in cands] != [c["move"] for c in sorted(
                cands, key=lambda c: -c["equity"])]
        diffs = [c["diff"] for c in cands]       # to the best by match equity
        assert diffs[0] == 0 and all(d <= 0 for d in diffs)
    assert main(["--position", text, "--top", "2"]) == 0
    out, err = capsys.readouterr()
    assert "ranked by cubeful match equity: the mover 4-away, the opponent 2-away, cube 1, centred" in out
    assert "MWC" in out and "    3. " not in out and "match" not in err
    # deeper, the chances are the search's, the cube valued on them at the root (not
    # GNU Backgammon's cubeful n-ply), said so (helper 136)
    assert main(["--position", text, "--ply", "1", "--top", "1"]) == 0
    assert ("ranked by cubeful match equity (1-ply cubeless chances, the cube valued on "
            "them as at 0-ply)") in capsys.readouterr().out
    # at 1-ply the plays the filter cut carry match equities from their 0-ply chances
    assert main(["--position", text, "--ply", "1", "--json"]) == 0
    cands = json.loads(capsys.readouterr().out)["candidates"]
    assert {c["ply"] for c in cands} == {0, 1}
    assert all("cubeful_equity" in c and c["diff"] <= 0 for c in cands)
    # a position without a cube, and a match longer than the table: cubeless, the
    # latter with a note
    assert main(["--position", "4HPwATDgc/ABMA", "--dice", "31"]) == 0
    out, err = capsys.readouterr()
    assert "match" not in err and "MWC" not in out and "cubeful" not in out
    assert "ranked by cubeless money equity (the position holds no cube" in out
    text = format_gnubg(Position.start(), MatchInfo(match_length=65, dice=(3, 1)))
    assert main(["--position", text]) == 0
    out, err = capsys.readouterr()
    assert "longer than the match equity table covers" in err and "MWC" not in out
    assert "holds no cube" not in out         # it holds one (helper 137)
    text = format_gnubg(Position.start(), MatchInfo(match_length=7, score=(3, 5)))
    assert main(["--position", text]) == 0
    assert "the evaluation is cubeless" in capsys.readouterr().err


def test_an_id_of_money_play_ranks_by_cubeful_money_equity(capsys):
    """An ID that holds the cube in money play (a Match ID, an XGID) has its plays ranked
    as GNU Backgammon ranks them there, by cubeful money equity: with the Jacoby rule a
    gammon counts for nothing while the cube is centred (4-3 from the start: 24/20 13/10, where
    the cubeless best is 13/10 13/9); the Match ID's and the XGID's rankings agree."""
    from engine.cli._decide import search_for
    from engine.cube.decision import CubeState, play_value
    from engine.notation.gnubg_id import MatchInfo, format_gnubg
    from engine.notation.xgid import XgidInfo, format_xgid
    start = Position.start()
    match_id = format_gnubg(start, MatchInfo(dice=(4, 3)))
    xgid = format_xgid(start, XgidInfo(dice=(4, 3), jacoby=True))
    ranked = []
    for text in (match_id, xgid):
        assert main(["--position", text, "--json"]) == 0
        cands = json.loads(capsys.readouterr().out)["candidates"]
        values = [c["cubeful_equity"] for c in cands]
        assert values == sorted(values, reverse=True) and cands[0]["move"] == "24/20 13/10"
        assert all("mwc" not in c for c in cands)
        ranked.append([(c["move"], c["cubeful_equity"]) for c in cands])
    assert ranked[0] == ranked[1]
    # each value is the play's cubeful value, the opponent's proper cube action after it
    plays = {c.move: c for c in search_for("backgammon").analyse(start, (4, 3)).candidates}
    for move, value in ranked[0]:
        c = plays[move]
        assert value == pytest.approx(play_value(c.probabilities, c.position,
                                                 CubeState())[0], abs=2e-6)
    assert main(["--position", xgid]) == 0
    out = capsys.readouterr().out
    assert "ranked by cubeful money equity: cube 1, centred, Jacoby rule" in out
    assert "MWC" not in out
    # without the Jacoby rule gammons count, and 4-3's cubeless best is best again
    no_jacoby = format_xgid(start, XgidInfo(dice=(4, 3)))
    assert main(["--position", no_jacoby, "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "13/10 13/9" in out and "cube 1, centred; Eq." in out


def test_rolls_lists_each_roll_s_best_play_and_their_mean_is_one_ply_deeper(models, capsys):
    # the 21 best plays at 0-ply, weighted by their chances, are the position's 1-ply
    # value (a Position ID without a Match ID: no cube, cubeless equities)
    pos = "sG/gATDgc/ABMA"
    code, out, _ = run(capsys, "--position", pos, "--rolls", "--json")
    assert code == 0
    got = json.loads(out)
    rolls = got["rolls"]
    assert len(rolls) == 21 and {tuple(r["dice"]) for r in rolls} == {
        (a, b) for a in range(1, 7) for b in range(1, a + 1)}
    assert sum(r["chance"] for r in rolls) == pytest.approx(1.0)
    assert [r["equity"] for r in rolls] == sorted((r["equity"] for r in rolls), reverse=True)
    code, out, _ = run(capsys, "--position", pos, "--ply", "1", "--json")
    assert got["mean"] == pytest.approx(json.loads(out)["equity"], abs=2e-6)
    assert not got["cubeful"]
    # each roll's play is the best play of that roll
    for r in rolls[:3]:
        code, out, _ = run(capsys, "--position", pos, "--dice", "".join(map(str, r["dice"])),
                           "--json")
        assert json.loads(out)["candidates"][0]["move"] == r["move"]
    code, out, _ = run(capsys, "--position", pos, "--rolls")
    assert "the 21 rolls before the roll" in out and "mean over the 36 rolls" in out
    assert "(vs the mean " in out         # the play list's (...) is to the best play


def test_rolls_of_an_id_with_the_cube_are_ranked_cubefully(models, capsys):
    code, out, _ = run(capsys, "--position",
                       "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:0:0:0:0:10", "--rolls",
                       "--json")
    assert code == 0 and json.loads(out)["cubeful"]


@pytest.mark.parametrize("argv", [["--rolls", "--dice", "31"], ["--rolls", "--top", "3"],
                                  ["--rolls", "--rollout"]])
def test_rolls_refuses_what_it_would_ignore(argv, models, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and "--rolls" in capsys.readouterr().err


def test_rolls_of_a_position_with_pending_dice_is_an_error(capsys):
    pending = json.dumps({"variant": "gul_bara", "me": [0] * 23 + [15],
                          "them": [0] * 23 + [15], "pending": [3, 3]})
    code, _, err = run(capsys, "--position", pending, "--rolls")
    assert code == 2 and "pending dice" in err


def test_filters_choose_how_many_plays_each_ply_rates(models, capsys):
    """``--filters K/W,...``: at most K plays go on from each level below ``--ply``;
    ``-`` skips a level, as GNU Backgammon's normal filter skips 1-ply at 2-ply."""
    def plies(spec):
        code, out, _ = run(capsys, "--dice", "31", "--ply", "2", "--filters", spec, "--json")
        assert code == 0
        return sorted((c["ply"] for c in json.loads(out)["candidates"]), reverse=True)

    assert plies("3/1,2/1") == [2, 2, 1] + [0] * 13
    assert plies("3/1,-") == [2, 2, 2] + [0] * 13
    assert plies("16/10,1/0") == [2] + [1] * 15


@pytest.mark.parametrize("argv, words", [
    (["--ply", "2", "--filters", "8/0.16"], "1 level(s) for a 2-ply search: expected 2"),
    (["--ply", "2", "--filters", "8/x,-"], "level 0 '8/x': expected K/W"),
    (["--ply", "1", "--filters", "0/0.1"], "MoveFilter keep = 0"),
    (["--ply", "0", "--filters", "8/0.16"], "a 0-ply search has no filters"),
])
def test_bad_filters_are_an_error_naming_the_level(argv, words, models, capsys):
    code, _, err = run(capsys, "--dice", "31", *argv)
    assert code != 0 and words in err and "Traceback" not in err


def test_filters_are_refused_with_a_rollout(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--rollout", "--filters", "8/0.16,-"])
    assert exc.value.code == 2 and "a rollout's checker play" in capsys.readouterr().err
