"""The race formulas players count at the table, as GNU Backgammon shows them
(``show pipcount``, ``show kleinman``, ``show thorp``, ``show keith``, ``show 8912``,
``show isight``, the effective pip counts of its race theory window).

Each is a rule of thumb for a backgammon race (no contact left), from the side on roll's
point of view: it is the would-be doubler, "the leader" of the formulas' own wording,
and the opponent is "the trailer".

- **Pip counts**: the pips each side must move to bear off (a checker on the bar 25).
- **Effective pip count** (EPC, Walter Trice): the mean number of rolls a side needs to
  bear off alone, times the 49/6 pips of an average roll: exact from the one-sided
  bear-off tables (:mod:`engine.eval.bearoff`) for a side whose checkers are all home,
  else by a one-sided rollout of 5,760 trials (:mod:`engine.eval.onesided`, as GNU
  Backgammon's race theory window has it); *wastage* is the EPC less the pip count.
- **Kleinman**: the side on roll's cubeless winning chance ``(1 + erf(K)) / 2`` with
  ``K = (D + 4) / (2 sqrt(S - 4))``, ``D`` the opponent's pips less his and ``S`` their
  sum (the normal form of Kleinman's count, as GNU Backgammon computes it); none where
  ``S`` is 4 or less, where the formula has no value.
- **Thorp** (Edward O. Thorp): each side's pips, plus 2 a checker left, plus 1 a checker
  on the 1-point, less 1 a home point held; the side on roll adds a tenth when his count
  is above 30 (``L``; the opponent's ``T``). Double when ``L <= T + 2``, redouble when
  ``L <= T + 1``, take when ``T <= L + 2``.
- **Keith** (Tom Keith): each side's pips, plus 2 a checker beyond the first on the
  1-point, plus 1 a checker beyond the first on the 2-point, plus 1 a checker beyond the
  third on the 3-point, plus 1 an empty 4-, 5- or 6-point; the side on roll adds a
  seventh, rounded down (``L``). Double when ``L - T <= 4``, redouble when ``<= 3``,
  take when ``L - T >= 2``.
- **8-9-12**: the side on roll's lead as a share of his own pips: double from 8%,
  redouble from 9%, take up to 12%.
- **Isight**: each side's pips, plus the checkers it has left beyond the other side's,
  plus 2 a checker beyond the second on the 1-point, 1 a checker beyond the second on
  the 2-point, 1 a checker beyond the third on the 3-point, 1 for each of its 4-, 5- and
  6-points it leaves empty where the other side holds his, and the crossovers it has
  beyond the other side's (a checker counts 0 in the home quarter, 1, 2, 3 in the
  next ones, 4 on the bar); the side on roll's count ``L``, the opponent's ``T``. The
  estimated winning chance is ``80 - L/3 + 2 (T - L)`` percent (not held to 0..100):
  double from 68, redouble from 70, take up to 76.

Where GNU Backgammon differs at a boundary, the authors' rules above are followed: it
adds Keith's seventh without rounding (in single precision: a count of 42 comes to a
hair above 48) and calls ``L - T = 2`` a pass by Keith, calls ``T = L + 2`` a pass by
Thorp, at a lead of exactly 8% (75 pips against 81) finds no double by 8-9-12 and
between 8% and 12% names its redouble and double the other way round, and prints a
Kleinman chance of 0 where the pips total 4 or fewer.

The formulas are backgammon's (and portes', the same board and race without a cube);
other games are refused. They are computed for any position, as GNU Backgammon computes
them, but mean something only in a race: :attr:`RaceCounts.race` says whether it is one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.errors import NardyError, quote
from engine.eval import onesided
from engine.eval.pubeval import is_race
from engine.rules.position import Position
from engine.rules.variants import get_rules, race_geometry

PIPS_PER_ROLL = 49 / 6
"""The mean pips of a roll, doubles counted four times: the EPC's rolls-to-pips factor."""


class RaceError(NardyError):
    """A position the race formulas cannot count: not a Position, or another game's."""

    code = "invalid_position"


@dataclass(frozen=True)
class CubeRule:
    """What one count advises the side on roll and his opponent."""

    leader: float
    """The side on roll's count, adjusted as the rule says."""
    trailer: float
    """The opponent's count."""
    double: bool
    """An initial double (the cube centred)."""
    redouble: bool
    """A redouble (the side on roll owns the cube)."""
    take: bool
    """The opponent takes."""

    def advice(self, owned: bool = False) -> str:
        """``Double, take``, ``No redouble, take``, ... for a centred cube, or one the
        side on roll owns (``owned``)."""
        word = "redouble" if owned else "double"
        act = self.redouble if owned else self.double
        return f"{word.capitalize() if act else 'No ' + word}, {'take' if self.take else 'pass'}"

    def to_json(self) -> dict:
        return {"leader": round(self.leader, 4), "trailer": round(self.trailer, 4),
                "double": self.double, "redouble": self.redouble, "take": self.take}


@dataclass(frozen=True)
class RaceCounts:
    """The race formulas of one position (module docstring), the side on roll first in
    each pair."""

    race: bool
    """Whether the position is a race (no contact left): where the formulas mean
    something."""
    pips: tuple[int, int]
    epc: tuple[float, float]
    """Effective pip counts (a side with checkers outside its home board's by a
    one-sided rollout)."""
    kleinman: float | None
    """The side on roll's cubeless winning chance by Kleinman's count; None where both
    sides' pips total 4 or fewer (the formula has no value there)."""
    thorp: CubeRule
    keith: CubeRule
    rule_8912: CubeRule
    """The 8-9-12 rule: its ``leader`` is the side on roll's lead in percent."""
    isight: CubeRule
    """The Isight counts and their advice."""
    isight_chance: float
    """The side on roll's winning chance estimated from the Isight counts, in percent (as
    the formula gives it: below 0 or above 100 far from its range, the short races)."""

    @property
    def wastage(self) -> tuple[float, float]:
        """EPC less the pip count, per side."""
        return self.epc[0] - self.pips[0], self.epc[1] - self.pips[1]

    def to_json(self) -> dict:
        def r(x):
            return None if x is None else round(x, 4)
        return {"race": self.race, "pips": list(self.pips),
                "epc": [r(x) for x in self.epc], "wastage": [r(x) for x in self.wastage],
                "kleinman": r(self.kleinman), "thorp": self.thorp.to_json(),
                "keith": self.keith.to_json(), "8-9-12": self.rule_8912.to_json(),
                "isight": {**self.isight.to_json(), "chance": round(self.isight_chance, 4)}}


def _sides(position: Position) -> tuple[tuple, tuple]:
    """Each side's 25 counts, index ``p - 1`` for point ``p`` and 24 for the bar."""
    return ((*position.me, position.bar[0]), (*position.them, position.bar[1]))


def _pips(side: tuple) -> int:
    return sum((i + 1) * n for i, n in enumerate(side))


def kleinman(pips_on_roll: int, pips_other: int) -> float | None:
    """The side on roll's cubeless winning chance by Kleinman's count; None where both
    counts together are 4 pips or fewer (its square root has no value there; GNU
    Backgammon prints 0, though with 2 pips against 2 the side on roll cannot lose)."""
    total = pips_on_roll + pips_other
    if total <= 4:
        return None
    k = (pips_other - pips_on_roll + 4) / (2 * math.sqrt(total - 4))
    return 0.5 * (1 + math.erf(k))


def thorp_count(side: tuple) -> int:
    """Thorp's count of one side (before the side on roll's tenth)."""
    return (_pips(side) + 2 * sum(side) + side[0]
            - sum(1 for n in side[:6] if n))


def keith_count(side: tuple) -> int:
    """Keith's count of one side (before the side on roll's seventh)."""
    return (_pips(side) + 2 * max(side[0] - 1, 0) + max(side[1] - 1, 0)
            + max(side[2] - 3, 0) + sum(1 for n in side[3:6] if n == 0))


def _thorp(me: tuple, them: tuple) -> CubeRule:
    count = thorp_count(me)
    lead10 = count * 11 if count > 30 else count * 10     # in tenths: 90 * 1.1 is not 99
    t10 = thorp_count(them) * 10
    return CubeRule(lead10 / 10, t10 / 10, lead10 <= t10 + 20, lead10 <= t10 + 10,
                    t10 <= lead10 + 20)


def _keith(me: tuple, them: tuple) -> CubeRule:
    count = keith_count(me)
    lead = count + count // 7
    t = keith_count(them)
    return CubeRule(lead, t, lead - t <= 4, lead - t <= 3, lead - t >= 2)


def _8912(pips: tuple[int, int]) -> CubeRule:
    ahead = 100.0 * (pips[1] - pips[0]) / pips[0]
    return CubeRule(ahead, float(pips[1]), ahead >= 8, ahead >= 9, ahead <= 12)


def isight_count(side: tuple, other: tuple) -> int:
    """Isight's count of ``side`` (25 counts, the bar last), which reads ``other``'s
    checkers left, home points and crossovers too."""
    left, crossovers = sum(side), sum(n * (i // 6) for i, n in enumerate(side))
    other_left = sum(other)
    other_crossovers = sum(n * (i // 6) for i, n in enumerate(other))
    return (_pips(side) + max(left - other_left, 0)
            + 2 * max(side[0] - 2, 0) + max(side[1] - 2, 0) + max(side[2] - 3, 0)
            + sum(1 for i in (3, 4, 5) if side[i] == 0 and other[i])
            + max(crossovers - other_crossovers, 0))


def _isight(me: tuple, them: tuple) -> tuple[CubeRule, float]:
    lead, t = isight_count(me, them), isight_count(them, me)
    thirds = 240 - lead + 6 * (t - lead)           # three times the chance: no rounding
    return (CubeRule(lead, t, thirds >= 204, thirds >= 210, thirds <= 228), thirds / 3)


def effective_pips(position: Position, side: int) -> float:
    """Side ``side``'s (0: on roll) effective pip count: from the one-sided bear-off
    tables when its checkers are all home, else by a one-sided rollout
    (:func:`engine.eval.onesided.mean_rolls`, the same at every call)."""
    board = position.me if side == 0 else position.them
    return onesided.mean_rolls((*board, position.bar[side])) * PIPS_PER_ROLL


def race_counts(position: Position) -> RaceCounts:
    """The race formulas of ``position`` (a backgammon or portes position, seen from the
    side on roll)."""
    if not isinstance(position, Position):
        raise RaceError(f"position = {quote(position)}: expected a Position")
    if not race_geometry(get_rules(position.variant)):
        raise RaceError(f"the race formulas count backgammon's races (backgammon, "
                        f"portes), not {position.variant}'s")
    if position.is_over():
        raise RaceError("the game is over: no race is left to count")
    me, them = _sides(position)
    pips = position.pip_counts()
    return RaceCounts(is_race(position), pips,
                      (effective_pips(position, 0), effective_pips(position, 1)),
                      kleinman(*pips), _thorp(me, them), _keith(me, them), _8912(pips),
                      *_isight(me, them))


def format_race(c: RaceCounts, owner: str = "centre") -> str:
    """The counts as text, the side on roll's first, and each rule's advice for the cube
    where ``owner`` has it (``centre``, ``me``: the side on roll, ``them``)."""
    owned = owner == "me"

    def rule(r: CubeRule) -> str:
        return ("the opponent owns the cube" if owner == "them" else r.advice(owned))

    def epc(i: int) -> str:
        return f"{c.epc[i]:.1f} (wastage {c.wastage[i]:.1f})"

    lines = [] if c.race else ["note: not a race (the armies are still in contact): the "
                               "counts are for races"]
    lines += [f"pip counts: on roll {c.pips[0]}, opponent {c.pips[1]}",
              f"effective pip counts: on roll {epc(0)}, opponent {epc(1)}",
              "Kleinman: cubeless winning chance of the side on roll " + (
                  "n/a (4 pips or fewer in all)" if c.kleinman is None
                  else f"{c.kleinman:.4f}"),
              f"Thorp: L {c.thorp.leader:.1f}, T {c.thorp.trailer:.0f}: {rule(c.thorp)}",
              f"Keith: L {c.keith.leader:.0f}, T {c.keith.trailer:.0f}: {rule(c.keith)}",
              f"8-9-12: ahead {c.rule_8912.leader:.1f}%: {rule(c.rule_8912)}",
              f"Isight: L {c.isight.leader:.0f}, T {c.isight.trailer:.0f}, estimated "
              f"winning chance {c.isight_chance:.1f}%: {rule(c.isight)}"]
    return "\n".join(lines)
