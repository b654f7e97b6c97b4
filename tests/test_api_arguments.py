"""Wrong types and values handed to the public Python functions of the notations and
the cube: each is refused with the project's error naming the argument and what was
expected, never an AttributeError / IndexError from deep inside or a silently wrong
result; the valid call still works."""

import numpy as np
import pytest

from engine.cube.computed_met import met_from_gammon_rate, post_crawford_from_gammon_rate
from engine.cube.decision import CubeError, CubeState, analyse_cube, answer_double, cube_decision
from engine.cube.met import MatchEquityTable, MatchError, kazaross_xg2
from engine.errors import FibsBoardError, NotationError, PositionError
from engine.notation.fibs import gnubg_board, parse_fibs_board
from engine.notation.gnubg_id import MatchInfo, format_gnubg, match_id, position_id, position_key
from engine.notation.xgid import XgidInfo, format_xgid
from engine.rules.position import Position

PROBS = [0.6, 0.15, 0.01, 0.1, 0.005]


@pytest.fixture(scope="module")
def start():
    return Position.start("backgammon")


# ----------------------------------------------------------------- 1. GNUbg IDs
def test_gnubg_ids_refuse_what_is_not_a_position_or_match_info(start):
    for fn in (position_id, position_key, format_gnubg):
        with pytest.raises(PositionError, match=r"pos = null: expected a Position"):
            fn(None)
    with pytest.raises(NotationError, match=r"info = \{\}: expected a MatchInfo or None"):
        format_gnubg(start, {})
    for bad in ({}, None, XgidInfo()):
        with pytest.raises(NotationError, match=r"info = .*: expected a MatchInfo"):
            match_id(bad)
    assert position_id(start) == "4HPwATDgc/ABMA"
    assert format_gnubg(start, MatchInfo()) == f"4HPwATDgc/ABMA:{match_id(MatchInfo())}"
    assert format_gnubg(start, None) == "4HPwATDgc/ABMA"


# ----------------------------------------------------------------- 2. XGID
def test_format_xgid_refuses_what_is_not_a_position_or_xgid_info(start):
    with pytest.raises(NotationError, match=r"info = \{\}: expected an XgidInfo or None"):
        format_xgid(start, {})              # an empty dict is not "no info"
    with pytest.raises(NotationError, match=r"info = .*: expected an XgidInfo"):
        format_xgid(start, MatchInfo())
    with pytest.raises(PositionError, match=r"pos = null: expected a Position"):
        format_xgid(None)
    assert format_xgid(start) == format_xgid(start, XgidInfo()) \
        == "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


# ----------------------------------------------------------------- 3. cube
def test_cube_functions_refuse_a_state_that_is_not_a_cube_state(start):
    for bad in (None, {}, (1, "centre")):
        with pytest.raises(CubeError, match=r"state .*: expected a CubeState"):
            cube_decision(PROBS, bad)
        with pytest.raises(CubeError, match=r"state .*: expected a CubeState"):
            answer_double(PROBS, bad)
        with pytest.raises(CubeError, match=r"state .*: expected a CubeState"):
            analyse_cube(start, bad, lambda pos, ply: PROBS)
    with pytest.raises(PositionError, match=r"position null: expected a Position"):
        analyse_cube(None, CubeState(), lambda pos, ply: PROBS)
    with pytest.raises(CubeError, match=r"probability_fn .*: expected a function"):
        analyse_cube(start, CubeState(), None)
    match = CubeState(match_length=5)
    with pytest.raises(MatchError, match=r"table \[\]: expected a MatchEquityTable"):
        cube_decision(PROBS, match, table=[])   # an empty list is not "the default"
    assert cube_decision(PROBS, CubeState()).action in ("no_double", "double_take")
    assert cube_decision(PROBS, match, table=kazaross_xg2()).mwc is not None
    assert answer_double(PROBS, CubeState()).answer == "take"
    assert analyse_cube(start, CubeState(), lambda pos, ply: PROBS).cube_available
    with pytest.raises(CubeError, match=r"info .*: expected a MatchInfo or an XgidInfo"):
        CubeState.from_info({"match_length": 0})
    assert CubeState.from_info(MatchInfo()) == CubeState()


# ----------------------------------------------------------------- 4. MET by hand
@pytest.mark.parametrize("pre, post, field", [
    (np.full((3, 2), 0.5), np.full(3, 0.5), r"pre_crawford of shape \(3, 2\): expected a "
                                            r"square matrix"),
    (np.full((3, 3), 0.5), np.full(2, 0.5), r"post_crawford has 2 entries, pre_crawford "
                                            r"is 3 x 3"),
    (np.full((2, 2), 0.5), np.full(3, 0.5), r"post_crawford has 3 entries"),
    (np.full((2, 2), 0.5), np.full((2, 1), 0.5), r"post_crawford of shape \(2, 1\)"),
    (np.full((2, 2), np.nan), np.full(2, 0.5), r"pre_crawford\[0\]\[0\] = nan"),
    (np.full((2, 2), 0.5), [0.5, 1.5], r"post_crawford\[1\] = 1.5: expected a match "
                                       r"winning chance in \[0, 1\]"),
    (np.full((2, 2), 0.5), [0.5, -np.inf], r"post_crawford\[1\] = -inf"),
    ([[0.5, 0.5], [0.5]], [0.5, 0.5], r"pre_crawford = .*: expected an array"),
])
def test_match_equity_table_checks_its_shapes_and_numbers(pre, post, field):
    with pytest.raises(MatchError, match=field):
        MatchEquityTable("hand made", pre, post)


def test_match_equity_table_by_hand_still_works():
    t = MatchEquityTable("hand made", [[0.5, 0.7], [0.3, 0.5]], [0.5, 0.49])
    assert isinstance(t.pre_crawford, np.ndarray) and t.length == 2
    assert t.mwc(1, 2) == 0.7 and t.mwc(2, 1, post_crawford=True) == 0.49
    with pytest.raises(MatchError, match=r"name = null: expected a string"):
        MatchEquityTable(None, [[0.5]], [0.5])
    assert kazaross_xg2().length == 25


# ----------------------------------------------------------------- 5. computed MET
@pytest.mark.parametrize("kwargs, field", [
    ({"free_drop_2": 5.0}, r"free_drop_2 = 5.0: expected 0 <= free_drop_2 < 0.5"),
    ({"free_drop_2": -0.1}, r"free_drop_2 = -0.1"),
    ({"free_drop_4": -1.0}, r"free_drop_4 = -1.0: expected 0 <= free_drop_4 < 0.294"),
    ({"free_drop_4": 0.3}, r"free_drop_4 = 0.3"),
    ({"free_drop_2": float("nan")}, r"free_drop_2 = nan"),
    ({"free_drop_4": "0.01"}, r"free_drop_4 = '0.01': expected a number"),
    ({"crawford_gammon_rate": 2.0}, r"crawford_gammon_rate = 2.0: expected a number "
                                    r"0 <= crawford_gammon_rate < 1"),
])
def test_met_from_gammon_rate_bounds_its_parameters(kwargs, field):
    with pytest.raises(MatchError, match=field):
        met_from_gammon_rate(0.2, 5, **kwargs)


@pytest.mark.parametrize("g, length, field", [
    ("a", 5, r"gammon rate g = 'a': expected a number 0 <= g < 1"),
    (float("nan"), 5, r"gammon rate g = nan"),
    (True, 5, r"gammon rate g = true"),
    (0.2, 0, r"length = 0: expected an integer 1..64"),
    (0.2, 100_000, r"length = 100000: expected an integer 1..64"),
    (0.2, 5.0, r"length = 5.0"),
])
def test_met_from_gammon_rate_checks_rate_and_length(g, length, field):
    with pytest.raises(MatchError, match=field):
        met_from_gammon_rate(g, length)
    with pytest.raises(MatchError, match=field):
        post_crawford_from_gammon_rate(g, length)


def test_met_from_gammon_rate_at_its_bounds_is_a_table_of_chances():
    for kwargs in ({}, {"free_drop_2": 0.0, "free_drop_4": 0.0},
                   {"free_drop_2": 0.49, "free_drop_4": 0.1}, {"free_drop_4": 0.29}):
        m = met_from_gammon_rate(0.2, 9, **kwargs)
        for part in (m.pre_crawford, m.post_crawford):
            assert np.all((part >= 0.0) & (part <= 1.0))
    assert met_from_gammon_rate(0.0, 1).length == 1


# ----------------------------------------------------------------- 6. FIBS board
@pytest.mark.parametrize("names, field", [
    (("a:b", "X"), r"names\[0\] = 'a:b': expected a non-empty name without spaces or ':'"),
    (("O", "you:2"), r"names\[1\] = 'you:2'"),
    (("O", "two words"), r"names\[1\] = 'two words'"),
    (("", "X"), r"names\[0\] = ''"),
    ((1, "X"), r"names\[0\] = 1"),
    ("OX", r"names = 'OX': expected two names"),
    (("O", "X", "Y"), r"names = .*: expected two names"),
])
def test_gnubg_board_refuses_names_a_board_string_cannot_hold(start, names, field):
    with pytest.raises(FibsBoardError, match=field):
        gnubg_board(start, on_roll_is_o=True, names=names)


def test_gnubg_board_checks_owner_and_position_and_still_round_trips(start):
    with pytest.raises(FibsBoardError, match=r"owner = 'mine': expected"):
        gnubg_board(start, on_roll_is_o=True, owner="mine")
    with pytest.raises(FibsBoardError, match=r"position null: expected a Position"):
        gnubg_board(None, on_roll_is_o=True)
    board = gnubg_board(start, on_roll_is_o=True, names=["nardy", "gnubg"])
    assert parse_fibs_board(board.text()) == board
