"""Hand-crafted network inputs that the raw per-slot encoding cannot express.

Tesauro's raw units make pip counts, blot counts and made points linear functions of the
inputs, so one layer of sums gets those for free. What it cannot build is a *relation
between checkers*: whether the armies are still in contact, how many rolls hit a blot,
how long a prime is, how hard a back checker finds it to escape. :func:`features`
computes such numbers for a state, seen from the side to move, for the games with
opposite directions of play (backgammon, portes):

0. ``contact``: 1 while some checker of mine still has to pass one of the opponent's
   (0 in a pure race);
1. ``my_shots``: share of the 36 rolls on which the opponent can hit one of my blots
   from a distance of at most 12 (a die, the sum of both, or a double's multiples;
   points in between are not checked, and from the bar only an entering checker);
2. ``their_shots``: the same for the opponent's blots;
3. ``my_prime``: my longest run of made points (two or more checkers), divided by 6;
4. ``their_prime``: the opponent's, likewise;
5. ``my_escapes``: share of the rolls on which my rearmost checker can jump the
   opponent's points in the 12 in front of it (GNU Backgammon's "back escapes": the
   landing point open and not both one-die points closed);
6. ``their_escapes``: the same for the opponent's rearmost checker;
7. ``my_contained``: 1 - the fewest escapes a checker of mine would have from any of
   my points 15..24 (how well the opponent's points contain my back checkers);
8. ``their_contained``: the same for the opponent's checkers against my points;
9. ``my_behind``: pips my checkers must travel to pass the opponent's rearmost
   checker, / 152 (GNU Backgammon's "break contact");
10. ``their_behind``: the same for the opponent;
11. ``my_dance``: share of rolls on which a checker of mine on the bar would not
    enter, (closed points of the opponent's home board / 6) squared;
12. ``their_dance``: the same against my home board.

The first five are the encoder ``tesauro198+f5``; all thirteen ``tesauro198+f13``.

:func:`extended_features` adds eight (``tesauro198+f21``): shots counted the way they
are played, where ``my_shots`` approximates (the opponent's checker may not land on my
made points on its way, and a double moves one checker up to four steps), and the back
game:

13. ``my_hit``: share of the 36 rolls on which the opponent can hit a blot of mine;
14. ``their_hit``: the same for the opponent's blots;
15. ``my_double_hit``: share of the rolls on which it can hit two (one checker hitting
    with each die in turn, or two checkers one die each; a double: two of the blots it
    reaches);
16. ``their_double_hit``;
17. ``my_pip_loss``: the pips the most costly hit would send back (a blot on my point
    ``p`` loses ``25 - p``), summed over the rolls that hit, / (36 * 24);
18. ``their_pip_loss``;
19. ``my_back_game``: 1 when I hold two or more points in the opponent's home board;
20. ``their_back_game``.

and then eighteen more on the timing and shape of each side's army (``tesauro198+f39``),
mine and the opponent's in turn, as GNU Backgammon's contact inputs describe such
things (each side's points in its own numbering, the bar 25; "passed" checkers are
those on points below the opponent's rearmost checker):

21, 22. ``timing``: the pips the side can play before it must break a point it holds:
   every checker on the bar, on points 7..12 and on the points up to the opponent's
   rearmost checker counts with its point; behind the opponent's rearmost checker (and
   above 12) a point of two holds (an anchor) and only the checkers beyond two count
   (a blot counts); in the home board checkers beyond two count, and each checker a
   point of 1..6 lacks for two is taken back at that point while counted ones remain;
   at least 0, / 100;
23, 24. ``free_pips``: the pips of the passed checkers, / 100;
25, 26. ``mobility``: over the checkers on points 7..25, the point less 6 times the
   escapes of :func:`features` from that point, summed, / 3600;
27, 28. ``moment``: the mean squared distance above the mean point of the checkers
   beyond it (bar 25, borne-off checkers left out), / 400;
29, 30. ``backbone``: 1 less the checker-weighted mean closeness of each made point to
   the next made point in front of it (11 for 6 pips or fewer, ``13 - d`` for ``d`` of
   7 to 11, 0 beyond), / 11; 0 with fewer than two made points;
31, 32. ``forward_anchor``: the most advanced point held in the opponent's home board,
   as the opponent's point / 6, else the held point of its outfield nearest it, else 2;
33 .. 38. ``off_a``, ``off_b``, ``off_c``: the checkers borne off in three pieces of
   five, each / 5 (mine and the opponent's in turn).

An opponent with checkers on the bar shoots only with an entering checker (unlike
``my_shots``, which counts every opposing checker), and with two dice only if two are on
the bar. These are counts of shots, not of legal plays: with two or more checkers on the
bar the entering checker may still go on with the other die (or a double's further
steps), two hits one die each are counted where a single checker would have to make
both, and the rule that a play must use both dice is not applied, so the hit and
double-hit shares can be above what legal play gives (an audit of 2,508 positions
without checkers on the bar found ``my_double_hit`` above the legal share in 398, never
below). The kept ``tesauro198+f21`` network was trained on these values as they are.

One pass over the points builds bit masks of each side's occupied, made and blot
points, in both sides' numberings; the rest is bit operations and table lookups
(``benchmarks/expand_parts.py`` times all thirteen: its row ``+ features only``), returned
as a tuple so the hot kernels allocate nothing.

:func:`family_features` serves gul bara (``nardy255+m14``), where a double from the 4th
turn on is a cascade of up to 24 single moves and the dice a player cannot play pass to
the opponent: how many moves of each number a side could play is what decides how much
of a cascade it keeps. For each side, from its own point of view:

0-5. ``mobility[d]``, d = 1..6: the moves of ``d`` its checkers could make, capped at
   four (a double's) and divided by four: each checker walks ``d`` at a time while the
   landing point is not held by the opponent, bearing off when all are home (the die's
   point or, below it, the highest); the head (point 24) lets one checker go;
6. ``home``: 1 when all its checkers on the board are home (points 1..6), so that it
   may bear off.

Mine first, then the opponent's: 14 inputs. The opponent's point ``q`` is my point
``q + 12`` or ``q - 12`` (both sides move the same way, as in long nardy, gul bara and
fevga). An encoder's feature inputs are the first ``k`` (up to 13) of :func:`features`,
all of :func:`extended_features` or all of these, as the dtype of its feature index
says (``int64``, :data:`EXTENDED_INDEX`, :data:`FAMILY_INDEX`).
"""

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import overload

from engine._jit import njit
from engine.rules import _layout as L

N_FEATURES = 13
"""Inputs :func:`features` gives (an encoder may use the first few)."""

N_FAMILY = 14
"""Inputs :func:`family_features` gives (an encoder uses all of them)."""

N_EXTENDED = 39
"""Inputs :func:`extended_features` gives (an encoder uses the first 21 of them,
``tesauro198+f21``, or all, ``tesauro198+f39``)."""


def _hit_table() -> np.ndarray:
    """``table[window]``: share of the 36 rolls that hit a blot from some distance, a
    12-bit mask whose bit ``j`` says a shooter stands ``12 - j`` pips away; it hits
    with one die, the sum of both, or three or four times a double's number. Built
    roll by roll over all 4096 windows at once (a loop per window took 0.3 s of every
    start)."""
    window = np.arange(1 << 12)
    hits = np.zeros(1 << 12, np.int64)
    for a in range(1, 7):
        for b in range(1, 7):
            reach = {a, b, a + b} | ({3 * a, 4 * a} if a == b else set())
            mask = sum(1 << (12 - d) for d in reach if d <= 12)
            hits += (window & mask) != 0
    table = (hits / 36.0).astype(np.float32)
    table.setflags(write=False)
    return table


_HITS = _hit_table()


def _escape_table() -> np.ndarray:
    """``table[window]``: rolls (of 36) on which a checker jumps the closed points of
    ``window``, a 12-bit mask whose bit ``j`` is the point ``12 - j`` pips ahead: it
    escapes when the point both dice reach is open and not both one-die points are
    closed (GNU Backgammon's ``anEscapes``, on a mirrored mask). Built roll by roll
    over all windows at once."""
    window = np.arange(1 << 12)

    def closed(d):
        return (window >> (12 - d)) & 1

    rolls = np.zeros(1 << 12, np.int64)
    for a in range(1, 7):
        for b in range(1, 7):
            rolls += (closed(a + b) == 0) & ~((closed(a) == 1) & (closed(b) == 1))
    table = rolls.astype(np.float32)
    table.setflags(write=False)
    return table


_ESCAPES = _escape_table()


@njit(cache=True, inline="always")
def _masks(s, side):
    """Bit masks of ``side``'s points: occupied, made (2+), blots, in its own numbering
    (bit ``p``; the bar is bit 25), and occupied and made in the other side's (bit
    ``25 - p``; the bar is bit 0, where an entering checker starts)."""
    occ = made = occ_x = made_x = np.int64(0)
    for p in range(1, 25):               # no branches: which points hold what is data
        n = s[side + p]
        o = np.int64(n > 0)
        m = np.int64(n > 1)
        occ |= o << p
        made |= m << p
        occ_x |= o << (25 - p)
        made_x |= m << (25 - p)
    blots = occ & ~made
    bar = np.int64(s[side + L.BAR] > 0)
    occ |= bar << 25
    occ_x |= bar
    return occ, made, blots, occ_x, made_x


@njit(cache=True, inline="always")
def _window(mask, p):
    """The 12 bits of ``mask`` below bit ``p`` (bit ``j``: ``12 - j`` below)."""
    return ((mask << 12) >> p) & 4095


@njit(cache=True, inline="always")
def _highest(mask):
    """Highest set bit (0 for an empty mask)."""
    return 63 - leading_zeros(mask) if mask != 0 else 0


@njit(cache=True, inline="always")
def _shots(blots, shooters):
    """Share of rolls on which a shooter (``shooters``: occupied points in the blot
    side's numbering) hits one of the ``blots`` from at most 12 pips."""
    window = np.int64(0)
    while blots != 0:
        p = trailing_zeros(blots)
        blots &= blots - 1
        window |= _window(shooters, p)
    return _HITS[window]


@njit(cache=True, inline="always")
def _prime(made):
    """Longest run of made points, / 6."""
    run = 0
    while made != 0:
        made &= made >> 1
        run += 1
    return np.float32(run / 6.0)


@njit(cache=True, inline="always")
def _side(s, side, occ, rear, closed, their_rear, their_made):
    """Escapes, containment, pips behind and dance of ``side`` (``occ``, ``rear``: its
    occupied points and rearmost one) against the other side (``closed``: its made
    points in ``side``'s numbering; ``their_rear``, ``their_made``: in its own)."""
    escapes = _ESCAPES[_window(closed, rear)] / 36.0 if rear > 0 else 1.0
    fewest = 36.0
    for p in range(15, 25):
        e = _ESCAPES[_window(closed, p)]
        if e < fewest:
            fewest = e
    line = 25 - their_rear             # my checkers above this point must pass
    behind = 0
    above = occ >> (line + 1)
    while above != 0:
        p = line + 1 + trailing_zeros(above)
        above &= above - 1
        behind += s[side + p] * (p - line)
    home = 0
    m = their_made & 126               # points 1..6
    while m != 0:
        m &= m - 1
        home += 1
    return (np.float32(escapes), np.float32(1.0 - fewest / 36.0),
            np.float32(behind / 152.0), np.float32(home * home / 36.0))


@njit(cache=True, inline="always")
def _base_features(s, my_occ, my_made, my_blots, my_occ_x, my_made_x,
                   th_occ, th_made, th_blots, th_occ_x, th_made_x):
    """:func:`features` from both sides' masks (:func:`_masks`)."""
    my_rear = _highest(my_occ)
    th_rear = _highest(th_occ)
    contact = np.float32(1.0) if my_rear + th_rear > 25 else np.float32(0.0)
    me_esc, me_cont, me_behind, me_dance = _side(s, L.ME, my_occ, my_rear, th_made_x,
                                                 th_rear, th_made)
    th_esc, th_cont, th_behind, th_dance = _side(s, L.THEM, th_occ, th_rear, my_made_x,
                                                 my_rear, my_made)
    return (contact, _shots(my_blots, th_occ_x), _shots(th_blots, my_occ_x),
            _prime(my_made), _prime(th_made), me_esc, th_esc, me_cont, th_cont,
            me_behind, th_behind, me_dance, th_dance)


@njit(cache=True)
def features(s):
    """The :data:`N_FEATURES` features of state ``s`` (from its side to move)."""
    my_occ, my_made, my_blots, my_occ_x, my_made_x = _masks(s, L.ME)
    th_occ, th_made, th_blots, th_occ_x, th_made_x = _masks(s, L.THEM)
    return _base_features(s, my_occ, my_made, my_blots, my_occ_x, my_made_x,
                          th_occ, th_made, th_blots, th_occ_x, th_made_x)


# a kernel of its own, not inlined: its two copies inlined into extended_features made a
# cold 0-ply analysis compile about 3-5 s longer (benchmarks/README.md, "Cold start"),
# and the call costs no time measured (the rating loop of benchmarks/expand_parts.py)
@njit(cache=True)
def _exposure(shooters, made, blots, two_shooters):
    """``(hit, double_hit, pip_loss)`` of the blots ``blots`` against checkers on the
    points ``shooters`` (both in the blots' side's numbering, the shooters moving up:
    bit 0 is their bar), whose landing points may not be ``made``: shares of the 36
    rolls on which a blot can be hit, on which two can, and the pips the hit that costs
    most loses, averaged over the 36 rolls and divided by 24. ``two_shooters``: whether
    two different checkers may hit (false with a single checker on the bar)."""
    if blots == 0:
        return np.float32(0.0), np.float32(0.0), np.float32(0.0)
    free = ~made
    r = ((shooters << 1) & free, (shooters << 2) & free, (shooters << 3) & free,
         (shooters << 4) & free, (shooters << 5) & free, (shooters << 6) & free)
    hit = 0
    two = 0
    loss = 0
    for a in range(1, 7):
        ra = r[a - 1]
        for b in range(a, 7):
            if a == b:               # a double: one checker's steps of a, up to four
                x2 = (ra << a) & free
                x3 = (x2 << a) & free
                h = (ra | x2 | x3 | ((x3 << a) & free)) & blots
                w = 1
                pair = (h & (h - 1)) != 0
            else:                    # a die, the other, or both by one checker
                rb = r[b - 1]
                ha = ra & blots
                hb = rb & blots
                h = (ra | rb | (((ra << b) | (rb << a)) & free)) & blots
                w = 2
                # one checker hits with one die and goes on to hit with the other, or
                # two checkers hit two blots, one die each
                both = ha | hb
                pair = (((ha << b) | (hb << a)) & blots) != 0 or (
                    two_shooters and ha != 0 and hb != 0 and (both & (both - 1)) != 0)
            if h != 0:
                hit += w
                loss += w * (25 - trailing_zeros(h))
                if pair:
                    two += w
    return (np.float32(hit / 36.0), np.float32(two / 36.0),
            np.float32(loss / (36.0 * 24.0)))


@njit(cache=True, inline="always")
def _back_game(made):
    """1 when a side holds two or more points in the opponent's home board (its points
    19..24): the back game, whose play (timing, keeping the anchors) no count of
    checkers on single points says."""
    m = made & (np.int64(63) << 19)
    return np.float32(1.0) if (m & (m - 1)) != 0 else np.float32(0.0)


@njit(cache=True)
def extended_features(s, count=N_EXTENDED):
    """The :data:`N_EXTENDED` features of state ``s``: :func:`features`, then for each
    side (mine first) the exposure of its blots to hits with the points in between
    checked (:func:`_exposure`: hit, double hit, pip loss), then each side's back game,
    then (when ``count``, the inputs the network reads, is above 21; zeros otherwise)
    each side's timing and shape (:func:`_structure`). An opponent with checkers on the
    bar shoots only with an entering checker (the other die's play by another checker is
    not counted). A ``tesauro198+f21`` network (the race network beside a
    ``tesauro198+f39`` one runs in the same compiled kernels) so pays for its own 21."""
    my_occ, my_made, my_blots, my_occ_x, my_made_x = _masks(s, L.ME)
    th_occ, th_made, th_blots, th_occ_x, th_made_x = _masks(s, L.THEM)
    base = _base_features(s, my_occ, my_made, my_blots, my_occ_x, my_made_x,
                          th_occ, th_made, th_blots, th_occ_x, th_made_x)
    th_bar = s[L.THEM + L.BAR]
    my_bar = s[L.ME + L.BAR]
    me = _exposure(np.int64(1) if th_bar > 0 else th_occ_x, my_made, my_blots,
                   th_bar != 1)
    th = _exposure(np.int64(1) if my_bar > 0 else my_occ_x, th_made, th_blots,
                   my_bar != 1)
    if count > 21:
        mine = _structure(s, L.ME, my_occ, th_made_x, _highest(th_occ))
        theirs = _structure(s, L.THEM, th_occ, my_made_x, _highest(my_occ))
    else:
        mine = theirs = _NO_STRUCTURE
    return base + (me[0], th[0], me[1], th[1], me[2], th[2],
                   _back_game(my_made), _back_game(th_made),
                   mine[0], theirs[0], mine[1], theirs[1], mine[2], theirs[2],
                   mine[3], theirs[3], mine[4], theirs[4], mine[5], theirs[5],
                   mine[6], theirs[6], mine[7], theirs[7], mine[8], theirs[8])


@njit(cache=True, inline="always")
def _hold(p, upper, weight, held, home_anchor, out_anchor, s, side):
    """:func:`_structure`'s step at a point ``p`` of two or more checkers (below the bar),
    the points visited from the bar down: the backbone's sums with the made point above
    it (``upper``) and the anchors; returns them updated."""
    if upper:
        d = upper - p
        c = 11 if d <= 6 else (13 - d if d <= 11 else 0)
        weight += c * s[side + upper]
        held += s[side + upper]
    if p >= 19:
        home_anchor = p
    elif p >= 13 and out_anchor == 0:
        out_anchor = p
    return p, weight, held, home_anchor, out_anchor


@njit(cache=True)
def _structure(s, side, occ, closed, their_rear):
    """The timing and shape of ``side``'s army (``occ``: its occupied points, the bar
    bit 25, :func:`_masks`; ``closed``: the other side's made points in ``side``'s
    numbering; ``their_rear``: the other side's rearmost point in its own): ``(timing,
    free_pips, mobility, moment, backbone, forward_anchor, off_a, off_b, off_c)``, the
    inputs 21.. of :func:`extended_features`. From the bar down: above the home board
    only the occupied points (their bits), then every home point (the timing takes
    back what an empty one lacks); the moment's pass again over the occupied points
    above the mean. Visiting only the occupied points, the same values to the bit, made
    :func:`extended_features` of 39 inputs about a tenth cheaper than a loop over all 25
    points (benchmarks/README.md, "Rollouts")."""
    line = 25 - their_rear             # my checkers below this point have passed
    top = line if line > 12 else 12    # above it, and above 12, a point of two holds
    free = total = count = 0
    mobility = 0
    spare = pips = 0                   # timing: the spares and their pips
    weight = held = upper = 0          # backbone
    home_anchor = out_anchor = 0
    rest = occ & ~np.int64(127)        # the occupied points 7..25, highest first
    while rest != 0:
        p = _highest(rest)
        rest ^= np.int64(1) << p
        n = np.int64(s[side + p])
        if n >= 2 and p < 25:
            upper, weight, held, home_anchor, out_anchor = _hold(
                p, upper, weight, held, home_anchor, out_anchor, s, side)
        mobility += (p - 6) * n * np.int64(_ESCAPES[_window(closed, p)])
        k = n if (p == 25 or p <= top or n < 2) else n - 2
        spare += k
        pips += k * p
        total += n * p
        count += n
        if p < line:
            free += n * p
    for p in range(6, 0, -1):
        n = np.int64(s[side + p])
        if n >= 2:
            upper, weight, held, home_anchor, out_anchor = _hold(
                p, upper, weight, held, home_anchor, out_anchor, s, side)
        if n > 2:
            spare += n - 2
            pips += (n - 2) * p
        elif spare >= 2 - n:
            spare -= 2 - n
            pips -= (2 - n) * p
        total += n * p
        count += n
        if p < line:
            free += n * p
    moment = 0.0
    if count:
        mean = total / count
        above = 0
        rest = occ
        while rest != 0:
            p = _highest(rest)
            if p <= mean:
                break
            rest ^= np.int64(1) << p
            n = s[side + p]
            above += n
            moment += n * (p - mean) * (p - mean)
        if above:
            moment /= above
    timing = max(pips, 0) / 100.0
    backbone = 1.0 - weight / (held * 11.0) if held else 0.0
    anchor = ((25 - home_anchor) / 6.0 if home_anchor
              else (25 - out_anchor) / 6.0 if out_anchor else 2.0)
    off = s[side + L.OFF]
    return (np.float32(timing), np.float32(free / 100.0), np.float32(mobility / 3600.0),
            np.float32(moment / 400.0), np.float32(backbone), np.float32(anchor),
            np.float32(min(off, 5) / 5.0), np.float32(min(max(off - 5, 0), 5) / 5.0),
            np.float32(max(off - 10, 0) / 5.0))


_NO_STRUCTURE = (np.float32(0.0),) * 9
"""What :func:`extended_features` gives for :func:`_structure` when they go unread."""


FAMILY_INDEX = np.int32
"""The dtype of an encoder's feature inputs when they are :func:`family_features`'s
(:func:`features`' are ``int64``, :func:`extended_features`' :data:`EXTENDED_INDEX`):
the set is told by the index array's *type*, so a kernel compiled for one set does not
compile the others."""

EXTENDED_INDEX = np.int16
"""The dtype of an encoder's feature inputs when they are :func:`extended_features`'s."""


def uses_family(fidx) -> bool:
    """Whether an encoder's feature inputs ``fidx`` are :func:`family_features`'s."""
    return fidx.dtype == FAMILY_INDEX


def feature_values(fidx, s):
    """The hand-crafted features of state ``s`` that an encoder with feature inputs
    ``fidx`` reads: :func:`family_features`, :func:`extended_features` or
    :func:`features`, chosen by ``fidx``'s dtype (:data:`FAMILY_INDEX`,
    :data:`EXTENDED_INDEX`, else) when a kernel is compiled, not at run time."""
    if uses_family(fidx):
        return family_features(s)
    return (extended_features(s, fidx.shape[0]) if fidx.dtype == EXTENDED_INDEX
            else features(s))


@overload(feature_values)
def _feature_values(fidx, s):
    if fidx.dtype == numba.from_dtype(FAMILY_INDEX):
        return lambda fidx, s: family_features(s)
    if fidx.dtype == numba.from_dtype(EXTENDED_INDEX):
        return lambda fidx, s: extended_features(s, fidx.shape[0])
    return lambda fidx, s: features(s)


@njit(cache=True, inline="always")
def _held(s, side, other):
    """Points of ``side`` (bit ``p``, its own numbering) that ``other`` holds, for two
    sides moving the same way: ``other``'s point ``q`` is ``side``'s ``q +- 12``."""
    held = np.int64(0)
    for q in range(1, 25):
        if s[other + q] > 0:
            held |= np.int64(1) << (q + 12 if q <= 12 else q - 12)
    return held


@njit(cache=True)
def _mobilities(s, side, held, home, high):
    """Moves of each number ``d`` = 1..6 the checkers of ``side`` could make, each capped
    at four (see the module docstring), packed one byte a number: byte ``d - 1`` holds
    ``d``'s. One loop over the numbers, not a copy of the walk for each: twelve inlined
    copies (six numbers, two sides) took 17 s to compile in a cold test run."""
    packed = np.int64(0)
    for d in range(1, 7):
        moves = 0
        for p in range(24, 0, -1):
            n = s[side + p]
            if n == 0:
                continue
            if p == 24 and n > 1:
                n = 1                 # the head rule: one checker leaves the head
            q = p
            walk = 0
            while walk < 4:
                r = q - d
                if r >= 1:
                    if (held >> r) & 1:
                        break
                    q = r
                    walk += 1
                else:                 # bearing off: all home, the die's point or highest
                    if home and (q == d or q == high):
                        walk += 1
                    break
            moves += n * walk
            if moves >= 4:
                moves = 4
                break
        packed |= np.int64(moves) << (8 * (d - 1))
    return packed


@njit(cache=True, inline="always")
def _family_side(s, side, other):
    held = _held(s, side, other)
    home = True
    high = 0
    for p in range(24, 0, -1):
        if s[side + p] > 0:
            if high == 0:
                high = p
            if p > 6:
                home = False
    m = _mobilities(s, side, held, home, high)
    return (np.float32((m & 255) / 4.0),
            np.float32(((m >> 8) & 255) / 4.0),
            np.float32(((m >> 16) & 255) / 4.0),
            np.float32(((m >> 24) & 255) / 4.0),
            np.float32(((m >> 32) & 255) / 4.0),
            np.float32(((m >> 40) & 255) / 4.0),
            np.float32(1.0) if home else np.float32(0.0))


@njit(cache=True)
def family_features(s):
    """The :data:`N_FAMILY` features of state ``s`` (module docstring): the side to
    move's, then the opponent's."""
    return _family_side(s, L.ME, L.THEM) + _family_side(s, L.THEM, L.ME)
