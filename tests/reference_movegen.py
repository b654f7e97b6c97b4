"""A slow, obviously correct move generator, the reference the numba core is checked against.

Written straight from ``docs/rules.md`` on a different representation from the kernel
(one physical board in the mover's numbering, plain Python lists): every ordered way of
playing the dice one checker step at a time, every prefix kept, end-of-turn rules applied,
then the forced-play rules. Only a memo of (board, step) pairs already expanded keeps gul
bara cascades finite in practice; it changes no result.
"""

from array import array

from engine.rules import _layout as L
from engine.rules.position import Position
from engine.rules.variants import (
    BLOCK_EACH,
    BLOCK_NONE,
    BLOCK_QUARTER,
    CASCADE_GAME,
    CASCADE_NONE,
    HEAD_FIRST_ANY_DOUBLE,
    HEAD_FIRST_CLASSIC,
    HIT,
    HOLD,
    MOTHER_DEFERRED,
    MOTHER_IMMEDIATE,
    PIN,
    get_rules,
)


class Board:
    """Mutable board from the mover's side: ``mine[p]``, ``theirs[p]`` at my point p.
    ``theirs`` (a tuple) and the pins (frozen sets) are replaced, never changed, by a
    step, so a copy shares them."""

    __slots__ = ("mine", "theirs", "my_bar", "their_bar", "my_off", "their_off",
                 "my_pins", "their_pins", "heads", "over")

    def copy(self):
        b = Board()
        b.mine, b.theirs = self.mine[:], self.theirs
        b.my_bar, b.their_bar, b.my_off, b.their_off = (self.my_bar, self.their_bar,
                                                        self.my_off, self.their_off)
        b.my_pins, b.their_pins = self.my_pins, self.their_pins
        b.heads, b.over = self.heads, self.over
        return b

    def sig(self):
        return (tuple(self.mine), self.theirs, self.my_bar, self.their_bar,
                self.my_off, self.their_off, self.my_pins, self.their_pins, self.over)


def _board(pos, rules):
    b = Board()
    b.mine = [0] + list(pos.me) + [0]
    theirs = [0] * 26
    for q in range(1, 25):
        theirs[_my_point(rules, q)] = pos.them[q - 1]
    b.theirs = tuple(theirs)
    b.my_bar, b.their_bar = pos.bar
    b.my_off, b.their_off = pos.off
    b.my_pins = frozenset(pos.pinned[0])                            # my points
    b.their_pins = frozenset(_my_point(rules, q) for q in pos.pinned[1])  # my points too
    b.heads, b.over = 0, False
    return b


def _my_point(rules, q):
    """My number of the opponent's point q (the map is its own inverse)."""
    return rules.opposite_point(q)


_POINT_MAPS: dict = {}


def _point_map(rules):
    """``[_my_point(rules, q) for q]`` for q = 0..24 (index 0 unused), made once per
    geometry: the reference asks it millions of times."""
    m = _POINT_MAPS.get(rules.geometry)
    if m is None:
        m = _POINT_MAPS[rules.geometry] = [0] + [_my_point(rules, q) for q in range(1, 25)]
    return m


def _to_position(b, pos, rules, turns, pending):
    opp = _point_map(rules)
    them = [0] * 24
    for p in range(1, 25):
        them[opp[p] - 1] = b.theirs[p]
    return Position(pos.variant, tuple(b.mine[1:25]), tuple(them), (b.my_bar, b.their_bar),
                    (b.my_off, b.their_off),
                    (tuple(sorted(b.my_pins)), tuple(sorted(opp[p] for p in b.their_pins))),
                    turns, tuple(pending))


def _sources(b):
    """The points a checker might step from, highest first: the bar while it holds one
    of mine (nothing else moves then), else my points that hold a checker. A shortcut
    only: :func:`_move` checks the same again."""
    if b.my_bar:
        return (25,)
    mine = b.mine
    return [p for p in range(24, 0, -1) if mine[p]]


def _move(b, rules, src, die, head_limit):
    """The board after one checker steps from src (25 = bar) by die, or None."""
    # may it step? (all on ``b``, before a copy is made)
    if src == 25:
        if b.my_bar == 0:
            return None
    else:
        if b.mine[src] == 0 or b.my_bar > 0 or src in b.my_pins:
            return None
    if src == 24 and rules.head and b.heads >= head_limit:
        return None
    if src == 24 and rules.start_rule:
        left = b.mine[24] < 15 - b.my_off  # some checker has left the start
        if left and b.my_off == 0 and not any(b.mine[1:13]):
            return None
    dest = src - die
    theirs = b.theirs[dest] if dest > 0 else 0
    if dest <= 0:
        if b.my_bar or any(b.mine[7:25]) or b.my_pins:
            return None
        if dest < 0 and any(b.mine[src + 1:7]):
            return None
    elif theirs:
        if rules.meet == HOLD:
            return None
        if rules.meet == HIT and theirs > 1:
            return None
        if rules.meet == PIN and dest not in b.their_pins and not (
                theirs == 1 and b.mine[dest] == 0):
            return None
    # the step
    n = b.copy()
    if src == 25:
        n.my_bar -= 1
    else:
        n.mine[src] -= 1
        if src in n.their_pins and n.mine[src] == 0:
            n.their_pins = n.their_pins - {src}
    if src == 24:
        n.heads += 1
    if dest <= 0:
        n.my_off += 1
        n.over = n.my_off == 15
        _deferred_mother(n, rules)
        return n
    if theirs:
        if rules.meet == HIT:                   # a blot: hit
            n.theirs = n.theirs[:dest] + (0,) + n.theirs[dest + 1:]
            n.their_bar += 1
        elif rules.meet == PIN and dest not in b.their_pins:   # a lone checker: pinned
            n.their_pins = n.their_pins | {dest}
            if _my_point(rules, dest) == 24 and rules.mother == MOTHER_IMMEDIATE:
                n.over = True
    n.mine[dest] += 1
    _deferred_mother(n, rules)
    return n


def _deferred_mother(n, rules):
    # option: a pinned mother wins once the pinner has left his own start; both
    # mothers pinned ends the game too
    if rules.meet == PIN and rules.mother == MOTHER_DEFERRED and not n.over:
        if _my_point(rules, 24) in n.their_pins and (n.mine[24] == 0 or 24 in n.my_pins):
            n.over = True


def _block_legal(b, rules):
    if rules.block == BLOCK_NONE:
        return True
    if rules.block == BLOCK_QUARTER:
        return not all(b.mine[p] for p in range(19, 25))
    opp = _point_map(rules)
    held = [False] * 25          # my points, in the opponent's numbering
    lowest = 25                  # the opponent's checker nearest his home, his numbering
    for p in range(1, 25):
        if b.mine[p]:
            held[opp[p]] = True
        if b.theirs[p]:
            lowest = min(lowest, opp[p])
    run = 0
    for q in range(1, 25):
        run = run + 1 if held[q] else 0
        if run == 6:
            # the first six-block, q - 5 .. q: illegal unless an opposing checker has
            # passed it (any later block starts higher, so this one decides)
            return lowest < q - 5
    return True


def reference_successors(pos: Position, dice, rules=None, fallback=True):
    """The set of canonical keys of every legal successor of ``pos`` for ``dice``.
    ``fallback=False``: the plays the six-block rule allows as it stands, none at all
    when every play breaks it (the generator then drops the rule for the turn)."""
    return {p.key() for p in reference_positions(pos, dice, rules, fallback)}


def _ends(pos: Position, dice, rules, fallback):
    """Each distinct successor as ``(board, pending dice left)``: the board from the
    mover's side as the turn (or segment) leaves it, not yet flipped."""
    segment = dice is None
    cascade = False
    if segment:
        orders = [list(pos.pending)]
    elif dice[0] != dice[1]:
        orders = [[dice[0], dice[1]], [dice[1], dice[0]]]
    else:
        d = dice[0]
        if rules.cascade == CASCADE_NONE:
            cascade = False
        elif rules.cascade == CASCADE_GAME:
            cascade = sum(pos.turns) >= 3
        else:
            cascade = pos.turns[0] >= 3
        orders = [[x for x in range(d, 7 if cascade else d + 1) for _ in range(4)]]
    head_limit = 1
    if not segment and dice[0] == dice[1] and pos.turns[0] == 0:
        if rules.head_first == HEAD_FIRST_ANY_DOUBLE or (
                rules.head_first == HEAD_FIRST_CLASSIC and dice[0] in (3, 4, 6)):
            head_limit = 2
    total = len(orders[0])

    def candidates(enforce):
        """Every play (each prefix of each order), as (board, dice used, first die);
        with ``enforce`` only the longest of those the six-block rule allows."""
        ends = []
        for order in orders:
            seen = set()

            def walk(b, k, first):
                ends.append((b, total if b.over else k, first))
                if b.over or k == total:
                    return
                for src in _sources(b):
                    n = _move(b, rules, src, order[k], head_limit)
                    if n is None:
                        continue
                    if enforce and rules.block == BLOCK_EACH and not _block_legal(n, rules):
                        continue
                    key = (n.sig(), n.heads, k + 1, first if k else order[0])
                    if key in seen:
                        continue
                    seen.add(key)
                    walk(n, k + 1, order[0] if k == 0 else first)

            walk(_board(pos, rules), 0, None)
        if enforce:
            # the rule judges each play where it ends; only the longest plays it allows
            # are chosen below, so shorter ones are judged only when no longer one passes
            for used in sorted({e[1] for e in ends}, reverse=True):
                allowed = [e for e in ends if e[1] == used and _block_legal(e[0], rules)]
                if allowed:
                    return allowed
            return []
        return ends

    # a set-up position may already hold a six-block that every play keeps: then the
    # rule forbids nothing this turn (docs/rules.md)
    legal = candidates(True) or (candidates(False) if fallback else [])
    if not legal:
        return []
    most = max(used for _, used, _ in legal)
    chosen = [e for e in legal if e[1] == most]
    if not segment and dice[0] != dice[1] and most == 1:
        big = max(dice)
        if any(first == big for _, _, first in chosen):
            chosen = [e for e in chosen if e[2] == big]
    ends, boards = [], set()
    for b, used, _ in chosen:
        sig = b.sig()
        if sig in boards:             # the same board by another order of the dice
            continue
        boards.add(sig)
        rest = () if segment or not cascade or b.over else tuple(orders[0][used:])
        ends.append((b, rest))
    return ends


def reference_positions(pos: Position, dice, rules=None, fallback=True):
    """:func:`reference_successors` as a set of positions, canonical as the keys are
    (points as tuples of ints, each side's pins ascending): two of them are equal
    exactly when their keys are, and comparing them costs no JSON."""
    rules = rules or get_rules(pos.variant)
    found = set()
    for b, rest in _ends(pos, dice, rules, fallback):
        if dice is None:
            p = _to_position(b, pos, rules, pos.turns, ())
        else:
            p = _to_position(b, pos, rules, pos.turns, ()).flip()
            p = Position(p.variant, p.me, p.them, p.bar, p.off, p.pinned,
                         (pos.turns[1], pos.turns[0] + 1), rest)
        found.add(p)
    return found


def _row(b, pos, rules, dice, rest):
    """The state row (:mod:`engine.rules._layout`) of the successor ``b`` leaves, as
    bytes: flipped to the next side after a roll, as it stands after a segment."""
    opp = _point_map(rules)
    row = [0] * L.STATE_LEN
    mine = b.mine[1:25]
    theirs = [b.theirs[opp[q]] for q in range(1, 25)]          # their own numbering
    my_pins = b.my_pins
    their_pins = [opp[p] for p in b.their_pins]
    if dice is None:
        me, them, me_pins, them_pins = mine, theirs, my_pins, their_pins
        row[L.ME + L.BAR], row[L.THEM + L.BAR] = b.my_bar, b.their_bar
        row[L.ME + L.OFF], row[L.THEM + L.OFF] = b.my_off, b.their_off
        row[L.TURNS_ME], row[L.TURNS_THEM] = pos.turns
    else:
        me, them, me_pins, them_pins = theirs, mine, their_pins, my_pins
        row[L.ME + L.BAR], row[L.THEM + L.BAR] = b.their_bar, b.my_bar
        row[L.ME + L.OFF], row[L.THEM + L.OFF] = b.their_off, b.my_off
        row[L.TURNS_ME], row[L.TURNS_THEM] = pos.turns[1], pos.turns[0] + 1
    row[L.ME + 1:L.ME + 25] = me
    row[L.THEM + 1:L.THEM + 25] = them
    for p in me_pins:
        row[L.PIN_ME + p] = 1
    for q in them_pins:
        row[L.PIN_THEM + q] = 1
    row[L.NPEND] = len(rest)
    row[L.PEND:L.PEND + len(rest)] = rest
    return array("h", row).tobytes()


def reference_rows(pos: Position, dice, rules=None, fallback=True):
    """:func:`reference_positions` as the set of their state rows' bytes
    (:meth:`Position.to_array`, written here straight from the reference's boards):
    compared with the kernel's rows as they come, without making a position of
    each."""
    rules = rules or get_rules(pos.variant)
    return {_row(b, pos, rules, dice, rest) for b, rest in _ends(pos, dice, rules, fallback)}


def check_rows(rows, pos: Position, dice, rules=None) -> None:
    """Assert that the kernel's successor rows ``rows`` of ``pos`` and ``dice`` are
    distinct and are, as bytes, the reference's successors (:func:`reference_rows`)."""
    fast = {row.tobytes() for row in rows}
    assert len(fast) == len(rows), f"{pos!r} dice {dice}: a successor made twice"
    slow = reference_rows(pos, dice, rules)
    assert fast == slow, (f"{pos!r} dice {dice}: {len(fast)} successors, the reference "
                          f"{len(slow)}")
