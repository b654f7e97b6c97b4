"""Match equity tables: the match winning chance (MWC) of a score, before and after the
Crawford game, and what follows from it (take points, gammon prices).

Scores are counted **away**: a player 3-away needs 3 more points. A
:class:`MatchEquityTable` holds

* ``pre_crawford[i][j]``: the MWC of the player ``i+1``-away against an opponent
  ``j+1``-away while the Crawford game has not been played (row / column 0, a player
  1-away, is the Crawford game itself), and
* ``post_crawford[j]``: the MWC of the player ``j+1``-away (the trailer) against an
  opponent 1-away once the Crawford game is over (``post_crawford[0]`` is 1-away /
  1-away, 0.5).

:func:`kazaross_xg2` is the published Kazaross-XG2 table (25 x 25, GNU Backgammon's
``met/Kazaross-XG2.xml``, carried in ``engine/cube/data/met_kazaross_xg2.json`` with its
source named); the engine uses it extended to 64 away as GNU Backgammon extends it
(:func:`extended`, :func:`default_table`), so that every match GNU Backgammon plays is
within the table.
:func:`engine.cube.computed_met.met_from_gammon_rate` computes a table from a single gammon rate for comparison: post-Crawford from the
trailer's immediate double, the gammon rate and the leader's free drops (as GNU
Backgammon's Zadeh generator), pre-Crawford by recursion over the single and gammon
outcomes of a game played with a live cube (the Janowski match model of
:mod:`engine.cube.decision` at full cube efficiency, evaluated at 50% winning chances).

Whether a score is pre- or post-Crawford is not in the score: :meth:`MatchEquityTable.mwc`
takes it as a flag, and :meth:`MatchEquityTable.after` knows that a game played with a
player 1-away (the Crawford game or a later one) leaves a post-Crawford score.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.errors import NardyError, quote

DATA_FILE = Path(__file__).with_name("data") / "met_kazaross_xg2.json"
"""The Kazaross-XG2 table, as JSON with its source and copyright notice."""


class MatchError(NardyError):
    """A match length, score, cube or table request that makes no sense."""

    code = "invalid_match"


@dataclass(frozen=True, eq=False)
class MatchEquityTable:
    """Pre- and post-Crawford match winning chances up to :attr:`length` away."""

    name: str
    """Short name (``"Kazaross XG2 25 point MET"``)."""
    pre_crawford: np.ndarray
    """``float64[L, L]``: ``[i][j]`` = MWC of the player i+1-away vs j+1-away."""
    post_crawford: np.ndarray
    """``float64[L]``: ``[j]`` = MWC of the player j+1-away vs 1-away, post-Crawford."""
    source: str = ""
    """Where the numbers come from."""
    description: str = field(default="", repr=False)
    """How they were made."""

    def __post_init__(self) -> None:
        """Check the shapes and numbers once, here, so that a table built by hand with a
        ragged or short part fails naming that part rather than as an ``IndexError`` in
        a later lookup. Nested lists are taken as arrays."""
        for name in ("name", "source", "description"):
            if not isinstance(getattr(self, name), str):
                raise MatchError(f"{name} = {quote(getattr(self, name))}: expected a string")
        arrays = {}
        for name in ("pre_crawford", "post_crawford"):
            value = getattr(self, name)
            try:        # a read-only copy: after() remembers what it read
                arrays[name] = np.array(value, dtype=np.float64)
                arrays[name].setflags(write=False)
            except (TypeError, ValueError):
                raise MatchError(f"{name} = {quote(value)}: expected an array of match "
                                 f"winning chances") from None
        pre, post = arrays["pre_crawford"], arrays["post_crawford"]
        if pre.ndim != 2 or pre.shape[0] != pre.shape[1] or pre.shape[0] < 1:
            raise MatchError(f"pre_crawford of shape {pre.shape}: expected a square "
                             f"matrix, one row and one column per score away")
        if post.ndim != 1:
            raise MatchError(f"post_crawford of shape {post.shape}: expected one row of "
                             f"match winning chances")
        if post.shape[0] != pre.shape[0]:
            raise MatchError(f"post_crawford has {post.shape[0]} entries, pre_crawford is "
                             f"{pre.shape[0]} x {pre.shape[0]}: expected one post-Crawford "
                             f"entry per row of pre_crawford")
        for name, values in arrays.items():
            if not np.all((values >= 0.0) & (values <= 1.0)):      # NaN fails too
                bad = np.argwhere(~((values >= 0.0) & (values <= 1.0)))[0]
                at = "".join(f"[{int(k)}]" for k in bad)
                raise MatchError(f"{name}{at} = {float(values[tuple(bad)])}: expected a "
                                 f"match winning chance in [0, 1]")
            if values is not getattr(self, name):
                object.__setattr__(self, name, values)
        object.__setattr__(self, "_after", {})      # after()'s lookups, by plain ints

    @property
    def length(self) -> int:
        """Longest match the table covers (points away)."""
        return int(self.post_crawford.shape[0])

    def _check_away(self, away: int, who: str) -> None:
        if isinstance(away, bool) or not isinstance(away, (int, np.integer)):
            raise MatchError(f"{who} = {quote(away)}: expected an integer number of points away")
        if away > self.length:
            raise MatchError(f"{who} = {away} points away: the table {self.name!r} covers "
                             f"matches to {self.length}")

    def mwc(self, away_me: int, away_them: int, post_crawford: bool = False) -> float:
        """MWC of the player ``away_me``-away against ``away_them``-away.

        ``away <= 0`` means that player has won the match. ``post_crawford`` says the
        Crawford game has been played; it matters only when a player is 1-away.
        """
        self._check_away(away_me, "away_me")
        self._check_away(away_them, "away_them")
        if away_me <= 0:
            if away_them <= 0:
                raise MatchError(f"away_me = {away_me}, away_them = {away_them}: both "
                                 f"players cannot have won")
            return 1.0
        if away_them <= 0:
            return 0.0
        if post_crawford:
            if away_me == 1:
                return 1.0 - float(self.post_crawford[away_them - 1])
            if away_them == 1:
                return float(self.post_crawford[away_me - 1])
        return float(self.pre_crawford[away_me - 1, away_them - 1])

    def after(self, away_me: int, away_them: int, points: int) -> float:
        """MWC of the first player after a game played at ``away_me`` / ``away_them``
        in which he won ``points`` (lost ``-points`` when negative).

        A game played while a player was 1-away (the Crawford game or a later one)
        leaves a post-Crawford score; otherwise a player who reaches 1-away next plays
        the Crawford game (the pre-Crawford row 0).
        """
        # the cube code asks often; a table still being filled (computed_met) keeps none
        memo: dict | None = self.__dict__.get("_after")
        key = (away_me, away_them, points)
        plain = (type(away_me) is int and type(away_them) is int and type(points) is int)
        if memo is not None and plain and key in memo:
            return memo[key]
        post = away_me == 1 or away_them == 1
        if points >= 0:
            value = self.mwc(max(away_me - points, 0), away_them, post)
        else:
            value = self.mwc(away_me, max(away_them + points, 0), post)
        if memo is not None and plain:
            memo[key] = value
        return value

    def outcomes(self, away_me: int, away_them: int, cube: int) -> tuple:
        """``(win 1, 2, 3 times cube, lose 1, 2, 3 times cube)``: the first player's MWC
        after each result of a game at ``cube`` (:meth:`after`), remembered as
        :meth:`after` remembers its values."""
        memo: dict | None = self.__dict__.get("_after")
        key = ("outcomes", away_me, away_them, cube)
        if memo is not None and key in memo:
            return memo[key]
        value = tuple(self.after(away_me, away_them, k * cube) for k in (1, 2, 3, -1, -2, -3))
        if (memo is not None and type(away_me) is int and type(away_them) is int
                and type(cube) is int):
            memo[key] = value
        return value

    def to_json(self, length: int | None = None) -> dict:
        """``{"name", "pre_crawford", "post_crawford"}`` cut to ``length`` (the protocol
        reply of ``met``)."""
        n = self.length if length is None else length
        self._check_length(n)
        return {"name": self.name,
                "pre_crawford": [[float(v) for v in row[:n]] for row in self.pre_crawford[:n]],
                "post_crawford": [float(v) for v in self.post_crawford[:n]]}

    def _check_length(self, length) -> None:
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
            raise MatchError(f"length = {quote(length)}: expected a positive integer")
        if length > self.length:
            raise MatchError(f"length = {length}: the table {self.name!r} covers matches "
                             f"to {self.length}")

    def __repr__(self) -> str:
        return f"<MatchEquityTable {self.name!r} to {self.length}>"


@lru_cache(maxsize=None)
def kazaross_xg2() -> MatchEquityTable:
    """The Kazaross-XG2 table (pre-Crawford 25 x 25, post-Crawford to 25-away)."""
    data = json.loads(DATA_FILE.read_text())
    tables = data["tables"]
    pre = np.array(tables["pre_crawford"], dtype=np.float64)
    post = np.array(tables["post_crawford"], dtype=np.float64)
    pre.setflags(write=False)
    post.setflags(write=False)
    return MatchEquityTable(data["name"], pre, post, data["source"], data["description"])


GNUBG_LONGEST_MATCH = 64
"""GNU Backgammon's longest match (its ``MAXSCORE``): it extends every table to 64 away."""

_GAME_SD = (1.24, 1.27, 1.47, 1.50, 1.60, 1.61, 1.66, 1.68, 1.70, 1.72)
"""David Montgomery's standard deviations of a game's points for a player 1 .. 10 away
(1.77 farther), as GNU Backgammon's ``ExtendMET`` takes them."""


def extended(table: MatchEquityTable, length: int = GNUBG_LONGEST_MATCH,
             gammon_rate: float = 0.25, free_drop_2: float = 0.015,
             free_drop_4: float = 0.004) -> MatchEquityTable:
    """``table`` extended to ``length`` away as GNU Backgammon extends its tables (to 64,
    its longest match), its own entries kept:

    * pre-Crawford, David Montgomery's extension: the points a player ``a``-away wins
      less those of the one ``b``-away over the rest of the match are taken as normal,
      mean 0 and standard deviation ``sqrt(sd(a)^2 + sd(b)^2) * sqrt((a + b) / 2)``
      (``sd`` of :data:`_GAME_SD`), and the trailer's MWC is the chance that they reach
      the gap ``a - b`` (within six deviations; nil beyond); the leader's the rest;
    * post-Crawford, Zadeh's recursion with the trailer doubling at once: the trailer
      ``k``-away wins the doubled game, a gammon (``gammon_rate`` ``g``) or single, at
      even chances, so ``MWC(k) = (g * MWC(k - 4) + (1 - g) * MWC(k - 2)) / 2`` (1 at 0
      or less away), less the leader's free drop at 2-away (1.5%) and 4-away (0.4%). GNU Backgammon recomputes the
      table's own last post-Crawford entry this way too (a table of ``n`` away need not
      hold the ``n``-away entry, the first legal post-Crawford score being ``n - 1``),
      and so does this.

    A table already ``length`` long or longer is returned as it is."""
    n = table.length
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise MatchError(f"length = {quote(length)}: expected a positive integer")
    if length <= n:
        return table
    pre = np.zeros((length, length))
    pre[:n, :n] = table.pre_crawford
    for i in range(n, length):          # the longer away a, against b <= a
        for j in range(i + 1):
            a, b = i + 1, j + 1
            sd_a = _GAME_SD[a - 1] if a <= len(_GAME_SD) else 1.77
            sd_b = _GAME_SD[b - 1] if b <= len(_GAME_SD) else 1.77
            sigma = math.sqrt(sd_a * sd_a + sd_b * sd_b) * math.sqrt((a + b) / 2)
            gap = a - b
            pre[i, j] = (_normal_cdf(6.0) - _normal_cdf(gap / sigma)
                         if 6.0 * sigma > gap else 0.0)
    for i in range(length):             # and the other way round
        for j in range(n if i < n else i + 1, length):
            pre[i, j] = 1.0 - pre[j, i]
    post = np.zeros(length)
    post[:n - 1] = table.post_crawford[:n - 1]
    for k in range(n - 1, length):      # index k: the trailer k+1 away
        four = post[k - 4] if k >= 4 else 1.0
        two = post[k - 2] if k >= 2 else 1.0
        post[k] = gammon_rate * 0.5 * four + (1 - gammon_rate) * 0.5 * two
        post[k] -= free_drop_2 if k == 1 else free_drop_4 if k == 3 else 0.0
    return MatchEquityTable(
        table.name, pre, post, table.source,
        f"{table.description} Extended from {n} to {length} away as GNU Backgammon "
        f"extends its tables (engine.cube.met.extended).".strip())


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@lru_cache(maxsize=None)
def default_table() -> MatchEquityTable:
    """The table the engine uses unless told otherwise: Kazaross-XG2, extended to 64
    away as GNU Backgammon extends it (:func:`extended`), so that every match GNU
    Backgammon plays is within it."""
    return extended(kazaross_xg2())


# --------------------------------------------------------------------- derived numbers
def take_point(table: MatchEquityTable, away_taker: int, away_doubler: int,
               cube: int = 1) -> float:
    """Dead-cube take point without gammons: the least winning chance with which the
    player ``away_taker``-away takes a double from ``cube`` to ``2 cube``.

    ``(drop - lose) / (win - lose)`` with drop = losing ``cube`` points, win / lose =
    winning / losing ``2 cube`` points (in money play this is the textbook 25%).
    """
    drop = table.after(away_taker, away_doubler, -cube)
    win = table.after(away_taker, away_doubler, 2 * cube)
    lose = table.after(away_taker, away_doubler, -2 * cube)
    if win - lose <= 0:
        return 0.0
    return float(np.clip((drop - lose) / (win - lose), 0.0, 1.0))


def gammon_price(table: MatchEquityTable, away_me: int, away_them: int,
                 cube: int = 1) -> tuple[float, float]:
    """Gammon prices of a game played at ``cube`` for the first player:
    ``(winning, losing)``, each the MWC a gammon adds to a single win (or costs over a
    single loss) divided by the spread between winning and losing a single game. In
    money play both are 0.5.
    """
    win1 = table.after(away_me, away_them, cube)
    lose1 = table.after(away_me, away_them, -cube)
    spread = win1 - lose1
    if spread <= 0:
        return 0.0, 0.0
    win2 = table.after(away_me, away_them, 2 * cube)
    lose2 = table.after(away_me, away_them, -2 * cube)
    return (win2 - win1) / spread, (lose1 - lose2) / spread
