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

:func:`kazaross_xg2` is the table the engine uses by default: the published
Kazaross-XG2 table (25 x 25, GNU Backgammon's ``met/Kazaross-XG2.xml``, carried in
``engine/cube/data/met_kazaross_xg2.json`` with its source named).
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


def default_table() -> MatchEquityTable:
    """The table the engine uses unless told otherwise (Kazaross-XG2)."""
    return kazaross_xg2()


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
