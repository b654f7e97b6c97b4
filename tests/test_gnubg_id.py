"""GNU Backgammon Position ID and Match ID: golden IDs, known examples, fuzzing."""

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.errors import NardyError, NotationError
from engine.notation.gnubg_id import (
    GAME_NONE,
    GAME_PLAYING,
    MatchInfo,
    format_gnubg,
    match_from_id,
    match_id,
    position_from_gnubg,
    position_from_id,
    position_id,
)
from engine.notation.parse import parse_position
from engine.notation.xgid import parse_xgid
from engine.rules.position import Position

START_ID = "4HPwATDgc/ABMA"
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
FUZZ = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def random_position(rng: random.Random, variant: str = "backgammon") -> Position:
    """A random legal backgammon-geometry position (no two sides on one point)."""
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
        me[5] = 1                           # keep the game unfinished
        them[18] = 0
    return Position(variant, tuple(me), tuple(them), tuple(bars),
                    (15 - sum(me) - bars[0], 15 - sum(them) - bars[1])).check()


positions = st.integers(0, 2**32).map(lambda seed: random_position(random.Random(seed)))

match_infos = st.builds(
    lambda cube, owner, on_roll, state, turn, doubled, resigned, dice, length, s, crawford,
    jacoby: MatchInfo(
        cube_value=1 << cube, cube_owner=owner, on_roll=on_roll, game_state=state,
        turn=turn, doubled=doubled, resigned=resigned,
        dice=None if dice is None else tuple(sorted(dice, reverse=True)),
        match_length=length, score=(min(s[0], length) if length else s[0],
                                    min(s[1], length) if length else s[1]),
        crawford=crawford and length > 0, jacoby=jacoby),
    st.integers(0, 15), st.sampled_from(["centre", "me", "them"]), st.integers(0, 1),
    st.integers(0, 4), st.integers(0, 1), st.booleans(), st.integers(0, 3),
    st.none() | st.tuples(st.integers(1, 6), st.integers(1, 6)),
    st.integers(0, 0x7FFF), st.tuples(st.integers(0, 0x7FFF), st.integers(0, 0x7FFF)),
    st.booleans(), st.booleans())


# ----------------------------------------------------------------- Position ID
def test_start_position():
    assert position_id(Position.start()) == START_ID
    assert position_from_id(START_ID) == Position.start()


def test_all_perft_records_encode_and_decode(perft):
    """Every backgammon perft record carries gnubg's own ID of its position."""
    n = 0
    for rec in perft("backgammon"):
        pos = Position.from_json(rec["position"])
        assert position_id(pos) == rec["gnubg_id"], rec["id"]
        back = position_from_id(rec["gnubg_id"])
        assert (back.me, back.them, back.bar, back.off) == (pos.me, pos.them, pos.bar,
                                                            pos.off), rec["id"]
        n += 1
    assert n == 940


def test_first_half_is_the_player_not_on_roll():
    """gnubg's key lists anBoard[0] (opponent) first: the golden opening record."""
    pos = position_from_id("4PPgASjgc/ABMA")
    assert pos.me == Position.start().me
    assert pos.them[22] == 1 and pos.them[23] == 1 and pos.them[7] == 4


def test_bar_is_point_25_and_portes_variant():
    pos = Position.from_literal("x bar:2 6:5 8:3; o bar:1 6:5 13:5", variant="portes")
    pid = position_id(pos)
    assert position_from_id(pid, "portes") == pos
    assert position_from_id(pid).variant == "backgammon"


@pytest.mark.parametrize("variant", ["long_nardy", "plakoto", "fevga", "gul_bara"])
def test_other_games_have_no_position_id(variant):
    with pytest.raises(NotationError, match="backgammon"):
        position_id(Position.start(variant))
    with pytest.raises(NotationError):
        position_from_id(START_ID, variant)


@pytest.mark.parametrize("text, why", [
    ("4HPwATDgc/ABM", "exactly 14"),
    ("4HPwATDgc/ABMA=", "exactly 14"),
    ("4HPwATDgc/AB-A", "exactly 14"),
    ("4HPwATDgc/ABMB", "unused bits"),      # low bits of the 14th character set
    ("/////////////w", "checkers"),         # 80 one-bits: far more than 15 a side
    ("AAAAAAAAAAAAAA", "borne off all"),    # no checker on the board: both sides done
])
def test_bad_position_ids(text, why):
    with pytest.raises(NotationError, match=why) as exc:
        position_from_id(text)
    assert repr(text)[:20] in str(exc.value) or text[:10] in str(exc.value)


def test_both_sides_on_one_point_is_rejected():
    # player on roll on his 6 point, opponent on his 19 (= my 6)
    bad = Position("backgammon", (0,) * 5 + (1,) + (0,) * 18,
                   (0,) * 18 + (1,) + (0,) * 5, off=(14, 14))
    with pytest.raises(NotationError, match="both sides"):
        position_from_id(position_id(bad))


@FUZZ
@given(positions)
def test_random_positions_round_trip(pos):
    assert position_from_id(position_id(pos)) == pos


@FUZZ
@given(st.text(alphabet=B64, min_size=14, max_size=14))
def test_any_accepted_position_id_round_trips_exactly(text):
    try:
        pos = position_from_id(text)
    except NotationError:
        return
    assert position_id(pos) == text


# ----------------------------------------------------------------- Match ID
def test_money_session_before_the_first_game():
    """``cAgAAAAAAAAA``: money, cube centred at 1, player 1 to roll, no game started."""
    info = match_from_id("cAgAAAAAAAAA")
    assert info == MatchInfo(cube_value=1, cube_owner="centre", on_roll=1, turn=1,
                             game_state=GAME_NONE, dice=None, match_length=0)
    assert info.money and info.cube_owner_raw == -1
    assert match_id(info) == "cAgAAAAAAAAA"


def test_mailing_list_example():
    """``g9vBASSYZ8wBBg:cIkmAQAAAAAA`` (bug-gnubg, 2009): 9-point match, 5-1 to play."""
    pos, info = position_from_gnubg("g9vBASSYZ8wBBg:cIkmAQAAAAAA")
    assert info.match_length == 9 and info.dice == (5, 1) and info.score == (0, 0)
    assert info.game_state == GAME_PLAYING and info.on_roll == info.turn == 1
    assert sum(pos.me) == sum(pos.them) == 15
    assert format_gnubg(pos, info) == "g9vBASSYZ8wBBg:cIkmAQAAAAAA"


def test_gnubg_and_xgid_agree_on_a_crawford_game():
    """gnubg writes ``4HPwATDgc/ABMA:8IluACAACAAE`` for this XGID (its SetXGID)."""
    pos, info = position_from_gnubg("4HPwATDgc/ABMA:8IluACAACAAE")
    xpos, xinfo = parse_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:53:1:2:1:3:10")
    assert pos == xpos
    assert info.dice == xinfo.dice == (5, 3)
    assert info.match_length == xinfo.match_length == 3
    assert info.crawford and xinfo.crawford
    assert info.score == xinfo.score == (1, 2)      # player on roll has 1, opponent 2
    assert info.scores_raw == (2, 1)                # gnubg: player 0, player 1


def test_gnubg_and_xgid_agree_with_top_player_on_roll():
    """Top (lowercase) player on roll, owning a 2-cube: gnubg player 0."""
    pos, info = position_from_gnubg("ewMAAD4gAAAAAA:AQGqAAAAAAAE")
    xpos, xinfo = parse_xgid("XGID=-BDB-------------a------e-:1:-1:-1:42:0:0:0:5:8")
    assert pos == xpos
    assert info.on_roll == 0 and info.cube_owner == xinfo.cube_owner == "me"
    assert info.cube_value == xinfo.cube_value == 2 and info.cube_owner_raw == 0
    assert info.dice == (4, 2) and info.match_length == 5


def test_bare_position_id_has_no_match_info():
    pos, info = position_from_gnubg("  4HPwATDgc/ABMA ")
    assert pos == Position.start() and info is None
    assert format_gnubg(pos) == START_ID


@pytest.mark.parametrize("text", [
    "g9vBASSYZ8wBBg cIkmAQAAAAAA",
    "g9vBASSYZ8wBBg\tcIkmAQAAAAAA",
    " GNU Backgammon  Position ID: g9vBASSYZ8wBBg\n                 Match ID   : cIkmAQAAAAAA\n",
    " GNU Backgammon  GNUBg ID   : g9vBASSYZ8wBBg:cIkmAQAAAAAA",
    "Position ID: g9vBASSYZ8wBBg Match Id: cIkmAQAAAAAA",
])
def test_the_forms_gnubg_prints_and_reads(text):
    """White space for the ':', and the labels GNU Backgammon prints around its IDs (its
    board, its GammOnLine export): its ``set gnubgid`` reads them all."""
    assert position_from_gnubg(text) == position_from_gnubg("g9vBASSYZ8wBBg:cIkmAQAAAAAA")
    assert parse_position(text) == parse_position("g9vBASSYZ8wBBg:cIkmAQAAAAAA")
    assert position_from_gnubg("Position ID: g9vBASSYZ8wBBg")[1] is None


@pytest.mark.parametrize("text", ["g9vBASSYZ8wBBg, cIkmAQAAAAAA", "g9vBASSYZ8wBBg cIkm AQAAAAAA",
                                  "Position ID: g9vBASSYZ8wBBg (5-1 to play)", "ID:"])
def test_other_words_around_the_ids_are_refused(text):
    with pytest.raises(NotationError, match="PositionID:MatchID"):
        position_from_gnubg(text)


@pytest.mark.parametrize("text, why", [
    ("cAgAAAAAAAA", "exactly 12"),
    ("cAgAAAAAAAA!", "exactly 12"),
    ("YAgAAAAAAAAA", "cube owner"),                 # owner bits = 2
    ("MIAHAAAAAAAA", "dice"),                       # a die of 7
    ("MAUAAAAAAAAA", "game state"),                 # game state 5
    ("cAgAAAAAAAAg", "reserved"),
])
def test_bad_match_ids(text, why):
    with pytest.raises(NotationError, match=why):
        match_from_id(text)


def test_crawford_in_money_play_is_rejected():
    key = int.from_bytes(bytes(9), "little") | (3 << 4) | (1 << 7)
    import base64
    text = base64.b64encode(key.to_bytes(9, "little")).decode()
    with pytest.raises(NotationError, match="Crawford"):
        match_from_id(text)


def test_match_info_checks_its_fields():
    with pytest.raises(NotationError):
        MatchInfo(cube_value=3)
    with pytest.raises(NotationError):
        MatchInfo(score=(8, 0), match_length=7)
    assert MatchInfo(dice=(2, 5)).dice == (5, 2)    # gnubg keeps the higher die first


@FUZZ
@given(match_infos)
def test_match_info_round_trips(info):
    assert match_from_id(match_id(info)) == info


@FUZZ
@given(st.text(alphabet=B64, min_size=12, max_size=12))
def test_any_accepted_match_id_round_trips_exactly(text):
    """Exactly, except that gnubg writes the higher die first (it reads either order)."""
    try:
        info = match_from_id(text)
    except NotationError:
        return
    import base64
    key = int.from_bytes(base64.b64decode(text), "little")
    die1, die2 = (key >> 15) & 7, (key >> 18) & 7
    assert match_from_id(match_id(info)) == info
    if die1 >= die2:
        assert match_id(info) == text


# ----------------------------------------------------------------- fuzzing
@FUZZ
@given(st.one_of(st.text(max_size=40), st.binary(max_size=20).map(lambda b: b.decode("latin-1")),
                 st.text(alphabet=B64 + ":= ", max_size=30)))
def test_garbage_raises_only_nardy_errors(text):
    for parse in (position_from_id, match_from_id, position_from_gnubg):
        try:
            parse(text)
        except NardyError:
            pass


@FUZZ
@given(st.integers(0, 25), st.sampled_from(B64 + ":!= "), st.booleans())
def test_mutated_ids_raise_only_nardy_errors(where, char, insert):
    valid = "4PPgASjgc/ABMA:cIkmAQAAAAAA"
    text = valid[:where] + char + valid[where + (0 if insert else 1):]
    try:
        pos, info = position_from_gnubg(text)
    except NardyError:
        return
    assert pos.check() is pos


@pytest.mark.parametrize("value", [None, 14, b"4HPwATDgc/ABMA", ["4HPwATDgc/ABMA"]])
def test_non_strings_raise_notation_error(value):
    for parse in (position_from_id, match_from_id, position_from_gnubg):
        with pytest.raises(NotationError):
            parse(value)


@pytest.mark.parametrize("field, value", [("on_roll", 1.0), ("on_roll", True),
                                          ("game_state", 1.0), ("resigned", True),
                                          ("jacoby", "false"), ("crawford", "no"),
                                          ("doubled", 1)])
def test_match_info_flags_of_the_wrong_type_are_refused(field, value):
    """``jacoby="false"`` wrote the Jacoby rule on; ``on_roll=1.0`` and ``crawford="no"``
    made the Match ID writer fail with a bare TypeError or ValueError."""
    kw = {"match_length": 5} if field == "crawford" else {}
    with pytest.raises(NotationError, match=field):
        MatchInfo(**{field: value}, **kw)
