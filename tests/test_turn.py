"""A turn played die by die (engine.play.turn): the steps a board offers reach exactly
the move generator's legal ends, in every game, and nothing else is accepted."""

from __future__ import annotations

import numpy as np
import pytest

from engine.errors import IllegalMoveError
from engine.movegen.generate import successors
from engine.play.game import play_game
from engine.play.players import RandomPlayer
from engine.play.turn import TurnWalk
from engine.rules.position import Position
from engine.rules.variants import VARIANTS


def _turns(variant: str, games: int, seed: int):
    """(position, dice) of every turn of ``games`` random games (gul bara pending
    segments with dice None)."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        rec = play_game(RandomPlayer(rng), RandomPlayer(rng), rng, variant, record=True,
                        max_turns=400)
        yield from zip(rec.positions[:-1], rec.dice)


def _ends_by_walking(walk: TurnWalk, played=(), seen=None, visited=None):
    """Every end index reached by playing the offered steps in every order (each
    partial board followed once)."""
    seen = set() if seen is None else seen
    visited = set() if visited is None else visited
    turn = walk.walk(played)
    node = (turn.board.key(), turn.dice_left)
    if node in visited:
        return seen
    visited.add(node)
    if turn.end is not None:
        seen.add(turn.end)
    for step in turn.steps:
        _ends_by_walking(walk, (*played, step), seen, visited)
    return seen


@pytest.mark.parametrize("variant", VARIANTS)
def test_walking_the_offered_steps_reaches_every_legal_end_and_only_those(variant):
    checked = 0
    for pos, dice in _turns(variant, 2, seed=7):
        succ = successors(pos, dice)
        if len(succ) > 400:            # a big cascade: too many orders to walk them all
            continue
        walk = TurnWalk(pos, dice, succ)
        assert _ends_by_walking(walk) == set(range(len(succ))), (pos, dice)
        assert not walk.exhausted
        checked += 1
    assert checked > 20


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_offered_step_can_be_finished(variant):
    for pos, dice in list(_turns(variant, 1, seed=11))[:60]:
        walk = TurnWalk(pos, dice)
        turn, played = walk.walk(), []
        while turn.steps:             # always the last offered step: an odd path
            played.append(turn.steps[-1])
            turn = walk.walk(played)
        assert turn.end is not None, (pos, dice, played)
        end = walk.finish(played)
        assert end in walk.successors


def test_opening_31_steps_and_text():
    walk = TurnWalk(Position.start(), (3, 1))
    turn = walk.walk()
    assert turn.dice_left == (3, 1)
    assert (8, 5, 3) in turn.steps and (6, 5, 1) in turn.steps and (24, 23, 1) in turn.steps
    assert walk.move_text([(8, 5, 3), (6, 5, 1)]) == "8/5 6/5"
    half = walk.walk([(8, 5)])
    assert half.dice_left == (1,) and half.end is None
    assert half.board.me[4] == 1 and half.board.me[7] == 2


def test_illegal_steps_are_refused_with_the_legal_ones_named():
    walk = TurnWalk(Position.start(), (6, 5))
    with pytest.raises(IllegalMoveError, match=r"step 1 .*legal steps: .*24/18 \(6\)"):
        walk.walk([(6, 2)])
    with pytest.raises(IllegalMoveError, match="expected"):
        walk.walk([("24", 18)])
    with pytest.raises(IllegalMoveError, match="do not finish"):
        walk.finish([(24, 18, 6)])


def test_a_forced_bear_off_with_the_higher_die():
    # checkers on my 2 and 1 points, dice 6-5: the higher one first (a die bears off
    # from below its point only when no checker stands higher), then the other
    pos = Position("backgammon", (1, 1) + (0,) * 22, (2,) * 6 + (0,) * 18, off=(13, 3))
    walk = TurnWalk(pos, (6, 5))
    turn = walk.walk()
    assert {(s[0], s[1]) for s in turn.steps} == {(2, 0)}
    second = walk.walk([turn.steps[0]])
    assert {(s[0], s[1]) for s in second.steps} == {(1, 0)}
    assert walk.finish([turn.steps[0], second.steps[0]]).off[1] == 15


def test_nothing_is_played_after_a_step_that_pins_the_mother():
    """Pinning the opponent's mother ends the game at once (docs/rules.md, 3.3): the walk
    offered the unplayed die after the pin (13/12 with the 1 of 2-1) and called the turn
    not complete, so the board's Done stayed off until the person played a die of a
    game already over."""
    me = [0] * 24
    me[2], me[12] = 1, 14                         # my 3 point (to pin) and my 13 point
    them = [0] * 24
    them[23], them[13] = 1, 14                    # his mother: his 24, my 1
    walk = TurnWalk(Position("plakoto", tuple(me), tuple(them)), (2, 1))
    assert (13, 12, 1) in walk.walk().steps       # the 1 first, then the pin: legal
    pinned = walk.walk([(3, 1, 2)])
    assert pinned.steps == () and pinned.dice_left == () and pinned.end is not None
    assert pinned.to_json()["complete"]
    with pytest.raises(IllegalMoveError, match="legal steps: none"):
        walk.walk([(3, 1, 2), (13, 12, 1)])
    assert walk.finish([(3, 1, 2)]).pinned[0] == (24,)


def test_head_rule_of_long_nardy_on_the_first_turn_only_66_takes_two():
    start = Position.start("long_nardy")
    walk = TurnWalk(start, (5, 3))
    after_one = walk.walk([(24, 19, 5)])
    assert all(s[0] != 24 for s in after_one.steps)        # one checker off the head
    walk66 = TurnWalk(start, (6, 6))
    assert walk66.walk([(24, 18, 6)]).steps                 # 6-6 opening: a second may go


def test_a_cascade_whose_every_play_ends_in_an_illegal_block_is_lost():
    """Every playable 6 fills the six points the opponent never passed, and more than
    one die could be played: the walk reported a later layer's board (two checkers
    moved, the block standing) as the unplayed turn, its ``pending`` passing on all four
    dice. The turn is lost: the board unchanged (helper 46's reference generator)."""
    from engine import Position, successors

    def board(points):
        a = [0] * 24
        for p, n in points.items():
            a[p - 1] = n
        return a
    # the opponent on my points 7-12, written in his numbering (his p is my p + 12)
    them = board({p - 12 + 24 if p - 12 < 1 else p - 12: n
                  for p, n in {7: 3, 8: 2, 9: 2, 10: 3, 11: 2, 12: 3}.items()})
    me = board({21: 2, 18: 3, 17: 3, 16: 3, 14: 2, 13: 2})
    pos = Position("gul_bara", tuple(me), tuple(them), turns=(3, 3))
    (lost,) = successors(pos, (6, 6))
    assert lost.me == pos.them and lost.them == pos.me
    assert lost.pending == (6, 6, 6, 6) and lost.turns == (3, 4)
    seg = Position("gul_bara", tuple(me), tuple(them), turns=(3, 3), pending=(6, 6))
    (kept,) = successors(seg, None)
    assert kept.me == seg.me and kept.pending == () and kept.turns == (3, 3)
