"""``engine.notation.parse.parse_position``: every way a position can be written, read
through one entry point, and what it says when the text is none of them."""

import pytest

from engine.errors import NotationError, PositionError
from engine.notation.parse import parse_position
from engine.rules.position import Position

START_ID = "4HPwATDgc/ABMA"
START_XGID = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def test_each_notation_gives_the_start():
    start = Position.start()
    for text in ("start", START_ID, START_XGID, start.to_json(), " start "):
        assert parse_position(text)[0] == start


def test_optional_fields_written_null_take_their_defaults():
    """RULES.md: only variant, me and them are required, the rest default; a null was
    refused as 'expected a list'."""
    import json
    start = Position.start().to_json()
    for key in ("bar", "off", "pinned", "turns", "pending"):
        assert parse_position(json.dumps({**start, key: None}))[0] == Position.start()
    with pytest.raises(PositionError, match="'me'"):
        parse_position(json.dumps({**start, "me": None}))


@pytest.mark.parametrize("text", ["[1, 2]", "null", '"start"', "true", "[]"])
def test_json_that_is_not_an_object_is_said_to_be_so(text):
    """Such text was read as a GNU Backgammon ID and refused as one."""
    with pytest.raises(PositionError, match="expected a JSON object"):
        parse_position(text)


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ("4HPwATDgc/ABM!", "neither Position JSON, an XGID, a FIBS board nor a GNU Backgammon ID"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "10 fields"),
])
def test_other_text_names_what_it_is_not(text, words):
    with pytest.raises((PositionError, NotationError), match=words):
        parse_position(text)


def _with_match(**fields) -> str:
    from engine.notation.gnubg_id import MatchInfo, format_gnubg
    return format_gnubg(Position.start(), MatchInfo(**fields))


@pytest.mark.parametrize("fields, words", [
    ({"game_state": 2}, "the game is over .*'over'"),
    ({"game_state": 3}, "the game is over .*'resigned'"),
    ({"game_state": 4}, "the game is over .*'drop'"),
    ({"resigned": 2, "turn": 1}, "resignation offered \\(a gammon\\)"),
    ({"doubled": True, "turn": 1, "dice": (3, 1)}, "double offered and the dice 3-1"),
    ({"doubled": True, "turn": 1, "match_length": 5, "score": (4, 0), "crawford": True},
     "double offered in the Crawford game"),
    ({"doubled": True, "turn": 1, "cube_value": 2, "cube_owner": "them"},
     "double offered by the side that does not own the cube"),
])
def test_a_match_id_that_leaves_no_decision_is_refused(fields, words):
    """Each was read as a position and analysed as if play went on."""
    with pytest.raises(NotationError, match=words):
        parse_position(_with_match(**fields))


@pytest.mark.parametrize("fields", [{}, {"game_state": 0}, {"doubled": True, "turn": 1},
                                    {"dice": (6, 5)}])
def test_a_match_id_with_a_decision_open_is_read(fields):
    pos, info = parse_position(_with_match(**fields))
    assert pos == Position.start() and info.doubled == fields.get("doubled", False)


@pytest.mark.parametrize("fields", [
    {}, {"doubled": True, "turn": 1, "cube_value": 2, "cube_owner": "me"},
    # GNU Backgammon after a beaver: the doubled flag kept, the beaverer owning the cube
    # at twice its value, the decision back with the doubler (the player on roll)
    {"doubled": True, "turn": 0, "cube_value": 4, "cube_owner": "them"}])
def test_a_match_id_with_a_double_from_the_cube_owner_is_read(fields):
    pos, info = parse_position(_with_match(**fields))
    assert pos == Position.start() and info.doubled == fields.get("doubled", False)


def _xgid(**fields) -> str:
    from engine.notation.xgid import XgidInfo, format_xgid
    return format_xgid(Position.start(), XgidInfo(**fields))


@pytest.mark.parametrize("fields, words", [
    ({"cube_action": "double", "match_length": 5, "score": (4, 2), "crawford": True},
     "double offered in the Crawford game"),
    ({"cube_action": "double", "cube_value": 2, "cube_owner": "them"},
     "double offered by the side that does not own the cube"),
])
def test_an_xgid_with_a_double_no_game_reaches_is_refused(fields, words):
    """The cube, best-play and rollout requests read such an XGID and left the flag
    unused, answering for a state no game reaches."""
    with pytest.raises(NotationError, match=words):
        parse_position(_xgid(**fields))


@pytest.mark.parametrize("fields", [
    {"cube_action": "double"},
    {"cube_action": "double", "cube_value": 2, "cube_owner": "me"},
    {"cube_action": "double", "match_length": 5, "score": (4, 2)},
    {"match_length": 5, "score": (4, 2), "crawford": True, "dice": (3, 1)},
])
def test_an_xgid_with_a_double_a_game_reaches_is_read(fields):
    pos, info = parse_position(_xgid(**fields))
    assert pos == Position.start() and info.cube_action == fields.get("cube_action")


def test_portes_reads_no_cube_field_of_an_id():
    """Portes has no cube: an ID's double there is read and unused, not refused (as the
    UBGI session reads it)."""
    text = _xgid(cube_action="double", cube_value=2, cube_owner="them")
    pos, info = parse_position(text, "portes")
    assert pos.variant == "portes" and info.cube_action == "double"
    from engine.notation.gnubg_id import MatchInfo, format_gnubg
    for fields in ({"cube_value": 2, "cube_owner": "them"}, {"dice": (3, 1)},
                   {"match_length": 5, "score": (4, 0), "crawford": True}):
        text = format_gnubg(Position.start("portes"), MatchInfo(doubled=True, turn=1,
                                                                **fields))
        pos, info = parse_position(text, "portes")
        assert pos.variant == "portes" and info.doubled, fields
        with pytest.raises(NotationError, match="double offered"):
            parse_position(text)                 # the same ID in backgammon


@pytest.mark.parametrize("xgid, gnubg", [
    # GNU Backgammon 1.07.001: `set xgid <xgid>` then `show board`
    ("XGID=-b----E-C---eE---c-e----B-:1:1:-1:52:3:2:0:7:10", "4HPwATDgc/ABMA:QYnqADAAEAAE"),
    ("XGID=-b----E-C---eE---c-e----B-:1:1:1:52:2:3:0:7:10", "4HPwATDgc/ABMA:UYnqADAAEAAE"),
    ("XGID=-b----E-C---eE---c-e----B-:2:-1:1:00:0:0:3:0:10", "4HPwATDgc/ABMA:QgkAAAAAAAAA"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:-1:31:0:0:0:0:10", "4HPwATDgc/ABMA:cIkFAAAAAAAE"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:-1:00:4:6:1:7:10", "4HPwATDgc/ABMA:8AngAEAAMAAE"),
])
def test_an_xgid_as_a_gnubg_id_is_the_one_gnubg_shows_for_it(xgid, gnubg):
    """as_match_info wrote the side on roll as gnubg's player 0 and, in a match, the
    Jacoby bit "on"; gnubg puts the side on roll in its player 1's seat and leaves the
    bit "off" in a match, so the web board's GNU Backgammon ID of an XGID differed from
    the one gnubg shows for the same XGID (the same state, another ID)."""
    from engine.notation.gnubg_id import format_gnubg
    from engine.notation.parse import as_match_info
    pos, info = parse_position(xgid)
    assert format_gnubg(pos, as_match_info(info)) == gnubg


def test_a_fibs_board_string_is_a_position_too():
    """``board:...`` (a FIBS board, its score fields FIBS' own: the player's and the
    opponent's) reads as the side on roll's position with the dice, cube, score and
    Crawford game it holds, as an XgidInfo; a start board of a 3-point match and 60
    boards GNU Backgammon sent its external player agree with FibsBoard.view; a
    finished game, or a board that cannot be read, is refused as an ID is
    (``invalid_notation``)."""
    from engine.notation.fibs import parse_fibs_board
    from engine.notation.xgid import XgidInfo
    start = ("board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:"
             "0:0:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")
    pos, info = parse_position(start)
    view = parse_fibs_board(start).view("fibs")
    assert isinstance(info, XgidInfo) and pos == view.position
    assert (info.cube_value, info.cube_owner, info.dice, info.score, info.match_length,
            info.crawford, info.cube_action) == (view.cube, view.owner, view.dice,
                                                 view.score, 3, view.crawford, None)
    assert parse_position("  " + start + "\n")[0] == pos
    import json
    from pathlib import Path
    rows = [json.loads(line) for line in (Path(__file__).parent / "data" / "fibs"
                                          / "gnubg_boards.jsonl").read_text().splitlines()
            if line and not line.startswith("#")]
    for row in rows[:60]:
        view = parse_fibs_board(row["board"]).view("fibs")
        try:
            pos, info = parse_position(row["board"])
        except NotationError as exc:
            assert "holds" in str(exc) or view.decision == "beaver", row
            continue
        assert pos == view.position and info.dice == view.dice and info.score == view.score
        assert info.jacoby == (view.match_length == 0)
    over = start.split(":")
    over[32] = "0"                                # field 32, turn: the game is over
    with pytest.raises(NotationError, match="the game is over"):
        parse_position(":".join(over))
    with pytest.raises(NotationError, match="52") as exc:
        parse_position("board:You:x:3")
    assert exc.value.code == "invalid_notation"
