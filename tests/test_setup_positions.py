"""Move generation on *set-up* positions (engine/rules/setups.py), not only positions
reached in play: for every game and every roll, at least one successor, and the numba
generator agrees with the slow reference.

The case that broke this: a position already holding a six-block that no opposing
checker has passed, which every play of the roll keeps. The rule then forbids nothing
for that turn (docs/rules.md); before, the generator returned no successor at all.
"""

import numpy as np
import pytest
from reference_movegen import check_rows, reference_successors

from engine import Position, get_rules, successors
from engine.movegen.generate import CascadeLayers, successor_arrays
from engine.rules.setups import setup_positions
from engine.rules.variants import (
    BLOCK_EACH,
    BLOCK_NONE,
    BLOCK_QUARTER,
    CASCADE_GAME,
    HEAD_FIRST_NONE,
    MOTHER_DEFERRED,
    VARIANTS,
)

ROLLS = [(a, b) for a in range(1, 7) for b in range(a, 7)]
POSITIONS = 2000
"""Set-up positions per game: every roll of each has a successor."""
EVERY_ROLL = 60
"""Of those, the first this many are compared with the reference on every roll, the
rest on one random roll each."""
CASCADE_CHECKERS = 8
"""A cascade (gul bara's long doubles) is played from set-up positions with at most this
many of the mover's checkers on the board: with 15 spread out, one cascade can have
millions of plays (benchmarks/setup_positions.py plays them all)."""
CASCADE_REFERENCE = 3000
"""A cascade is compared with the reference when its walk holds at most this many
boards (the reference's memo grows with them)."""


def _on_board(pos: Position) -> int:
    return sum(pos.me) + pos.bar[0]


def _cascade(pos, roll, rules) -> bool:
    """Whether ``roll`` is a cascade walk of more than four steps (or a long pending
    segment) in ``pos``."""
    if roll is None:
        return len(pos.pending) > 4
    if roll[0] != roll[1] or rules.cascade == 0:
        return False
    return (sum(pos.turns) if rules.cascade == CASCADE_GAME else pos.turns[0]) >= 3


def _rolls(pos):
    return [None] if pos.pending else ROLLS


def _check(variant, rules, seed, count, every_roll):
    """The set-up positions of ``seed``: every roll has a successor; the first
    ``every_roll`` positions are compared with the reference on every roll, the rest on
    one; the kernel's successors are distinct (also in a finished game: a set-up
    plakoto position can hold a pinned mother)."""
    rng = np.random.default_rng(seed + 1000)
    compared = 0
    for i, pos in enumerate(setup_positions(variant, count, seed, rules)):
        rolls = _rolls(pos)
        pick = rolls[int(rng.integers(len(rolls)))]
        for roll in rolls:
            long_turn = _cascade(pos, roll, rules)
            if long_turn and _on_board(pos) > CASCADE_CHECKERS:
                continue
            rows = successor_arrays(pos, roll, rules)
            n = len(rows)
            assert n > 0, f"{pos!r} dice {roll}: no successor"
            if i >= every_roll and roll != pick:
                continue
            if long_turn and (rules.block == BLOCK_EACH or n > CASCADE_REFERENCE or sum(
                    len(a) for a in CascadeLayers(pos, roll, rules).layers)
                    > CASCADE_REFERENCE):
                continue
            check_rows(rows, pos, roll, rules)
            compared += 1
    assert compared >= (count - every_roll) // 2, compared


@pytest.mark.parametrize("variant", VARIANTS)
def test_setup_positions_agree_with_reference(variant):
    _check(variant, get_rules(variant), seed=VARIANTS.index(variant), count=POSITIONS,
           every_roll=EVERY_ROLL)


OPTIONS = [
    ("long_nardy", dict(block=BLOCK_EACH)),
    ("long_nardy", dict(head_first=HEAD_FIRST_NONE)),
    ("gul_bara", dict(block=BLOCK_EACH)),
    ("gul_bara", dict(cascade=CASCADE_GAME)),
    ("fevga", dict(block=BLOCK_QUARTER)),
    ("fevga", dict(block=BLOCK_EACH)),
    ("plakoto", dict(mother=MOTHER_DEFERRED)),
]


@pytest.mark.parametrize("variant,options", OPTIONS,
                         ids=[f"{v}-{'-'.join(f'{k}={x}' for k, x in o.items())}"
                              for v, o in OPTIONS])
def test_setup_positions_with_rule_options(variant, options):
    _check(variant, get_rules(variant, **options), seed=17, count=300, every_roll=20)


# The positions of the report: a six-block along the opponent's path that no opposing
# checker has passed, kept by every play of these rolls.
FEVGA = {"variant": "fevga", "me": [2, 1, 2, 2, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0, 0, 5],
         "them": [0] * 17 + [2, 0, 1, 1, 0, 10, 1], "turns": [6, 6]}
LONG_NARDY = {"variant": "long_nardy",
              "me": [0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 2, 0, 0, 0, 0, 0],
              "them": [0] * 20 + [8, 0, 0, 7], "turns": [3, 7]}


@pytest.mark.parametrize("data,roll,count", [
    (FEVGA, (2, 5), None), (FEVGA, (5, 2), None), (FEVGA, (6, 5), None),
    (FEVGA, (5, 5), None), (LONG_NARDY, (6, 6), 66)])
def test_a_kept_six_block_forbids_nothing(data, roll, count):
    pos = Position.from_json(data)
    rules = get_rules(pos.variant)
    assert reference_successors(pos, roll, fallback=False) == set()   # every play keeps it...
    got = {s.key() for s in successors(pos, roll)}
    assert got == reference_successors(pos, roll)
    # ...so the turn is played as if there were no six-block rule
    assert got == {s.key() for s in successors(pos, roll, rules.with_options(
        block=BLOCK_NONE))}
    assert count is None or len(got) == count


def test_some_plays_keep_the_rule():
    """When some plays of the roll break a set-up block and others keep it, only the
    breaking ones are legal: the rule still decides."""
    pos = Position.from_json({"variant": "long_nardy",
                              "me": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1, 1, 1,
                                     0, 0, 0, 0, 0, 8],
                              "them": [0] * 23 + [15]})
    # my points 13..18 are the opponent's 1..6, ahead of all his checkers: a block
    got = {s.key() for s in successors(pos, (1, 2))}
    assert got == reference_successors(pos, (1, 2))
    unruled = {s.key() for s in successors(pos, (1, 2), get_rules("long_nardy").with_options(
        block=BLOCK_NONE))}
    assert got and got < unruled


def test_a_board_that_ends_the_game_one_way_and_not_another_is_one_successor():
    """A set-up plakoto position with the opponent's mother pinned already (a finished
    game, which a user can still set up): bearing the pinner off with the 1 and pinning
    the mother again with the 4 ends the game; 5/4 4/off keeps the pin. The same board,
    one successor (the generator listed it twice, once as the play that ended the
    game)."""
    pos = Position.from_json({"variant": "plakoto",
                              "me": [1, 0, 0, 2, 1] + [0] * 19,
                              "them": [0, 1, 2, 1, 1, 2, 2, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0,
                                       1, 0, 0, 0, 1, 1],
                              "off": [11, 0], "pinned": [[], [24]], "turns": [18, 10]})
    rows = successor_arrays(pos, (1, 4))
    assert len(rows) == 4
    check_rows(rows, pos, (1, 4))
    assert len(successors(pos, (1, 4))) == 4
