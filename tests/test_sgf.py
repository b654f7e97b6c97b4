"""GNU Backgammon's SGF match files (``engine.notation.sgf``).

The ``.sgf`` files of ``tests/data/matches`` are GNU Backgammon 1.07's: each ``.mat``
there imported (``import mat``) and saved (``save match``), and ``native1.sgf`` a
1-point match GNU Backgammon played against itself and saved with its analysis, then
exported (``export match mat``) as ``native1.mat``. Read either way, each replays to the
same decisions."""

import json
from pathlib import Path

import pytest

from engine.cli.review import main as review_main
from engine.notation.matfile import MatFileError, read_mat, replay
from engine.notation.sgf import parse_sgf, read_match, read_sgf

DATA = Path(__file__).parent / "data" / "matches"
PAIRS = sorted(p.stem for p in DATA.glob("*.sgf"))


def _key(d):
    return (d.game, d.player, d.kind, d.position.key(), d.cube_value, d.cube_owner,
            d.score, d.crawford, d.dice, d.after.key() if d.after else None, d.action,
            d.number)


def test_every_sgf_has_its_mat():
    assert len(PAIRS) >= 10 and all((DATA / f"{n}.mat").exists() for n in PAIRS)


@pytest.mark.parametrize("name", PAIRS)
def test_an_sgf_replays_to_the_decisions_of_its_mat(name):
    sgf, mat = read_sgf(DATA / f"{name}.sgf"), read_mat(DATA / f"{name}.mat")
    # (not the players: GNU Backgammon's import of long_name_gnubg.mat misread the
    # second name, and saved it so)
    assert sgf.length == mat.length
    assert [(g.score, g.winner, g.points) for g in sgf.games] == \
        [(g.score, g.winner, g.points) for g in mat.games]
    assert [_key(d) for d in replay(sgf)] == [_key(d) for d in replay(mat)]


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
    (_game("W[double]", "B[beaver]", "W[drop]"), "a beaver cannot be dropped"),
    (_game(root="MI[length:5][game:0][ws:5][bs:0]"), "score [5, 0]"),
    (_game("W[52mhxv]", root="MI[length:5]RE[X+1]"), "expected W+N or B+N"),
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
