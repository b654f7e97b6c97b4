"""FIBS board strings (engine/notation/fibs.py) against the ones GNU Backgammon writes.

``tests/data/fibs/gnubg_boards.jsonl`` was made with Debian's GNU Backgammon 1.07.001 by
``benchmarks/gnubg_external.py --record`` (the header line says how): ``"external"``
rows are the board strings it sent its external player (the engine, as its player 1 and
as its player 0) with the Position ID and Match ID it showed for the same state;
``"rawboard"`` rows are its ``show board`` output with ``set output rawboard on`` for
those IDs. Each string must read back as the state the IDs name.
"""

import json
from pathlib import Path

import pytest

from engine.errors import FibsBoardError, NotationError
from engine.notation.fibs import gnubg_board, parse_fibs_board
from engine.notation.gnubg_id import position_from_gnubg, position_id
from engine.rules.position import Position

DATA = Path(__file__).resolve().parent / "data" / "fibs" / "gnubg_boards.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines()
        if line and not line.startswith("#")]
START = ("board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:"
         "0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")


def _expected(gid: str) -> dict:
    pos, info = position_from_gnubg(gid)
    assert info is not None
    return {"position": position_id(pos), "cube": info.cube_value, "owner": info.cube_owner,
            "length": info.match_length,
            "score": tuple(info.score) if info.match_length else None,
            "crawford": info.crawford, "doubled": info.doubled,
            "dice": tuple(sorted(info.dice)) if info.dice and not info.doubled else None}


def _read(view) -> dict:
    return {"position": position_id(view.position), "cube": view.cube, "owner": view.owner,
            "length": view.match_length,
            "score": tuple(view.score) if view.match_length else None,
            "crawford": view.crawford, "doubled": view.decision in ("take", "beaver"),
            "dice": tuple(sorted(view.dice)) if view.dice else None}


def test_the_data_covers_both_sides_and_the_cube():
    ext = [r for r in ROWS if r["source"] == "external"]
    raw = [r for r in ROWS if r["source"] == "rawboard"]
    assert len(ext) >= 200 and len(raw) >= 200
    assert {r["engine_player"] for r in ext} == {0, 1}
    boards = [parse_fibs_board(r["board"]) for r in ext]
    assert any(b.was_doubled for b in boards)                       # a double on offer
    assert any(b.cube > 1 for b in boards)
    assert any(b.match_length and b.redoubles == 0 for b in boards)  # the Crawford game
    assert any(b.did_crawford for b in boards)                      # post-Crawford
    assert any(b.board[0] or b.board[25] for b in boards)           # on the bar
    assert any(b.turn == -1 for b in boards) and any(b.turn == 1 for b in boards)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["board"][-40:])
def test_every_string_reads_back_and_round_trips(row):
    board = parse_fibs_board(row["board"])
    assert board.text() == row["board"]
    convention = "gnubg" if row["source"] == "external" else "fibs"
    got = _read(board.view(convention))
    want = _expected(row["gnubg_id"])
    if row["source"] == "rawboard" and want["doubled"]:
        # GNU Backgammon's set gnubgid does not restore a double on offer: its board
        # then shows the doubler on roll, nothing offered
        want = dict(want, doubled=False)
    assert got == want


def test_the_external_strings_follow_gnubgs_players_not_fibs_slots():
    """In the strings sent to an external player the score fields follow GNU
    Backgammon's players 0 and 1 (fields 4 and 5 are player 0's and player 1's unless a
    double is on offer), while the board is written from player 1's side: FIBS's reading
    of them gets the score wrong whenever it is not level."""
    wrong = 0
    for row in ROWS:
        if row["source"] != "external":
            continue
        board = parse_fibs_board(row["board"])
        if board.match_length and board.score != board.opponent_score:
            fibs = board.view("fibs")
            wrong += fibs.score != _expected(row["gnubg_id"])["score"]
    assert wrong > 0


@pytest.mark.parametrize("row", [r for r in ROWS if r["source"] == "external"][:120],
                         ids=lambda r: r["board"][-40:])
def test_gnubg_board_writes_what_gnubg_wrote(row):
    board = parse_fibs_board(row["board"])
    pos, info = position_from_gnubg(row["gnubg_id"])
    assert info is not None
    length = info.match_length
    post = bool(length and not info.crawford and length - 1 in info.score)
    names = (board.player, board.opponent) if board.was_doubled else (board.opponent,
                                                                         board.player)
    made = gnubg_board(pos, on_roll_is_o=info.on_roll == 1, names=names,
                       match_length=length, score=info.score, dice=board.dice
                       if board.dice[0] else None, cube=info.cube_value,
                       owner=info.cube_owner, doubled=info.doubled, crawford=info.crawford,
                       post_crawford=post)
    assert made.text() == row["board"]


def test_the_fibs_example_board():
    board = parse_fibs_board(START)
    assert (board.player, board.opponent, board.match_length) == ("You", "someplayer", 3)
    view = board.view("fibs")
    assert view.position == Position.start("backgammon")
    assert view.decision == "move" and view.dice == (6, 2)
    assert (view.cube, view.owner, view.score, view.crawford) == (1, "centre", (0, 0), False)


def test_unlimited_match_length_is_money():
    text = START.replace(":someplayer:3:", ":someplayer:9999:")
    assert parse_fibs_board(text).view("fibs").match_length == 0


def test_x_to_play_in_direction_plus_one():
    """The same game written from the other colour: X (colour -1) moving 1 -> 24."""
    b = parse_fibs_board(START)
    flipped = [0] * 26
    for i in range(26):
        flipped[25 - i] = -b.board[i]
    fields = START.split(":")
    fields[6:32] = map(str, flipped)
    fields[32] = "-1"                    # X to play
    fields[41:45] = ["-1", "1", "25", "0"]
    view = parse_fibs_board(":".join(fields)).view("fibs")
    assert view.on_roll == -1 and view.position == Position.start("backgammon")


def _with(index: int, value: str) -> str:
    fields = START.split(":")
    fields[index] = value
    return ":".join(fields)


BAD = [
    ("", "start with 'board:'"),
    ("bored:You:x:3", "start with 'board:'"),
    (START + ":0", "53 fields"),
    (START.rsplit(":", 1)[0], "51 fields"),
    (START.replace("board:You", "board:"), "player name"),
    (_with(3, "x"), "match_length"),
    (_with(3, "-1"), "match_length"),
    (_with(4, "3"), "field score = 3"),
    (_with(7, "16"), "board[1] = 16"),
    (_with(7, "-3"), "X has 16 checkers"),
    (_with(32, "2"), "turn"),
    (_with(33, "7"), "dice[0], dice[1]"),
    (_with(34, "0"), "dice[0], dice[1]"),
    (_with(37, "3"), "cube = 3"),
    (_with(38, "2"), "may_double"),
    (_with(40, "2"), "was_doubled"),
    (_with(41, "0"), "colour"),
    (_with(42, "0"), "direction"),
    (_with(43, "25"), "home = 25"),
    (_with(44, "0"), "bar = 0"),
    (_with(45, "1"), "on_home = 1"),
    (_with(49, "5"), "can_move"),
]


@pytest.mark.parametrize("text, words", BAD, ids=[w for _, w in BAD])
def test_bad_strings_raise_a_typed_error_naming_the_field(text, words):
    with pytest.raises(FibsBoardError) as err:
        parse_fibs_board(text)
    assert words in str(err.value)
    assert isinstance(err.value, NotationError) and err.value.code == "invalid_board"


def test_views_that_cannot_be_made_raise():
    over = _with(32, "0")
    with pytest.raises(FibsBoardError, match="game is over"):
        parse_fibs_board(over).view()
    turned = _with(37, "2")                  # cube 2, both may double
    with pytest.raises(FibsBoardError, match="one owner"):
        parse_fibs_board(turned).view()
    with pytest.raises(FibsBoardError, match="scores"):
        parse_fibs_board(START).view("nope")
    with pytest.raises(FibsBoardError):
        parse_fibs_board(None)


def test_gnubg_nul_and_newline_are_ignored():
    assert parse_fibs_board("\x00" + START + "\n\x00").text() == START


def test_a_board_is_read_only_as_a_game_of_backgammon_s_geometry():
    """A FIBS board read as long nardy (or plakoto, fevga, gul bara) gave backgammon's
    layout under that name; a colour other than -1 or 1 gave a misleading error."""
    board = parse_fibs_board(START)
    assert board.position(1, "portes").variant == "portes"
    for variant in ("long_nardy", "plakoto", "fevga", "gul_bara"):
        with pytest.raises(FibsBoardError, match="cannot be written as a FIBS board"):
            board.view(variant=variant)
        with pytest.raises(FibsBoardError, match="cannot be written as a FIBS board"):
            gnubg_board(Position.start(variant), on_roll_is_o=True)
    for colour in (0, 5, 1.0):
        with pytest.raises(FibsBoardError, match="colour"):
            board.position(colour)
