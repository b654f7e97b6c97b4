"""Cube decisions from cubeless probabilities: Janowski's live / dead cube interpolation,
for money and for match play.

The network (or a search) gives the cubeless probabilities of a position for the side
on roll, before it rolls: ``[win, win_gammon, win_backgammon, lose_gammon,
lose_backgammon]``, cumulative. This module turns them into cubeful equities and a cube
action; it never looks at checkers except to pick the cube efficiency
(:func:`cube_efficiency`), and the engine below it knows nothing of the cube.

**Money** (as GNU Backgammon's ``Cl2CfMoney``, after R. Janowski, *Take-Points in Money
Games*, 1993): with the average win ``W`` and loss ``L`` (gammons and backgammons
counted), the fully live cube's equity is piecewise linear in the winning chance ``p``
between the take point ``(L - 1/2) / (W + L + 1/2)`` and the cash point
``(L + 1) / (W + L + 1/2)``; the dead cube's is the cubeless equity (without gammons
while the cube is centred under the Jacoby rule). The cubeful equity is
``x live + (1 - x) dead`` for the cube efficiency ``x``.

**Match** (the same model on match winning chances, as GNU Backgammon's Janowski match
model): the end points are the gammon-weighted MWC of winning and losing at the cube
value, read from a :class:`~engine.cube.met.MatchEquityTable`; the live take points come from
the MET by the standard recursion over cube levels (a player doubled to ``n`` who may
usefully redouble cashes at ``1 -`` the opponent's take point at ``2n``; a player who
cannot, because winning ``n`` points already wins the match, holds a dead cube). The
Crawford game has no cube. Equities are reported in GNU Backgammon's normalised money
scale: ``2 (MWC - MWC(lose cube)) / (MWC(win cube) - MWC(lose cube)) - 1``, so that
double / pass is always +1.

:func:`cube_decision` does one decision from probabilities; :func:`analyse_cube` takes a
position, a :class:`CubeState` and a ``probability_fn(position, ply)``, so a deeper
search plugs in by passing another function.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from engine.cube.met import MatchEquityTable, MatchError, default_table, gammon_price
from engine.errors import NardyError, PositionError, quote
from engine.rules import _layout as L
from engine.rules.position import CHECKERS, Position

ACTIONS = ("no_double", "double_take", "double_pass", "too_good_take", "too_good_pass",
           "double_beaver", "no_double_beaver")
"""The cube actions, as the protocol names them; the last two only in money play with
beavers allowed (the opponent takes and at once redoubles, keeping the cube)."""
OWNERS = ("centre", "me", "them")
"""Who holds the cube: centred, the side on roll, or its opponent."""

CONTACT_EFFICIENCY = 0.68
"""Cube efficiency of contact positions (GNU Backgammon's default)."""
RACE_COEFFICIENT = 0.55
"""Race efficiency: ``RACE_COEFFICIENT + RACE_FACTOR * pips`` of the side on roll ..."""
RACE_FACTOR = 0.00125
"""... per pip ..."""
RACE_MIN, RACE_MAX = 0.6, 0.7
"""... clamped to this range (GNU Backgammon's defaults)."""
BEAROFF_EFFICIENCY = 0.6
"""Cube efficiency when both sides bear off (every checker in its home board), GNU
Backgammon's ``rOSCubeX`` for its bear-off classes, whatever the pips."""

_EPS = 1e-7

ProbabilityFn = Callable[[Position, int], np.ndarray]
"""``fn(position, ply) -> float[5]``: cubeless probabilities for the side to move."""


class CubeError(NardyError):
    """A cube state that breaks the rules, or a cube request the engine cannot serve."""

    code = "invalid_cube"


# --------------------------------------------------------------------- the cube state
CUBE_LIMIT = 1 << 30
"""The highest cube value any state may hold, the XGID's (log2 values 0..30): a cube at
it is never turned, so a value held in a 64-bit integer (a rollout's trials) cannot
overflow however often it is doubled."""
MATCH_CUBE_LIMIT = 64
"""The highest cube value in match play (RULES.md: "Cube: 2, 4, 8, ... 64 (higher allowed
in money play)"); a dead cube is never turned, so only a match over 64 points reaches it."""


@dataclass(frozen=True)
class CubeState:
    """Cube and match state, seen from the side on roll (money when ``match_length`` 0)."""

    value: int = 1
    """Cube value, a power of two."""
    owner: str = "centre"
    """``"centre"``, ``"me"`` (the side on roll) or ``"them"``."""
    match_length: int = 0
    """Match length; 0 for money play."""
    score: tuple = (0, 0)
    """Points won so far, (side on roll, opponent); match play only."""
    crawford: bool = False
    """This game is the Crawford game (no cube)."""
    jacoby: bool = True
    """Money play: gammons count only after the cube has been turned."""
    beavers: bool = False
    """Money play: a doubled player may beaver (take and redouble at once, keeping the
    cube); off by default (``docs/rules.md``)."""
    max_value: int | None = None
    """The highest value the cube may reach (an XGID's max cube), None for no limit: a
    cube at it cannot be turned, so :func:`cube_decision` values it as a dead cube
    (efficiency 0), and a double to it as one the taker cannot turn again."""

    def __post_init__(self) -> None:
        for name in ("crawford", "jacoby", "beavers"):
            flag = getattr(self, name)
            if not isinstance(flag, (bool, np.bool_)):      # "no" was taken as true
                raise CubeError(f"{name} = {quote(flag)}: expected true or false")
        v = self.value
        if (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1
                or v & (v - 1) or v > CUBE_LIMIT):
            raise CubeError(f"cube value {quote(v)}: expected a power of two 1 .. 2**30 "
                            f"(1, 2, 4, ...)")
        if self.owner not in OWNERS:
            raise CubeError(f"cube owner {quote(self.owner)}: expected one of {list(OWNERS)}")
        if self.owner == "centre" and v != 1:
            raise CubeError(f"cube value {v} centred: a centred cube is at 1")
        if self.owner != "centre" and v == 1:
            raise CubeError(f"cube owner {quote(self.owner)} at value 1: an owned cube has been "
                            f"turned (value 2 or more)")
        m = self.match_length
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
            raise MatchError(f"match length {quote(m)}: expected 0 (money) or a positive integer")
        s = self.score
        if (not isinstance(s, tuple) or len(s) != 2
                or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) for x in s)):
            raise MatchError(f"score {quote(list(s) if isinstance(s, tuple) else s)}: "
                             f"expected two integers [me, them]")
        if m:
            if any(not 0 <= x < m for x in s):
                raise MatchError(f"score {list(s)} in a match to {m}: each score must be "
                                 f"0 .. {m - 1}")
            if self.crawford and m - 1 not in s:
                raise MatchError(f"crawford at score {list(s)} in a match to {m}: the "
                                 f"Crawford game needs a player at {m - 1}")
            if self.crawford and s == (m - 1, m - 1):
                raise MatchError(f"crawford at {list(s)}: both players 1-away is after the "
                                 f"Crawford game")
            if self.crawford and self.owner != "centre":
                raise MatchError("crawford with a turned cube: the Crawford game has no cube")
        else:
            if s != (0, 0):
                raise MatchError(f"score {list(s)} in money play (match length 0)")
            if self.crawford:
                raise MatchError("crawford in money play: there is no Crawford game")
        if self.beavers and m:
            raise MatchError("beavers in match play: beavers are a money-play option")
        if m and v > MATCH_CUBE_LIMIT:
            raise MatchError(f"cube value {v} in match play: the cube goes up to "
                             f"{MATCH_CUBE_LIMIT} in a match (higher in money play only)")
        top = self.max_value
        if top is not None and (isinstance(top, bool) or not isinstance(top, (int, np.integer))
                                or top < v or top & (top - 1) or top > CUBE_LIMIT):
            raise CubeError(f"max cube value {quote(top)}: expected None or a power of two "
                            f"from the cube's value {v} to 2**30")

    @property
    def money(self) -> bool:
        """Money play."""
        return self.match_length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points each player still needs, (side on roll, opponent); match play only."""
        return self.match_length - self.score[0], self.match_length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        """Match play: a player is 1-away and this is not the Crawford game."""
        return bool(self.match_length and not self.crawford
                    and self.match_length - 1 in self.score)

    def dead_for(self, side: int) -> bool:
        """Whether a cube this player holds is dead: the Crawford game, or (match) one
        where winning the current value already wins him the match."""
        if self.money:
            return False
        if self.crawford:
            return True
        return self.away[side] <= self.value

    def can_double(self) -> bool:
        """Whether the side on roll may (usefully) double now: he owns the cube or it is
        centred, and it is not dead for him. A dead cube never doubles."""
        return (self.owner in ("centre", "me") and not self.dead_for(0)
                and not self.at_max)

    @property
    def at_max(self) -> bool:
        """The cube is at its highest value (:attr:`max_value`, else :data:`CUBE_LIMIT`;
        in match play at most :data:`MATCH_CUBE_LIMIT`): it cannot be turned."""
        return self.value >= self.limit

    @property
    def limit(self) -> int:
        """The highest value the cube may reach here (:attr:`at_max`)."""
        top = CUBE_LIMIT if self.max_value is None else self.max_value
        return min(top, MATCH_CUBE_LIMIT) if self.match_length else top

    def doubled(self) -> "CubeState":
        """The state after the side on roll doubles and the opponent takes."""
        return CubeState(self.value * 2, "them", self.match_length, self.score,
                         self.crawford, self.jacoby, self.beavers, self.max_value)

    def flip(self) -> "CubeState":
        """The same state seen from the opponent."""
        return _flipped(self)

    @classmethod
    def from_info(cls, info: Any, jacoby: bool | None = None,
                  beavers: bool | None = None) -> "CubeState":
        """From a :class:`engine.notation.gnubg_id.MatchInfo` or :class:`engine.notation.xgid.XgidInfo`
        (cube, score, length, Crawford, Jacoby, beavers and the max cube (an XGID's; a
        Match ID has neither), all relative to the side to move). The cube layer does not import
        the notations, so any object with their fields is read; one without them raises
        :class:`CubeError`."""
        try:
            m = info.match_length
            jac = info.jacoby if jacoby is None else jacoby
            beav = getattr(info, "beaver", False) if beavers is None else beavers
            value = info.cube_value
            owner = info.cube_owner
            score = info.score if m else (0, 0)
            crawford = info.crawford if m else False
        except AttributeError:
            raise CubeError(f"info {quote(info)}: expected a MatchInfo or an XgidInfo "
                            f"(match_length, cube_value, cube_owner, score, crawford, "
                            f"jacoby)") from None
        score = tuple(score) if isinstance(score, (tuple, list)) else score
        return cls(value, owner, m, score, bool(crawford), bool(jac), bool(beav) and not m,
                   getattr(info, "max_cube", None))


@lru_cache(maxsize=256)
def _flipped(state: CubeState) -> CubeState:
    """:meth:`CubeState.flip`, made once a state (the cube code flips the state of every
    play it values; a state is immutable, so the flipped one can be shared)."""
    owner = {"centre": "centre", "me": "them", "them": "me"}[state.owner]
    return CubeState(state.value, owner, state.match_length, state.score[::-1],
                     state.crawford, state.jacoby, state.beavers, state.max_value)


def _check_state(state: Any) -> None:
    """:class:`CubeError` unless ``state`` is a :class:`CubeState` (a dict or a tuple
    would otherwise fail deep inside as an ``AttributeError``)."""
    if not isinstance(state, CubeState):
        raise CubeError(f"state {quote(state)}: expected a CubeState")


def _check_table(table: Any, optional: bool = True) -> None:
    """:class:`MatchError` unless ``table`` is a :class:`MatchEquityTable` (or, when
    ``optional``, None for the default): an empty list must not pass as "no table"."""
    if not (isinstance(table, MatchEquityTable) or (optional and table is None)):
        raise MatchError(f"table {quote(table)}: expected a MatchEquityTable"
                         f"{' or None (the default table)' if optional else ''}")


# --------------------------------------------------------------------- efficiency
def is_race(position: Position) -> bool:
    """Backgammon: no contact left (each side's back checker has passed the other's)."""
    back_me = 25 if position.bar[0] else max((i + 1 for i, n in enumerate(position.me) if n),
                                             default=0)
    back_them = 25 if position.bar[1] else max((i + 1 for i, n in
                                                enumerate(position.them) if n), default=0)
    return back_me + back_them <= 25


def cube_efficiency(position: Position) -> float:
    """GNU Backgammon's default cube efficiency: 0.68 with contact; in a race
    ``0.55 + 0.00125 * pips`` of the side on roll, clamped to 0.6 .. 0.7, but 0.6 once
    both sides bear off (:data:`BEAROFF_EFFICIENCY`: a side on roll with 57 pips was
    given 0.62125); and 0 on the last roll (:func:`last_roll`), where the cube has no
    future: a take cannot be redoubled before the game ends, nor a game played on be
    doubled later."""
    if not is_race(position):
        return CONTACT_EFFICIENCY
    if last_roll(position):
        return 0.0
    if not any(position.bar) and not any(position.me[6:]) and not any(position.them[6:]):
        return BEAROFF_EFFICIENCY
    x = RACE_COEFFICIENT + RACE_FACTOR * position.pip_counts()[0]
    return float(min(RACE_MAX, max(RACE_MIN, x)))


def last_roll(position: Position) -> bool:
    """Whether the game ends by the opponent's next roll at the latest: a race in which
    the opponent bears off with any roll, so the side on roll wins this roll or never.
    The worst roll, 2-1, moves two checkers three pips: it bears off one checker on
    points 1-3, or two on points 1 and 1-2; every other roll bears those off too, and
    three checkers or more can stay after 2-1."""
    if not is_race(position) or position.bar[1] or any(position.them[6:]):
        return False
    points = [p + 1 for p in range(6) for _ in range(position.them[p])]
    if len(points) == 1:
        return points[0] <= 3
    return len(points) == 2 and points[0] == 1 and points[1] <= 2


# --------------------------------------------------------------------- probabilities
def check_probabilities(probs: Any, strict: bool = False) -> np.ndarray:
    """``probs`` as ``float64[5]``: five finite numbers in [0, 1]. Out of order
    (a gammon share above the wins, a backgammon above the gammons) raises with
    ``strict``; otherwise it is clipped into order, as GNU Backgammon's sanity check
    does with network outputs (independent sigmoids need not be consistent). (On five
    numbers Python's own arithmetic is several times faster than numpy's reductions,
    and the cube code checks every play's chances.)"""
    try:
        p = np.array(probs, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise CubeError(f"probabilities {quote(probs)}: expected five numbers") from None
    if p.shape != (5,):
        raise CubeError(f"probabilities {quote(probs)}: expected five finite numbers")
    values = p.tolist()
    if not all(map(math.isfinite, values)):
        raise CubeError(f"probabilities {quote(probs)}: expected five finite numbers")
    tol = 1e-6
    if min(values) < -tol or max(values) > 1 + tol:
        raise CubeError(f"probabilities {values}: expected numbers in [0, 1]")
    w, wg, wb, lg, lb = values
    if strict and (wg > w + tol or wb > wg + tol or lg > 1 - w + tol or lb > lg + tol):
        raise CubeError(f"probabilities {values}: expected win >= win_gammon >= "
                        f"win_backgammon and 1 - win >= lose_gammon >= lose_backgammon")
    w, wg, wb, lg, lb = (min(max(v, 0.0), 1.0) for v in values)
    wg = min(wg, w)
    wb = min(wb, wg)
    lg = min(lg, 1.0 - w)
    p[0], p[1], p[2], p[3], p[4] = w, wg, wb, lg, min(lb, lg)
    return p


def cubeless_equity(probs: np.ndarray) -> float:
    """Cubeless money equity of the probabilities (gammons counted)."""
    p = probs
    return float(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])


def _fractions(p: np.ndarray) -> tuple[tuple, tuple]:
    """Shares of single / gammon / backgammon among the wins and among the losses."""
    p0, p1, p2, p3, p4 = (float(x) for x in p)
    w, l = p0, 1.0 - p0
    if w > _EPS:
        fw = ((w - p1) / w, (p1 - p2) / w, p2 / w)
    else:
        fw = (1.0, 0.0, 0.0)
    if l > _EPS:
        fl = ((l - p3) / l, (p3 - p4) / l, p4 / l)
    else:
        fl = (1.0, 0.0, 0.0)
    return fw, fl


# --------------------------------------------------------------------- money
def money_take_point(w: float, l: float, efficiency: float) -> float:
    """Janowski's money take point of a player whose average win is ``w`` and average
    loss ``l`` (points per game at cube 1): ``(l - 1/2) / (w + l + x/2)``; 25% for a
    dead cube (``x = 0``) and 20% for a fully live one without gammons."""
    return (l - 0.5) / (w + l + 0.5 * efficiency)


def _money_live(w: float, l: float, p: float, owner: str, jacoby: bool) -> float:
    tp = (l - 0.5) / (w + l + 0.5)
    cp = (l + 1.0) / (w + l + 0.5)
    if owner == "centre":
        if p < tp:
            return -1.0 if jacoby else -l + (l - 1.0) * p / tp
        if p < cp:
            return -1.0 + 2.0 * (p - tp) / (cp - tp)
        return 1.0 if jacoby else 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)
    if owner == "me":
        if p < cp:
            return -l + (1.0 + l) * p / cp
        return 1.0 + (w - 1.0) * (p - cp) / (1.0 - cp)
    if p < tp:
        return -l + (l - 1.0) * p / tp
    return -1.0 + (w + 1.0) * (p - tp) / (1.0 - tp)


def check_efficiency(efficiency: Any) -> float:
    """The cube efficiency (0 .. 1, how live the cube is), else :class:`CubeError`."""
    if isinstance(efficiency, bool) or not isinstance(efficiency, (int, float, np.number)) \
            or not 0.0 <= efficiency <= 1.0:                 # NaN fails the range too
        raise CubeError(f"cube efficiency {quote(efficiency)}: expected 0 .. 1")
    return float(efficiency)


def _check_owner(owner: Any) -> None:
    if owner not in OWNERS:
        raise CubeError(f"cube owner {quote(owner)}: expected one of {list(OWNERS)}")


def money_cubeful_equity(probs: Any, owner: str = "centre", efficiency: float = 0.68,
                         jacoby: bool = True) -> float:
    """Cubeful money equity, per unit of the cube, for the side on roll (Janowski as
    GNU Backgammon's ``Cl2CfMoney``). ``jacoby`` matters only for a centred cube."""
    p = check_probabilities(probs)
    _check_owner(owner)
    return _money_cubeful(p, owner, check_efficiency(efficiency), jacoby)


def _money_cubeful(p: np.ndarray, owner: str, efficiency: float, jacoby: bool) -> float:
    """:func:`money_cubeful_equity` of arguments already checked."""
    jac = jacoby and owner == "centre"
    dead = float(2 * p[0] - 1) if jac else cubeless_equity(p)
    if not _EPS < p[0] < 1 - _EPS:
        return dead
    w = 1.0 + (p[1] + p[2]) / p[0]
    l = 1.0 + (p[3] + p[4]) / (1.0 - p[0])
    return dead * (1.0 - efficiency) + _money_live(w, l, float(p[0]), owner, jac) * efficiency


# --------------------------------------------------------------------- match
def _ends(table: MatchEquityTable, a: int, b: int, n: int, fw, fl) -> tuple[float, float]:
    """Gammon-weighted MWC of the player a-away (vs b-away) winning and losing at cube n."""
    w1, w2, w3, l1, l2, l3 = table.outcomes(a, b, n)
    win = fw[0] * w1 + fw[1] * w2 + fw[2] * w3
    lose = fl[0] * l1 + fl[1] * l2 + fl[2] * l3
    return float(win), float(lose)


def _take_point(table: MatchEquityTable, a: int, b: int, n: int, fw, fl,
                efficiency: float = 1.0) -> float:
    """Take point of the player a-away (vs b-away, his win / loss shares ``fw`` / ``fl``)
    doubled to ``n``: the winning chance at which taking (and owning the cube at ``n``)
    equals passing (losing ``n / 2``). His cube is live while he may usefully redouble
    (``a > n``); its cash point is then ``1 -`` the opponent's fully live take point
    at ``2n``. ``efficiency`` mixes the live and dead lines as in the cubeful MWC."""
    win, lose = _ends(table, a, b, n, fw, fl)
    drop = table.after(a, b, -(n // 2))
    dead_slope = win - lose
    if a <= n:
        slope = dead_slope
    else:
        cp = 1.0 - _take_point(table, b, a, 2 * n, fl, fw, 1.0)
        cash = table.after(a, b, n)
        cp = max(cp, _EPS)
        slope = efficiency * (cash - lose) / cp + (1.0 - efficiency) * dead_slope
    if slope <= 0.0:        # no floor: far from the match, MWCs of 1e-8 are real
        return 0.0
    return float(min(1.0, max(0.0, (drop - lose) / slope)))


def match_cubeful_mwc(probs: Any, table: MatchEquityTable, away_me: int, away_them: int,
                      cube: int = 1, owner: str = "centre", crawford: bool = False,
                      efficiency: float = 0.68) -> float:
    """Cubeful match winning chance of the side on roll, ``away_me``-away against
    ``away_them``-away, the cube at ``cube`` held by ``owner``.

    Dead cube: the gammon-weighted MWC of the game's outcomes at ``cube``. Live cube:
    piecewise linear in the winning chance through ``(0, lose)``, the own take point
    (the opponent's cash, where he doubles us out: losing ``cube``), the own cash point
    (``1 -`` the opponent's take point: winning ``cube``) and ``(1, win)``; a knot is
    left out when that player cannot double (cube held by the other, the Crawford game,
    or winning ``cube`` already wins him the match). Mixed as ``x live + (1 - x) dead``.
    When our own cube is dead that way and the opponent may double, his double costs
    him nothing: we are valued as if he doubled at once and we took or passed. He can
    double only on his turn, after our roll; this function does not see that timing,
    which undervalues a position whose roll may end the game. :func:`analyse_cube`
    sees it: it values such a double over our 21 rolls (:func:`rolls_ahead`), and on
    the last roll (:func:`cube_efficiency` 0) there is no such double.
    """
    p = check_probabilities(probs)
    _check_table(table, optional=False)
    _check_owner(owner)
    efficiency = check_efficiency(efficiency)
    if isinstance(cube, bool) or not isinstance(cube, (int, np.integer)) or cube < 1 \
            or cube & (cube - 1):
        raise CubeError(f"cube value {quote(cube)}: expected a power of two (1, 2, 4, ...)")
    return _mwc(p, table, away_me, away_them, int(cube), owner, crawford, efficiency)


def _interp(x: float, xs: list, ys: list) -> float:
    """``numpy.interp(x, xs, ys)`` for one point on increasing knots, computed as numpy
    computes it, in plain Python (several times faster on the four knots of
    :func:`_mwc`, which the cube code calls for every play it values)."""
    if x <= xs[0]:
        return float(ys[0])
    if x >= xs[-1]:
        return float(ys[-1])
    j = bisect_right(xs, x) - 1
    if xs[j] == x:
        return float(ys[j])
    slope = (ys[j + 1] - ys[j]) / (xs[j + 1] - xs[j])
    value = slope * (x - xs[j]) + ys[j]
    if math.isnan(value):
        value = slope * (x - xs[j + 1]) + ys[j + 1]
        if math.isnan(value) and ys[j] == ys[j + 1]:
            value = ys[j]
    return float(value)


def _mwc(p: np.ndarray, table: MatchEquityTable, away_me: int, away_them: int,
         cube: int, owner: str, crawford: bool, efficiency: float,
         free_double: bool = True, measured: bool = False) -> float:
    """:func:`match_cubeful_mwc` of arguments already checked (the cube code calls it
    many times a decision; the checks cost as much as the sums). ``free_double`` False:
    the opponent's free double is not valued (as GNU Backgammon's 0-ply values it).
    ``measured``: ``efficiency`` is a short bear-off's measure of the cube
    (:func:`cube_decision`'s ``double_efficiency``), whose 0 is a cube worth nothing
    in money play, not a dead one: the opponent's free double is still valued."""
    fw, fl = _fractions(p)
    win, lose = _ends(table, away_me, away_them, cube, fw, fl)
    w = float(p[0])
    dead = w * win + (1.0 - w) * lose
    if crawford or (efficiency <= 0.0 and not measured) or away_me == away_them == 2:
        # 2-away 2-away: GNU Backgammon values the cube there as dead (``fDoCubeful``)
        return dead
    xs, ys = [0.0], [lose]
    tp = cp = None
    if owner in ("centre", "them") and away_them > cube:
        tp = _take_point(table, away_me, away_them, 2 * cube, fw, fl)
    if owner in ("centre", "me") and away_me > cube:
        cp = 1.0 - _take_point(table, away_them, away_me, 2 * cube, fl, fw)
    if tp is not None and cp is not None and tp >= cp:   # overlapping windows
        mid = 0.5 * (tp + cp)
        tp, cp = mid - 1e-9, mid + 1e-9
    if tp is not None and 0.0 < tp < 1.0:
        xs.append(tp)
        ys.append(table.after(away_me, away_them, -cube))
    if cp is not None and 0.0 < cp < 1.0:
        xs.append(cp)
        ys.append(table.after(away_me, away_them, cube))
    xs.append(1.0)
    ys.append(win)
    live = _interp(w, xs, ys)
    value = efficiency * live + (1.0 - efficiency) * dead
    if free_double and owner in ("centre", "them") and away_them > cube and away_me <= cube:
        # The opponent's double is free: winning ``cube`` already wins us the match, so
        # doubling risks him nothing and he doubles at once; we take (owning a dead
        # cube) or pass, whichever is better for us.
        take = _mwc(p, table, away_me, away_them, 2 * cube, "me", crawford, efficiency)
        value = min(value, max(take, table.after(away_me, away_them, -cube)))
    return value


# --------------------------------------------------------------------- decisions
@dataclass(frozen=True)
class CubeDecision:
    """The cube analysis of a position for the side on roll."""

    action: str
    """One of :data:`ACTIONS`: the proper action of both players."""
    no_double: float
    """Cubeful equity of not doubling (normalised to the current cube)."""
    double_take: float | None
    """Cubeful equity after double / take; None when the side on roll may not double."""
    double_pass: float | None
    """Equity after double / pass: 1.0; None when the side on roll may not double."""
    take_point: float | None
    """The opponent's take point: the least cubeless winning chance with which he takes
    (under the same model and efficiency); None when there is no double."""
    gammon_price: float | None
    """Gammon price of the side on roll for the game played after a double (at the
    current cube when he cannot double): 0.5 in money play."""
    cubeless_equity: float
    """Cubeless equity (money; in match play the gammon-weighted MWC on the normalised
    scale)."""
    efficiency: float
    """Cube efficiency used."""
    probabilities: tuple
    """The cubeless probabilities the decision was made from."""
    mwc: dict | None = None
    """Match play: the same equities as match winning chances."""

    @property
    def cube_available(self) -> bool:
        """Whether the side on roll may double at all."""
        return self.double_take is not None

    @property
    def doubles(self) -> bool:
        """The side on roll should double."""
        return self.action in ("double_take", "double_pass")

    @property
    def takes(self) -> bool:
        """The opponent should take a double (double / take, too good / take, no double,
        or beaver)."""
        return self.action in ("double_take", "too_good_take", "no_double") or self.beavers

    @property
    def beavers(self) -> bool:
        """The opponent should beaver a double (money play with beavers allowed)."""
        return self.action in ("double_beaver", "no_double_beaver")

    def to_json(self) -> dict:
        """The ``cube`` protocol reply fields."""
        out = {"action": self.action,
               "equities": {"no_double": self.no_double, "double_take": self.double_take,
                            "double_pass": self.double_pass},
               "take_point": self.take_point, "gammon_price": self.gammon_price,
               "cubeless_equity": self.cubeless_equity, "cube_efficiency": self.efficiency,
               "cube_available": self.cube_available,
               "probabilities": dict(zip(("win", "win_gammon", "win_backgammon",
                                          "lose_gammon", "lose_backgammon"),
                                         self.probabilities))}
        if self.mwc is not None:
            out["mwc"] = self.mwc
        return out


TIE = 1e-12
"""Equities this close are equal in :func:`classify` (their sums round differently: a
trailer's double after the Crawford game at full efficiency, worth exactly not
doubling, came out a few 1e-16 below it at some scores and above at others; and a dead
cube's no double, worth exactly the cash, 4e-16 above it: "too good")."""


def _beaver_range(double_take: float) -> bool:
    """GNU Backgammon's beaver range, ``-2 <= double_take <= 0``, its ends within
    :data:`TIE`: a sure loss after the take, exactly -2, came out of the two-sided
    bear-off table as -2.0000000000000004 (EQAAcBQAAAAAAA, money, cube centred: GNU
    Backgammon "No double, beaver", nardy "no double" and a take)."""
    return -2.0 - TIE <= double_take <= TIE


def classify(no_double: float, double_take: float, double_pass: float,
             beavers: bool = False, gammons: bool = True) -> str:
    """The cube action from the three equities (GNU Backgammon's rule): the opponent
    passes when taking is worse for him (``double_take >= double_pass``); the doubler
    doubles when the better answer of the opponent still beats not doubling, and is
    *too good* when not doubling beats even a pass, provided he can win a gammon
    (``gammons``: his cubeless gammon chance above zero). Without one, GNU Backgammon
    does not play on ("don't play on for a gammon if none is possible"): too good / pass
    is then double / pass, and too good / take no double (a rollout's mean, luck
    adjusted, can put not doubling above the cash where no gammon is left). With
    ``beavers`` (money play), a take that leaves the doubler at or below zero (down to
    -2) is a beaver; a double that a beaver would punish (twice ``double_take`` below
    ``no_double``) is then no double (GNU Backgammon's ``FindBestCubeDecision``)."""
    if double_take >= double_pass:
        # a tie of playing on and cashing: nothing is gained by playing on (GNU
        # Backgammon doubles when both answers are at least not doubling)
        return ("double_pass" if double_pass >= no_double - TIE or not gammons
                else "too_good_pass")
    beaver = beavers and _beaver_range(double_take)
    if double_take >= no_double - TIE:
        if beaver:
            return "no_double_beaver" if 2.0 * double_take < no_double else "double_beaver"
        return "double_take"
    if no_double > double_pass + TIE:
        return "too_good_take" if gammons else "no_double"
    return "no_double_beaver" if beaver else "no_double"


def cube_decision(probs: Any, state: CubeState = CubeState(), efficiency: float = 0.68,
                  table: MatchEquityTable | None = None,
                  take_point: bool = True, after_roll: Any = None,
                  free_double: bool = True,
                  double_efficiency: float | None = None) -> CubeDecision:
    """The cube decision of the side on roll from its cubeless ``probs``. In match play
    the take point is found by bisection on the double/take equity itself (a few
    milliseconds); ``take_point=False`` leaves it out (None), for callers that want
    the action only (cubeful rollouts). ``after_roll`` (match play): a function
    giving :func:`rolls_ahead` of the position, called only where the opponent's next
    double is free (our cube dead, his live); the value of that double then comes from
    the positions after each of our rolls, when he can double, instead of as if he
    doubled before our roll. ``free_double`` False leaves such a double unvalued, as
    GNU Backgammon's 0-ply does (:func:`play_value`: the opponent on roll there, the
    free double is the mover's, made only after that roll). ``double_efficiency``: the
    efficiency of the game after a double is taken, the cube then the taker's (default
    ``efficiency``), where a short bear-off gives each cube its own
    (:func:`engine.search.bearoff_cube.match_efficiencies`); with it, an efficiency of
    0 is the table's measure of a cube worth nothing in money play, not a dead cube,
    and the free double is still valued over our rolls (the last roll, where the cube
    is dead, gives no such pair)."""
    p = check_probabilities(probs)
    _check_state(state)
    _check_table(table)
    efficiency = check_efficiency(efficiency)
    if double_efficiency is not None:
        double_efficiency = check_efficiency(double_efficiency)
    return _decide(p, state, efficiency, table, take_point, after_roll, free_double,
                   double_efficiency)


def _decide(p: np.ndarray, state: CubeState, efficiency: float,
            table: MatchEquityTable | None, take_point: bool = True, after_roll: Any = None,
            free_double: bool = True,
            double_efficiency: float | None = None) -> CubeDecision:
    """:func:`cube_decision` of arguments already checked (:func:`play_value` makes one
    a play)."""
    taken = efficiency if double_efficiency is None else double_efficiency
    fw, fl = _fractions(p)
    can = state.can_double()
    # a cube at its maximum value is dead: no one can turn it, whoever holds it
    eff_nd = 0.0 if state.at_max else efficiency
    taker_dead = can and 2 * state.value >= state.limit      # state.doubled().at_max
    eff_dt = 0.0 if taker_dead else taken
    if state.money:
        nd = _money_cubeful(p, state.owner, eff_nd, state.jacoby)
        dt = dp = tp = None
        if can:
            dt = 2.0 * _money_cubeful(p, "them", eff_dt, False)
            dp = 1.0
            w = sum(f * k for f, k in zip(fw, (1, 2, 3)))
            l = sum(f * k for f, k in zip(fl, (1, 2, 3)))
            tp = money_take_point(l, w, eff_dt)   # the taker wins our loss, loses our win
            action = classify(nd, dt, dp, state.beavers, bool(p[1] > 0.0))
        else:
            action = "no_double"
        return CubeDecision(action, nd, dt, dp, tp, 0.5, cubeless_equity(p), efficiency,
                            tuple(p.tolist()))
    table = table or default_table()
    a, b = state.away
    c = state.value
    lo = table.after(a, b, -c)
    hi = table.after(a, b, c)

    def norm(m: float) -> float:
        return 2.0 * (m - lo) / (hi - lo) - 1.0 if hi > lo else 0.0

    measured = double_efficiency is not None      # a short bear-off's pair (_mwc)
    nd_m = _mwc(p, table, a, b, c, state.owner, state.crawford, eff_nd, free_double,
                measured and not state.at_max)
    ahead = (after_roll is not None and not state.crawford
             and _live(state, efficiency, double_efficiency))
    rolls: list = []                        # after_roll(), called once when needed
    if ahead and state.owner != "me" and b > c >= a and 2 * c <= state.limit:
        rolls = after_roll()
        nd_m = _free_double_after(rolls, table, a, b, c, eff_nd, measured)
    win, lose = _ends(table, a, b, c, fw, fl)
    dead_m = float(p[0]) * win + (1 - float(p[0])) * lose
    mwc = {"no_double": nd_m, "double_take": None, "double_pass": None, "cubeless": dead_m}
    dt = dp = tp = None
    if can:
        dt_m = _double_take_mwc(p, table, state, eff_dt,
                                (lambda: rolls or after_roll()) if ahead else None,
                                free_double, measured and not taker_dead)
        mwc["double_take"], mwc["double_pass"] = dt_m, hi
        dt, dp = norm(dt_m), 1.0
        if take_point:
            tp = _match_take_point(p, table, a, b, 2 * c, eff_dt, hi,
                                   measured and not taker_dead)
        action = classify(norm(nd_m), dt, dp, gammons=bool(p[1] > 0.0))
    else:
        action = "no_double"
    gp = gammon_price(table, a, b, 2 * c if can else c)[0]
    return CubeDecision(action, norm(nd_m), dt, dp, tp, float(gp), norm(dead_m), efficiency,
                        tuple(p.tolist()), mwc)


def _live(state: CubeState, efficiency: float, double_efficiency: float | None) -> bool:
    """Whether the cube has a future, for the free-double lookahead: not at its maximum,
    and not given efficiency 0 (a dead cube: the last roll), unless each cube has its
    own efficiency (``double_efficiency`` given, a short bear-off's), whose 0 is a cube
    the table finds worth nothing in money play, not a dead one."""
    return not state.at_max and (efficiency > 0 or double_efficiency is not None)


def cubeful_value(decision: CubeDecision) -> tuple[float, float | None]:
    """The side on roll's cubeful value under both players' proper cube action: not
    doubling where the decision is no double or too good, else the double's value with
    the opponent's answer (take, pass, or a beaver: twice the take). As ``(equity on the
    normalised scale of the current cube, match winning chance or None in money
    play)``."""
    if not isinstance(decision, CubeDecision):
        raise CubeError(f"decision {quote(decision)}: expected a CubeDecision")
    key = {"double_take": "double_take", "double_pass": "double_pass",
           "double_beaver": "double_take"}.get(decision.action, "no_double")
    chosen = {"no_double": decision.no_double, "double_take": decision.double_take,
              "double_pass": decision.double_pass}[key]
    assert chosen is not None                 # a double's equities exist where it is right
    equity = 2.0 * chosen if decision.action == "double_beaver" else float(chosen)
    mwc = None if decision.mwc is None else float(decision.mwc[key])
    return equity, mwc


def play_value(probs: Any, after: Position, state: CubeState,
               table: MatchEquityTable | None = None,
               efficiency: float | None = None,
               double_efficiency: float | None = None) -> tuple[float, float | None]:
    """The mover's cubeful value of a checker play, as GNU Backgammon ranks plays where
    the cube is in play (money or a match): ``probs`` the mover's cubeless chances after the play, ``after`` the
    position after it (the opponent on roll, as the move generator gives it), ``state``
    the cube and score before the play, seen from the mover. The opponent then takes
    his proper cube action (:func:`cube_decision` at the efficiency of ``after``, unless
    given, and at ``double_efficiency`` after his double where given; a free double,
    the mover's then, left unvalued as GNU Backgammon's 0-ply leaves it); a play that
    ends the game scores its points at the cube. Returns ``(the mover's equity on the
    normalised scale of his cube, as :func:`cube_decision` reports equities; his match
    winning chance, or None in money play)``."""
    p = check_probabilities(probs)
    if not isinstance(after, Position):
        raise PositionError(f"after {quote(after)}: expected a Position")
    _check_state(state)
    _check_table(table)
    met = table or default_table()
    if not state.money and max(state.away) > met.length:
        raise MatchError(f"match to {state.match_length}: the table {met.name!r} "
                         f"covers matches to {met.length}")
    c = state.value
    if after.is_over():
        if state.money:
            if state.jacoby and state.owner == "centre":
                return float(2 * p[0] - 1), None        # gammons count once doubled
            return cubeless_equity(p), None
        a, b = state.away
        win, lose = _ends(met, a, b, c, *_fractions(p))
        m = float(p[0]) * win + (1 - float(p[0])) * lose
    else:
        x = cube_efficiency(after) if efficiency is None else efficiency
        w, wg, wb, lg, lb = p.tolist()          # _theirs of one row, in plain Python
        his_lg = min(wg, 1.0 - (1.0 - w))
        theirs = np.array([1.0 - w, lg, lb, his_lg, min(wb, his_lg)])
        # the free double there is the mover's, after the opponent's roll: left
        # unvalued, as GNU Backgammon's 0-ply leaves it (valued at his chances before
        # the roll, every play leaving him short of his take point was worth the same)
        if double_efficiency is not None:
            double_efficiency = check_efficiency(double_efficiency)
        decision = _decide(theirs, state.flip(), check_efficiency(x), met, take_point=False,
                           free_double=False, double_efficiency=double_efficiency)
        equity, his = cubeful_value(decision)
        if his is None:                       # money play
            return -equity, None
        m = 1.0 - his
    return normalised(m, state, met), float(m)


def _theirs(p: np.ndarray) -> np.ndarray:
    """The opponent's chances (rows) from the mover's checked ones (n x 5), in order as
    :func:`check_probabilities` puts them: his gammons at most ``1 - (1 - win)``, which
    is not always the mover's ``win`` in floating point."""
    theirs = np.stack([1 - p[:, 0], p[:, 3], p[:, 4], p[:, 1], p[:, 2]], axis=1)
    theirs[:, 3] = np.minimum(theirs[:, 3], 1.0 - theirs[:, 0])
    theirs[:, 4] = np.minimum(theirs[:, 4], theirs[:, 3])
    return theirs


def normalised(mwc: float, state: CubeState, table: MatchEquityTable | None = None) -> float:
    """A match winning chance ``mwc`` of the side ``state`` is seen from, on the
    normalised scale of its cube (-1: losing the cube's value, +1: winning it), as
    :func:`cube_decision` and :func:`play_value` report equities."""
    met = table or default_table()
    a, b = state.away
    lo, hi = met.after(a, b, -state.value), met.after(a, b, state.value)
    return 2.0 * (mwc - lo) / (hi - lo) - 1.0 if hi > lo else 0.0


# --------------------------------------------------------------------- many plays at once
# The review rates every play of all 21 rolls cubefully for a roll's luck, about five
# hundred a position: :func:`play_values` values them as :func:`play_value` does, on
# arrays, each formula below that function's (and its callees') written over rows in
# the same order of operations, so that both give the same numbers to the last bit
# (tests/test_cube.py holds them to it over random chances, cube states and scores).
def _fractions_rows(p: np.ndarray) -> tuple[tuple, tuple]:
    """:func:`_fractions` of each row of ``p`` (n x 5)."""
    w, l = p[:, 0], 1.0 - p[:, 0]
    won, lost = w > _EPS, l > _EPS
    ws, ls = np.where(won, w, 1.0), np.where(lost, l, 1.0)
    fw = (np.where(won, (w - p[:, 1]) / ws, 1.0), np.where(won, (p[:, 1] - p[:, 2]) / ws, 0.0),
          np.where(won, p[:, 2] / ws, 0.0))
    fl = (np.where(lost, (l - p[:, 3]) / ls, 1.0), np.where(lost, (p[:, 3] - p[:, 4]) / ls, 0.0),
          np.where(lost, p[:, 4] / ls, 0.0))
    return fw, fl


def _ends_rows(table: MatchEquityTable, a: int, b: int, n: int, fw, fl) -> tuple:
    """:func:`_ends` of each row's win and loss shares."""
    w1, w2, w3, l1, l2, l3 = table.outcomes(a, b, n)
    return fw[0] * w1 + fw[1] * w2 + fw[2] * w3, fl[0] * l1 + fl[1] * l2 + fl[2] * l3


def _take_point_rows(table: MatchEquityTable, a: int, b: int, n: int, fw, fl,
                     efficiency: float = 1.0) -> np.ndarray:
    """:func:`_take_point` of each row's win and loss shares."""
    win, lose = _ends_rows(table, a, b, n, fw, fl)
    drop = table.after(a, b, -(n // 2))
    dead_slope = win - lose
    if a <= n:
        slope = dead_slope
    else:
        cp = 1.0 - _take_point_rows(table, b, a, 2 * n, fl, fw, 1.0)
        cash = table.after(a, b, n)
        cp = np.maximum(cp, _EPS)
        slope = efficiency * (cash - lose) / cp + (1.0 - efficiency) * dead_slope
    positive = slope > 0.0
    point = (drop - lose) / np.where(positive, slope, 1.0)
    return np.where(positive, np.minimum(1.0, np.maximum(0.0, point)), 0.0)


def _interp_rows(x: np.ndarray, knots: list) -> np.ndarray:
    """:func:`_interp` of each row: ``knots`` ``[(xs, ys, present), ...]`` in increasing
    order, each a row's knot where ``present``; the first at 0 and the last at 1 are
    every row's."""
    (x0, y0, _), (x1, y1, _) = knots[0], knots[-1]
    left_x, left_y = np.broadcast_to(x0, x.shape), y0
    right_x, right_y = np.broadcast_to(x1, x.shape), y1
    for kx, ky, present in knots[1:-1]:               # the last present one at or below x
        below = present & (kx <= x)
        left_x, left_y = np.where(below, kx, left_x), np.where(below, ky, left_y)
    for kx, ky, present in reversed(knots[1:-1]):     # the first present one above x
        above = present & (kx > x)
        right_x, right_y = np.where(above, kx, right_x), np.where(above, ky, right_y)
    span = np.where(right_x > left_x, right_x - left_x, 1.0)
    inner = (right_y - left_y) / span * (x - left_x) + left_y
    return np.where(x <= x0, y0, np.where(x >= x1, y1, inner))


def _mwc_rows(p: np.ndarray, table: MatchEquityTable, away_me: int, away_them: int,
              cube: int, owner: str, crawford: bool, efficiency: np.ndarray) -> np.ndarray:
    """:func:`_mwc` of each row, its efficiency each row's, with ``free_double`` False
    and ``measured`` False (as :func:`play_value` asks it where no table gives the
    efficiencies)."""
    fw, fl = _fractions_rows(p)
    win, lose = _ends_rows(table, away_me, away_them, cube, fw, fl)
    w = p[:, 0]
    dead = w * win + (1.0 - w) * lose
    if crawford or away_me == away_them == 2:
        return dead
    n = len(w)
    tp = cp = None
    if owner in ("centre", "them") and away_them > cube:
        tp = _take_point_rows(table, away_me, away_them, 2 * cube, fw, fl)
    if owner in ("centre", "me") and away_me > cube:
        cp = 1.0 - _take_point_rows(table, away_them, away_me, 2 * cube, fl, fw)
    if tp is not None and cp is not None:
        overlap = tp >= cp
        mid = 0.5 * (tp + cp)
        tp, cp = np.where(overlap, mid - 1e-9, tp), np.where(overlap, mid + 1e-9, cp)
    knots: list = [(0.0, lose, None)]
    if tp is not None:
        knots.append((tp, np.full(n, table.after(away_me, away_them, -cube)),
                      (0.0 < tp) & (tp < 1.0)))
    if cp is not None:
        knots.append((cp, np.full(n, table.after(away_me, away_them, cube)),
                      (0.0 < cp) & (cp < 1.0)))
    knots.append((1.0, win, None))
    live = _interp_rows(w, knots)
    value = efficiency * live + (1.0 - efficiency) * dead
    return np.where(efficiency <= 0.0, dead, value)


def _money_cubeful_rows(p: np.ndarray, owner: str, efficiency: np.ndarray,
                        jacoby: bool) -> np.ndarray:
    """:func:`_money_cubeful` (and :func:`_money_live`) of each row."""
    jac = jacoby and owner == "centre"
    p0, p1, p2, p3, p4 = p.T
    dead = 2 * p0 - 1 if jac else 2 * p0 - 1 + p1 - p3 + p2 - p4
    inside = (_EPS < p0) & (p0 < 1 - _EPS)
    safe = np.where(inside, p0, 0.5)
    w = 1.0 + (p1 + p2) / safe
    l = 1.0 + (p3 + p4) / (1.0 - safe)
    tp = (l - 0.5) / (w + l + 0.5)
    cp = (l + 1.0) / (w + l + 0.5)
    x = safe
    if owner == "centre":
        low = -1.0 if jac else -l + (l - 1.0) * x / tp
        high = 1.0 if jac else 1.0 + (w - 1.0) * (x - cp) / (1.0 - cp)
        live = np.where(x < tp, low,
                        np.where(x < cp, -1.0 + 2.0 * (x - tp) / (cp - tp), high))
    elif owner == "me":
        live = np.where(x < cp, -l + (1.0 + l) * x / cp,
                        1.0 + (w - 1.0) * (x - cp) / (1.0 - cp))
    else:
        live = np.where(x < tp, -l + (l - 1.0) * x / tp,
                        -1.0 + (w + 1.0) * (x - tp) / (1.0 - tp))
    return np.where(inside, dead * (1.0 - efficiency) + live * efficiency, dead)


def _chosen_rows(no_double: np.ndarray, double_take: np.ndarray, double_pass: float,
                 beavers: bool, gammons: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
    """:func:`classify` of each row reduced to what :func:`cubeful_value` reads of it:
    ``(takes, cashes, beavered)``, the rows whose proper action is double/take,
    double/pass and double/beaver (valued at the double/take, the pass and twice the
    double/take); every other action (too good included) is valued at no double."""
    passed = double_take >= double_pass
    cash = passed & ((double_pass >= no_double - TIE) | ~gammons)
    beaver = (beavers & (-2.0 - TIE <= double_take) & (double_take <= TIE)) & ~passed
    doubled = ~passed & (double_take >= no_double - TIE)
    beavered = doubled & beaver & ~(2.0 * double_take < no_double)
    takes = doubled & ~beaver
    return takes, cash, beavered


def probability_rows(probs: Any) -> np.ndarray:
    """``probs``, the chances after each of n plays, as ``float64[n, 5]`` (no plays: ``[]``),
    else :class:`CubeError`; each row's numbers are :func:`play_values`' to check."""
    try:
        rows = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError):
        raise CubeError(f"probabilities {quote(probs)}: expected rows of five numbers") \
            from None
    if rows.size == 0:
        rows = rows.reshape(0, 5)
    if rows.ndim != 2 or rows.shape[1] != 5:
        raise CubeError(f"probabilities of shape {rows.shape}: expected n x 5")
    return rows


def _check_rows(rows: np.ndarray) -> np.ndarray:
    """:func:`check_probabilities` of each row (n x 5), clipped into order as it clips."""
    finite = np.isfinite(rows).all(axis=1)
    inside = ((rows >= -1e-6) & (rows <= 1 + 1e-6)).all(axis=1)
    for i in np.flatnonzero(~(finite & inside))[:1]:
        try:
            check_probabilities(rows[i])
        except CubeError as e:                        # the numbers, and which play's
            raise CubeError(f"row {i}: {e}") from None
    p = np.clip(rows, 0.0, 1.0)
    p[:, 1] = np.minimum(p[:, 1], p[:, 0])
    p[:, 2] = np.minimum(p[:, 2], p[:, 1])
    p[:, 3] = np.minimum(p[:, 3], 1.0 - p[:, 0])
    p[:, 4] = np.minimum(p[:, 4], p[:, 3])
    return p


def state_rows(afters: Any) -> np.ndarray:
    """The backgammon positions ``afters`` as the engine's state rows (n x
    :data:`engine.rules._layout.STATE_LEN`), for :func:`play_values_of_rows`; a
    non-position, or another game's (the cube is backgammon's), is refused by name."""
    afters = list(afters)
    for i, after in enumerate(afters):
        if not isinstance(after, Position):
            raise PositionError(f"afters[{i}] {quote(after)}: expected a Position")
        if after.variant != "backgammon":
            raise CubeError(f"afters[{i}]: variant {after.variant!r} has no cube "
                            f"(backgammon only)")
    if not afters:
        return np.zeros((0, L.STATE_LEN), np.int16)
    return np.array([a.to_array() for a in afters])


def check_play_rows(probs: Any, rows: Any) -> tuple[np.ndarray, np.ndarray]:
    """The chances after n backgammon plays (n x 5) and the positions' state rows (n x
    :data:`engine.rules._layout.STATE_LEN`) as arrays, each row's chances checked and
    clipped as :func:`check_probabilities` does (an error names the row), else
    :class:`CubeError`. No plays at all is two empty arrays."""
    p = probability_rows(probs)
    rows = np.asarray(rows)
    if rows.size == 0:
        rows = rows.reshape(0, L.STATE_LEN)
    if rows.ndim != 2 or rows.shape[1] != L.STATE_LEN:
        raise CubeError(f"state rows of shape {rows.shape}: expected n x {L.STATE_LEN}")
    if len(rows) != len(p):
        raise CubeError(f"{len(rows)} positions for {len(p)} rows of probabilities")
    return _check_rows(p), rows


def play_values(probs: Any, afters: Any, state: CubeState,
                table: MatchEquityTable | None = None,
                efficiencies: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`play_value` of many backgammon plays at once, with the same numbers:
    ``probs`` the mover's chances after each play (n x 5), ``afters`` the positions
    after them, ``efficiencies`` the opponent's cube efficiency in each (default
    :func:`cube_efficiency` of each; never a short bear-off's pair, which
    :func:`engine.search.bearoff_cube.cubeful_play_values` values one by one).
    Returns ``(equities, match winning chances or None in money play)``, as arrays
    (:func:`play_values_of_rows` of the positions' rows)."""
    return play_values_of_rows(probs, state_rows(afters), state, table, efficiencies)


def efficiencies_of_rows(rows: np.ndarray) -> np.ndarray:
    """:func:`cube_efficiency` of backgammon positions given as the engine's ``int16``
    state rows (n x :data:`engine.rules._layout.STATE_LEN`, each seen from its side on
    roll, as the move generator lists the positions after a play), over the rows at
    once: the review values every play of the 21 rolls by its opponent's efficiency
    (tests/test_cube.py holds it to :func:`cube_efficiency` of each position)."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.shape[1] != L.STATE_LEN:
        raise CubeError(f"state rows of shape {rows.shape}: expected n x {L.STATE_LEN}")
    me = rows[:, L.ME + 1:L.ME + 25].astype(np.int64)
    them = rows[:, L.THEM + 1:L.THEM + 25].astype(np.int64)
    bar_me, bar_them = rows[:, L.ME + L.BAR] > 0, rows[:, L.THEM + L.BAR] > 0
    points = np.arange(1, 25)

    def back(board, bar):                   # the farthest checker's point, 25 on the bar
        far = np.where(board > 0, points, 0).max(axis=1)
        return np.where(bar, 25, far)
    race = back(me, bar_me) + back(them, bar_them) <= 25
    outside_them = them[:, 6:].any(axis=1)
    home = ~bar_me & ~bar_them & ~me[:, 6:].any(axis=1) & ~outside_them
    # last_roll: the opponent bears off with any roll (one checker on 1-3, or two on 1
    # and 1-2)
    count = them[:, :6].sum(axis=1)
    one_low = (count == 1) & (them[:, :3].sum(axis=1) == 1)
    two_low = (count == 2) & (them[:, 0] >= 1) & (them[:, :2].sum(axis=1) == 2)
    last = race & ~bar_them & ~outside_them & (one_low | two_low)
    pips = (me * points).sum(axis=1) + 25 * rows[:, L.ME + L.BAR].astype(np.int64)
    x = np.minimum(RACE_MAX, np.maximum(RACE_MIN, RACE_COEFFICIENT + RACE_FACTOR * pips))
    x = np.where(home, BEAROFF_EFFICIENCY, x)
    x = np.where(last, 0.0, x)
    return np.where(race, x, CONTACT_EFFICIENCY)


def play_values_of_rows(probs: Any, rows: np.ndarray, state: CubeState,
                        table: MatchEquityTable | None = None,
                        efficiencies: Any = None) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`play_values` of backgammon plays given as the positions' state rows (the
    move generator's, the opponent on roll), each at its own efficiency
    (:func:`efficiencies_of_rows`) unless ``efficiencies`` are given, without making a
    :class:`Position` of each: a play that ends the game is valued as
    :func:`play_value` values it."""
    p, rows = check_play_rows(probs, rows)
    n = len(p)
    if efficiencies is not None:
        try:
            given = list(efficiencies)
        except TypeError:
            raise CubeError(f"efficiencies {quote(efficiencies)}: expected one number a "
                            f"play") from None
        if len(given) != n:
            raise CubeError(f"{len(given)} efficiencies for {n} plays")
        x = np.array([check_efficiency(e) for e in given], np.float64).reshape(n)
    _check_state(state)
    _check_table(table)
    met = table or default_table()
    if not state.money and max(state.away) > met.length:
        raise MatchError(f"match to {state.match_length}: the table {met.name!r} "
                         f"covers matches to {met.length}")
    equity = np.zeros(n)
    mwc = None if state.money else np.zeros(n)
    over = ((rows[:, L.ME + L.OFF] == CHECKERS) | (rows[:, L.THEM + L.OFF] == CHECKERS))
    for k in np.flatnonzero(over).tolist():             # games over: their points
        equity[k], m = play_value(p[k], Position.from_array(rows[k], "backgammon"), state,
                                  met)
        if mwc is not None:
            mwc[k] = m
    live = ~over
    if live.any():
        xs = efficiencies_of_rows(rows[live]) if efficiencies is None else x[live]
        with np.errstate(divide="ignore", invalid="ignore"):   # in the lines not taken
            _live_values(p[live], xs, state, met, live, equity, mwc)
    return equity, mwc


def _live_values(q: np.ndarray, xs: np.ndarray, state: CubeState, met: MatchEquityTable,
                 live: np.ndarray, equity: np.ndarray, mwc: np.ndarray | None) -> None:
    """:func:`play_values` of the plays that leave the game on (rows ``q``, the
    opponent's efficiencies ``xs``), written into ``equity`` and ``mwc`` at ``live``."""
    theirs = _theirs(q)
    his = state.flip()
    can = his.can_double()
    eff_nd = np.zeros_like(xs) if his.at_max else xs
    eff_dt = np.zeros_like(xs) if (can and 2 * his.value >= his.limit) else xs
    gammons = theirs[:, 1] > 0.0
    if his.money:
        nd = _money_cubeful_rows(theirs, his.owner, eff_nd, his.jacoby)
        if can:
            dt = 2.0 * _money_cubeful_rows(theirs, "them", eff_dt, False)
            takes, cash, beavered = _chosen_rows(nd, dt, 1.0, his.beavers, gammons)
            nd = np.where(takes, dt, np.where(cash, 1.0, np.where(beavered, 2.0 * dt, nd)))
        equity[live] = -nd
        return
    assert mwc is not None
    a, b = his.away
    c = his.value
    lo, hi = met.after(a, b, -c), met.after(a, b, c)
    nd_m = _mwc_rows(theirs, met, a, b, c, his.owner, his.crawford, eff_nd)
    chosen = nd_m
    if can:
        dt_m = _mwc_rows(theirs, met, a, b, 2 * c, "them", False, eff_dt)

        def norm(m):
            return 2.0 * (m - lo) / (hi - lo) - 1.0 if hi > lo else np.zeros_like(m)
        takes, cash, _ = _chosen_rows(norm(nd_m), norm(dt_m), 1.0, False, gammons)
        chosen = np.where(takes, dt_m, np.where(cash, hi, nd_m))
    m = 1.0 - chosen
    a, b = state.away
    lo, hi = met.after(a, b, -state.value), met.after(a, b, state.value)
    equity[live] = 2.0 * (m - lo) / (hi - lo) - 1.0 if hi > lo else 0.0
    mwc[live] = m


ROLLS = tuple((d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1))
"""The 21 rolls, high die first, in the order :func:`rolls_ahead` lists them."""


def rolls_ahead(position: Position, probability_fn: ProbabilityFn,
                rows_fn: Any = None) -> list:
    """``[(weight, probabilities, over), ...]`` over the 21 rolls of the side on roll
    (:data:`ROLLS`): the roll's weight (1/36 or 2/36), the side's cubeless chances after
    its best play (the highest cubeless equity, at 0-ply, the first of equals in the
    generator's order) with the opponent then on roll, and whether that play ends the
    game. What :func:`cube_decision` values a free double by. ``rows_fn``: where the
    caller has one, a function giving the 0-ply outputs (n x 5, each row's side to
    move) of many ``int16`` state rows at once (a search's ``values_of``), which rates
    the plays of all 21 rolls in one call; without it ``probability_fn`` rates them one
    by one."""
    from engine.movegen.generate import successor_arrays
    from engine.rules.scoring import equities, flip_probs
    if rows_fn is None:
        def rows_fn(rows):
            return np.array([probability_fn(Position.from_array(r, position.variant), 0)
                             for r in rows], np.float64)
    blocks = [successor_arrays(position, d) for d in ROLLS]
    mine = flip_probs(np.asarray(rows_fn(np.concatenate(blocks)), np.float64))
    eq = equities(mine)                                 # the mover's, after each play
    out, k = [], 0
    for (d1, d2), block in zip(ROLLS, blocks):
        i = int(np.argmax(eq[k:k + len(block)]))        # the first best
        best = Position.from_array(block[i], position.variant)
        out.append(((1 if d1 == d2 else 2) / 36.0, check_probabilities(mine[k + i]),
                    best.is_over()))
        k += len(block)
    return out


def _free_double_after(after_roll: list, table: MatchEquityTable, a: int, b: int,
                       n: int, efficiency: float, measured: bool) -> float:
    """Our MWC (``a``-away against ``b``-away, the cube at ``n``, ours dead, the
    opponent's double free) over our next roll (:func:`rolls_ahead`): a play that ends
    the game scores at ``n``; otherwise, on his turn, he doubles to ``2n`` or plays on,
    whichever leaves us less: doubled, we take (a dead cube at ``2n``) or pass (losing
    ``n``), whichever is better for us; not doubled, he keeps his live cube, the
    Janowski line of a cube he holds at ``n`` (:func:`_mwc`, ``efficiency``,
    ``measured``), as GNU Backgammon's 1-ply values his no double at its leaves.
    (He always doubled here once: where he is better off playing on for a gammon, a
    double we would pass gave us the pass's value, e.g. a 1-away leader at a
    post-Crawford score valued at the pass, 0.677, facing a sure gammon, where GNU
    Backgammon gives 0.512. Playing on was then valued as the game played out at ``n``
    with his cube dead: fed GNU Backgammon's 0-ply chances at every node, double/take
    was 0.060 from its 1-ply on average and up to 0.42, against 0.002 and 0.015 with
    his cube live.)"""
    drop = table.after(a, b, -n)
    total = 0.0
    for weight, p, over in after_roll:
        fw, fl = _fractions(p)
        w = float(p[0])
        win, lose = _ends(table, a, b, n, fw, fl)
        played_out = w * win + (1 - w) * lose
        if over:
            total += weight * played_out
        else:
            on = _mwc(p, table, a, b, n, "them", False, efficiency, free_double=False,
                      measured=measured)
            win, lose = _ends(table, a, b, 2 * n, fw, fl)
            total += weight * min(on, max(w * win + (1 - w) * lose, drop))
    return float(total)


def _double_take_mwc(p: np.ndarray, table: MatchEquityTable, state: CubeState,
                     efficiency: float, after_roll: Any, free_double: bool = True,
                     measured: bool = False) -> float:
    """The doubler's MWC after his double from ``state.value`` is taken (the cube then
    the taker's): :func:`match_cubeful_mwc`, or, where the taker's redouble is free
    (the doubler's cube then dead, his live) and ``after_roll`` is given (by callers
    only where the cube lives, :func:`_live`), that redouble valued after each of the
    doubler's rolls (:func:`_free_double_after`). :func:`cube_decision` and
    :func:`answer_double` both read it; ``measured`` as :func:`_mwc` takes it."""
    a, b = state.away
    c = state.value
    if after_roll is not None and b > 2 * c >= a and 4 * c <= state.limit:
        return _free_double_after(after_roll(), table, a, b, 2 * c, efficiency, measured)
    return _mwc(p, table, a, b, 2 * c, "them", False, efficiency, free_double, measured)


def _match_take_point(p: np.ndarray, table: MatchEquityTable, a: int, b: int, n: int,
                      efficiency: float, drop: float, measured: bool = False) -> float:
    """The taker's take point after a double to ``n`` (the doubler ``a``-away, the
    taker ``b``-away, ``drop`` the doubler's MWC after a pass): the least cubeless
    winning chance of the taker at which double/take, valued as :func:`cube_decision`
    values it (:func:`match_cubeful_mwc`, with the taker's free redouble where he has
    one), is no better for the doubler than the pass; the gammon shares of ``p`` held
    fixed. Janowski's line (:func:`_take_point`) misses that free redouble: at 3-away
    doubled by 2-away it gave 27.8% where the taker needs 24.9%."""
    fw, fl = _fractions(p)
    gw, bw = fw[1] + fw[2], fw[2]
    gl, bl = fl[1] + fl[2], fl[2]

    def doubler(w: float) -> float:
        q = np.array([w, w * gw, w * bw, (1 - w) * gl, (1 - w) * bl])
        return _mwc(q, table, a, b, n, "them", False, efficiency, measured=measured)

    lo, hi = 0.0, 1.0                     # the doubler's chance: take below, pass above
    if doubler(hi) < drop:
        return 0.0                        # a take at any chance
    if doubler(lo) >= drop:
        return 1.0                        # a pass at any chance
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if doubler(mid) < drop:
            lo = mid
        else:
            hi = mid
    return float(1.0 - 0.5 * (lo + hi))


ANSWERS = ("take", "pass", "beaver")
"""The answers to a double (:class:`DoubleAnswer`)."""


@dataclass(frozen=True)
class DoubleAnswer:
    """The answer to a double, and the equities it was chosen from."""

    answer: str
    """One of :data:`ANSWERS`."""
    double_take: float
    """The doubler's cubeful equity after a take, normalised to the cube before the
    double (as :attr:`CubeDecision.double_take`)."""
    double_pass: float
    """The doubler's equity after a pass: 1.0."""
    mwc: dict | None = None
    """Match play: the same as match winning chances of the doubler."""


def money_answer(double_take: float, beavers: bool) -> DoubleAnswer:
    """The answer to a double in money play whose double/take equity, the doubler's
    at the doubled cube in units of the cube before it, is ``double_take``: a pass
    where a take costs at least the pass's 1, else a take, or with ``beavers`` a
    beaver where the take leaves the doubler between -2 and zero (GNU Backgammon's
    rule, as :func:`classify` has it)."""
    if double_take >= 1.0:
        return DoubleAnswer("pass", double_take, 1.0)
    beaver = beavers and _beaver_range(double_take)
    return DoubleAnswer("beaver" if beaver else "take", double_take, 1.0)


def answer_double(probs: Any, state: CubeState, efficiency: float = 0.68,
                  table: MatchEquityTable | None = None,
                  after_roll: Any = None,
                  double_efficiency: float | None = None) -> DoubleAnswer:
    """The answer of the opponent of the side on roll to its double from ``state.value``
    to twice that: ``"take"``, ``"pass"``, or ``"beaver"`` (money play with
    ``state.beavers``: a take that leaves the doubler at or below zero, as
    :func:`classify` has it). ``probs`` are the doubler's cubeless probabilities before
    his roll. The same equities as :func:`cube_decision`, without asking whether the
    double was right: a double the doubler should not have made (a dead cube in a match)
    is answered all the same. A double in the Crawford game raises :class:`CubeError`.
    ``after_roll`` (match play) as for :func:`cube_decision`: where the taker's redouble
    will be free, its value comes from the positions after each of the doubler's rolls.
    ``efficiency`` and ``double_efficiency`` as :func:`cube_decision` takes them: the
    game after the take is valued at ``double_efficiency`` where given (a short
    bear-off's taker's cube), else at ``efficiency``."""
    p = check_probabilities(probs)
    _check_state(state)
    _check_table(table)
    efficiency = check_efficiency(efficiency)
    if state.owner == "them":
        raise CubeError("the side on roll doubled a cube its opponent owns")
    if state.at_max:
        raise CubeError(f"a double of a cube at its maximum value, {state.limit}")
    live = _live(state, efficiency, double_efficiency)
    if double_efficiency is not None:
        efficiency = check_efficiency(double_efficiency)
    top = 2 * state.value >= state.limit
    # (the taker could not turn it again)
    if top:
        efficiency = 0.0
    if state.money:
        take = 2.0 * money_cubeful_equity(p, "them", efficiency, False)
        return money_answer(take, state.beavers and not top)
    if state.crawford:
        raise CubeError("a double in the Crawford game: the Crawford game has no cube")
    table = table or default_table()
    a, b = state.away
    c = state.value
    lo, hi = table.after(a, b, -c), table.after(a, b, c)
    take_m = _double_take_mwc(p, table, state, efficiency, after_roll if live else None,
                              measured=double_efficiency is not None and not top)
    take = 2.0 * (take_m - lo) / (hi - lo) - 1.0 if hi > lo else 0.0
    return DoubleAnswer("pass" if take_m >= hi else "take", take, 1.0,
                        {"double_take": take_m, "double_pass": hi})


def network_probability_fn(network) -> ProbabilityFn:
    """A :data:`ProbabilityFn` of a :class:`engine.eval.network.Network` at 0-ply (deeper
    plies are the search's: pass its function instead)."""
    def fn(position: Position, ply: int = 0) -> np.ndarray:
        if ply != 0:
            raise CubeError(f"ply {quote(ply)}: this probability function evaluates 0-ply only")
        return np.asarray(network.probabilities([position])[0], dtype=np.float64)
    return fn


def analyse_cube(position: Position, state: CubeState, probability_fn: ProbabilityFn,
                 ply: int = 0, efficiency: float | None = None,
                 table: MatchEquityTable | None = None, rows_fn: Any = None,
                 double_efficiency: float | None = None) -> CubeDecision:
    """Cube analysis of ``position`` (before the side on roll rolls): its cubeless
    probabilities from ``probability_fn(position, ply)``, the efficiency from
    :func:`cube_efficiency` unless given (``double_efficiency``: the taker's after a
    double, as :func:`cube_decision` takes it; a short bear-off's pair in match play
    comes from the table, :func:`engine.search.bearoff_cube.cube_analysis`). In match
    play, where the opponent's next double is free (ours dead, his live), it is valued
    over our 21 rolls at 0-ply (:func:`rolls_ahead`; a few hundred evaluations, in one
    call with ``rows_fn``)."""
    if not isinstance(position, Position):
        raise PositionError(f"position {quote(position)}: expected a Position")
    _check_state(state)
    if not callable(probability_fn):
        raise CubeError(f"probability_fn {quote(probability_fn)}: expected a function "
                        f"(position, ply) -> five probabilities")
    _check_table(table)
    if position.variant != "backgammon":
        raise CubeError(f"variant {position.variant!r} has no cube (backgammon only)")
    if position.is_over():
        raise CubeError("the game is over: no cube decision in a finished position")
    if not state.money:
        table = table or default_table()
        if max(state.away) > table.length:
            raise MatchError(f"match to {state.match_length}: the table {table.name!r} "
                             f"covers matches to {table.length}")
    x = cube_efficiency(position) if efficiency is None else efficiency
    probs = probability_fn(position, ply)
    return cube_decision(probs, state, x, table,
                         after_roll=lambda: rolls_ahead(position, probability_fn, rows_fn),
                         double_efficiency=double_efficiency)
