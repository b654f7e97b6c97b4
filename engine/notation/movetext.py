"""Move text: ``24/18 13/11``, ``bar/22*``, ``6/off``, ``8/5(2)``, ``24/21*/16``.

The engine has no move type: move generation returns the positions after a turn, and a
move in notation is rebuilt at the API edge from (position before, position after,
dice), as wildbg does. Two layers, as in python-chess:

* :func:`parse_steps` checks syntax only and returns :class:`MovePart` values;
* :func:`parse_move` needs the position and dice and returns the legal successor the
  text names, or raises :class:`~engine.errors.IllegalMoveError` /
  :class:`~engine.errors.AmbiguousMoveError`.

:func:`format_move` writes the text GNU Backgammon prints for a turn: it finds single-die
steps that turn the position before into the position after, then renders them the way
gnubg's ``FormatMove`` does: steps sorted by source point, highest first (the bar is 25,
off is 0); a step that starts where an earlier one ended is joined to it, showing the
intermediate point only where a checker was hit there (``24/21*/16``) and eliding it
otherwise (``24/13``); identical moves collapse to ``8/5(2)``; a hit is marked ``*``
once per point. In plakoto ``*`` marks a checker pinned at the end of the turn; the
nardy games and fevga never show ``*`` or ``bar``. A turn with no legal move is
``"no move"``.

Why the text identifies a successor: the sources and destinations in the text fix the
mover's checkers after the turn, and the ``*`` marks fix which opposing checkers were
hit (in backgammon and portes) -- a point can be hit at most once in a turn. So
:func:`parse_move` compares that meaning with each legal successor; the order of moves,
splitting ``24/13`` into ``24/18 18/13``, and ``*`` at a point the text lands on are all
free. A merged move ``24/13`` that passes a blot is read as *not* hitting it (write
``24/18*/13`` or ``24/18/13`` for the hit), unless only the hitting play is legal.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from engine.errors import AmbiguousMoveError, IllegalMoveError, MoveError, quote
from engine.movegen.keys import key_order
from engine.rules import _layout as L
from engine.rules.dice import check_dice
from engine.rules.position import Position
from engine.rules.scoring import result
from engine.rules.variants import CASCADE_GAME, CASCADE_OWN, HIT, HOLD, PIN, Rules, get_rules

BAR = 25
"""A side's bar, as a point in its own numbering (gnubg's convention)."""
OFF = 0
"""Borne off, as a destination point."""
NO_MOVE = "no move"
"""The text of a turn in which nothing can be played."""
_NO_MOVE_WORDS = {"", "-", "no move", "nomove", "none", "pass", "cannot move", "can't move",
                  "(no move)", "no legal move", "no moves"}

_MAX_SOLUTIONS = 24     # decompositions compared when choosing the text of a turn
_MAX_NODES = 200_000    # search budget per turn (cascades of gul bara)


# ====================================================================== syntax layer
@dataclass(frozen=True)
class MovePart:
    """One part of a move text: a checker's path, possibly repeated.

    ``24/21*/16(2)`` is ``MovePart(path=(24, 21, 16), hits=(True, False), count=2)``.
    """

    path: tuple
    """Points in the mover's own numbering: the source, any points shown on the way,
    the destination. :data:`BAR` (25) may only start a path, :data:`OFF` (0) only end it."""
    hits: tuple
    """For each point after the source: whether the text marks it ``*``."""
    count: int = 1
    """How many checkers make this same move (``(2)``)."""

    def __str__(self) -> str:
        text = _point_name(self.path[0])
        for point, hit in zip(self.path[1:], self.hits):
            text += "/" + _point_name(point) + ("*" if hit else "")
        return text + (f"({self.count})" if self.count > 1 else "")

    @property
    def source(self) -> int:
        """Where the checker starts (25 = bar)."""
        return self.path[0]

    @property
    def destination(self) -> int:
        """Where the checker ends (0 = off)."""
        return self.path[-1]


def _point_name(p: int) -> str:
    return "bar" if p == BAR else "off" if p == OFF else str(p)


_POINT = r"(?:bar|b|off|o|[0-9]{1,2})"   # ASCII: int() also reads other scripts' digits
_PART = re.compile(rf"({_POINT}\*?(?:/{_POINT}\*?)+)(?:\(([0-9]{{1,2}})\))?", re.IGNORECASE)
_BARE = re.compile(rf"{_POINT}\*?", re.IGNORECASE)    # a point alone: '8', 'bar', 'off', '5*'


def _read_point(word: str) -> int:
    w = word.lower()
    if w in ("bar", "b"):
        return BAR
    if w in ("off", "o"):
        return OFF
    return int(w)


def parse_steps(text: str) -> tuple[MovePart, ...]:
    """Parse move text without a position: syntax only.

    Accepts parts separated by spaces or commas, each ``from/to`` with optional points on
    the way (``24/21*/16``), ``bar`` (or ``b``, ``25``) as a source, ``off`` (or ``o``,
    ``0``) as a destination, ``*`` after any point, ``(n)`` after a part, and ``-`` in
    place of ``/``; or, as GNU Backgammon's ``move 8 5 6 5``, only points, read in
    pairs (``8 5 6 5`` is ``8/5 6/5``, ``bar 22 6 off`` is ``bar/22 6/off``).
    ``"no move"`` (or ``""``, ``"pass"``) is the empty move. Raises
    :class:`MoveError` quoting the text and saying what was expected.
    """
    if not isinstance(text, str):
        raise MoveError(f"move text {quote(text)}: expected a string such as '24/18 13/11'")
    norm = text.strip()
    if norm.lower() in _NO_MOVE_WORDS:
        return ()
    norm = re.sub(r"\s*[/\-]\s*", "/", norm)            # "24 / 18", "24-18"
    norm = re.sub(r"\s+(?=[*(])", "", norm)              # "24/18 *", "8/5 (2)"
    norm = re.sub(r"\(\s*([0-9]+)\s*\)", r"(\1)", norm)       # "( 2 )"
    tokens = [t for t in re.split(r"[\s,;]+", norm) if t]
    if len(tokens) >= 2 and len(tokens) % 2 == 0 and all(_BARE.fullmatch(t) for t in tokens):
        # GNU Backgammon's ``move 8 5 6 5``: bare points read in pairs, from and to
        tokens = [f"{a}/{b}" for a, b in zip(tokens[::2], tokens[1::2])]
    parts = []
    for token in tokens:
        m = _PART.fullmatch(token)
        if not m:
            # the part as typed where the normalising left it so ('-1' read as '/1')
            shown = token if token in text else text.strip()
            raise MoveError(f"move text {quote(text)}: cannot read {quote(shown)}; expected "
                            f"moves like '24/18', 'bar/22*', '6/off', '8/5(2)' or "
                            f"'24/21*/16'")
        words = m.group(1).split("/")
        path: list[int] = []
        hits: list[bool] = []
        for k, word in enumerate(words):
            star = word.endswith("*")
            point = _read_point(word.rstrip("*"))
            if point > BAR:
                raise MoveError(f"move text {quote(text)}: point {point} in {quote(token)}; "
                                f"expected 1..24, bar or off")
            if k == 0:
                if point == OFF:
                    raise MoveError(f"move text {quote(text)}: {quote(token)} starts from off; "
                                    f"a move starts from a point or the bar")
                if star:
                    raise MoveError(f"move text {quote(text)}: {quote(token)} marks its source "
                                    f"with '*'; '*' follows the point where a checker is hit")
            else:
                if point == BAR:
                    raise MoveError(f"move text {quote(text)}: {quote(token)} moves to the bar; "
                                    f"a checker only leaves the bar")
                if point >= path[-1]:
                    raise MoveError(f"move text {quote(text)}: {quote(token)} moves from "
                                    f"{_point_name(path[-1])} to {_point_name(point)}; "
                                    f"checkers move to lower points")
                if point == OFF and star:
                    raise MoveError(f"move text {quote(text)}: {quote(token)} marks 'off' with "
                                    f"'*'; nothing can be hit off the board")
                hits.append(star)
            path.append(point)
        count = int(m.group(2)) if m.group(2) else 1
        if not 1 <= count <= 15:
            raise MoveError(f"move text {quote(text)}: count ({count}) in {quote(token)}; "
                            f"expected 1..15")
        parts.append(MovePart(tuple(path), tuple(hits), count))
    return tuple(parts)


# ====================================================================== board model
# A state for the step search: (me, them, my pins, their pins); me and them are
# 26-tuples in their owner's numbering: [0] borne off, [1..24] points, [25] bar.

def board_state(pos: Position) -> tuple:
    """The checkers of ``pos`` as the step search sees them: (my counts, their counts,
    my pinned points, their pinned points), each side's counts indexed off 0, points
    1..24 in its own numbering, bar 25."""
    return ((pos.off[0], *pos.me, pos.bar[0]), (pos.off[1], *pos.them, pos.bar[1]),
            frozenset(pos.pinned[0]), frozenset(pos.pinned[1]))


def step_rules(rules: Rules) -> "StepRules":
    """The :class:`StepRules` of ``rules``, made once per set of rules."""
    game = _games.get(id(rules))
    if game is None or game.rules is not rules:
        game = _games[id(rules)] = StepRules(rules)
    return game


_games: dict = {}


class StepRules:
    """The few rule facts the step search needs, taken from :class:`Rules`."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.meet = rules.meet
        self.opp = [0] + [rules.opposite_point(p) for p in range(1, 25)]

    def capturable(self, state: tuple, q: int) -> bool:
        """Whether landing on my point ``q`` hits (backgammon) or pins (plakoto)."""
        me, them, my_pins, their_pins = state
        o = self.opp[q]
        if them[o] != 1:
            return False
        if self.meet == HIT:
            return True
        if self.meet == PIN:
            return o not in their_pins and q not in my_pins
        return False

    def step(self, state: tuple, p: int, d: int):
        """Move one of my checkers from ``p`` by ``d``: (new state, hit) or None.

        Checks what a single step needs (own checker there, the bar first, the landing
        point open, bearing-off conditions); rules about whole turns (forced play, head,
        six-block, fevga start) are not checked: the target position is already legal.
        """
        me, them, my_pins, their_pins = state
        if me[p] == 0 or (me[BAR] and p != BAR) or p in my_pins:
            return None
        q = p - d
        captured = False
        them2 = them
        their_pins2 = their_pins
        if q >= 1:
            o = self.opp[q]
            n = them[o]
            if n:
                if self.meet == HOLD or n >= 2:
                    return None
                if self.meet == HIT:
                    captured = True
                    t = list(them)
                    t[o] = 0
                    t[BAR] += 1
                    them2 = tuple(t)
                else:  # PIN
                    if q in my_pins:
                        return None
                    if o not in their_pins:
                        captured = True
                        their_pins2 = their_pins | {o}
            dest = q
        else:
            if me[BAR] or any(me[k] for k in range(7, 25)) or my_pins:
                return None
            if q < 0 and any(me[k] for k in range(p + 1, 7)):
                return None
            dest = OFF
        m = list(me)
        m[p] -= 1
        m[dest] += 1
        if self.meet == PIN and p != BAR and m[p] == 0:
            o = self.opp[p]
            if o in their_pins2:
                their_pins2 = their_pins2 - {o}
        return (tuple(m), them2, my_pins, their_pins2), captured


def _pips(side: tuple) -> int:
    return sum(k * n for k, n in enumerate(side))


def dice_orders(before: Position, dice, rules: Rules) -> list[tuple]:
    """The orders in which the dice of this turn may be played (prefixes allowed)."""
    if dice is None:
        return [tuple(before.pending)]
    d1, d2 = dice
    if d1 != d2:
        return [(d1, d2), (d2, d1)]
    if _cascades(before, rules):
        return [tuple(v for v in range(d1, 7) for _ in range(4))]
    return [(d1,) * 4]


def _cascades(before: Position, rules: Rules) -> bool:
    """Whether a double rolled in ``before`` is played as a gul bara cascade."""
    if rules.cascade == CASCADE_OWN:
        return before.turns[0] >= 3          # the player's own 4th turn on
    if rules.cascade == CASCADE_GAME:
        return sum(before.turns) >= 3        # the game's 4th turn on
    return False


def _decompositions(game: StepRules, start: tuple, target: tuple, orders: Sequence[tuple],
                    report: dict | None = None):
    """Yield step lists ``[(from, to, die, hit), ...]`` leading from start to target.

    ``report["exhausted"]`` is set when the search stopped at its budget of
    :data:`_MAX_NODES` states (so "nothing found" does not mean "impossible").

    Depth-first, sources from the highest point down. Pruned, so that gul bara's
    cascades (up to 24 single moves) stay fast:

    * my checkers only move down: counting from the top, I keep at least as many
      checkers above each point as the target has;
    * the opponent's checkers only leave the board (hit), never arrive;
    * pips drop by exactly the die unless a checker is borne off, so without bearing off
      the pips left to lose must be the sum of the next few dice;
    * two steps with the same die are played from the higher source first: such steps
      commute (whether a point is open never depends on the order of my moves), so this
      loses no result and cuts the permutations of a double;
    * a state already known to be a dead end is not searched again.
    """
    t_me, t_them = target[0], target[1]
    t_pips = _pips(t_me)
    t_cum = []
    acc = 0
    for k in range(BAR, 0, -1):
        acc += t_me[k]
        t_cum.append(acc)
    bears_off = t_me[OFF] > start[0][OFF]
    dead = set()
    budget = [_MAX_NODES]
    report = {} if report is None else report
    report["exhausted"] = False

    def viable(state) -> bool:
        me, them = state[0], state[1]
        acc = 0
        for i, k in enumerate(range(BAR, 0, -1)):
            acc += me[k]
            if acc < t_cum[i]:
                return False
        for k in range(1, 25):
            if them[k] < t_them[k]:
                return False
        return True

    def search(state, seq, sums, i, prev, path):
        if state == target:
            yield list(path)
            return
        if i == len(seq):
            return
        if budget[0] <= 0:
            report["exhausted"] = True
            return
        left = _pips(state[0]) - t_pips
        if left <= 0 or left > sums[i][None]:
            return
        if not bears_off:
            moves_left = sums[i].get(left)
            # every checker above its target count must still move at least once
            if moves_left is None or sum(
                    n - t for n, t in zip(state[0][1:], t_me[1:]) if n > t) > moves_left:
                return
        d = seq[i]
        top = prev if i and seq[i - 1] == d else BAR
        key = (state, seq, i, top)
        if key in dead:
            return
        budget[0] -= 1
        found = False
        me = state[0]
        moves = []
        for p in range(top, 0, -1):
            if not me[p]:
                continue
            r = game.step(state, p, d)
            if r is None or not viable(r[0]):
                continue
            q = max(p - d, OFF)
            # try first the steps that move a surplus checker onto a point the target
            # still needs: the first solution comes quickly
            moves.append((-(me[p] > t_me[p]) - (t_me[q] > me[q]), p, q, r))
        moves.sort(key=lambda m: m[0])
        for _, p, q, (nxt, hit) in moves:
            path.append((p, q, d, hit))
            for sol in search(nxt, seq, sums, i + 1, p, path):
                found = True
                yield sol
            path.pop()
        if not found:
            dead.add(key)

    for seq in orders:
        # sums[i]: {pips the next k dice of seq[i:] take: k}, the dice played in order
        sums: list[dict[int | None, int]] = []
        for i in range(len(seq) + 1):
            acc = 0
            row: dict[int | None, int] = {0: 0}
            for k, d in enumerate(seq[i:], start=1):
                acc += d
                row[acc] = k
            row[None] = acc             # all of them
            sums.append(row)
        yield from search(start, seq, sums, 0, BAR, [])


# ====================================================================== rendering
def _render(steps: Iterable[tuple], game: StepRules, final_hits: frozenset) -> tuple[MovePart, ...]:
    """gnubg's FormatMove over single-die steps ``(from, to, die, hit)``.

    ``final_hits``: points (mover's numbering) to mark ``*``: hit in backgammon and
    portes, pinned at the end of the turn in plakoto.
    """
    moves = sorted(((p, q) for p, q, _d, _h in steps), key=lambda m: (-m[0], -m[1]))
    show_mid = game.meet == HIT
    chains: list[list | None] = [[p, q] for p, q in moves]
    # each chain, in order, takes in the later chains that start where it ends, each
    # found after the one taken before it (by start point: a cascade has 24 steps)
    starting: dict = {}
    for j, (p, _q) in enumerate(moves):
        starting.setdefault(p, []).append(j)
    for i, a in enumerate(chains):
        if a is None:
            continue
        j = i + 1
        while True:
            later = starting.get(a[-1], ())
            k = bisect_left(later, j)
            while k < len(later) and chains[later[k]] is None:
                k += 1
            if k == len(later):
                break
            j = later[k]
            b = chains[j]
            if show_mid and a[-1] in final_hits:
                a.append(b[-1])         # hit on the way: keep the intermediate point
            else:
                a[-1] = b[-1]           # elide it
            chains[j] = None
            j += 1
    live = [c for c in chains if c is not None]
    counted: list[list] = []
    for c in live:
        for entry in counted:
            if entry[0] == c:
                entry[1] += 1
                break
        else:
            counted.append([c, 1])
    marked: set = set()
    parts = []
    for path, count in counted:
        hits = []
        for k, point in enumerate(path[1:], start=1):
            if k < len(path) - 1:
                hits.append(True)       # only hit intermediates are kept
                marked.add(point)
            else:
                star = point != OFF and point in final_hits and point not in marked
                if star:
                    marked.add(point)
                hits.append(star)
        parts.append(MovePart(tuple(path), tuple(hits), count))
    return tuple(parts)


def _text(parts: Sequence[MovePart]) -> str:
    return " ".join(map(str, parts)) if parts else NO_MOVE


# ====================================================================== turn semantics
def mover_view(after: Position, dice) -> Position:
    """``after`` seen from the mover (successors are flipped, a pending segment is not)."""
    return after if dice is None else after.flip()


def _hit_set(game: StepRules, before: Position, target: Position) -> frozenset:
    """Points (mover's numbering) where the turn hit (backgammon) or left a new pin."""
    hits = set()
    if game.meet == HIT:
        for q in range(1, 25):
            o = game.opp[q]
            if target.them[o - 1] < before.them[o - 1]:
                hits.add(q)
    elif game.meet == PIN:
        new = set(target.pinned[1]) - set(before.pinned[1])
        hits = {q for q in range(1, 25) if game.opp[q] in new}
    return frozenset(hits)


def _best(before: Position, after: Position, dice) -> tuple[list, tuple[MovePart, ...]]:
    """The single-die steps ``(from, to, die, hit)`` of the turn ``before`` -> ``after``,
    in an order they can be played, and the parts of its text (see :func:`format_move`)."""
    rules = get_rules(before.variant)
    dice = check_dice(dice, before.pending)
    game = step_rules(rules)
    target = mover_view(after, dice)
    walk = cascade_layers(before, dice, rules)
    if walk is not None:              # no hits, no pins: only my checkers move
        if target.me == before.me and target.off[0] == before.off[0]:
            return [], ()
        try:
            steps = walk.steps((target.off[0], *target.me))
        except ValueError:
            raise IllegalMoveError(
                f"no sequence of single moves with dice {_dice_text(dice, before)} turns "
                f"{_literal(before)} into {_literal(target)} ({before.variant})") from None
        full = [(p, q, d, False) for p, q, d in steps]
        return full, _render(full, game, frozenset())
    start, goal = board_state(before), board_state(target)
    if start == goal:
        return [], ()
    final_hits = _hit_set(game, before, target)
    best = None
    best_steps: list = []
    best_key = None
    report: dict = {}
    for n, steps in enumerate(_decompositions(game, start, goal,
                                              dice_orders(before, dice, rules), report)):
        parts = _render(steps, game, final_hits)
        text = _text(parts)
        key = (len(parts), len(text), text)
        if best_key is None or key < best_key:
            best, best_steps, best_key = parts, steps, key
        if n + 1 >= (_MAX_SOLUTIONS if len(steps) <= 4 else 1):
            break
    if best is None:
        if report["exhausted"]:
            raise MoveError(f"gave up writing the turn from {_literal(before)} to "
                            f"{_literal(target)} with dice {_dice_text(dice, before)}: the "
                            f"search for its single moves ran past {_MAX_NODES} states")
        raise IllegalMoveError(
            f"no sequence of single moves with dice {_dice_text(dice, before)} turns "
            f"{_literal(before)} into {_literal(target)} ({before.variant})")
    return best_steps, best


def move_parts(before: Position, after: Position, dice) -> tuple[MovePart, ...]:
    """The parts of the move text of the turn ``before`` -> ``after`` (see :func:`format_move`)."""
    return _best(before, after, dice)[1]


def move_steps(before: Position, after: Position, dice) -> tuple[tuple[int, int], ...]:
    """The turn ``before`` -> ``after`` as single-die steps ``(from, to)`` in the mover's
    numbering (:data:`BAR` 25, :data:`OFF` 0), in an order in which they can be played
    one by one: the decomposition :func:`format_move` writes, unmerged (``24/18 18/13``
    for its ``24/13``, one step per die of a double). Empty for a turn with no move."""
    return tuple((p, q) for p, q, _d, _h in _best(before, after, dice)[0])


def die_steps(before: Position, after: Position, dice) -> tuple[tuple[int, int], ...]:
    """:func:`move_steps`, one step for each die the play uses: where a checker borne off
    by a higher die stands for two steps (with 5-1, ``4/off`` for ``4/3 3/off``, which
    the forced-play rule makes the play), the decomposition of the most steps. A reader
    that replays a play die by die (UBGI's bkgm, in bgci's dueller and checker) refuses
    one that leaves a playable die unused. Only a play with a step borne off and fewer
    steps than dice can have a longer one; a gul bara cascade is left as it is."""
    steps = move_steps(before, after, dice)
    if dice is None or not any(q == OFF for _p, q in steps):
        return steps
    rules = get_rules(before.variant)
    dice = check_dice(dice, before.pending)
    orders = dice_orders(before, dice, rules)
    most = max(len(o) for o in orders)
    if len(steps) >= most or most > 4:
        return steps
    for found in _decompositions(step_rules(rules), board_state(before),
                                 board_state(mover_view(after, dice)), orders):
        if len(found) > len(steps):
            steps = tuple((p, q) for p, q, _d, _h in found)
    return steps


def gnu_ending(before: Position, after: Position, dice) -> Position:
    """``after``, or, when it bears off the mover's last checker in backgammon, the play
    of the same result that uses the most dice. docs/rules.md (3.3, 3.4) counts a play
    that ends the game as using all its dice, so with 5-1 and a checker on my 2 point
    against a blot on my 1 point both ``2/off`` and ``2/1 1/off`` (hitting) are legal;
    GNU Backgammon's move generator (its external player's moves) and bkgm's (bgci's
    ``check`` and dueller) list only the play that uses both dice, and refuse ``2/off``
    ("not in legal children"; GNU Backgammon's ``import mat`` stops at it). The game
    ends either way with the same score (the blot is in the winner's home board or on
    the bar), so nothing is lost by writing the play they accept: the protocols send it
    and match files record it."""
    from engine.movegen.generate import successors
    won = result(after)
    if dice is None or won is None or before.variant != "backgammon":
        return after
    ends = [s for s in successors(before, dice) if s != after and result(s) == won]
    if not ends:
        return after
    length = {s: len(die_steps(before, s, dice)) for s in [after, *ends]}
    return max([after, *ends], key=lambda s: length[s])   # after first: kept on a tie


def jellyfish_move(before: Position, after: Position, dice) -> str:
    """The turn ``before`` -> ``after`` as match files write it (the Jellyfish ``.mat``
    format, GNU Backgammon's ``export match mat``): each single-die step ``from/to`` in
    the mover's numbering, the bar 25 and off 0, ``*`` on a step that hits (``25/22*
    22/16``); empty for a turn with no move."""
    return " ".join(f"{p}/{q}{'*' if hit else ''}"
                    for p, q, _d, hit in _best(before, after, dice)[0])


_walks: dict = {}
"""The layers of the last cascade asked about, by (position key, dice)."""
_last_walk: list = [None]
"""``(position, dice, layers)`` of the last call: the texts of many plays of one turn
are asked for with the same position object, whose key need not be written again."""


def cascade_layers(before: Position, dice, rules: Rules):
    """The layers of a gul bara cascade or pending segment
    (:class:`engine.movegen.generate.CascadeLayers`), kept for the last turn asked about (an
    analysis writes the text of many plays of one turn); None for other turns."""
    if rules.meet != HOLD or before.bar[0] or not (
            dice is None or (dice[0] == dice[1] and _cascades(before, rules))):
        return None
    last = _last_walk[0]
    if last is not None and last[0] is before and last[1] == dice:
        return last[2]
    from engine.movegen.generate import CascadeLayers
    key = (before.key(), dice)
    if key not in _walks:
        try:
            walk = CascadeLayers(before, dice, rules)
        except ValueError:
            return None
        _walks.clear()
        _walks[key] = walk
    _last_walk[0] = (before, dice, _walks[key])
    return _walks[key]


def format_move(before: Position, after: Position, dice) -> str:
    """The move text of the turn that leads from ``before`` to ``after``.

    ``after`` is a successor as :func:`engine.movegen.generate.successors` returns it: seen from
    the next side to move, except after a gul bara pending segment (``dice=None``),
    where the same side is still to move. ``after`` is trusted to be legal: the search
    only checks single steps (an unchanged board is ``"no move"`` whatever the dice).
    Raises :class:`IllegalMoveError` when no sequence of single-die steps leads there,
    :class:`MoveError` if a gul bara cascade defeats the search budget.
    """
    _position_arg(before, "before")
    _position_arg(after, "after")
    return _text(move_parts(before, after, dice))


def format_moves(before: Position, successors: Sequence[Position], dice) -> list[str]:
    """:func:`format_move` for each of ``successors``, index for index."""
    return [format_move(before, s, dice) for s in successors]


# ====================================================================== position-aware parse
def _dice_text(dice, before: Position) -> str:
    if dice is None:
        return "pending " + "-".join(map(str, before.pending))
    return f"{dice[0]}-{dice[1]}"


def _literal(pos: Position) -> str:
    """A short form of a position, readable by :meth:`Position.from_literal`."""
    sides = []
    for name, board, side in (("x", pos.me, 0), ("o", pos.them, 1)):
        words = [name]
        if pos.bar[side]:
            words.append(f"bar:{pos.bar[side]}")
        words += [f"{p}:{board[p - 1]}" for p in range(24, 0, -1) if board[p - 1]]
        words += [f"pin:{p}" for p in sorted(pos.pinned[side])]
        sides.append(" ".join(words))
    return "; ".join(sides)


def _position_arg(value, name: str) -> None:
    """:class:`MoveError` naming the argument ``name`` unless it is a :class:`Position`."""
    if not isinstance(value, Position):
        raise MoveError(f"{name} = {quote(value)}: expected a Position")


def _subset_sums(dice_list: Sequence[int]) -> set:
    sums = {0}
    for d in dice_list:
        sums |= {s + d for s in sums}
    return sums


def parse_move(text: str, before: Position, dice,
               successors: Sequence[Position] | None = None) -> Position:
    """The legal successor of ``before`` that move ``text`` names, for ``dice``.

    ``successors`` may pass the legal successors if the caller has them already;
    otherwise :func:`engine.movegen.generate.successors` computes them. Raises :class:`MoveError`
    for bad syntax, :class:`IllegalMoveError` when the text names no legal turn,
    :class:`AmbiguousMoveError` when it fits more than one.
    """
    _position_arg(before, "before")
    if successors is not None:
        for i, s in enumerate(successors):
            if not isinstance(s, Position):
                _position_arg(s, f"successors[{i}]")
    parts = parse_steps(text)
    rules = get_rules(before.variant)
    game = step_rules(rules)
    dice = check_dice(dice, before.pending)
    arrays = None
    if successors is None:
        from engine.movegen.generate import successor_arrays
        arrays = successor_arrays(before, dice, rules)
    where = f"{quote(text)} with dice {_dice_text(dice, before)} in {_literal(before)} " \
            f"({before.variant})"

    # what the text says: the mover's net change per point, and the hit marks
    delta = [0] * 26
    marked, landings = set(), set()
    segments = []                 # each a/b the text names (a checker's steps between)
    longest = max(dice_orders(before, dice, rules), key=len)
    reachable = _subset_sums(longest)
    named = sum(part.count * (len(part.path) - 1) for part in parts)
    if named > len(longest):
        # each a/b the text names takes at least one die: '6/1/off 5/off' for 6-5
        raise IllegalMoveError(f"move {where}: names {named} moves, but the roll gives "
                               f"{len(longest)} dice")
    for part in parts:
        delta[part.source] -= part.count
        delta[part.destination] += part.count
        for a, b in zip(part.path, part.path[1:]):
            segments.append((a, b))
            if b != OFF and a - b not in reachable:
                raise IllegalMoveError(f"move {where}: {_point_name(a)}/{_point_name(b)} "
                                       f"is {a - b} pip{'' if a - b == 1 else 's'}, which "
                                       f"no dice of the roll add up to")
        for point, hit in zip(part.path[1:], part.hits):
            if point != OFF:
                landings.add(point)
                if hit:
                    marked.add(point)
    if (delta[BAR] or any(p.source == BAR for p in parts)) and game.meet != HIT:
        raise IllegalMoveError(f"move {where}: {before.variant} has no bar")
    if marked and game.meet == HOLD:
        raise IllegalMoveError(f"move {where}: '*' marks a hit, but {before.variant} has "
                               f"no hitting")
    blots = {q for q in landings if game.capturable(board_state(before), q)}
    if marked - blots:
        raise IllegalMoveError(f"move {where}: '*' at {sorted(marked - blots)}, where "
                               f"there is no lone opposing checker to "
                               f"{'pin' if game.meet == PIN else 'hit'}")

    start = board_state(before)
    want_me = tuple(n + dn for n, dn in zip(start[0], delta))
    if arrays is not None:
        successors = _successors_like(arrays, before, dice, want_me, game)
    assert successors is not None       # given, or just found on the arrays
    matches: list[Position] = []
    relaxed: list[Position] = []
    for s in successors:
        # the mover's checkers after the turn (a successor is seen from the next side
        # to move, except after a pending segment)
        mine = (s.off[0], *s.me, s.bar[0]) if dice is None else (s.off[1], *s.them, s.bar[1])
        if mine != want_me:
            continue
        target = mover_view(s, dice)
        hits = _hit_set(game, before, target)
        if game.meet == HIT:
            required = marked | blots
            if required <= hits:
                if hits <= landings:
                    matches.append(s)
                elif all(_on_the_way(h, segments, reachable) for h in hits - landings):
                    relaxed.append(s)      # e.g. 24/13 for 24/18*/13
        else:
            matches.append(s)
    found = matches or relaxed
    if not found:
        if arrays is not None:        # name the first legal plays, as successors() sorts
            successors = [Position.from_array(arrays[i], before.variant)
                          for i in key_order(arrays)[:3]]
        count = len(successors) if arrays is None else len(arrays)
        if not count:
            raise IllegalMoveError(f"move {where}: there is no legal play to match")
        some = ", ".join(repr(format_move(before, s, dice)) for s in successors[:3])
        more = ", ..." if count > 3 else ""
        legal = (f"the only legal play is {some}" if count == 1 else
                 f"the {count} legal plays are {some}" if count <= 3 else
                 f"the {count} legal plays include {some}{more}")
        raise IllegalMoveError(f"move {where}: no legal play matches; {legal}")
    if len(found) > 1:
        texts = ", ".join(repr(format_move(before, s, dice)) for s in found[:4])
        raise AmbiguousMoveError(f"move {where}: fits {len(found)} legal plays ({texts}); "
                                 f"mark hits with '*' or show the points on the way")
    return found[0]


def _on_the_way(point: int, segments, reachable: set) -> bool:
    """Whether a checker can stop on ``point`` inside one of the text's ``segments``
    (``a/b`` with ``point`` strictly between, a sum of the dice away from ``a``): a hit
    there is one the text passes over without naming it, as ``24/13`` passes 18 or 19.
    A segment of one die (``24/19`` of ``24/19/13``) has no point inside it."""
    return any(b < point < a and a - point in reachable for a, b in segments)


def _successors_like(arrays, before: Position, dice, mine: tuple,
                     game: StepRules) -> list[Position]:
    """The successors among ``arrays`` that can match a text: in a game without hits
    or pins (where a gul bara cascade has up to a million plays) only those that leave
    the mover's checkers as ``mine`` (off, points 1..24, bar), found on the arrays;
    in the others every successor (a few hundred at most), sorted by canonical key."""
    if game.meet == HOLD:
        side = L.ME if dice is None else L.THEM
        cols = [side + L.OFF, *range(side + 1, side + 25), side + L.BAR]
        arrays = arrays[(arrays[:, cols] == np.array(mine)).all(axis=1)]
    return [Position.from_array(arrays[i], before.variant) for i in key_order(arrays)]
