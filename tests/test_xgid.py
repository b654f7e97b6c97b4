"""XGID: the protocol's example, gnubg cross-checks, golden positions, fuzzing."""

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.errors import NardyError, NotationError
from engine.notation.gnubg_id import position_id
from engine.notation.parse import parse_position
from engine.notation.xgid import XgidInfo, format_xgid, parse_xgid
from engine.rules.position import Position

EXAMPLE = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def random_position(rng: random.Random) -> Position:
    """A random legal backgammon position (no two sides on one point)."""
    me, them = [0] * 24, [0] * 24
    bars = [0, 0]
    for side, board in ((0, me), (1, them)):
        for _ in range(rng.randint(0, 15)):
            if rng.random() < 0.05:
                bars[side] += 1
                continue
            p = rng.randint(1, 24)
            other = them if side == 0 else me
            if other[25 - p - 1] == 0:
                board[p - 1] += 1
    if sum(me) + bars[0] == 0:
        me[5] = 1
        them[18] = 0
    return Position("backgammon", tuple(me), tuple(them), tuple(bars),
                    (15 - sum(me) - bars[0], 15 - sum(them) - bars[1])).check()


positions = st.integers(0, 2**32).map(lambda seed: random_position(random.Random(seed)))


@st.composite
def xgid_infos(draw):
    length = draw(st.sampled_from([0, 0, 1, 3, 5, 7, 11, 25]))
    money = length == 0
    score_max = length - 1 if length else 50
    score = (draw(st.integers(0, score_max)), draw(st.integers(0, score_max)))
    cube_exp = draw(st.integers(0, 12))
    action = draw(st.sampled_from([None, None, "double", "beaver", "raccoon"]))
    dice = None if action else draw(st.none() | st.tuples(st.integers(1, 6),
                                                           st.integers(1, 6)))
    return XgidInfo(
        cube_value=1 << cube_exp,
        cube_owner=draw(st.sampled_from(["centre", "me", "them"])),
        dice=dice, cube_action=action,
        score=score,
        match_length=length,
        crawford=((not money) and length - 1 in score and score != (length - 1, length - 1)
              and draw(st.booleans())),
        jacoby=money and draw(st.booleans()),
        beaver=money and draw(st.booleans()),
        max_cube=1 << draw(st.integers(cube_exp, 12)),
        turn=draw(st.sampled_from([1, -1])))


def test_protocol_example():
    pos, info = parse_xgid(EXAMPLE)
    assert pos == Position.start()
    assert info == XgidInfo()           # centred cube at 1, not rolled, money, bottom on roll
    assert info.money and info.max_cube == 1024 and info.turn == 1
    assert format_xgid(pos, info) == EXAMPLE
    assert format_xgid(Position.start()) == EXAMPLE


def test_prefix_is_optional():
    assert parse_xgid(EXAMPLE[len("XGID="):]) == parse_xgid(EXAMPLE)
    assert parse_xgid("  xgid=" + EXAMPLE[5:] + "\n") == parse_xgid(EXAMPLE)


def test_text_after_the_last_field_is_ignored():
    """Posts and tables add text after the XGID on its line (``...:9:10 | ||``); GNU
    Backgammon's ``set xgid`` reads the leading digits of the max-cube field. Text with
    another ``:`` is refused, by both."""
    xgid = "XGID=---ABBA------------bbaa---:1:1:1:00:4:3:0:9:10"
    for tail in (" | ||||||||", "\t(XG 2.19)", "  X to play"):
        assert parse_xgid(xgid + tail) == parse_xgid(xgid)
        assert parse_position(xgid + tail) == parse_position(xgid)
        assert parse_position(xgid[5:] + tail) == parse_position(xgid)
    with pytest.raises(NotationError, match="10 fields"):
        parse_xgid(xgid + " X:Player")


def test_uppercase_is_the_bottom_player_numbered_from_the_index():
    pos, info = parse_xgid("XGID=-BDB-------------a------e-:1:-1:-1:42:0:0:0:5:8")
    # top (lowercase) player on roll: 1 checker on his 8 point (index 17), 5 on his 1
    assert info.turn == -1
    assert pos.me[7] == 1 and pos.me[0] == 5 and pos.off == (9, 7)
    assert pos.them[:3] == (2, 4, 2)
    assert info.cube_value == 2 and info.cube_owner == "me" and info.dice == (4, 2)
    assert info.max_cube == 256 and info.match_length == 5
    assert position_id(pos) == "ewMAAD4gAAAAAA"     # gnubg's reading of the same XGID


def test_scores_are_relative_to_the_side_to_move():
    pos, info = parse_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:-1:53:1:2:1:3:10")
    assert info.turn == -1 and info.score == (2, 1) and info.crawford
    assert format_xgid(pos, info).endswith(":0:0:-1:53:1:2:1:3:10")


def test_bars_and_cube_actions():
    text = "XGID=aa----E-C---eE---c-d-----B:2:1:1:D:0:0:3:0:10"
    pos, info = parse_xgid(text)
    assert pos.bar == (2, 1)
    assert info.cube_action == "double" and info.dice is None
    assert info.jacoby and info.beaver and info.cube_owner == "me" and info.cube_value == 4
    assert format_xgid(pos, info) == text


def test_dice_order_is_kept():
    text = EXAMPLE.replace(":00:", ":35:")
    assert parse_xgid(text)[1].dice == (3, 5)
    assert format_xgid(*parse_xgid(text)) == text


@pytest.mark.parametrize("turn", [1, -1])
def test_perft_positions_round_trip(perft, turn):
    for rec in perft("backgammon"):
        pos = Position.from_json(rec["position"])
        pos = Position(pos.variant, pos.me, pos.them, pos.bar, pos.off)  # no turns
        info = XgidInfo(turn=turn, dice=tuple(rec["dice"]))
        text = format_xgid(pos, info)
        assert parse_xgid(text) == (pos, info), rec["id"]
        assert position_id(parse_xgid(text)[0]) == rec["gnubg_id"]


def test_portes_and_other_games():
    pos, _ = parse_xgid(EXAMPLE, "portes")
    assert pos == Position.start("portes")
    with pytest.raises(NotationError, match="backgammon"):
        parse_xgid(EXAMPLE, "long_nardy")
    with pytest.raises(NotationError, match="backgammon"):
        format_xgid(Position.start("plakoto"))


@pytest.mark.parametrize("text, why", [
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0", "10 fields"),
    ("XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10", "26"),
    ("XGID=-b----E-C---eE---c-e----Bz:0:0:1:00:0:0:0:0:10", "character"),
    ("XGID=Bb----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10", "index 0"),
    ("XGID=-b----E-C---eE---c-e----Bb:0:0:1:00:0:0:0:0:10", "index 25"),
    ("XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10", "character"),
    ("XGID=-b----E-C---eE---c-e---BB-:0:0:1:00:0:0:0:0:10", "17 checkers"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:0:00:0:0:0:0:10", "turn"),
    ("XGID=-b----E-C---eE---c-e----B-:0:2:1:00:0:0:0:0:10", "cube owner"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:07:0:0:0:0:10", "dice"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:5:0:0:0:0:10", "dice"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:5:10", "rules"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:4:0:10", "rules"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:6:0:0:5:10", "match length"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:5:0:0:5:10", "won the match"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:7:0:7:10", "won the match"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:2:0:1:7:10", "Crawford game needs one side at 6"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:6:6:1:7:10", "both there is after it"),
    ("XGID=-b----E-C---eE---c-e----B-:2:0:1:00:0:0:0:0:1", "above max_cube"),
    ("XGID=-b----E-C---eE---c-e----B-:x:0:1:00:0:0:0:0:10", "not an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:01:0:1:00:0:0:0:0:10", "not an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:40:0:1:00:0:0:0:0:10", "log2"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:1\u0660:10", "not an integer"),
    ("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:1000000000:10", "not an integer"),
])
def test_bad_xgids(text, why):
    with pytest.raises(NotationError, match=why) as exc:
        parse_xgid(text)
    assert "XGID" in str(exc.value)


def test_both_sides_on_one_point_cannot_be_written():
    with pytest.raises(NardyError):
        format_xgid(Position("backgammon", (1,) + (0,) * 23, (0,) * 23 + (1,),
                             off=(14, 14)))


@FUZZ
@given(positions, xgid_infos())
def test_random_values_round_trip(pos, info):
    text = format_xgid(pos, info)
    assert parse_xgid(text) == (pos, info)
    assert format_xgid(*parse_xgid(text)) == text


ALPHABET = "-abcdeoABCDEOP0123456789:=XGID "


@FUZZ
@given(st.integers(0, len(EXAMPLE)), st.text(alphabet=ALPHABET, max_size=3),
       st.integers(0, 3))
def test_mutated_xgids_raise_only_notation_errors_or_round_trip(where, insert, delete):
    text = EXAMPLE[:where] + insert + EXAMPLE[where + delete:]
    try:
        pos, info = parse_xgid(text)
    except NotationError:
        return
    if text.startswith("XGID=") and not any(c.isspace() for c in text):   # (text after
        # white space in the last field is ignored, as GNU Backgammon ignores it)
        assert format_xgid(pos, info) == text


@FUZZ
@given(st.one_of(st.text(max_size=60), st.text(alphabet=ALPHABET, max_size=60)))
def test_garbage_raises_only_notation_errors(text):
    try:
        parse_xgid(text)
    except NotationError:
        pass


@pytest.mark.parametrize("value", [None, 3, b"XGID=", ["XGID="]])
def test_non_strings_raise_notation_error(value):
    with pytest.raises(NotationError):
        parse_xgid(value)


def test_info_checks_its_fields():
    for bad in (dict(cube_value=3), dict(turn=0), dict(cube_owner="X"),
                dict(dice=(0, 1)), dict(crawford=True), dict(match_length=3, jacoby=True),
                dict(dice=(1, 2), cube_action="double"), dict(score=(4, 0), match_length=3),
                dict(score=(3, 0), match_length=3), dict(crawford=True, match_length=5),
                dict(cube_value=4, max_cube=2)):
        with pytest.raises(NotationError):
            XgidInfo(**bad)


@pytest.mark.parametrize("field, value", [("turn", True), ("jacoby", "no"),
                                          ("crawford", 1), ("beaver", None)])
def test_xgid_flags_of_the_wrong_type_are_refused(field, value):
    """``jacoby="no"`` made ``format_xgid`` fail with a bare ValueError; ``turn=True``
    was taken as 1."""
    with pytest.raises(NotationError, match=field):
        XgidInfo(**{field: value})
