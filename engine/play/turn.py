"""A turn played die by die, as a person plays it on a board.

The move generator gives the legal *ends* of a turn (``docs/rules.md``, section 3.4);
a board needs the legal *steps*: which checker may move by which die now, so that the
turn can still be finished legally. :class:`TurnWalk` answers that for every game of
the family, from the single-step rules of :class:`engine.notation.movetext.StepRules`
and the turn's legal ends: a step is offered when some way of playing the dice left
reaches one of the ends (forced play, the head rule, the six-block and fevga's start
rule are all in that set of ends, so they need no code here). A gul bara cascade or
pending segment is walked die by die in its fixed order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from engine.errors import IllegalMoveError, quote
from engine.movegen.generate import successors as all_successors
from engine.notation import movetext as mt
from engine.rules.dice import check_dice
from engine.rules.position import CHECKERS, Position
from engine.rules.scoring import result
from engine.rules.variants import Rules, get_rules

Step = tuple[int, int, int]
"""``(from, to, die)`` in the mover's numbering: points 1..24, :data:`engine.notation.movetext.BAR` 25,
:data:`engine.notation.movetext.OFF` 0."""

SEARCH_BUDGET = 200_000
"""Partial plays examined per turn before the walk stops looking for a way to finish
(only a gul bara cascade comes near it); past it, a step that is open on the board is
offered and the turn's end is checked when it is reached."""


@dataclass(frozen=True)
class TurnState:
    """Where a turn stands after some of its steps."""

    board: Position
    """The checkers now, seen from the mover (the mover still to move)."""
    played: tuple[Step, ...]
    """The steps played so far."""
    dice_left: tuple[int, ...]
    """The dice still to play, in the order they come (a cascade's fixed order; for two
    different dice before the first step, both)."""
    steps: tuple[Step, ...]
    """Every step legal now, sorted by (from, to, die)."""
    end: int | None
    """Index in :attr:`TurnWalk.successors` of the position the steps so far make,
    when stopping here is a legal end of the turn; else None."""

    def to_json(self) -> dict:
        return {"board": self.board.to_json(), "played": [list(s) for s in self.played],
                "dice_left": list(self.dice_left), "steps": [list(s) for s in self.steps],
                "complete": self.end is not None and not self.steps}


class TurnWalk:
    """The legal steps of one turn: ``position`` (the mover to move) with ``dice``
    (None: a gul bara pending segment). ``successors`` may pass the turn's legal ends
    when the caller has them (as :func:`engine.movegen.generate.successors` lists them)."""

    def __init__(self, position: Position, dice, successors: Sequence[Position] | None = None,
                 rules: Rules | None = None):
        self.rules = rules or get_rules(position.variant)
        self.position = position
        checked = check_dice(dice, position.pending)
        self.dice = None if checked is None else tuple(int(d) for d in checked)
        self.successors = list(successors if successors is not None
                               else all_successors(position, self.dice, self.rules))
        self._game = mt.step_rules(self.rules)
        self._start = mt.board_state(position)
        self._orders = [tuple(o) for o in mt.dice_orders(position, self.dice, self.rules)]
        self._ends = {mt.board_state(mt.mover_view(s, self.dice)): i
                      for i, s in enumerate(self.successors)}
        self._layers = mt.cascade_layers(position, self.dice, self.rules)
        self._memo: dict = {}
        self._nodes = 0
        self.exhausted = False
        """The search budget ran out on this turn (see :data:`SEARCH_BUDGET`)."""

    # ------------------------------------------------------------------ search
    def _children(self, state: tuple, die: int, depth: int):
        """The single steps by ``die`` from ``state``, reached after ``depth`` dice;
        in a cascade only those to boards the generator's walk reaches (its head limit
        holds for the whole cascade), so the search never wanders off them."""
        for p in range(mt.BAR, 0, -1):
            if state[0][p] == 0:
                continue
            moved = self._game.step(state, p, die)
            if moved is None:
                continue
            board = moved[0][0]
            if (self._layers is not None and board[mt.OFF] < CHECKERS
                    and not self._layers.holds(depth + 1, board[:mt.BAR])):
                continue                  # (the last checker off ends the game there)
            yield p, max(p - die, mt.OFF), moved[0]

    def _can_finish(self, state: tuple, rest: tuple) -> bool:
        """Whether ``state``, with the dice ``rest`` to play in order, can still end the
        turn legally."""
        if state in self._ends:
            return True
        if not rest:
            return False
        key = (state, rest)
        known = self._memo.get(key)
        if known is not None:
            return known
        self._nodes += 1
        if self._nodes > SEARCH_BUDGET:
            self.exhausted = True
            return True
        depth = len(self._orders[0]) - len(rest)
        found = any(self._can_finish(nxt, rest[1:]) for _p, _q, nxt in
                    self._children(state, rest[0], depth))
        self._memo[key] = found
        return found

    def _open_orders(self, used: tuple) -> list[tuple]:
        return [o for o in self._orders if o[:len(used)] == used and len(o) > len(used)]

    def _over(self, state: tuple) -> bool:
        """Whether the steps that made ``state`` ended the game (the 15th checker off, a
        plakoto mother pinned): nothing more of the roll is played (docs/rules.md, 3.3)."""
        return result(self._board(state), self.rules) is not None

    def _legal(self, state: tuple, used: tuple) -> list[tuple[Step, tuple]]:
        if self._over(state):
            return []
        found: dict = {}
        for order in self._open_orders(used):
            die, rest = order[len(used)], order[len(used) + 1:]
            for p, q, nxt in self._children(state, die, len(used)):
                if (p, q, die) not in found and self._can_finish(nxt, rest):
                    found[(p, q, die)] = nxt
        return sorted(found.items())

    # ------------------------------------------------------------------ walk
    def walk(self, played: Sequence = ()) -> TurnState:
        """The turn after the steps ``played`` (``(from, to, die)`` each, or
        ``(from, to)`` when one die fits); raises :class:`IllegalMoveError` naming the
        first step that is not legal at its point of the turn."""
        state, used, done = self._start, (), []
        for k, raw in enumerate(played):
            step = _read_step(raw, k)
            legal = self._legal(state, used)
            match = [(s, nxt) for s, nxt in legal
                     if s[:2] == step[:2] and (len(step) == 2 or s[2] == step[2])]
            if not match:
                offered = ", ".join(f"{a}/{b} ({d})" for (a, b, d), _ in legal) or "none"
                raise IllegalMoveError(f"step {k + 1} {quote(list(raw))} is not legal "
                                       f"here; legal steps: {offered}")
            (s, state) = match[0]
            used += (s[2],)
            done.append(s)
        legal = self._legal(state, used)
        open_orders = [] if self._over(state) else self._open_orders(used)
        if len(open_orders) == 1:
            left = open_orders[0][len(used):]
        elif open_orders:
            left = tuple(sorted({o[len(used)] for o in open_orders}, reverse=True))
        else:
            left = ()
        return TurnState(self._board(state), tuple(done), left, tuple(s for s, _ in legal),
                         self._ends.get(state))

    def finish(self, played: Sequence) -> Position:
        """The turn's legal end that ``played`` makes (raises :class:`IllegalMoveError`
        when those steps do not finish the turn)."""
        turn = self.walk(played)
        if turn.end is None:
            raise IllegalMoveError(f"the steps {quote([list(s) for s in turn.played])} do "
                                   f"not finish the turn: "
                                   f"{'more dice to play' if turn.steps else 'not a legal end'}")
        return self.successors[turn.end]

    def move_text(self, played: Sequence) -> str:
        """The move text of the turn ``played`` finishes (``24/18 13/11``)."""
        return mt.format_move(self.position, self.finish(played), self.dice)

    def _board(self, state: tuple) -> Position:
        me, them, my_pins, their_pins = state
        pos = self.position
        bar, off = (me[mt.BAR], them[mt.BAR]), (me[mt.OFF], them[mt.OFF])
        pins = (tuple(sorted(my_pins)), tuple(sorted(their_pins)))
        return Position(pos.variant, tuple(me[1:25]), tuple(them[1:25]), bar, off, pins,
                        pos.turns, pos.pending)


def _read_step(raw, k: int) -> tuple:
    ok = (isinstance(raw, (list, tuple)) and len(raw) in (2, 3)
          and all(isinstance(x, int) and not isinstance(x, bool) for x in raw))
    if not ok or not (0 <= raw[0] <= mt.BAR and 0 <= raw[1] <= mt.BAR) or (
            len(raw) == 3 and not 1 <= raw[2] <= 6):
        raise IllegalMoveError(f"step {k + 1} {quote(raw)}: expected [from, to] or "
                               f"[from, to, die], points 0 (off) .. 25 (bar), die 1..6")
    return tuple(raw)
