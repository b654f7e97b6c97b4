"""Move text: gnubg's notation for known turns, the round trip of the perft records'
successors in all six games, parser variants and errors, fuzzing."""

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.errors import AmbiguousMoveError, DiceError, IllegalMoveError, MoveError, NardyError
from engine.movegen.generate import successors
from engine.notation.movetext import (
    BAR,
    NO_MOVE,
    OFF,
    MovePart,
    format_move,
    format_moves,
    move_parts,
    move_steps,
    parse_move,
    parse_steps,
)
from engine.rules.position import Position
from engine.rules.variants import VARIANTS

START = Position.start()
FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def texts(pos, dice):
    succ = successors(pos, dice)
    return dict(zip(format_moves(pos, succ, dice), succ))


def play(pos, dice, text):
    """The successor that ``text`` names, checked to be what format_move writes."""
    after = parse_move(text, pos, dice)
    assert format_move(pos, after, dice) == text
    return after


# ----------------------------------------------------------------- syntax layer
def test_parse_steps_reads_the_usual_notation():
    assert parse_steps("24/18 13/11") == (MovePart((24, 18), (False,)),
                                          MovePart((13, 11), (False,)))
    assert parse_steps("bar/22*") == (MovePart((BAR, 22), (True,)),)
    assert parse_steps("6/off") == (MovePart((6, OFF), (False,)),)
    assert parse_steps("8/5(2)") == (MovePart((8, 5), (False,), 2),)
    assert parse_steps("24/21*/16") == (MovePart((24, 21, 16), (True, False)),)
    assert parse_steps("no move") == parse_steps("") == ()


def test_parse_steps_accepts_variants():
    assert parse_steps(" 24 / 18 ,13-11 ") == parse_steps("24/18 13/11")
    assert parse_steps("BAR/22 *") == parse_steps("25/22*") == parse_steps("b/22*")
    assert parse_steps("6/OFF") == parse_steps("6/0") == parse_steps("6/o")
    assert parse_steps("8/5 ( 2 )") == parse_steps("8/5(2)")


def test_move_part_prints_as_it_reads():
    for text in ["24/21*/16(2)", "bar/22*", "6/off", "13/7*/1*"]:
        (part,) = parse_steps(text)
        assert str(part) == text
    assert parse_steps("13/7*/1*")[0].source == 13
    assert parse_steps("13/7*/1*")[0].destination == 1


@pytest.mark.parametrize("text, why", [
    ("24/18 x", "cannot read 'x'"),
    ("24", "cannot read"),
    ("24/", "cannot read"),
    ("18/24", "lower points"),
    ("24/24", "lower points"),
    ("off/20", "starts from off"),
    ("20/bar", "to the bar"),
    ("24*/18", "marks its source"),
    ("6/off*", "nothing can be hit"),
    ("30/24", "point 30"),
    ("8/5(0)", "count"),
    ("8/5(16)", "count"),
    ("8/5(2", "cannot read"),
    ("\uff12\uff14/18", "cannot read"),      # full-width digits: int() would read them as 24
    ("24/\u0661\u0668", "cannot read"),      # Arabic-Indic 18
    ("8/5(\u0662)", "cannot read"),
])
def test_syntax_errors_quote_the_text(text, why):
    with pytest.raises(MoveError, match=why) as exc:
        parse_steps(text)
    assert repr(text) in str(exc.value)
    assert not isinstance(exc.value, IllegalMoveError)


def test_parse_steps_rejects_non_strings():
    with pytest.raises(MoveError):
        parse_steps(None)


# ----------------------------------------------------------------- gnubg's texts
@pytest.mark.parametrize("dice, text", [
    ((3, 1), "8/5 6/5"),
    ((6, 5), "24/13"),
    ((4, 2), "8/4 6/4"),
    ((6, 4), "24/14"),
    ((6, 6), "24/18(2) 13/7(2)"),
    ((5, 5), "13/3(2)"),
    ((4, 4), "24/20(2) 13/9(2)"),
    ((2, 1), "13/11 6/5"),
])
def test_opening_moves(dice, text):
    assert text in texts(START, dice)
    play(START, dice, text)


def test_hit_on_the_way_shows_the_point():
    pos = Position.from_literal("x 24:1 6:14; o 4:1 2:14")
    moves = texts(pos, (5, 3))
    assert "24/21*/16" in moves and "24/16" in moves
    assert moves["24/21*/16"] != moves["24/16"]
    assert moves["24/21*/16"].bar == (1, 0)          # flipped: the opponent is on the bar


def test_bar_entry_hit_and_bear_off():
    pos = Position.from_literal("x bar:1 6:14; o 3:1 1:14")
    assert "bar/22* 6/1" in texts(pos, (3, 5))
    home = Position.from_literal("x 6:2 5:3 1:1; o 1:15")
    assert set(texts(home, (6, 6))) == {"6/off(2) 5/off(2)"}
    assert "6/off 5/off" in texts(home, (6, 5))
    assert set(texts(home, (4, 4))) == {"6/2(2) 5/1(2)", "6/2 5/1(3)"}


def test_no_move():
    pos = Position.from_literal("x bar:1 6:14; o 6:2 5:2 4:2 3:2 2:2 1:5")
    (after,) = successors(pos, (6, 6))
    assert format_move(pos, after, (6, 6)) == NO_MOVE
    for text in ["no move", "", "pass", "cannot move"]:
        assert parse_move(text, pos, (6, 6)) == after
    with pytest.raises(IllegalMoveError):
        parse_move("no move", START, (3, 1))


# ----------------------------------------------------------------- parse variants
def test_parse_move_accepts_order_chains_counts_and_optional_stars():
    target = parse_move("8/5 6/5", START, (3, 1))
    for text in ["6/5 8/5", "8/5,6/5", " 8/5  6/5 ", "8-5 6-5", "8 / 5 6 / 5"]:
        assert parse_move(text, START, (3, 1)) == target
    double = parse_move("13/3(2)", START, (5, 5))
    for text in ["13/8/3(2)", "13/8 13/8 8/3 8/3", "13/3 13/3", "13/8(2) 8/3(2)"]:
        assert parse_move(text, START, (5, 5)) == double
    pos = Position.from_literal("x 24:1 6:14; o 4:1 2:14")
    hit = parse_move("24/21*/16", pos, (5, 3))
    assert parse_move("24/21/16", pos, (5, 3)) == hit       # '*' optional where it lands
    assert parse_move("24/16", pos, (5, 3)) != hit          # merged: passes without a hit
    assert parse_move("24/19/16", pos, (5, 3)) != hit


def test_parse_move_uses_given_successors():
    succ = successors(START, (3, 1))
    assert parse_move("8/5 6/5", START, (3, 1), successors=succ) in succ


def test_illegal_moves_quote_text_position_and_dice():
    for text in ["24/18 13/11", "8/5", "24/20 24/21", "6/off", "bar/22"]:
        with pytest.raises(IllegalMoveError) as exc:
            parse_move(text, START, (3, 1))
        message = str(exc.value)
        assert repr(text) in message and "3-1" in message
        assert "x 24:2 13:5 8:3 6:5; o 24:2 13:5 8:3 6:5" in message


def test_a_distance_no_dice_make_is_illegal():
    with pytest.raises(IllegalMoveError, match="2 pips"):
        parse_move("24/22 8/7", START, (3, 1))
    with pytest.raises(IllegalMoveError, match="24/23 is 1 pip, which"):   # was "1 pips"
        parse_move("24/23", START, (6, 5))


def test_a_star_without_a_blot_is_illegal():
    with pytest.raises(IllegalMoveError, match="no lone opposing checker"):
        parse_move("8/5* 6/5", START, (3, 1))


def test_ambiguous_when_every_way_hits_and_none_is_shown():
    pos = Position.from_literal("x 24:1 6:14; o 7:1 6:1 2:13")
    moves = texts(pos, (6, 5))
    assert {"24/19*/13", "24/18*/13"} <= set(moves)
    with pytest.raises(AmbiguousMoveError, match="24/13") as exc:
        parse_move("24/13", pos, (6, 5))
    assert "24/19*/13" in str(exc.value)
    assert parse_move("24/18*/13", pos, (6, 5)) == moves["24/18*/13"]
    assert parse_move("24/18/13", pos, (6, 5)) == moves["24/18*/13"]


def test_unique_hit_need_not_be_shown():
    """If only a hitting play fits, the plain merged text is read as that play."""
    pos = Position.from_literal("x 24:1 6:14; o 7:1 6:2 2:12")
    moves = texts(pos, (6, 5))
    assert "24/18*/13" in moves and "24/19/13" not in moves
    assert parse_move("24/13", pos, (6, 5)) == moves["24/18*/13"]


def test_a_point_named_on_the_way_is_where_the_checker_stops():
    """``24/19/13`` says the checker stops on 19; with 19 blocked it names no play, though
    ``24/13`` (which names no point on the way) is read as the play that hits on 18."""
    pos = Position.from_literal("x 24:1 6:14; o 7:1 6:2 2:12")
    for text in ("24/19/13", "24/19 19/13", "24/19*/13"):
        with pytest.raises(IllegalMoveError):
            parse_move(text, pos, (6, 5))
    assert parse_move("24/18 18/13", pos, (6, 5)) == texts(pos, (6, 5))["24/18*/13"]


def test_bad_dice():
    with pytest.raises(DiceError):
        parse_move("8/5 6/5", START, (3, 7))
    with pytest.raises(DiceError):
        parse_move("8/5 6/5", START, "31", successors=[])
    with pytest.raises(DiceError):
        format_move(START, START, (0, 1))


# ----------------------------------------------------------------- other games
def test_nardy_has_no_hits_and_no_bar():
    pos = Position.start("long_nardy")
    assert set(texts(pos, (6, 5))) == {"24/13"}          # one checker from the head
    with pytest.raises(IllegalMoveError, match="no hitting"):
        parse_move("24/13*", pos, (6, 5))
    with pytest.raises(IllegalMoveError, match="no bar"):
        parse_move("bar/19", pos, (6, 5))


def _records_with_successors(perft, variant, every=1, max_count=10**6):
    """Perft records of ``variant`` (every ``every``-th, at most ``max_count``
    successors) with their position, dice and successors (checked against the records'
    digests by tests/test_perft.py)."""
    for i, rec in enumerate(perft(variant)):
        if i % every or rec["count"] > max_count:
            continue
        pos = Position.from_json(rec["position"])
        dice = tuple(rec["dice"]) if rec["dice"] is not None else None
        yield rec, pos, dice, successors(pos, dice)


def test_plakoto_marks_pins(perft):
    for rec, pos, dice, succ in _records_with_successors(perft, "plakoto"):
        pinning = [s for s in succ if len(s.pinned[0]) > len(pos.pinned[1])]
        if pinning and not pos.pinned[0] and not pos.pinned[1]:
            break
    assert pinning
    s = pinning[0]
    text = format_move(pos, s, dice)
    assert "*" in text
    assert parse_move(text.replace("*", ""), pos, dice, successors=succ) == s


def test_gul_bara_pending_segment(perft):
    rec, pos, _, succ = next(r for r in _records_with_successors(perft, "gul_bara", max_count=3000)
                             if "pending" in r[0]["tags"] and r[2] is None and len(r[3]) > 1)
    for s in succ:
        assert s.pending == () and s.turns == pos.turns      # not flipped
        assert parse_move(format_move(pos, s, None), pos, None) == s


# ----------------------------------------------------------------- perft round trip
@pytest.mark.parametrize("variant", VARIANTS)
def test_perft_round_trip(perft, variant):
    """For a sample of perft records in each game: every successor's text parses back
    to it, and distinct successors get distinct texts."""
    n = 0
    for rec, pos, dice, succ in _records_with_successors(
            perft, variant, every=9, max_count=60 if variant == "gul_bara" else 3000):
        written = format_moves(pos, succ, dice)
        assert len(set(written)) == len(written), (rec["id"], written)
        for text, s in zip(written, succ):
            assert parse_move(text, pos, dice, successors=succ) == s, (rec["id"], text)
            shuffled = " ".join(reversed(text.split())) if text != NO_MOVE else text
            assert parse_move(shuffled, pos, dice, successors=succ) == s, (rec["id"], text)
        n += len(succ)
    assert n > 500


def test_move_parts_name_the_moves():
    after = parse_move("24/21*/16", Position.from_literal("x 24:1 6:14; o 4:1 2:14"),
                       (5, 3))
    parts = move_parts(Position.from_literal("x 24:1 6:14; o 4:1 2:14"), after, (5, 3))
    assert parts == (MovePart((24, 21, 16), (True, False)),)


def test_format_move_rejects_an_unreachable_position():
    other = Position.from_literal("x 24:2 13:5 8:3 6:5; o 24:2 13:5 8:3 5:5")
    with pytest.raises(IllegalMoveError, match="no sequence"):
        format_move(START, other.flip(), (3, 1))


# ----------------------------------------------------------------- random play and fuzzing
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VARIANTS), st.integers(0, 2**32))
def test_random_games_round_trip(variant, seed):
    """Play a few random turns; at each, every legal play round-trips through text."""
    rng = random.Random(seed)
    pos = Position.start(variant)
    for _ in range(rng.randint(0, 12)):
        if pos.is_over():
            return
        dice = None if pos.pending else (rng.randint(1, 6), rng.randint(1, 6))
        succ = successors(pos, dice)
        if len(succ) <= 40:
            written = format_moves(pos, succ, dice)
            assert len(set(written)) == len(written)
            for text, s in zip(written, succ):
                assert parse_move(text, pos, dice, successors=succ) == s
        pos = rng.choice(succ)


MOVE_CHARS = "0123456789/*() ,-barofBARO\t"


@FUZZ
@given(st.one_of(st.text(max_size=30), st.text(alphabet=MOVE_CHARS, max_size=30)))
def test_garbage_raises_only_move_errors(text):
    try:
        parse_steps(text)
    except MoveError:
        pass
    try:
        parse_move(text, START, (3, 1))
    except MoveError:
        pass


@FUZZ
# deferred: the plays are generated when the test first draws, not when pytest
# imports this module (collecting compiled the whole move generator)
@given(st.deferred(lambda: st.sampled_from(sorted(texts(START, (4, 4))))),
       st.integers(0, 20),
       st.text(alphabet=MOVE_CHARS, max_size=3), st.integers(0, 2))
def test_mutated_moves_raise_only_nardy_errors(text, where, insert, delete):
    mutated = text[:where] + insert + text[where + delete:]
    try:
        after = parse_move(mutated, START, (4, 4))
    except NardyError:
        return
    assert after in successors(START, (4, 4))


def _replay(before, after, dice):
    """Play the single steps of ``after``'s text from ``before``, checking each one
    (own checker there, landing point open, bearing off only when allowed) and that
    the dice go in the cascade's order; returns whether the board ends as ``after``."""
    from engine.movegen.generate import CascadeLayers
    from engine.notation.movetext import StepRules, board_state
    from engine.rules.variants import get_rules
    walk = CascadeLayers(before, dice)
    target = after if dice is None else after.flip()
    steps = walk.steps((target.off[0], *target.me))
    assert [d for _, _, d in steps] == list(walk.seq[:len(steps)])
    game, state = StepRules(get_rules(before.variant)), board_state(before)
    for src, dest, die in steps:
        moved = game.step(state, src, die)
        assert moved is not None and max(src - die, 0) == dest, (src, dest, die)
        state = moved[0]
    return state[0] == board_state(target)[0]


def test_cascade_text_is_found_backwards_through_the_layers():
    """A gul bara cascade of 122,226 plays: the text of any of them is found at once
    (a search forward from the start gave up after 200,000 states), names legal single
    steps in the cascade's order, and parses back to the play."""
    import numpy as np

    from engine.movegen.generate import successor_arrays
    from engine.movegen.keys import key_order
    pos = Position.from_literal("x 24:6 20:3 17:3 13:3; o 24:10 21:3 19:2",
                                variant="gul_bara", turns=(5, 5))
    arrays = successor_arrays(pos, (1, 1))
    assert len(arrays) == 122226
    rng = np.random.default_rng(1)
    for i in rng.choice(len(arrays), 40, replace=False):
        after = Position.from_array(arrays[i], "gul_bara")
        assert _replay(pos, after, (1, 1))
        assert parse_move(format_move(pos, after, (1, 1)), pos, (1, 1)) == after
    # a text no play fits: the message counts every play and names the first ones
    with pytest.raises(IllegalMoveError) as exc:
        parse_move("24/23 24/23", pos, (1, 1))
    # the first of successors(pos, (1, 1)), without making 122,226 positions
    first = Position.from_array(arrays[key_order(arrays)[0]], "gul_bara")
    assert "122226 legal plays include " + repr(format_move(pos, first, (1, 1))) in str(
        exc.value)


def test_cascade_text_when_the_game_ends_and_for_pending_dice():
    """A cascade that bears off the last checker on its way (the rest of the dice
    unplayed), and a pending segment, are written through the layers too."""
    pos = Position.from_literal("x 6:1 5:2 3:1; o 24:12 20:3", variant="gul_bara",
                                turns=(9, 9), off=(11, 0))
    succ = successors(pos, (4, 4))
    ended = [s for s in succ if s.is_over()]
    assert ended
    for s in succ:
        assert _replay(pos, s, (4, 4))
        assert parse_move(format_move(pos, s, (4, 4)), pos, (4, 4)) == s
    seg = Position.from_literal("x 24:10 20:3 17:2; o 24:9 21:3 13:3", variant="gul_bara",
                                turns=(6, 6), pending=(4, 5, 5, 5, 5, 6, 6, 6, 6))
    succ = successors(seg, None)
    assert len(succ) > 50
    for s in succ[::7]:
        assert _replay(seg, s, None)
        assert parse_move(format_move(seg, s, None), seg, None) == s


def test_cascade_text_of_an_unreachable_position_is_illegal():
    pos = Position.from_literal("x 24:6 20:3 17:3 13:3; o 24:10 21:3 19:2",
                                variant="gul_bara", turns=(5, 5))
    other = Position.from_literal("x 24:6 20:3 17:3 13:2 11:1; o 24:10 21:3 19:2",
                                  variant="gul_bara", turns=(5, 6))
    with pytest.raises(IllegalMoveError, match="no sequence"):
        format_move(pos, other.flip(), (1, 1))


def test_move_steps_are_the_single_moves_in_playing_order():
    from engine.rules.position import Position
    start = Position.start("backgammon")
    for dice in [(6, 5), (3, 1), (6, 6), (2, 1)]:
        for after in successors(start, dice):
            steps = move_steps(start, after, dice)
            used = sorted(p - q for p, q in steps)
            want = sorted([dice[0]] * 4 if dice[0] == dice[1] else list(dice))
            assert used == want
            text = " ".join(f"{p}/{q}" for p, q in steps)
            assert parse_move(text, start, dice) == after
    run = [a for a in successors(start, (6, 5)) if format_move(start, a, (6, 5)) == "24/13"]
    assert move_steps(start, run[0], (6, 5)) in (((24, 18), (18, 13)), ((24, 19), (19, 13)))
    entering = Position.from_literal("x bar:1 6:14; o 24:15")
    after = successors(entering, (5, 3))
    for a in after:
        steps = move_steps(entering, a, (5, 3))
        assert steps[0][0] == BAR
    bearing = Position.from_literal("x 1:1 2:1; o 12:15")
    a = successors(bearing, (6, 5))[0]
    assert sorted(move_steps(bearing, a, (6, 5))) == [(1, OFF), (2, OFF)]
    closed = Position.from_literal("x bar:1 6:14; o 6:2 5:2 4:2 3:2 2:2 1:2 24:3")
    (dance,) = successors(closed, (6, 5))
    assert move_steps(closed, dance, (6, 5)) == ()


def test_arguments_that_are_not_positions_are_named():
    """They failed deep inside with an AttributeError."""
    from engine.errors import MoveError
    start = Position.start()
    for call, name in ((lambda: parse_move("24/18", None, (6, 5)), "before"),
                       (lambda: format_move(start, {"me": []}, (6, 5)), "after"),
                       (lambda: parse_move("24/18", start, (6, 5), [None]), "successors")):
        with pytest.raises(MoveError, match=name):
            call()


def test_an_unreadable_part_is_quoted_as_typed():
    """'-1' was refused as "cannot read '/1'", a part the player never typed (the '-'
    read as a separator; helper 96's fuzzing)."""
    from engine.notation.movetext import MoveError, parse_move
    from engine.rules.position import Position
    for text, part in (("-1", "'-1'"), ("13-", "'13-'"), ("24/21 x/y", "'x/y'")):
        with pytest.raises(MoveError, match=f"cannot read {part}"):
            parse_move(text, Position.start(), (3, 1))


def test_bare_points_read_in_pairs_as_gnubg_move_reads_them():
    """GNU Backgammon's `move 8 5 6 5` (ParseMove pairs points written without '/');
    helper 115 checked each against gnubg 1.07."""
    assert parse_steps("8 5 6 5") == parse_steps("8/5 6/5")
    assert parse_steps("bar 22 6 off") == parse_steps("bar/22 6/off")
    assert parse_steps("25 21") == parse_steps("b/21")
    assert parse_move("8 5 6 5", START, (3, 1)) == parse_move("8/5 6/5", START, (3, 1))
    assert parse_move("24 20", START, (3, 1)) == parse_move("24/20", START, (3, 1))
    for odd in ("8 5 6", "24"):
        with pytest.raises(MoveError, match="cannot read"):
            parse_steps(odd)


def test_a_text_naming_more_moves_than_dice_is_illegal():
    """'6/1/off 5/off' for 6-5 names three moves; it was read as 6/off 5/off (gnubg
    refuses it)."""
    pos = Position.from_literal("x 6:2 5:2 4:2; o 24:2 13:5")
    for text in ("6/1/off 5/off", "6/1 1/off 5/off"):
        with pytest.raises(IllegalMoveError, match="names 3 moves, but the roll gives 2 dice"):
            parse_move(text, pos, (6, 5))
    assert format_move(pos, parse_move("6/off 5/off", pos, (6, 5)), (6, 5)) == "6/off 5/off"
