"""One check of each kind of input: dice (:func:`engine.rules.dice.check_dice`), a ply
(:func:`engine.search.nply.check_ply`) and a protocol request's fields
(:class:`engine.cli._common.RequestError`). Every entry point says the same of the same
bad input; none of these cases reaches a kernel."""

import json

import numpy as np
import pytest

from engine import DiceError, Position, successors
from engine.cli import analyse, cube, protocol
from engine.cli._common import RequestError
from engine.notation.movetext import format_move, parse_move
from engine.rules.dice import Dice, check_dice
from engine.search.nply import MAX_PLY, SearchError, SearchSettings, check_ply

START = Position.start("backgammon")
GUL_BARA = Position.from_json(
    {"variant": "gul_bara", "me": [5, 0, 3] + [0] * 14 + [1, 0, 0, 0, 0, 0, 6],
     "them": [11, 1, 1, 1, 0, 0, 0, 0, 0, 1] + [0] * 14, "turns": [23, 24],
     "pending": [4, 5, 5, 5, 5, 6, 6, 6, 6]})


def ask(**req):
    return protocol.handle_line(json.dumps(req))


def test_check_dice_takes_a_roll_in_the_order_given():
    for dice in [(3, 1), [1, 3], Dice(3, 1), (np.int64(6), np.int16(6))]:
        d = check_dice(dice)
        assert d == tuple(int(x) for x in dice) and all(type(x) is int for x in d)
        assert check_dice(dice, ()) == d
    assert check_dice(None, GUL_BARA.pending) is None


@pytest.mark.parametrize("dice, pending, message", [
    ((0, 1), None, "dice = (0, 1): expected two integers 1..6"),
    ([3, 7], (), "dice = [3, 7]: expected two integers 1..6"),
    ((True, 1), (), "dice = [true, 1]: expected two integers 1..6"),
    ((3.0, 1), (), "dice = (3.0, 1): expected two integers 1..6"),
    ("31", (), "dice = '31': expected two integers 1..6"),
    ((3, 1, 2), (), "dice = (3, 1, 2): expected two integers 1..6"),
    (None, None, "dice = null: expected two integers 1..6"),
    (None, (), "dice = null plays a gul bara pending segment, but the position "
               "has no pending dice; expected two integers 1..6"),
    ((3, 1), (4, 5), "dice = [3, 1]: the position has pending dice [4, 5] to play first; "
                     "expected null (no dice)"),
])
def test_check_dice_refuses(dice, pending, message):
    with pytest.raises(DiceError) as exc:
        check_dice(dice) if pending is None else check_dice(dice, pending)
    assert str(exc.value) == message


@pytest.mark.parametrize("position, dice", [(START, (3, 7)), (START, "31"), (START, None),
                                            (GUL_BARA, (3, 1))])
def test_every_entry_point_says_the_same_of_bad_dice(position, dice):
    with pytest.raises(DiceError) as first:
        check_dice(dice, position.pending)
    said = str(first.value)
    calls = [lambda: successors(position, dice),
             lambda: format_move(position, position, dice),
             lambda: parse_move("8/5 6/5", position, dice),
             lambda: parse_move("8/5 6/5", position, dice, successors=[]),
             lambda: analyse.candidates(position, dice)]
    for call in calls:
        with pytest.raises(DiceError) as exc:
            call()
        assert str(exc.value) == said
    sent = json.loads(json.dumps(dice))             # a tuple arrives as a list
    with pytest.raises(DiceError) as exc:
        check_dice(sent, position.pending)
    reply = ask(cmd="moves", position=position.to_json(), dice=sent)
    assert reply["error"] == {"code": "invalid_dice", "message": str(exc.value)}


def test_dice_value_type_and_its_readers_use_the_check():
    with pytest.raises(DiceError, match=r"dice = \(7, 2\): expected two integers 1..6"):
        Dice(7, 2)
    with pytest.raises(DiceError, match=r"dice = \[1, 2, 3\]"):
        Dice.of(np.array([1, 2, 3]))
    assert Dice.of(np.array([1, 3])) == Dice(3, 1)


def test_check_ply():
    assert [check_ply(p) for p in range(MAX_PLY + 1)] == list(range(MAX_PLY + 1))
    for bad in [-1, MAX_PLY + 1, "2", 1.0, True, None]:
        with pytest.raises(SearchError, match=r"ply = .*: expected an integer 0\.\.3"):
            check_ply(bad)
        with pytest.raises(SearchError):
            SearchSettings(bad)


@pytest.mark.parametrize("ply", [4, "2", -1])
def test_every_entry_point_says_the_same_of_a_bad_ply(ply, capsys):
    said = f"ply = {ply!r}: expected an integer 0..{MAX_PLY}"
    start = START.to_json()
    for req in [dict(cmd="best", position=start, dice=[3, 1], ply=ply),
                dict(cmd="evaluate", position=start, ply=ply),
                dict(cmd="cube", position=start, ply=ply)]:
        assert ask(**req)["error"] == {"code": "invalid_ply", "message": said}
    if isinstance(ply, int):
        for main in (analyse.main, cube.main):
            assert main(["--position", "start", "--ply", str(ply)]) == 2
            assert capsys.readouterr().err == f"error: {said}\n"


def test_one_request_error():
    assert protocol.RequestError is cube.RequestError is RequestError
    said = {"code": "missing_field", "message": "request lacks the field 'position'"}
    for cmd in ("moves", "best", "evaluate", "cube"):
        assert ask(cmd=cmd, dice=[3, 1])["error"] == said
    assert ask(cmd="met")["error"] == {"code": "missing_field",
                                       "message": "request lacks the field 'length'"}


@pytest.mark.parametrize("make, words", [
    (lambda: Position.from_literal("x 24:16; o 24:15", "long_nardy"), "x lists 16 checkers"),
    (lambda: Position.from_literal("x bar:20; o 24:15"), "x lists 20 checkers"),
    (lambda: Position("portes", (16,) + (0,) * 23, (15,) + (0,) * 23, (-1, 0), (0, 0)
                      ).check(), "field 'me'"),
    (lambda: Position("portes", (15.0,) + (0,) * 23, (15,) + (0,) * 23, (0, 0), (0, 0)
                      ).check(), "entry 15.0"),
    (lambda: Position("portes", (15,) + (0,) * 22, (15,) + (0,) * 23, (0, 0), (0, 0)
                      ).check(), "expected 24 entries"),
    (lambda: Position.from_literal("x 24:15; o 24:15", turns="ab"), "field 'turns'"),
    (lambda: Position.from_literal("x 24:15; o 24:15", turns=(10**30, 0)), "field 'turns'"),
    (lambda: Position.from_literal("x 24:15; o 24:15", "gul_bara", pending=(2.5,)),
     "field 'pending'"),
    (lambda: Position.from_literal(None), "expected a string"),
    (lambda: Position.from_literal("x 24:" + "9" * 5000 + "; o 24:15"), "bad token")])
def test_a_position_of_impossible_counts_is_refused(make, words):
    """A side of 16 checkers, a negative count, a float, a short board or turns that
    are not two small integers got through ``check`` (only the sum of 15 was checked)
    and reached the move generator, or failed later with a bare Python error."""
    from engine.errors import PositionError
    with pytest.raises(PositionError, match=words):
        make()


_START = Position.start()


@pytest.mark.parametrize("fields, words", [
    (dict(me=tuple(x + 0.5 if x else 0 for x in _START.me)), "field 'me'.*entry 5.5"),
    (dict(me=tuple(str(x) for x in _START.me)), "field 'me'.*entry '0'"),
    (dict(turns=(1.5, 0)), "field 'turns'.*entry 1.5"),
    (dict(off=(0, "0")), "field 'off'"),
    (dict(bar=(0.25, 0)), "field 'bar'"),
    (dict(me="0" * 24), "field 'me'.*expected a list"),
    (dict(me=((), *_START.me[1:])), r"field 'me'.*entry \(\)"),     # ragged: numpy's ndim raised
    (dict(bar=(0, [0])), r"field 'bar'.*entry \[0\]"),
    (dict(me=np.zeros((24, 1), dtype=int)), "(?s)field 'me'.*expected a list"),
])
def test_position_state_refuses_numbers_the_array_would_coerce(fields, words):
    """numpy's assignment takes 5.5 as 5 and "5" as 5: the state array of such a
    Position held a different, legal position and every public entry point went on
    with it."""
    from engine.errors import PositionError
    from engine.rules.states import position_state
    bad = Position("backgammon", **{"me": _START.me, "them": _START.them, **fields})
    with pytest.raises(PositionError, match=words):
        position_state(bad)
    with pytest.raises(PositionError, match=words.split(".*")[0]):
        successors(bad, (3, 1))


def test_position_state_takes_numpy_integers_and_check_words_their_errors():
    """numpy integers are the same numbers; ``check`` used to call them "not an
    integer" when it worded another fault, and a pinned field of two bare numbers
    raised TypeError."""
    from engine.errors import PositionError
    from engine.rules.states import position_state
    ok = Position("backgammon", tuple(np.int64(x) for x in _START.me), np.array(_START.them))
    assert (position_state(ok) == _START.to_array()).all()
    me = list(_START.me)
    me[0] = 1
    with pytest.raises(PositionError, match="16 checkers"):
        position_state(Position("backgammon", np.array(me), _START.them))
    plakoto = Position.start("plakoto")
    with pytest.raises(PositionError, match="pinned"):
        position_state(Position("plakoto", plakoto.me, plakoto.them, pinned=(3, 4)))


def test_a_position_built_from_lists_equals_the_same_built_from_tuples():
    """Position holds tuples whatever sequences it is given as lists, so positions
    compare and hash by value (a list-built one was unequal to the same position from
    the engine, and unhashable)."""
    listed = Position("plakoto", list(Position.start("plakoto").me),
                      [0] * 23 + [15], [0, 0], [0, 0], [[], [3]], [1, 2], [])
    tupled = Position("plakoto", Position.start("plakoto").me, (0,) * 23 + (15,),
                      pinned=((), (3,)), turns=(1, 2))
    assert listed == tupled and hash(listed) == hash(tupled)
    assert len({listed, tupled}) == 1
    assert all(type(getattr(listed, f)) is tuple
               for f in ("me", "them", "bar", "off", "turns", "pending", "pinned"))
    assert listed.pinned == ((), (3,))
    odd = Position("plakoto", tupled.me, tupled.them, pinned=([3],))   # not two: unchecked
    assert odd.pinned == ((3,),) and hash(odd) is not None
    bg = Position("backgammon", list(START.me), list(START.them))
    assert Position.from_json(bg.to_json()) == bg == START
