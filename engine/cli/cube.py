"""Cube analysis from the command line (``python -m engine.cube_cli``) and the protocol's
``cube`` and ``met`` commands.

The command line prints the analysis in the manner of GNU Backgammon's cube analysis
(cubeless equity, the three cubeful equities ranked, the proper cube action, the take
point and gammon price), or its JSON with ``--json``::

    python -m engine.cube_cli --position 4HPwATDgc/ABMA --match 7 --score 2,4
    python -m engine.cube_cli --position "XGID=..." --json
    python -m engine.cube_cli --position 4HPwATDgc/ABMA --probabilities .75,.2,.01,.05,0

The cube, score and Jacoby setting are read from a GNU Backgammon Match ID
(``PositionID:MatchID``) or an XGID when the position carries them (an XGID's beaver
flag and max cube too: a cube at its maximum is dead); flags override them. ``--match``
with an ID of another match length keeps the ID's score where it fits that length (a
note on standard error says so) and refuses one that does not; ``--score`` sets another.
``--beavers`` allows beavers in money play (off by default, as ``docs/rules.md`` has
it). When a Match ID says a double is offered, the text ends with the proper response
to it (take, pass or beaver).
Probabilities come from the released model through :class:`engine.search.nply.Search` at
``--ply`` (0-ply by default), or are given with ``--probabilities``.

``--race`` adds the race formulas players count at the table (:mod:`engine.eval.race`:
pip counts, effective pip counts, Kleinman's winning chance, the Thorp, Keith, 8-9-12 and
Isight cube rules), as GNU Backgammon's ``show kleinman`` / ``thorp`` / ``keith`` /
``8912`` / ``isight`` give them::

    python -m engine.cube_cli --position NqVSlQB3/wIAAA --race

``--rollout`` rolls the decision out instead, as GNU Backgammon rolls out a cube
decision (:meth:`engine.search.rollout.Rollout.cube_decision`): the no-double line and
the double/take line, each a cubeful rollout of ``--trials`` (default 1296) on the same
dice, ``--truncate``, ``--seed``, ``--no-vr``, ``--rollout-ply`` (the checker play
inside, 0..2); the equities with their standard errors and the action they give::

    python -m engine.cube_cli --position 4HPwATDgc/ABMA --rollout --trials 1296 --truncate 7
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from typing import Any

import numpy as np

from engine.cli._common import (
    RequestError,
    add_rollout_arguments,
    as_option,
    field,
    integer,
    is_whole,
    parse_args,
)
from engine.cube.computed_met import met_from_gammon_rate
from engine.cube.decision import (
    CubeDecision,
    CubeError,
    CubeState,
    ProbabilityFn,
    check_probabilities,
)
from engine.cube.met import MatchError, default_table
from engine.errors import NardyError, quote
from engine.eval.race import format_race, race_counts
from engine.notation.parse import double_offered, parse_position
from engine.rules.position import Position
from engine.rules.scoring import flip_probs
from engine.search import precompile
from engine.search.bearoff_cube import cube_analysis
from engine.search.nply import MAX_PLY, Search, check_ply
from engine.search.rollout import TRIALS

OPTIONAL = 1e-5
"""Equities this close make a double *optional* in GNU Backgammon's words (its
``isOptional``): a double/take worth no more than not doubling, or a double/pass no
more than playing on."""


def optional(action: str, no_double: float, double_take: float, state: CubeState,
             gammons: bool) -> bool:
    """Whether GNU Backgammon calls the proper ``action`` (a double) optional: a take
    (or beaver) worth within :data:`OPTIONAL` of not doubling (a sure loss: both -1), or
    a pass worth within it of playing on where the doubler can win a gammon
    (``gammons``) that counts (not with the cube centred under the Jacoby rule)."""
    if action in ("double_take", "double_beaver"):
        return double_take - no_double <= OPTIONAL
    return (action == "double_pass" and 1.0 - no_double <= OPTIONAL and gammons
            and not (state.money and state.owner == "centre" and state.jacoby))


def action_text(action: str, no_double: float, double_take: float, state: CubeState,
                gammons: bool) -> str:
    """The proper cube ``action`` in GNU Backgammon's words (its ``FindBestCubeDecision``
    and ``GetCubeRecommendation``): a cube the side on roll owns is redoubled ("No
    redouble, take", "Too good to redouble, pass"), an :func:`optional` double is
    "Optional double, take". GNU Backgammon has no redouble with a beaver: a beavered
    redouble is "Double, beaver", and one that a beaver would make worse than not
    doubling, though it beats not doubling taken, "No double, beaver"."""
    word = "redouble" if state.owner == "me" else "double"
    answer = action.rsplit("_", 1)[1]
    if optional(action, no_double, double_take, state, gammons):
        return f"Optional {'double' if answer == 'beaver' else word}, {answer}"
    if action in ("double_take", "double_pass"):
        return f"{word.capitalize()}, {answer}"
    if action == "double_beaver":
        return "Double, beaver"
    if action == "no_double_beaver":
        return f"No {word if double_take < no_double else 'double'}, beaver"
    if action == "no_double":
        return f"No {word}, take"
    return f"Too good to {word}, {answer}"


# --------------------------------------------------------------------- probabilities
@lru_cache(maxsize=4)
def _search(model: str | None) -> Search:
    return Search.load("backgammon", model)


def _rollout(args, pos: Position, info, state: CubeState) -> int:
    """``--rollout``: the cube decision rolled out
    (:meth:`engine.search.rollout.Rollout.cube_decision`), printed or as JSON."""
    from tqdm import tqdm

    from engine.search.rollout import BATCH, Rollout, RolloutSettings
    if pos.is_over():
        raise CubeError("the game is over: no cube decision in a finished position")
    settings = RolloutSettings(args.trials, args.truncate, args.rollout_ply, args.seed,
                               not args.no_vr)
    bar = tqdm(total=2 * settings.trials, unit="trial", file=sys.stderr, leave=False,
               disable=settings.trials <= BATCH or args.json)
    try:
        r = Rollout(_search(args.model)).cube_decision(
            pos, state, settings, lambda n: bar.update(n - bar.n))
    finally:
        bar.close()
    _note_rolled(info)
    if args.json:
        print(json.dumps(r.to_json(), indent=2))
        return 0
    how = (f"{settings.trials} trials a line, "
           + (f"truncated after {settings.truncate} rolls" if settings.truncate
              else "played to the end")
           + f", {settings.ply}-ply play, seed {settings.seed}"
           + (", variance reduction" if settings.variance_reduction else ""))
    print(format_cube_rollout(r, state, how))
    if double_offered(info):
        answer = ("Beaver" if r.action in ("double_beaver", "no_double_beaver") else
                  "Take" if r.action in ("double_take", "too_good_take", "no_double")
                  else "Pass")
        print(f"Double offered: the proper response is {answer} (taking leaves the "
              f"doubler {r.equities['double_take']:+.3f}, passing "
              f"{r.equities['double_pass']:+.3f})")
    return 0


def format_cube_rollout(r, state: CubeState, how: str) -> str:
    """A cube decision rolled out (:class:`engine.search.rollout.CubeRollout`), in the
    manner of GNU Backgammon's: the three cubeful equities with their standard errors,
    the difference of the two lines and the proper action."""
    head = _state_line(state)
    eq, se = r.equities, r.se
    mwc = r.mwc or {}

    def m(key: str) -> str:
        return f"  (MWC {100 * mwc[key]:.1f}%)" if key in mwc else ""

    lines = [head, "", f"Cube decision rollout: {how}",
             f"  No double     {eq['no_double']:+.3f} [{_se_text(se['no_double'])}]"
             f"{m('no_double')}",
             f"  Double, take  {eq['double_take']:+.3f} [{_se_text(se['double_take'])}]"
             f"{m('double_take')}",
             f"  Double, pass  {eq['double_pass']:+.3f}{m('double_pass')}",
             f"  Double/take less no double {eq['double_take'] - eq['no_double']:+.3f} "
             f"[{_se_text(se['difference'])}]", "",
             "Proper cube action: " + action_text(
                 r.action, eq["no_double"], eq["double_take"], state,
                 r.no_double.probabilities[1] > 0.0)]
    return "\n".join(lines)


def _note_rolled(info) -> None:
    """Say on standard error that the ID's dice are rolled: a cube decision comes
    before the roll."""
    rolled = getattr(info, "dice", None)
    if rolled:
        print(f"note: the position's dice {rolled[0]}-{rolled[1]} are rolled; this is "
              f"the cube decision before that roll", file=sys.stderr)


def _se_text(x: float) -> str:
    return "n/a" if x != x else f"{x:.3f}"          # NaN: a single trial


def model_probability_fn(model: str | None = None) -> ProbabilityFn:
    """``fn(position, ply)`` from the backgammon model (``models/backgammon.npz`` or
    ``model``) through :class:`engine.search.nply.Search`: 0-ply is the static evaluation,
    n-ply the search. Loaded once per model path."""
    def fn(position: Position, ply: int = 0) -> np.ndarray:
        return np.asarray(_search(model).evaluate(position, ply).probabilities, np.float64)
    return fn


# --------------------------------------------------------------------- requests
def _owner(value: Any) -> str:
    names = {"centre": "centre", "center": "centre", "me": "me", "them": "them"}
    if not isinstance(value, str) or value.lower() not in names:
        raise CubeError(f"cube owner {quote(value)}: expected 'centre', 'me' or 'them'")
    return names[value.lower()]


_CUBE_FIELDS = ("value", "owner", "max")
_MATCH_FIELDS = ("length", "score", "crawford")


def _no_unknown_fields(obj: dict, name: str, known: tuple, error: type) -> None:
    """``error`` naming the fields of the request's ``name`` object that are none of
    ``known``: a misspelt ``"Crawford"`` read as absent would analyse another game."""
    unknown = [k for k in obj if k not in known]
    if unknown:
        raise error(f"{name} {quote(obj)} has unknown field(s) {unknown}; expected only "
                    f"{list(known)}")


def state_from_request(req: dict, info: Any = None) -> CubeState:
    """The :class:`CubeState` of a ``cube`` request: ``cube`` (with its optional
    ``max``, the highest value the cube may reach, as an XGID's max cube: a cube at it
    is dead), ``match``, ``jacoby`` and ``beavers`` fields, each defaulting to what the
    position's notation (``info``) says, else a centred cube with no maximum, money
    play, the Jacoby rule on and beavers off."""
    base = CubeState.from_info(info) if info is not None else CubeState()
    value, owner, top = base.value, base.owner, base.max_value
    top_given = False                 # the max cube is the request's, not the XGID's
    if "cube" in req and req["cube"] is not None:
        cube = req["cube"]
        if not isinstance(cube, dict):
            raise CubeError(f"cube {quote(cube)}: expected an object "
                            f'{{"value": 1, "owner": "centre"}}')
        _no_unknown_fields(cube, "cube", _CUBE_FIELDS, CubeError)
        # a null field counts as absent (docs/protocol.md), as max's always did
        value = field(cube, "value", 1)
        owner = _owner(field(cube, "owner", "centre"))
        if cube.get("max") is not None:
            top = cube["max"]       # a power of two from the value: CubeState checks it
            top_given = True
    length, score, crawford = base.match_length, base.score, base.crawford
    if "match" in req:
        match = req["match"]
        if match is None:
            length, score, crawford = 0, (0, 0), False
        elif not isinstance(match, dict):
            raise MatchError(f"match {quote(match)}: expected null (money) or an object "
                             f'{{"length": 7, "score": [0, 0], "crawford": false}}')
        else:
            _no_unknown_fields(match, "match", _MATCH_FIELDS, MatchError)
            if "length" not in match:
                raise RequestError("missing_field", f"match {quote(match)} lacks the "
                                                    f"field 'length'")
            length = match["length"]
            if isinstance(length, bool) or not isinstance(length, int) or length < 1:
                raise MatchError(f"match length {quote(length)}: expected a positive integer")
            sc = field(match, "score", [0, 0])
            if not isinstance(sc, (list, tuple)) or len(sc) != 2:
                raise MatchError(f"score {quote(sc)}: expected [me, them]")
            score = tuple(sc)
            crawford = field(match, "crawford", False)
            if not isinstance(crawford, bool):
                raise MatchError(f"crawford {quote(crawford)}: expected true or false")
    jacoby = field(req, "jacoby", base.jacoby if info is not None else True)
    if not isinstance(jacoby, bool):
        raise CubeError(f"jacoby {quote(jacoby)}: expected true or false")
    # beavers only when asked: the protocol's actions are five, and a beaver is none of
    # them (an XGID's beaver flag alone does not turn them on)
    beavers = field(req, "beavers", False)
    if not isinstance(beavers, bool):
        raise CubeError(f"beavers {quote(beavers)}: expected true or false")
    if beavers and length:
        raise MatchError("beavers: true in match play: beavers are a money-play option")
    # ``jacoby`` is money play's: in a match it is left aside (a client may always send
    # the rules' default, true)
    if not isinstance(value, int) or isinstance(value, bool):
        raise CubeError(f"cube value {quote(value)}: expected a power of two (1, 2, 4, ...)")
    if isinstance(top, int) and not isinstance(top, bool) and top < value:
        # CubeState's own message ("expected None or a power of two from ...") names
        # neither where the max came from nor which of the two to change
        raise CubeError(f"max cube {top} is below the cube value {value}: expected a "
                        f"power of two from {value} up" if top_given else
                        f"cube value {value} is above the XGID's max cube {top}: a cube "
                        f"never goes past its maximum")
    return CubeState(value, owner, length, score, crawford, jacoby if not length else False,
                     beavers, top)


def cmd_cube(req: dict, probability_fn: ProbabilityFn | None = None) -> dict:
    """Protocol ``cube``: the cube action and equities of the side to move."""
    pos, info = parse_position(field(req, "position"))
    state = state_from_request(req, info)
    ply = check_ply(field(req, "ply", 0))     # null counts as absent, as in `best`
    efficiency = req.get("efficiency")
    if efficiency is not None and (isinstance(efficiency, bool)
                                   or not isinstance(efficiency, (int, float))
                                   or not 0 <= efficiency <= 1):
        raise CubeError(f"efficiency {quote(efficiency)}: expected a number 0..1")
    fn = probability_fn or model_probability_fn()
    return cube_analysis(pos, state, fn, ply, efficiency).to_json()


def cmd_met(req: dict) -> dict:
    """Protocol ``met``: the Kazaross-XG2 table cut to ``length`` (or, with
    ``gammon_rate``, the table computed from that rate)."""
    length = field(req, "length")
    if length is None:                 # to_json(None) would be the whole table
        raise MatchError("length = null: expected a positive integer")
    g = req.get("gammon_rate")
    if g is None:
        table = default_table()
    else:
        if isinstance(g, bool) or not isinstance(g, (int, float)):
            raise MatchError(f"gammon_rate {quote(g)}: expected a number 0 <= g < 1")
        table = met_from_gammon_rate(float(g), length)
    return table.to_json(length)


def _given_probability_fn(root: Position, probs) -> ProbabilityFn:
    """``--probabilities``: the side on roll's chances before his roll, as a
    probability function. A position after his roll (the 21 rolls a free double is
    valued over, :func:`engine.cube.decision.rolls_ahead`) is rated from the opponent's
    side, the opponent then on roll: the same chances seen from there (they were read
    as the opponent's own, so a 30% position was valued at 70% after every roll)."""
    theirs = flip_probs(np.asarray(probs, np.float64))

    def fn(position: Position, ply: int):
        return probs if position == root else theirs
    return fn


# --------------------------------------------------------------------- text
def _no_cube_reason(state: CubeState) -> str:
    """Why the side on roll may not double."""
    return ("the Crawford game has no cube" if state.crawford else
            "the opponent owns the cube" if state.owner == "them" else
            f"the cube is at its maximum value, {state.limit}" if state.at_max else
            "the cube is dead (winning the cube's value wins the match)")


def _state_line(state: CubeState) -> str:
    """The game and cube, as the analyses head them."""
    owners = {"centre": "centred", "me": "owned by the side on roll",
              "them": "owned by the opponent"}
    cube = f"cube {owners[state.owner]} at {state.value}"
    if state.money:
        return (f"Money game, Jacoby {'on' if state.jacoby else 'off'}"
                f"{', beavers allowed' if state.beavers else ''}, {cube}")
    a, b = state.away
    phase = (", Crawford game" if state.crawford
             else ", post-Crawford" if state.post_crawford else "")
    return (f"Match to {state.match_length}, score {state.score[0]}-{state.score[1]} "
            f"({a}-away, {b}-away){phase}, {cube}")


def format_decision(d: CubeDecision, state: CubeState, ply: int = 0) -> str:
    """GNU Backgammon-style text of a cube analysis."""
    head = _state_line(state)
    p = d.probabilities
    lines = [head, "",
             f"{ply}-ply cubeless equity {d.cubeless_equity:+.3f}"
             + (f"  (MWC {100 * d.mwc['cubeless']:.1f}%)" if d.mwc else ""),
             f"  win {100 * p[0]:5.1f}%  gammon {100 * p[1]:5.1f}%  backgammon "
             f"{100 * p[2]:5.1f}%",
             f"  lose {100 * (1 - p[0]):4.1f}%  gammon {100 * p[3]:5.1f}%  backgammon "
             f"{100 * p[4]:5.1f}%", ""]
    if not d.cube_available:
        why = _no_cube_reason(state)
        lines += [f"Cubeful equity, no double {d.no_double:+.3f}", "",
                  f"No cube action: {why}."]
        return "\n".join(lines)
    options = {"no_double": ("No double", d.no_double),
               "double_take": ("Double, take", d.double_take),
               "double_pass": ("Double, pass", d.double_pass)}
    gammons = d.probabilities[1] > 0.0
    # GNU Backgammon lists not doubling first where the double is optional
    first = ("no_double" if optional(d.action, d.no_double, d.double_take, state, gammons)
             else "double_take" if d.action == "double_beaver" else
             d.action if d.action in ("double_take", "double_pass") else "no_double")
    rest = sorted((k for k in options if k != first), key=lambda k: -options[k][1])
    lines.append("Cubeful equities:")
    best = options[first][1]
    for i, k in enumerate([first, *rest], 1):
        name, eq = options[k]
        diff = "" if k == first else f"  ({eq - best:+.3f})"
        lines.append(f"{i}. {name:<14} {eq:+.3f}{diff}")
    text = action_text(d.action, d.no_double, d.double_take, state, gammons)
    lines += ["", f"Proper cube action: {text}",
              f"Take point (opponent) {100 * d.take_point:.1f}%, gammon price "
              f"{d.gammon_price:.3f}, cube efficiency {d.efficiency:.3f}"]
    return "\n".join(lines)


def _parse_score(text: str) -> tuple[int, int]:
    parts = text.replace("-", ",").split(",")
    if len(parts) != 2 or not all(is_whole(p.strip()) for p in parts):
        raise MatchError(f"score {quote(text)}: expected two integers, e.g. 2,4")
    return int(parts[0].strip()), int(parts[1].strip())


def _check_id_score(length: int, base: CubeState, crawford: bool) -> None:
    """``--match LENGTH`` (without ``--score``) for an ID that holds a match of another
    length: the ID's score is kept, and a note on standard error says so (and that the
    ID's Crawford flag, which belonged to its length, is not); a :class:`MatchError`
    when that score does not fit a match of ``LENGTH``."""
    a, b = base.score
    where = f"the ID's score {a}-{b} (from its match to {base.match_length})"
    if max(a, b) >= length:
        raise MatchError(f"--match {length}: {where} does not fit a match to {length} "
                         f"(each score 0 .. {length - 1}); give --score")
    dropped = ("; its Crawford flag is not (add --crawford for the Crawford game)"
               if base.crawford and not crawford else "")
    print(f"note: --match {length} keeps {where}{dropped}; --score sets another",
          file=sys.stderr)


def _parse_probs(text: str) -> np.ndarray:
    try:
        vals = [float(v) for v in text.split(",")]
    except ValueError:
        raise CubeError(f"probabilities {quote(text)}: expected five comma-separated numbers "
                        f"(win, win_gammon, win_backgammon, lose_gammon, lose_backgammon)"
                        ) from None
    return check_probabilities(vals, strict=True)


def main(argv=None) -> int:
    """Entry point of ``python -m engine.cube_cli``."""
    precompile.allow()       # a cold start compiles on two cores
    ap = argparse.ArgumentParser(prog="python -m engine.cube_cli",
                                 description="Cube decisions of a backgammon position: "
                                             "money or match, at 0-3 ply or rolled out.")
    ap.add_argument("--position", required=True,
                    help="GNU Backgammon Position ID (or PositionID:MatchID), XGID, "
                         "FIBS board string (board:...) or Position JSON")
    ap.add_argument("--cube-value", type=integer, help="cube value (default: from the ID, else 1)")
    ap.add_argument("--cube-owner", choices=("me", "them", "centre", "center"),
                    help="who owns the cube (default: from the ID; else centre for a cube "
                         "at 1, and the side on roll for --cube-value above 1)")
    ap.add_argument("--match", type=integer,
                    help="match length (0: money; default: the ID's). For an ID of "
                         "another length the ID's score is kept if it fits (a note says "
                         "so), else an error asks for --score")
    ap.add_argument("--score", default=None,
                    help="score as me,them (match play; default: the ID's, else 0,0)")
    ap.add_argument("--crawford", action="store_true", help="this is the Crawford game")
    ap.add_argument("--jacoby", dest="jacoby", action="store_true", default=None,
                    help="money: the Jacoby rule (default on)")
    ap.add_argument("--no-jacoby", dest="jacoby", action="store_false")
    ap.add_argument("--beavers", dest="beavers", action="store_true", default=None,
                    help="money: beavers allowed (default off, or the XGID's flag)")
    ap.add_argument("--no-beavers", dest="beavers", action="store_false")
    ap.add_argument("--ply", type=integer, default=0,
                    help=f"search depth 0..{MAX_PLY} (default 0)")
    ap.add_argument("--efficiency", type=float, default=None,
                    help="cube efficiency 0..1 (default: 0.68 contact, race by pips, a short "
                         "bear-off in a match by the two-sided table)")
    ap.add_argument("--probabilities", default=None,
                    help="use these cubeless probabilities instead of the model: "
                         "win,win_gammon,win_backgammon,lose_gammon,lose_backgammon")
    ap.add_argument("--model", default=None, help="model file (default models/backgammon.npz)")
    ap.add_argument("--json", action="store_true", help="print the protocol reply as JSON")
    ap.add_argument("--race", action="store_true",
                    help="add the race formulas players count (pip counts, effective "
                         "pip counts, Kleinman, Thorp, Keith, 8-9-12, Isight: engine.eval.race)")
    ro = ap.add_argument_group("rollouts")
    ro.add_argument("--rollout", action="store_true",
                    help="roll the decision out, as GNU Backgammon does: the no-double "
                         "and double/take lines, cubeful, on the same dice")
    add_rollout_arguments(ro, TRIALS, "trials of each line")
    ro.add_argument("--rollout-ply", type=integer, default=0,
                    help="checker play inside the rollout, 0..2 (default 0)")
    args = parse_args(ap, argv)
    if not args.rollout:
        given = [a.option_strings[0] for a in ro._group_actions
                 if a.dest != "rollout" and getattr(args, a.dest) != a.default]
        if given:
            ap.error(f"{', '.join(given)}: rollout option(s); add --rollout")
    else:
        if args.race:
            ap.error("--race counts beside the cube analysis, not a rollout: leave out "
                     "--rollout (or --race)")
        for flag, given in (("--probabilities", args.probabilities is not None),
                            ("--efficiency", args.efficiency is not None),
                            ("--ply", args.ply != 0)):
            if given:
                ap.error(f"{flag} with --rollout: the rollout plays the game out (the "
                         f"checker play inside it is --rollout-ply)")
    try:
        pos, info = parse_position(args.position)
        req: dict = {}
        base = CubeState.from_info(info) if info is not None else CubeState()
        if args.cube_value is not None or args.cube_owner is not None:
            if args.cube_owner is not None:
                owner = args.cube_owner
            elif args.cube_value in (None, 1):
                owner = "centre"
            else:
                owner = base.owner if base.owner != "centre" else "me"
            value = args.cube_value
            if value is None:
                value = 1 if owner.startswith("cent") else max(base.value, 2)
            req["cube"] = {"value": value, "owner": owner}
            if (args.cube_value is not None and base.max_value is not None
                    and args.cube_value > base.max_value):
                raise CubeError(f"--cube-value {args.cube_value} is above the XGID's max "
                                f"cube {base.max_value} (its last field, "
                                f"{base.max_value.bit_length() - 1}): a cube never goes "
                                f"past its maximum; give a value up to {base.max_value}")
        if args.match is not None and args.match != 0:
            crawford = args.crawford
            if args.score:
                score = _parse_score(args.score)
            elif base.match_length and args.match > 0:   # the ID's score (and Crawford)
                score = base.score
                if args.match == base.match_length:
                    crawford = crawford or base.crawford
                else:
                    _check_id_score(args.match, base, crawford)
            else:
                score = (0, 0)
            req["match"] = {"length": args.match, "score": list(score),
                            "crawford": crawford}
        elif args.score or args.crawford:
            raise MatchError("--score / --crawford need a match: --match LENGTH (1 or more)")
        elif args.match == 0:
            req["match"] = None
        if args.jacoby is not None:
            req["jacoby"] = args.jacoby
        if args.beavers is not None:
            req["beavers"] = args.beavers
        elif base.beavers and not base.match_length and not req.get("match"):
            req["beavers"] = True           # the XGID's own beaver flag (money play)
        state = state_from_request(req, info)
        if args.jacoby and state.match_length:
            raise MatchError("--jacoby in match play: the Jacoby rule is a money-play "
                             "option")
        ply = check_ply(args.ply)
        if args.probabilities is not None and ply != 0:
            raise CubeError(f"--ply {ply} with --probabilities: the probabilities are given, "
                            f"no search runs; leave out --ply")
        if args.probabilities is not None and args.model is not None:
            raise CubeError(f"--model {args.model} with --probabilities: the probabilities "
                            f"are given, no model is read; leave out --model")
        if args.rollout:
            try:
                return _rollout(args, pos, info, state)
            except NardyError as exc:
                message = as_option(str(exc), {"ply": "--rollout-ply"})
                print(f"error: {message}", file=sys.stderr)
                return 2
        if args.probabilities is not None:
            fn = _given_probability_fn(pos, _parse_probs(args.probabilities))
        else:
            fn = model_probability_fn(args.model)
        # given probabilities are the user's: the table's exact money equities left aside
        decision = cube_analysis(pos, state, fn, ply, args.efficiency,
                                 exact=args.probabilities is None)
        race = race_counts(pos) if args.race else None
    except NardyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    offered = double_offered(info)
    if offered and not decision.cube_available:
        print(f"error: {args.position!r} holds a double offered, but the side on roll may "
              f"not double here ({_no_cube_reason(state)})", file=sys.stderr)
        return 2
    _note_rolled(info)
    if args.json:
        out = decision.to_json()
        if race is not None:
            out["race"] = race.to_json()
        print(json.dumps(out, indent=2))
    else:
        print(format_decision(decision, state, ply))
        if offered:
            print(format_response(decision))
        if race is not None:
            print()
            print(format_race(race, state.owner))
    return 0


def format_response(d: CubeDecision) -> str:
    """The answer to a double the position's ID says is offered, for the side that must
    answer it (the opponent of the side on roll), in the doubler's cubeful terms."""
    answer = "Beaver" if d.beavers else "Take" if d.takes else "Pass"
    return (f"Double offered: the proper response is {answer} (taking leaves the doubler "
            f"{d.double_take:+.3f}, passing {d.double_pass:+.3f})")


if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
