"""``python -m engine.review``: a match file analysed, decision by decision, as GNU
Backgammon's ``analyse match`` does: every play and every cube decision of both players
rated by the engine, what each cost against the engine's choice, and each player's
totals.

Reads a backgammon match or money session in the Jellyfish ``.mat`` format
(:mod:`engine.notation.matfile`; GNU Backgammon writes it with ``export match mat``, and
eXtreme Gammon and most servers too) or GNU Backgammon's own SGF (``.sgf``, its ``save
match``; :mod:`engine.notation.sgf`), told apart by their text, replays it, and rates:

- each play of a roll: every legal play searched at ``--ply`` (0..3; 0, the network,
  by default) and ranked as the engine ranks them there: by cubeful equity at the cube
  and score of the game (money play, or a match the match equity table covers:
  :func:`engine.cli._decide.rank_cubefully`), by cubeless equity beyond the table. The
  play made costs its value's shortfall from the best. A play a move filter cut (at
  ``--ply`` 1 and more; ``--filters`` sets them, as ``python -m engine.analyse`` takes
  them) is rated at the full depth on its own. A roll with one legal
  play is forced and not counted.
- each cube decision: before every roll of a player who could double (not the opening
  roll, not the Crawford game, not the opponent's cube, not a cube at its limit, not a
  roll left unplayed), and each answer to a double: the cube analysis of the position
  (Janowski, the equities on the cube's normalised scale;
  :func:`engine.cli._decide.cube_advice`). A double costs the shortfall of the double's
  value (the opponent answering his best: take, pass or beaver) from the better of
  doubling and not doubling; not doubling the shortfall of not doubling; an answer what
  it gives the doubler above the answer best for the taker.

Marks, on a decision's cost in normalised equity (the thresholds of GNU Backgammon
1.07's analysis, ``show analysis``): ``?!`` doubtful above 0.03, ``?`` bad above 0.06,
``??`` very bad above 0.12. Totals for each player: the plays not forced and their total
and mean cost (the mean in thousandths, as ``mEMG`` per play), the cube decisions and
theirs, the marks, and the luck of their rolls: the value of each roll's best play
less the mean of that over the 21 rolls, at 0-ply, as GNU Backgammon measures luck
(cubeful where the cube is in play, on the normalised scale of the roller's cube; a
game's opening roll against the 30 opening rolls either player may get, as GNU
Backgammon's ``LuckFirst``, an opening double against the 21). Then GNU Backgammon's
statistics of each player (``show statistics match``): the plays marked (cube decisions
apart), the doubles, takes and passes, and the cube decisions that cost something by
their kind (:data:`CUBE_ERRORS`: missed doubles below and above the cash point, wrong
doubles below the double point and above the too-good point, wrong takes, wrong
passes); the error rates of the chequer play (a play not forced),
the cube decisions (a *close or actual* one: every double and answer, and each chance
to double where doubling is less than 0.16 below the proper action) and both, each with
GNU Backgammon 1.07's rating (Supernatural below 2 mEMG a decision, World class below
5, Expert 8, Advanced 12, Intermediate 18, Casual player 26, Beginner 35, else Awful!);
the luck a roll with its rating (Go to Las Vegas above +60 mEMG, Good dice, man! above
+30, Bad dice, man! below -30, Go to bed below -60), and each roll's luck mark (very
lucky above +0.6, lucky above +0.3, unlucky below -0.3, very unlucky below -0.6).
Beside them, as GNU Backgammon gives them in brackets, the same costs and luck in
match winning chance (a match: a normalised cost ``c`` at a score and cube loses ``c``
times half the chance between winning and losing the cube's value there, its
``eq2mwc``) or in points (money play: ``c`` times the cube); the Snowie error rate (a
player's cost in thousandths over every play of both players, forced ones included);
the actual result (in a match the match winning chance each game's result moved, a
finished match +-50%; in money play the points) and the luck-adjusted result (the
actual result less the player's luck plus his opponent's, GNU Backgammon's
variance-reduced result).
``--json`` prints the whole review as one JSON object (its ``ply`` and ``filters``, the
root filters the search used as ``--filters`` writes them, say how it was searched);
``--all`` lists every decision, not only those that cost something.

Money play: the file's ``; [Jacoby "On"]`` / ``"Off"`` header line, else
``--jacoby`` (on) / ``--no-jacoby``; beavers by its ``; [Beaver ...]`` line, else
``--beavers`` / ``--no-beavers``, else on where the file holds a beaver (GNU Backgammon
writes no such header); a ``; [CubeLimit "1"]`` line makes the session cubeless. A
chance to double where no double is possible (a dead cube: one that already gives its
owner the match) is not counted, but a double made with it, and the answer to it, are;
a raccoon is not rated.

Where GNU Backgammon 1.07's statistics count otherwise, on purpose: a beaver is its
player's answer to the double, counted as a take (a wrong one where passing or taking
was better), and the doubler's pass of a beaver is not rated (GNU Backgammon rates no
beaver, counts the pass of one as a pass and the take of a raccoon as a take, both by
the first double's equities); a double still on offer where the file ends is rated
(GNU Backgammon analyses a double only with its answer).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np

from engine.cli._common import integer, parse_args, run, thread_count
from engine.cli._decide import (
    answer,
    cube_advice,
    cubeful,
    rank_cubefully,
    search_for,
)
from engine.cube.decision import ROLLS, TIE, CubeState, cubeless_equity, normalised
from engine.cube.met import default_table
from engine.errors import NardyError
from engine.notation.matfile import Decision, MatchRecord, crawford_games, replay
from engine.notation.sgf import read_match
from engine.notation.xgid import XgidInfo, format_xgid
from engine.rules.position import Position
from engine.rules.scoring import flip_probs
from engine.search.bearoff_cube import cubeful_play_value, cubeful_play_values_of_rows
from engine.search.nply import (
    DEFAULT_FILTERS,
    Search,
    SearchError,
    format_filters,
    parse_filters,
)

MARKS = ((0.12, "??", "very bad"), (0.06, "?", "bad"), (0.03, "?!", "doubtful"))
"""A decision's mark by its cost in normalised equity: the first threshold it passes
(GNU Backgammon's test is strict: a cost of exactly 0.06 is doubtful)."""
TINY = 5e-4
"""A cost below this is none (two plays that differ only in rounding)."""
LUCK_LEVELS = (0.6, 0.3)
"""GNU Backgammon's luck levels: a roll's luck above 0.6 is very lucky, above 0.3 lucky,
below -0.3 unlucky, below -0.6 very unlucky (:func:`luck_level`)."""
LUCK_MARKS = ("very lucky", "lucky", "unlucky", "very unlucky")
"""A roll's luck mark, by its level."""
LUCK_RATINGS = ("Go to Las Vegas", "Good dice, man!", "Bad dice, man!", "Go to bed")
"""A player's luck rating by the level of ten times his luck a roll (GNU Backgammon's
``getLuckRating``: above 0.06 a roll Go to Las Vegas, above 0.03 Good dice, man!,
below -0.03 Bad dice, man!, below -0.06 Go to bed, else None)."""
CLOSE = 0.16
"""A chance to double is *close* when doubling (the double/take equity, at most 1) is
less than this below the proper action (GNU Backgammon's ``isCloseCubedecision``): the
cube decisions an error rate is taken over are these and every actual double and
answer."""
CUBE_ERRORS = ("missed doubles below CP", "missed doubles above CP", "wrong doubles below DP",
               "wrong doubles above TG", "wrong takes", "wrong passes")
"""GNU Backgammon's kinds of a cube decision that cost something (``show statistics``):
a chance to double not taken when doubling was better, below the cash point (the
double/take equity at most 1) or above it; a double when not doubling was better, below
the double point or above the too-good point (the no-double equity above 1); a take
(or a beaver) where passing was better, or where beavering was; a pass where taking was
better. Their costs add up to the cube decisions' cost."""
RATINGS = ((0.002, "Supernatural"), (0.005, "World class"), (0.008, "Expert"),
           (0.012, "Advanced"), (0.018, "Intermediate"), (0.026, "Casual player"),
           (0.035, "Beginner"))
"""GNU Backgammon 1.07's ratings by error rate (normalised equity a decision): the first
threshold the rate is below; ``Awful!`` above them all."""


def luck_level(luck: float) -> int | None:
    """GNU Backgammon's ``Luck``: 0 above 0.6, 1 above 0.3, 2 below -0.3, 3 below -0.6
    (:data:`LUCK_LEVELS`), None between."""
    very, some = LUCK_LEVELS
    if luck > very:
        return 0
    if luck > some:
        return 1
    if luck < -very:
        return 3
    if luck < -some:
        return 2
    return None


def rating(rate: float) -> str:
    """GNU Backgammon's rating of an error rate (:data:`RATINGS`)."""
    return next((word for limit, word in RATINGS if rate < limit), "Awful!")


def luck_rating(rate: float) -> str:
    """GNU Backgammon's luck rating of the luck a roll (:data:`LUCK_RATINGS`)."""
    level = luck_level(10 * rate)
    return "None" if level is None else LUCK_RATINGS[level]


@dataclass(frozen=True)
class Assessment:
    """One decision rated."""

    decision: Decision
    cost: float
    """What the decision lost against the engine's choice, in equity on the cube's
    normalised scale (0 for the engine's choice)."""
    chosen: str
    """The decision as made: a play's text, or ``double``, ``no double``, ``take``,
    ``pass``, ``beaver``."""
    best: str
    """The engine's choice, in the same words."""
    value: float
    """The decision's value for its player (normalised equity; the doubler's for an
    answer is negated to be the taker's)."""
    best_value: float
    forced: bool = False
    """A roll with one legal play."""
    ply: int = 0
    luck: float | None = None
    """A roll's luck for its player (:func:`roll_luck`; a game's opening roll against
    the 30 opening rolls); None for a cube decision."""
    close: bool = False
    """A cube decision an error rate counts: a close chance to double (:data:`CLOSE`),
    a double, an answer."""
    error: str = ""
    """A cube decision's kind of error (:data:`CUBE_ERRORS`), empty where it cost
    nothing and for a play."""

    @property
    def mark(self) -> str:
        for limit, mark, _ in MARKS:
            if self.cost > limit:
                return mark
        return ""

    @property
    def luck_mark(self) -> str:
        """``very lucky``, ``lucky``, ``unlucky``, ``very unlucky`` (:data:`LUCK_MARKS`)
        or empty."""
        level = None if self.luck is None else luck_level(self.luck)
        return "" if level is None else LUCK_MARKS[level]

    xgid: str = ""
    """The decision's position as an XGID, with its cube, score and dice (an answer's:
    the doubler's position with the double on offer), for ``engine.analyse`` or
    ``engine.cube_cli`` and other programs."""
    scale: float | None = None
    """What one unit of the decision's normalised equity is worth (:func:`scale`): in
    a match, match winning chance; in money play, points. None where the costs are
    cubeless equities (a match beyond the match equity table)."""

    @property
    def unnormalised(self) -> tuple[float, float | None] | None:
        """``(cost, luck)`` on the :attr:`scale`: match winning chance in a match,
        points in money play (None without a scale), as GNU Backgammon's statistics
        give them beside the normalised figures."""
        if self.scale is None:
            return None
        return (self.cost * self.scale,
                None if self.luck is None else self.luck * self.scale)

    def to_json(self) -> dict:
        d = self.decision
        out = {"game": d.game, "player": d.player, "kind": d.kind, "line": d.line,
               "move_number": d.number,
               "position": d.position.to_json(), "xgid": self.xgid,
               "chosen": self.chosen, "best": self.best,
               "cost": round(self.cost, 6), "value": round(self.value, 6),
               "best_value": round(self.best_value, 6), "mark": self.mark,
               "cube": {"value": d.cube_value,
                        "owner": d.cube_owner},
               "ply": self.ply,
               "scale": None if self.scale is None else round(self.scale, 6)}
        if d.kind == "play":
            out["dice"] = list(d.dice or ())
            out["forced"] = self.forced
            out["luck"] = None if self.luck is None else round(self.luck, 6)
            out["luck_mark"] = self.luck_mark
        else:
            out["close"] = self.close
            out["error"] = self.error
        return out


@dataclass
class Totals:
    """One player's totals. The ``*_u`` figures are the same costs and luck on each
    decision's :attr:`Assessment.scale` (match winning chance in a match, points in
    money play), as GNU Backgammon's statistics give them in brackets; None once a
    decision has no scale (a match beyond the match equity table)."""

    plays: int = 0
    """Plays not forced."""
    play_cost: float = 0.0
    cube: int = 0
    """Cube decisions: chances to double and answers to doubles."""
    cube_cost: float = 0.0
    marks: dict = field(default_factory=lambda: {m: 0 for _, m, _ in MARKS})
    close: int = 0
    """Close or actual cube decisions (:attr:`Assessment.close`)."""
    rolls: int = 0
    """Rolls whose luck was measured (every roll)."""
    luck: float = 0.0
    """Their luck, summed."""
    luck_marks: dict = field(default_factory=lambda: {m: 0 for m in LUCK_MARKS})
    moves: int = 0
    """Every play rated, forced ones included (the Snowie error rate's count)."""
    play_cost_u: float | None = 0.0
    cube_cost_u: float | None = 0.0
    luck_u: float | None = 0.0
    play_marks: dict = field(default_factory=lambda: {m: 0 for _, m, _ in MARKS})
    """The plays' marks alone (GNU Backgammon's moves marked doubtful, bad, very bad)."""
    doubles: int = 0
    takes: int = 0
    """Doubles taken, beavers included (GNU Backgammon counts no beaver)."""
    passes: int = 0
    cube_errors: dict = field(default_factory=lambda: {k: [0, 0.0, 0.0]
                                                       for k in CUBE_ERRORS})
    """``[count, cost, cost on the scale]`` of each kind of cube error
    (:data:`CUBE_ERRORS`); the last None without a scale."""

    def add(self, a: Assessment) -> None:
        scaled = a.unnormalised
        if scaled is None:
            self.play_cost_u = self.cube_cost_u = self.luck_u = None
            for entry in self.cube_errors.values():
                entry[2] = None
        if a.luck is not None:
            self.rolls += 1
            self.luck += a.luck
            if self.luck_u is not None and scaled is not None and scaled[1] is not None:
                self.luck_u += scaled[1]
            if a.luck_mark:
                self.luck_marks[a.luck_mark] += 1
        if a.decision.kind == "play":
            self.moves += 1
            if a.forced:
                return
            self.plays += 1
            self.play_cost += a.cost
            if self.play_cost_u is not None and scaled is not None:
                self.play_cost_u += scaled[0]
            if a.mark:
                self.play_marks[a.mark] += 1
        else:
            self.cube += 1
            self.cube_cost += a.cost
            self.close += a.close
            if self.cube_cost_u is not None and scaled is not None:
                self.cube_cost_u += scaled[0]
            action = a.decision.action
            self.doubles += action == "double"
            self.takes += action in ("take", "beaver")
            self.passes += action == "drop"
            if a.error:
                entry = self.cube_errors[a.error]
                entry[0] += 1
                entry[1] += a.cost
                if entry[2] is not None and scaled is not None:
                    entry[2] += scaled[0]
        if a.mark:
            self.marks[a.mark] += 1

    @property
    def play_rate(self) -> float:
        """Mean cost of a play not forced, in thousandths (mEMG)."""
        return 1000.0 * self.play_cost / self.plays if self.plays else 0.0

    @property
    def cube_rate(self) -> float:
        """Mean cost of a close or actual cube decision, in thousandths (mEMG)."""
        return 1000.0 * self.cube_cost / self.close if self.close else 0.0

    @property
    def rate(self) -> float:
        """Mean cost of the plays not forced and the close or actual cube decisions
        together, in thousandths (mEMG): GNU Backgammon's overall error rate."""
        n = self.plays + self.close
        return 1000.0 * (self.play_cost + self.cube_cost) / n if n else 0.0

    @property
    def luck_rate(self) -> float:
        """Luck a roll, in thousandths (mEMG)."""
        return 1000.0 * self.luck / self.rolls if self.rolls else 0.0

    @property
    def cost_u(self) -> float | None:
        """The plays' and cube decisions' cost together on the decisions' scale (match
        winning chance, or points), None without one."""
        if self.play_cost_u is None or self.cube_cost_u is None:
            return None
        return self.play_cost_u + self.cube_cost_u

    def rates_u(self) -> dict:
        """The error rates on the decisions' scale, each over the decisions its
        normalised rate is taken over (GNU Backgammon's bracketed rates: a match
        winning chance, or points, a decision), and the luck a roll; None without a
        scale or a decision."""
        def per(x: float | None, n: int) -> float | None:
            return None if x is None or not n else x / n
        return {"chequerplay": per(self.play_cost_u, self.plays),
                "cube": per(self.cube_cost_u, self.close),
                "overall": per(self.cost_u, self.plays + self.close),
                "luck": per(self.luck_u, self.rolls)}

    def ratings(self) -> dict:
        """GNU Backgammon's ratings of the chequer play, the cube decisions and both
        (None where there is nothing to rate), and of the luck."""
        return {"chequerplay": rating(self.play_rate / 1000) if self.plays else None,
                "cube": rating(self.cube_rate / 1000) if self.close else None,
                "overall": rating(self.rate / 1000) if self.plays + self.close else None,
                "luck": luck_rating(self.luck_rate / 1000) if self.rolls else None}

    def to_json(self) -> dict:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 6)
        return {"plays": self.plays, "play_cost": round(self.play_cost, 6),
                "play_rate_memg": round(self.play_rate, 3), "cube_decisions": self.cube,
                "close_cube_decisions": self.close, "cube_cost": round(self.cube_cost, 6),
                "cube_rate_memg": round(self.cube_rate, 3),
                "total_cost": round(self.play_cost + self.cube_cost, 6),
                "rate_memg": round(self.rate, 3), "marks": dict(self.marks),
                "rolls": self.rolls, "luck": round(self.luck, 6),
                "luck_rate_memg": round(self.luck_rate, 3),
                "luck_marks": dict(self.luck_marks), "ratings": self.ratings(),
                "moves": self.moves, "play_cost_u": r(self.play_cost_u),
                "cube_cost_u": r(self.cube_cost_u), "total_cost_u": r(self.cost_u),
                "luck_u": r(self.luck_u),
                "rates_u": {k: r(v) for k, v in self.rates_u().items()},
                "play_marks": dict(self.play_marks), "doubles": self.doubles,
                "takes": self.takes, "passes": self.passes,
                "cube_errors": {k: {"count": n, "cost": r(c), "cost_u": r(u)}
                                for k, (n, c, u) in self.cube_errors.items()}}


class Reviewer:
    """Rates the decisions of one match file with one search."""

    def __init__(self, record: MatchRecord, search: Search, ply: int = 0,
                 jacoby: bool = True, beavers: bool | None = None):
        self.record = record
        self.search = search
        self.ply = ply
        self.jacoby = record.flag("Jacoby", jacoby)
        # GNU Backgammon writes no Beaver header: a beaver in the file says they were on
        beavered = any(a.kind == "beaver" for g in record.games for a in g.actions)
        self.beavers = record.flag("Beaver", beavered if beavers is None else beavers)
        self.limit = record.cube_limit()

    def state(self, d: Decision, player: int) -> CubeState:
        """The cube and score of decision ``d`` seen from ``player``."""
        owner = ("centre" if d.cube_owner is None else "me" if d.cube_owner == player
                 else "them")
        top = self.limit if self.limit is None or self.limit >= d.cube_value else None
        if self.record.length:
            return CubeState(d.cube_value, owner, self.record.length,
                             (d.score[player], d.score[1 - player]), d.crawford, False,
                             False, top)
        return CubeState(d.cube_value, owner, 0, (0, 0), False, self.jacoby, self.beavers,
                         top)

    def assess(self, d: Decision) -> Assessment | None:
        """``d`` rated, or None for a chance to double where no double is possible
        (a dead cube, e.g. one that already gives its owner the match)."""
        a = self._play(d) if d.kind == "play" else self._cube(d)
        return None if a is None else replace(a, xgid=self.xgid(d), scale=self.scale(d))

    def scale(self, d: Decision) -> float | None:
        """:attr:`Assessment.scale` of ``d``: in a match, half the match winning chance
        between winning and losing the cube's value at the decision's score (GNU
        Backgammon's ``eq2mwc``: a cost ``c`` in normalised equity loses ``c`` times
        it); in money play, the cube's value (a normalised equity times it is points).
        None for a match beyond the match equity table, whose costs are cubeless."""
        st = self.state(d, d.player)
        if st.money:
            return float(st.value)
        if not cubeful(st, "backgammon"):
            return None
        a, b = st.away
        table = default_table()
        return (table.after(a, b, st.value) - table.after(a, b, -st.value)) / 2.0

    def xgid(self, d: Decision) -> str:
        """:attr:`Assessment.xgid` of ``d`` (empty where the notation cannot hold it)."""
        side = d.player if d.kind != "answer" else 1 - d.player
        st = self.state(d, side)
        try:
            info = XgidInfo(st.value, st.owner, d.dice if d.kind == "play" else None,
                            "double" if d.kind == "answer" else None, st.score,
                            st.match_length, st.crawford, st.jacoby, st.beavers,
                            st.max_value or 1024)
            return format_xgid(d.position, info)
        except NardyError:
            return ""

    def _value(self, probs, after, state: CubeState) -> float:
        if cubeful(state, "backgammon"):
            return cubeful_play_value(probs, after, state)[0]
        return cubeless_equity(np.asarray(probs, np.float64))

    def _play(self, d: Decision) -> Assessment:
        assert d.after is not None and d.dice is not None
        state = self.state(d, d.player)
        if cubeful(state, "backgammon"):
            analysis = rank_cubefully(self.search, d.position, d.dice, self.ply, state,
                                      top=1, also=d.after)
        else:
            analysis = self.search.analyse(d.position, d.dice, self.ply, top=1, also=d.after)

        def value(c) -> float:
            return c.cubeful_equity if c.cubeful_equity is not None else c.equity

        best = analysis.best
        played = analysis.candidates[-1]
        if played.position.key() != d.after.key():
            raise NardyError(f"line {d.line}: the play made is not among the "
                             f"{analysis.plays} legal plays the search rated")
        b, v = value(best), value(played)
        if played.ply < best.ply:
            # cut by a move filter: rated at the full depth on its own (as the search
            # rates a play: its position evaluated before the opponent's roll)
            probs = flip_probs(np.asarray(
                self.search.evaluate(d.after, self.ply).probabilities, np.float64)[None])[0]
            v = self._value(probs, d.after, state)
        # a non-double at the start is measured against the 30 opening rolls, any other
        # roll (a double at the start too) against the 21, as GNU Backgammon's LuckAnalysis
        opening = d.dice[0] != d.dice[1] and d.position == Position.start()
        luck = roll_luck(self.search, d.position, d.dice, opening,
                         state if cubeful(state, "backgammon") else None)
        return Assessment(d, max(0.0, b - v), played.move, best.move, v, b,
                          forced=analysis.plays == 1, ply=self.ply, luck=luck)

    def _cube(self, d: Decision) -> Assessment | None:
        doubler = d.player if d.kind == "cube" else 1 - d.player
        state = self.state(d, doubler)
        decision = cube_advice(self.search, d.position, state, self.ply)
        nd = decision.no_double
        dt, dp = decision.double_take, decision.double_pass
        if dt is None or dp is None:
            # no useful double (a dead cube: one that already gives its owner the
            # match): a chance to double is no decision, but a double made all the
            # same, and the answer to it, are (a pass there loses the match)
            if d.kind == "cube" and d.action == "no_double":
                return None
            made = answer(self.search, d.position, state, self.ply)
            dt, dp = made.double_take, made.double_pass
        answers = {"take": dt, "drop": dp}
        if state.money and state.beavers:
            answers["beaver"] = 2.0 * dt
        best_answer = min(answers, key=lambda k: answers[k])
        doubled = answers[best_answer]
        if d.kind == "cube":
            best_value = max(nd, doubled)
            best = "double" if doubled >= nd else "no_double"   # a tie: double/pass
            v = doubled if d.action == "double" else nd
            close = d.action == "double" or bool(best_value - min(dt, 1.0) < CLOSE)
            cost = best_value - v
            if cost <= TIE:         # equal but for rounding (a last roll's cash): no error
                cost, best = 0.0, d.action
            error = ""                  # GNU Backgammon's kind of error (CUBE_ERRORS)
            if cost and d.action == "double":       # above TG: no double beats the pass
                error = "wrong doubles above TG" if nd > 1.0 else "wrong doubles below DP"
            elif cost:                              # above CP: double/take beats the pass
                error = "missed doubles above CP" if dt > 1.0 else "missed doubles below CP"
            return Assessment(d, cost, _words(d.action), _words(best), v, best_value,
                              ply=self.ply, close=close, error=error)
        # an answer: the taker's value is minus the doubler's
        v = answers.get(d.action)
        if v is None:
            raise NardyError(f"line {d.line}: a beaver where beavers are not allowed "
                             f"(the file's ; [Beaver \"Off\"] header, or --no-beavers)")
        cost = v - doubled
        if cost <= TIE:             # equal but for rounding: the answer given is as good
            cost, best_answer = 0.0, d.action
        error = "" if not cost else "wrong passes" if d.action == "drop" else "wrong takes"
        return Assessment(d, cost, _words(d.action), _words(best_answer), -v, -doubled,
                          ply=self.ply, close=True, error=error)


def _roll_values(search: Search, position: Position, state: CubeState | None) -> list:
    """``[(weight, value, probabilities, after), ...]`` over the 21 rolls
    (:data:`engine.cube.decision.ROLLS`) of the side on roll: each roll's best play at
    0-ply, its value and chances and the position after it. The value is the cubeless
    equity, or with ``state`` the cubeful value
    (:func:`engine.search.bearoff_cube.cubeful_play_value`) of the play best by it among all of the
    roll's plays, as GNU Backgammon picks a roll's play for its luck (every play rated
    cubefully at 0-ply) and as :func:`engine.cli._decide.rank_cubefully` ranks them.
    (The best four by cubeless money equity missed the cubeful best where the score
    makes gammons worth less than money play counts them: at double match point one
    roll in sixty, its luck off by up to 0.05, in the Crawford game by up to 0.09.)"""
    from engine.movegen.generate import successor_arrays
    from engine.rules.scoring import equities
    blocks = [successor_arrays(position, d) for d in ROLLS]
    rows = np.concatenate(blocks)
    mine = flip_probs(np.asarray(search.values_of(rows, 0), np.float64))
    if state is None:
        values = equities(mine)
    else:                               # every play of every roll, in one call
        values = cubeful_play_values_of_rows(mine, rows, state)[0]
    out, k = [], 0
    for (d1, d2), block in zip(ROLLS, blocks):
        i = k + int(np.argmax(values[k:k + len(block)]))       # the first best
        out.append(((1 if d1 == d2 else 2) / 36.0, float(values[i]), mine[i],
                    Position.from_array(rows[i], position.variant)))
        k += len(block)
    return out


def roll_luck(search: Search, position: Position, dice, opening: bool = False,
              state: CubeState | None = None) -> float:
    """The luck of rolling ``dice`` in ``position`` for the side on roll, as GNU
    Backgammon measures luck: the value of the roll's best play (at 0-ply) less the
    mean of that over the 21 rolls. Positive: a good roll. With ``state`` (the cube and
    score seen from the side on roll, where the cube is in play:
    :func:`engine.cli._decide.cubeful`) a play's value is cubeful, on the normalised
    scale of the side's cube (:func:`engine.search.bearoff_cube.cubeful_play_value`, the opponent then
    taking his proper cube action; :func:`_roll_values`), as GNU Backgammon's; without
    it, its cubeless equity.

    The ``opening`` roll of a game (``position`` the start, ``dice`` not a double) is
    measured against the 30 opening rolls instead, each of the 15 non-doubles falling
    to either player (GNU Backgammon's ``LuckFirst``): a roll falling to the opponent
    is worth to us what his best play leaves us. Cubeless, or at an even money cube,
    that is minus his value of it, so the mean is nil and the luck is the roll's own
    value; at an uneven match score it is not."""
    rolls = _roll_values(search, position, state)
    mine = rolls[ROLLS.index((max(dice), min(dice)))][1]
    if not opening:
        return mine - sum(w * v for w, v, _, _ in rolls)
    if state is None:
        return mine                     # the opponent's value of each roll is minus ours
    his = state.flip()
    firsts = [v for (d1, d2), (_, v, _, _) in zip(ROLLS, rolls) if d1 != d2]
    total = sum(firsts)
    # the start is the same from either side: his plays are picked as ours, seen from him
    for (d1, d2), (_, _, p, after) in zip(ROLLS, _roll_values(search, position, his)):
        if d1 != d2:
            eq_his, m_his = cubeful_play_value(p, after, his)
            total += -eq_his if m_his is None else normalised(1.0 - m_his, state)
    return mine - total / (2 * len(firsts))


def _words(action: str) -> str:
    return {"no_double": "no double", "drop": "pass"}.get(action, action)


def review(record: MatchRecord, search: Search, ply: int = 0, jacoby: bool = True,
           progress: bool = False, beavers: bool | None = None) -> list[Assessment]:
    """Every decision of ``record`` rated (:class:`Reviewer`), in order; chances to
    double where no double is possible are left out."""
    reviewer = Reviewer(record, search, ply, jacoby, beavers)
    decisions = list(replay(record))
    items: Iterable = decisions
    if progress:
        from tqdm import tqdm
        items = tqdm(decisions, desc="decisions", unit="", file=sys.stderr, leave=False)
    return [a for a in (reviewer.assess(d) for d in items) if a is not None]


def totals(record: MatchRecord, assessed: Sequence[Assessment]) -> list[Totals]:
    """Each player's :class:`Totals`."""
    out = [Totals(), Totals()]
    for a in assessed:
        out[a.decision.player].add(a)
    return out


def actual_results(record: MatchRecord) -> tuple[float, float]:
    """Each player's actual result, as GNU Backgammon's statistics give it: in a match,
    the match winning chance each game's result gave him (the winner's chance after
    winning its points less his chance at the score it was played at, by the match
    equity table; the loser the opposite), summed over the games, so that a finished
    match is +0.5 and -0.5; in money play, the points won. A game the file leaves
    unfinished gives nothing. A match beyond the match equity table has none: the
    result is given as points then too."""
    out = [0.0, 0.0]
    table = default_table()
    crawford = crawford_games(record)
    by_mwc = record.length and record.length <= table.length
    for g in record.games:
        w = g.winner
        if w is None or not g.points:
            continue
        if by_mwc:
            a, b = (record.length - g.score[w], record.length - g.score[1 - w])
            if a <= 0 or b <= 0:
                continue
            post = min(a, b) == 1 and g.number not in crawford
            gain = table.after(a, b, g.points) - table.mwc(a, b, post)
        else:
            gain = float(g.points)
        out[w] += gain
        out[1 - w] -= gain
    return out[0], out[1]


def luck_adjusted(record: MatchRecord, every_total: Sequence[Totals]) -> tuple | None:
    """Each player's luck-adjusted result, GNU Backgammon's: his actual result
    (:func:`actual_results`) less his luck plus his opponent's, on the decisions'
    scale (match winning chance, or points); None where a decision had no scale."""
    lucks = [t.luck_u for t in every_total]
    if lucks[0] is None or lucks[1] is None:
        return None
    actual = actual_results(record)
    return (actual[0] - lucks[0] + lucks[1], actual[1] - lucks[1] + lucks[0])


def snowie_rate(t: Totals, every_total: Sequence[Totals]) -> float | None:
    """GNU Backgammon's "Snowie error rate" of a player: his plays' and cube
    decisions' cost, in thousandths, over every play both players made, forced ones
    included; None without a play."""
    n = sum(x.moves for x in every_total)
    return 1000.0 * (t.play_cost + t.cube_cost) / n if n else None


def format_review(record: MatchRecord, assessed: Sequence[Assessment], ply: int,
                  every: bool = False) -> str:
    """The review as text: the decisions that cost something (``every``: all), then
    each player's totals."""
    names = record.players
    kind = (f"{record.length}-point match" if record.length else "money session")
    lines = [f"{names[0]} v {names[1]}, {kind}, {len(record.games)} game(s); "
             f"rated at {ply}-ply; cost in equity on the cube's normalised scale"]
    game = None
    for a in assessed:
        d = a.decision
        if not every and a.cost < TINY:
            continue
        if d.game != game:
            game = d.game
            g = next(g for g in record.games if g.number == game)
            lines.append(f"Game {game} ({names[0]} {g.score[0]}, {names[1]} {g.score[1]}"
                         f"{', the Crawford game' if d.crawford else ''})")
        who = names[d.player]
        what = (f"{d.dice[0]}{d.dice[1]}: {a.chosen}" if d.kind == "play" and d.dice
                else a.chosen)
        where = f"move {d.number:>3}" if d.number else f"line {d.line:>3}"
        if a.forced:
            lines.append(f"  {where}  {who}: {what} (forced)")
            continue
        cost = f"-{a.cost:.3f} {a.mark}".rstrip() if a.cost >= TINY else "best"
        better = f"; best {a.best}" if a.cost >= TINY else ""
        lines.append(f"  {where}  {who}: {what}  {cost}{better}  {a.xgid}".rstrip())
    lines.append("")
    width = max(len(n) for n in names)
    lines.append(f"{'':<{width}}  {'plays':>5}  {'cost':>7}  {'mEMG/play':>9}  "
                 f"{'cube':>4}  {'cost':>7}  " + "  ".join(f"{m:>4}" for _, m, _ in MARKS)
                 + f"  {'luck':>7}")
    every_total = totals(record, assessed)
    for name, t in zip(names, every_total):
        marks = "  ".join(f"{t.marks[m]:>4}" for _, m, _ in MARKS)
        lines.append(f"{name:<{width}}  {t.plays:>5}  {t.play_cost:7.3f}  {t.play_rate:9.1f}"
                     f"  {t.cube:>4}  {t.cube_cost:7.3f}  {marks}  {t.luck:+7.3f}")
    lines.append("")
    lines.append("GNU Backgammon's statistics (error rates in mEMG, over the plays not "
                 "forced and the close or actual cube decisions):")
    for name, t in zip(names, every_total):
        r = t.ratings()
        lucky = ", ".join(f"{n} {m}" for m, n in t.luck_marks.items() if n)
        lines.append(f"  {name}: chequer play {t.play_rate:.1f} ({r['chequerplay'] or 'n/a'}),"
                     f" cube {t.cube_rate:.1f} over {t.close} ({r['cube'] or 'n/a'}), "
                     f"overall {t.rate:.1f} ({r['overall'] or 'n/a'}); luck "
                     f"{t.luck_rate:+.1f} a roll ({r['luck'] or 'n/a'})"
                     + (f"; rolls {lucky}" if lucky else ""))
        marked = ", ".join(f"{m} {n}" for m, n in t.play_marks.items() if n) or "none"
        errors = "".join(f", {k} {n} (-{c:.3f})" for k, (n, c, _) in t.cube_errors.items()
                         if n)
        lines.append(f"  {name}: plays marked {marked}; cube decisions {t.cube}: doubles "
                     f"{t.doubles}, takes {t.takes}, passes {t.passes}{errors}")
    match = bool(record.length) and record.length <= default_table().length
    unit = "MWC" if match else "points"

    def figure(x: float | None, rate: bool = False) -> str:
        if x is None:
            return "n/a"
        return f"{100 * x:+.{3 if rate else 2}f}%" if match else f"{x:+.{4 if rate else 3}f}"

    def error(x: float | None, rate: bool = True) -> str:
        return figure(None if x is None else -x, rate)     # errors shown negative

    adjusted = luck_adjusted(record, every_total)
    actual = actual_results(record)
    lines.append(f"The same in {unit} ({'match winning chance' if match else 'points'}; "
                 f"errors negative), the Snowie error rate (over both players' plays), "
                 f"the result:")
    for i, (name, t) in enumerate(zip(names, every_total)):
        u = t.rates_u()
        cost = t.cost_u
        snowie = snowie_rate(t, every_total)
        lines.append(
            f"  {name}: chequer play {error(u['chequerplay'])} a play,"
            f" cube {error(u['cube'])} a decision, overall {error(u['overall'])}"
            f" ({error(cost, False)} in all); luck "
            f"{figure(t.luck_u)}; Snowie error rate "
            f"{'n/a' if snowie is None else f'{-snowie:.1f}'}; actual result "
            f"{figure(actual[i])}, luck adjusted "
            f"{figure(None if adjusted is None else adjusted[i])}")
    return "\n".join(lines)


def to_json(record: MatchRecord, assessed: Sequence[Assessment], ply: int,
            filters: tuple | None = None) -> dict:
    """The review as JSON: ``ply`` and ``filters`` (the root filters the search used,
    as ``--filters`` takes them: the defaults when ``filters`` is None) say how deep."""
    used = DEFAULT_FILTERS[ply] if filters is None else filters
    every_total = totals(record, assessed)
    every = [t.to_json() for t in every_total]
    unit = "mwc" if record.length and record.length <= default_table().length else "points"
    adjusted = luck_adjusted(record, every_total)
    return {"length": record.length, "players": list(record.players),
            "games": len(record.games), "ply": ply, "filters": format_filters(used),
            "decisions": [a.to_json() for a in assessed],
            "totals": every, "unit": unit,
            "snowie_rate_memg": [None if x is None else round(x, 3) for x in
                                 (snowie_rate(t, every_total) for t in every_total)],
            "actual_result": [round(x, 6) for x in actual_results(record)],
            "luck_adjusted_result": (None if adjusted is None
                                     else [round(x, 6) for x in adjusted])}


def main(argv: Sequence[str] | None = None) -> int:
    from engine.search import precompile
    precompile.allow()
    ap = argparse.ArgumentParser(prog="python -m engine.review",
                                 description="Analyse a backgammon match file (.mat or "
                                             "GNU Backgammon's .sgf): "
                                             "every play and cube decision rated.",
                                 epilog="Costs are in equity on the cube's normalised "
                                        "scale; marks ?! above 0.03, ? above 0.06, ?? "
                                        "above 0.12 (GNU Backgammon 1.07's thresholds). "
                                        "Luck: the value of each roll's best play (cubeful "
                                        "where the cube is in play) less the 21 rolls' "
                                        "mean, at 0-ply; positive is good dice.")
    ap.add_argument("file", help="the match file: Jellyfish .mat (GNU Backgammon's "
                                 "'export match mat', XG, servers) or GNU Backgammon's "
                                 "own .sgf ('save match')")
    ap.add_argument("--ply", type=integer, default=0, help="search depth 0..3 (default 0)")
    ap.add_argument("--filters", default=None, metavar="K/W,...",
                    help="the search's move filters, one level for each ply below --ply, "
                         "as python -m engine.analyse takes them (default at 2-ply "
                         "8/0.16,4/0.12; 8/0.16,- is GNU Backgammon's normal filter)")
    ap.add_argument("--json", action="store_true", help="print the review as JSON")
    ap.add_argument("--all", action="store_true", help="list every decision")
    ap.add_argument("--jacoby", action=argparse.BooleanOptionalAction, default=True,
                    help="money play: the Jacoby rule, where the file does not say "
                         "(default on)")
    ap.add_argument("--beavers", action=argparse.BooleanOptionalAction, default=None,
                    help="money play: beavers, where the file does not say (default: on "
                         "when it holds one)")
    ap.add_argument("--threads", type=thread_count, default=None,
                    help="search threads (default: the engine's)")
    args = parse_args(ap, argv)
    if not 0 <= args.ply <= 3:
        ap.error(f"--ply {args.ply}: expected 0..3")
    filters = None
    if args.filters is not None:
        try:
            filters = parse_filters(args.filters, args.ply)
        except SearchError as exc:
            ap.error(f"--filters: {exc}")
    try:
        record = read_match(args.file)
        search = (search_for("backgammon", args.threads) if filters is None else
                  Search.load("backgammon", threads=args.threads, ply=args.ply,
                              filters=filters))
        assessed = review(record, search, args.ply, args.jacoby,
                          progress=not args.json and sys.stderr.isatty(),
                          beavers=args.beavers)
    except NardyError as exc:
        where = "" if str(exc).startswith(args.file) else f"{args.file}: "
        print(f"error: {where}{exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(to_json(record, assessed, args.ply, filters)))
    else:
        print(format_review(record, assessed, args.ply, args.all))
    return 0


if __name__ == "__main__":
    run(main)
