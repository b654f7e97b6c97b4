"""GNU Backgammon's SGF match files (``engine.notation.sgf``).

The ``.sgf`` files of ``tests/data/matches`` are GNU Backgammon 1.07's: each ``.mat``
there imported (``import mat``) and saved (``save match``), and ``native1.sgf`` a
1-point match GNU Backgammon played against itself and saved with its analysis, then
exported (``export match mat``) as ``native1.mat``. Read either way, each replays to the
same decisions."""

import json
import re
from pathlib import Path

import pytest

from engine.cli.review import main as review_main
from engine.notation.matfile import MatFileError, read_mat, replay
from engine.notation.sgf import parse_sgf, read_match, read_sgf

DATA = Path(__file__).parent / "data" / "matches"
PAIRS = sorted(p.stem for p in DATA.glob("*.sgf") if p.with_suffix(".mat").exists())


def _key(d):
    return (d.game, d.player, d.kind, d.position.key(), d.cube_value, d.cube_owner,
            d.score, d.crawford, d.dice, d.after.key() if d.after else None, d.action,
            d.number)


def test_the_pairs_are_there():
    assert len(PAIRS) >= 14


@pytest.mark.parametrize("name", PAIRS)
def test_an_sgf_replays_to_the_decisions_of_its_mat(name):
    sgf, mat = read_sgf(DATA / f"{name}.sgf"), read_mat(DATA / f"{name}.mat")
    # (not the players: GNU Backgammon's import of long_name_gnubg.mat misread the
    # second name, and saved it so)
    assert sgf.length == mat.length
    assert [(g.score, g.winner, g.points) for g in sgf.games] == \
        [(g.score, g.winner, g.points) for g in mat.games]
    assert [_key(d) for d in replay(sgf)] == [_key(d) for d in replay(mat)]


def test_what_gnu_backgammon_writes_of_odd_turns():
    """GNU Backgammon's own files (each with its own .mat export, which replays alike,
    in the pair test above): a roll made with 'roll' and saved before the move (the dice
    set, then the roll written again with no play), a raccoon after which the beaverer
    redoubles (GNU Backgammon gives the cube to the side not on roll), a beaver and a
    raccoon passed; and a game at a post-Crawford score, which the file says is not the
    Crawford game (a .mat file cannot say it)."""
    roll = read_sgf(DATA / "roll_saved_before_move.sgf").games[0].actions
    assert [(a.kind, a.dice, a.move) for a in roll] == [("roll", (2, 1), "13/11 6/5"),
                                                         ("roll", (5, 2), "")]
    ds = list(replay(read_sgf(DATA / "raccoon_redoubled.sgf")))
    assert [(d.action, d.player) for d in ds if d.action in ("double", "beaver")][-1] == \
        ("double", 0) and ds[-1].cube_value == 8 and ds[-1].cube_owner == 0
    for name, winner, points in (("beaver_dropped", 0, 2), ("raccoon_dropped", 1, 4)):
        game = read_sgf(DATA / f"{name}.sgf").games[0]
        assert (game.winner, game.points) == (winner, points)
        list(replay(read_sgf(DATA / f"{name}.sgf")))        # the pass gives those points
    post = read_sgf(DATA / "post_crawford_single_game.sgf")
    assert post.games[0].score == (2, 1) and post.games[0].crawford is False
    assert [d.action for d in replay(post) if d.kind == "cube"][-1] == "double"


def test_the_rules_and_players_are_read():
    r = read_sgf(DATA / "gnubg_money.sgf")
    assert r.length == 0 and r.players == ("gnubg", "root")
    assert r.flag("Jacoby", False) is True
    assert read_sgf(DATA / "gnubg_5_point.sgf").flag("Crawford", False) is True
    # a beaver (GNU Backgammon records it as the doubled player's double) and a raccoon
    kinds = [a.kind for a in read_sgf(DATA / "raccoon.sgf").games[0].actions]
    assert kinds[2:5] == ["double", "beaver", "beaver"] and "take" not in kinds[:5]


def _game(*nodes, root="MI[length:5][game:0][ws:0][bs:0]PW[Alice]PB[Bob]RU[Crawford]"):
    return "(;FF[4]GM[6]" + root + "".join(f"\n;{n}" for n in nodes) + ")"


def test_moves_are_read_in_each_player_s_direction():
    # Black's a..x are his points 24..1, White's a..x his points 1..24; y the bar, z off
    r = parse_sgf(_game("B[31qtst]", "W[52mhxv]", "B[double]", "W[take]", "B[41ydaz]",
                        root="MI[length:0][game:0][ws:0][bs:0]PW[A \\] B]PB[C]"))
    a = r.games[0].actions
    assert r.players == ("A ] B", "C")                 # an escaped ']' in a value
    assert (a[0].player, a[0].dice, a[0].move) == (1, (3, 1), "8/5 6/5")
    assert (a[1].player, a[1].dice, a[1].move) == (0, (5, 2), "13/8 24/22")
    assert [x.kind for x in a[2:4]] == ["double", "take"] and a[2].value == 2
    assert a[4].move == "25/21 24/0"
    assert [x.number for x in a] == [1, 2, 2, 3, 3]


def test_only_the_main_line_of_variations_is_read():
    text = ("(;FF[4]GM[6]MI[length:0][game:0][ws:0][bs:0]PW[a]PB[b];W[31hefe]"
            "(;B[52lqac])(;B[64lrlp]))")
    a = parse_sgf(text).games[0].actions
    assert [x.move for x in a] == ["8/5 6/5", "13/8 24/22"]


@pytest.mark.parametrize("text, words", [
    ("not an sgf", "expected '('"),
    ("", "not an SGF file"),
    ("(;FF[4]GM[1]SZ[19];B[dd])", "not a backgammon game"),
    (_game("AB[a][b]"), "set up by hand"),
    (_game("B[21ab]", root="MI[length:5]RU[Nackgammon]"), "not standard backgammon"),
    (_game("W[52mhxv"), "not closed"),
    (_game("PL[B]DI[79]"), "two dice"),
    (_game("DI[31]"), "whose dice"),
    (_game("W[52m]"), "expected dice and letter pairs"),
    (_game("W[double]", "B[52mhxv]"), "a roll while a double is offered"),
    (_game("W[take]"), "no double on offer"),
    (_game("W[52mhxv]W[52mhxv]"), "two moves in one node"),
    (_game("W[52mhxv]", "b[21lnst]"), "in capitals"),
    (_game(root="MI[length:\u00b2]"), "MI[length:\u00b2]"),
    (_game(root="MI[length:99999]"), "a 99999-point match"),
    (_game() + _game(), "numbered in order"),
    ("(;FF[4]GM[6]MI[length:5]" + "(;B[21lnst]" * 3000 + ")" * 3001, "nested too deeply"),
    ("(;FF[4]MI[length:5];B[21lnst])", "no GM[6]"),
    (_game(root="MI[length:5][game:0][ws:2][bs:1]RU[Crawford:CrawfordGame]"),
     "the Crawford game at [2, 1]"),
    (_game(root="MI[length:5][game:0][ws:5][bs:0]"), "score [5, 0]"),
    (_game(root="MI[length:0]RU[Jacoby]CV[2]"), "automatic doubles"),
])
def test_bad_files_are_refused_by_what_is_wrong(text, words):
    with pytest.raises(MatFileError) as exc:
        parse_sgf(text)
    assert words in str(exc.value)


def test_read_match_tells_the_kinds_apart(tmp_path):
    assert read_match(DATA / "raccoon.sgf").games == read_sgf(DATA / "raccoon.sgf").games
    assert read_match(DATA / "raccoon.mat").games == read_mat(DATA / "raccoon.mat").games
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;FF[4]GM[6];W[zz])")
    with pytest.raises(MatFileError, match="bad.sgf"):
        read_match(bad)


def _no_lines(x):
    """A review's JSON without the file's line numbers (the two files differ there)."""
    if isinstance(x, dict):
        return {k: _no_lines(v) for k, v in x.items() if k != "line"}
    if isinstance(x, list):
        return [_no_lines(v) for v in x]
    return x


def test_review_reads_an_sgf(capsys):
    assert review_main([str(DATA / "native1.sgf"), "--json"]) == 0
    sgf = json.loads(capsys.readouterr().out)
    assert review_main([str(DATA / "native1.mat"), "--json"]) == 0
    mat = json.loads(capsys.readouterr().out)
    assert sgf["decisions"] and _no_lines(sgf) == _no_lines(mat)


@pytest.mark.parametrize("points, ok", [(0, False), (1, True), (2, True), (3, True),
                                        (4, False), (10 ** 8, False)])
def test_a_resignation_scores_one_two_or_three_times_the_cube(points, ok):
    text = _game("B[21lnst]", root=f"MI[length:0][game:0][ws:0][bs:0]RE[W+{points}R]")
    record = parse_sgf(text)
    if ok:
        assert [d.kind for d in replay(record)] == ["play"]
    else:
        with pytest.raises(MatFileError, match="by a resignation at cube 1"):
            list(replay(record))


def test_errors_name_their_line_and_big_numbers_are_no_traceback():
    text = "(;FF[4]GM[6]MI[length:5]\n;B[21lnst]\n;W[52mhxv]\n;B[oops])"
    with pytest.raises(MatFileError, match="SGF line 4"):
        parse_sgf(text)
    from engine.notation.matfile import parse_mat
    for mat in (" " + "9" * 5000 + " point match\n",
                " 5 point match\n Game " + "1" * 5000 + "\n"):
        with pytest.raises(MatFileError):
            parse_mat(mat)


def test_parse_match_reads_a_byte_order_mark_before_either_kind():
    from engine.notation.sgf import parse_match
    sgf = (DATA / "raccoon.sgf").read_text()
    mat = (DATA / "raccoon.mat").read_text()
    assert parse_match("\ufeff" + sgf).games == parse_sgf(sgf).games
    assert parse_match("\ufeff" + mat).games == read_mat(DATA / "raccoon.mat").games


def test_review_of_a_money_session_as_json(capsys):
    # the close flag of a cube decision was a numpy bool, which JSON cannot write
    assert review_main([str(DATA / "gnubg_money.sgf"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["length"] == 0 and all(isinstance(d.get("close", False), bool)
                                      for d in got["decisions"])


def test_a_game_starts_at_the_score_the_last_one_left(tmp_path):
    text = (DATA / "gnubg_5_point.mat").read_text()
    from engine.notation.matfile import parse_mat
    list(replay(parse_mat(text)))                        # as GNU Backgammon wrote it
    game2 = text.index(" Game 2")
    wrong = text[:game2] + text[game2:].replace(": 0 ", ": 3 ", 1)   # first score of game 2
    with pytest.raises(MatFileError, match="game 1 ended at"):
        list(replay(parse_mat(wrong)))


def test_a_utf16_match_file_is_read(tmp_path):
    path = tmp_path / "utf16.mat"
    path.write_bytes((DATA / "raccoon.mat").read_text().encode("utf-16"))
    assert read_mat(path).games == read_mat(DATA / "raccoon.mat").games


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.mat")))
def test_format_sgf_writes_what_parse_sgf_reads_back(name):
    """The writer's SGF replays to the decisions of the file it was written from (GNU
    Backgammon 1.07 loaded eight of them, beavers, raccoons and resignations among them,
    and exported the same matches: checked ad hoc)."""
    from engine.notation.sgf import format_sgf
    record = read_mat(DATA / name)
    text = format_sgf(record)
    back = parse_sgf(text)
    assert [_key(d)[:-1] for d in replay(back)] == [_key(d)[:-1] for d in replay(record)]
    assert [(g.score, g.winner, g.points) for g in back.games] == \
        [(g.score, g.winner, g.points) for g in record.games]
    assert back.players == record.players and back.length == record.length


def test_format_sgf_marks_resignations_and_escapes_names():
    from engine.notation.sgf import format_sgf
    text = format_sgf(read_mat(DATA / "setdice_resigns_5pt.mat"))
    assert "RE[W+1R]" in text and ";PL[B]DI[31]" in text
    record = read_mat(DATA / "raccoon.mat")
    from dataclasses import replace
    named = replace(record, players=("a]b", "c\\d"))
    assert parse_sgf(format_sgf(named)).players == ("a]b", "c\\d")


def test_a_game_is_scored_by_its_play_as_gnu_backgammon_scores_it():
    """GNU Backgammon 1.07's ``load match`` (checked ad hoc) scores a game by its play: a
    pass, the last checker off; RE only where the play leaves it unfinished, and then
    only a resignation (``R``, or Gibbon's ``Resign``); an RE it cannot read is passed
    over. So do these files read."""
    for name in ("gnubg_5_point", "long_name_gnubg", "gnubg_money", "raccoon_dropped"):
        text = (DATA / f"{name}.sgf").read_text()
        want = [(g.winner, g.points) for g in parse_sgf(text).games]
        assert sum(1 for w, _ in want if w is not None) == len(want)
        for other in ("", "RE[0]", "RE[?]", "RE[X+1]", "RE[W+" + "9" * 5000 + "]",
                      "RE[W+1]", "RE[B+3]"):                # none, unreadable, or wrong
            # every game the play ends (RE without R) written so
            changed = re.sub(r"RE\[[WB]\+[0-9]+\]", lambda m: other, text)
            assert changed != text
            record = parse_sgf(changed)
            assert [(g.winner, g.points) for g in record.games] == want
            list(replay(record))
    # a pass with no RE: the doubler wins the cube before the double
    passed = parse_sgf(_game("W[31hefe]", "B[42qusu]", "W[double]", "B[drop]",
                             root="MI[length:5][game:0][ws:0][bs:0]RU[Crawford]"))
    assert (passed.games[0].winner, passed.games[0].points) == (0, 1)
    # unfinished: RE without R is not the result; with R (or Resign) it is
    for re_text, got in (("RE[W+1]", (None, 0)), ("RE[B+2R]", (1, 2)),
                         ("RE[B+2Resign]", (1, 2))):
        g = parse_sgf(_game("W[31hefe]", "B[42qusu]",
                            root="MI[length:5][game:0][ws:0][bs:0]" + re_text)).games[0]
        assert (g.winner, g.points) == got


def test_gibbon_s_resignations_and_other_trees_are_passed_over():
    """Gibbon (libgsgf) writes a resignation offered and answered as moves
    (``B[resign:2]``, ``W[accept]``, ``W[reject]``) and RE[W+2Resign]; GNU Backgammon
    passes over those moves, and over a game tree of another game (GM[1], no GM)."""
    text = _game("W[31hefe]", "B[resign:1]", "W[reject]", "B[42qusu]", "W[21mkxw]",
                 "B[resign:2]", "W[accept]",
                 root="MI[length:7][game:0][ws:0][bs:0]PW[Joe]PB[Snow]RE[W+2Resign]")
    record = parse_sgf("(;FF[4]GM[1]SZ[19];B[dd])\n" + text + "\n(;FF[4];B[aa])")
    game = record.games[0]
    assert [a.kind for a in game.actions] == ["roll", "roll", "roll", "win"]
    assert (game.winner, game.points) == (0, 2) and record.players == ("Joe", "Snow")
    assert [d.dice for d in replay(record) if d.kind == "play"] == [(3, 1), (4, 2), (2, 1)]


def test_text_before_the_first_game_tree_is_passed_over():
    """A mail's or a page's lines before ``(;FF[4]GM[6]...`` (GNU Backgammon's load
    match warns and reads on): the same games, each line number two lines on."""
    from engine.notation.sgf import parse_match
    text = (DATA / "gnubg_5_point.sgf").read_text()
    plain, quoted = parse_match(text), parse_match("Here is the match:\n\n" + text)
    assert [g.line + 2 for g in plain.games] == [g.line for g in quoted.games]
    assert ([(d.kind, d.position, d.after) for d in replay(plain)]
            == [(d.kind, d.position, d.after) for d in replay(quoted)])
    assert (quoted.players, quoted.length) == (plain.players, plain.length)
    opened = parse_match("(c) the players\n" + text)         # a '(' not a game tree's
    assert [g.line - 1 for g in opened.games] == [g.line for g in plain.games]
    with pytest.raises(MatFileError, match="match length"):
        parse_match("hello (;FF[4]")            # no GM[: read as a .mat file, and refused
