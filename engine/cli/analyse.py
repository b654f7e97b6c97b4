"""``python -m engine.analyse``: the plays of a position and roll, ranked, for people.

Reads a position in any notation :func:`engine.notation.parse.parse_position` knows (Position
JSON, GNU Backgammon Position ID or ``PositionID:MatchID``, XGID, FIBS board string, or
``start``) and a roll, and prints the legal plays in standard move notation, best first,
in the manner of GNU Backgammon's ``hint``: rank, play, equity (cubeless money, for the
mover), the gap to the best play, and the mover's and the opponent's win / gammon /
backgammon chances. A backgammon ID that holds the cube (``PositionID:MatchID``, an
XGID: money or a match score) has its plays ranked as GNU Backgammon ranks them there,
by the mover's cubeful equity (the opponent's proper cube action after the play,
:func:`engine.cube.decision.play_value`; money play with the ID's cube and Jacoby rule),
shown in a match on the cube's normalised scale beside the match winning chance.
Every play is rated; ``--top N`` lists the first N (default :data:`DEFAULT_SHOWN`, which
only a gul bara cascade exceeds; ``--top 0``: all).
Plays are rated by the game's trained model, ``models/<variant>.npz``, searched to
``--ply`` (0..3, :mod:`engine.search.nply`). A game without a trained model gets its legal
plays unranked, with a note saying so. Without ``--dice`` the position is rated before
its roll. ``--json`` prints the same as one JSON object. Inside the search (and in a
rollout's trials) backgammon's pruning network passes each roll's best four plays to the
network (:attr:`engine.search.nply.SearchSettings.prune`); ``--no-prune`` rates every play
with the network. ``--filters`` sets the search's move filters, one level per ply below
``--ply`` (:func:`engine.search.nply.parse_filters`): the default at 2-ply is
``8/0.16,4/0.12``, GNU Backgammon's normal filter ``8/0.16,-``.

``--rolls`` (without ``--dice``) lists each of the 21 rolls' best play at ``--ply``
and its equity, the best roll first, and their mean (at ``--ply 0`` the position's 1-ply
value; deeper, the search's own value one ply deeper differs a little, its move filters
choosing each roll's play at a shallower depth): GNU Backgammon's temperature map, as a
list.

``--rollout`` rolls out instead (:mod:`engine.search.rollout`): with ``--dice`` the best
``--candidates`` plays at 0-ply, each on the same dice, else the position before its
roll; ``--trials``, ``--truncate``, ``--seed``, ``--no-vr``, ``--cubeful`` (backgammon:
the cube and match score of a ``PositionID:MatchID`` or XGID, else a centred money
cube), and ``--ply`` is then the checker play inside the rollout (0..2); ``--backend ray``
(``--address``) plays the trials on a Ray cluster (:mod:`engine.cluster`). Output in the
manner of GNU Backgammon's rollout: each play's equity, its standard error in brackets,
and the win / gammon chances with theirs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

from engine.cli._common import add_rollout_arguments, as_option, integer, parse_args
from engine.cli._decide import cubeful, rank_cubefully
from engine.cluster import add_arguments as add_cluster_arguments, make_backend
from engine.cube.decision import CubeState
from engine.cube.met import default_table
from engine.errors import DiceError, NardyError
from engine.eval.evaluator import NoModelError, model_path
from engine.movegen.generate import successors
from engine.notation.board import render
from engine.notation.movetext import format_move
from engine.notation.parse import double_offered, parse_position
from engine.rules.dice import ALL_21, check_dice, parse_dice
from engine.rules.position import Position
from engine.rules.scoring import check_game_on
from engine.rules.variants import VARIANTS
from engine.search import precompile
from engine.search.nply import (
    MAX_PLY,
    Analysis,
    Candidate,
    Evaluation,
    Search,
    check_ply,
    parse_filters,
)
from engine.search.rollout import BATCH, TRIALS, Rollout, RolloutResult, RolloutSettings


@dataclass(frozen=True)
class Play:
    """One legal play, unrated: the position after it (next side to move) and its text."""

    position: Position
    """The successor, seen from the next side to move."""
    move: str
    """The play in standard notation (``24/18 13/11``)."""


def candidates(position: Position, dice, top: int | None = None) -> tuple[list[Play], int]:
    """The legal plays of ``position`` for ``dice`` (None: a pending segment), in the
    order of their canonical keys, unrated: the first ``top`` of them (all when None),
    and how many there are."""
    dice = check_dice(dice, position.pending)
    succ = successors(position, dice)
    shown = succ if top is None else succ[:top]
    return [Play(s, format_move(position, s, dice)) for s in shown], len(succ)


DEFAULT_SHOWN = 10_000
"""Plays listed when ``--top`` is not given: every play of any ordinary roll (the most
random play met in any game is about a thousand), the best of a gul bara cascade, which
can have a million."""


def _probs_line(p) -> str:
    """``win wg wbg - lose lg lbg`` as gnubg prints it (the mover's, then the
    opponent's chances)."""
    return (f"{p[0]:.3f} {p[1]:.3f} {p[2]:.3f} - {1 - p[0]:.3f} {p[3]:.3f} {p[4]:.3f}")


def format_analysis(a: Analysis, top: int = 0) -> str:
    """The ranked plays as text, gnubg-hint style."""
    shown = a.candidates[:top] if top > 0 else a.candidates
    ranked = bool(shown) and shown[0].cubeful_equity is not None

    def value(c) -> float:
        return c.cubeful_equity if ranked and c.cubeful_equity is not None else c.equity

    best = value(a.best)
    width = max((len(c.move) for c in shown), default=10)
    lines = []
    for i, c in enumerate(shown, 1):
        diff = "" if i == 1 else f" ({value(c) - best:+.3f})"
        mwc = f"  MWC {100 * c.mwc:.2f}%" if ranked and c.mwc is not None else ""
        lines.append(f"{i:5d}. {c.ply}-ply  {c.move:<{width}}  Eq.: {value(c):+.3f}{diff}"
                     f"{mwc}")
        lines.append(f"       {_probs_line(c.probabilities)}")
    return "\n".join(lines)


def format_evaluation(e: Evaluation) -> str:
    p = e.probabilities
    return (f"{e.ply}-ply evaluation for the side to move, before its roll:\n"
            f"       {_probs_line(p)}\n"
            f"       cubeless equity {e.equity:+.3f}")


def main(argv=None) -> int:
    precompile.allow()       # a cold start compiles on two cores
    parser = argparse.ArgumentParser(prog="python -m engine.analyse",
                                     description=_plain(__doc__).replace(
                                         "DEFAULT_SHOWN", f"{DEFAULT_SHOWN:,}"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--position", default="start",
                        help="Position JSON, GNU Backgammon ID (PositionID[:MatchID]), "
                             "XGID, FIBS board string (board:...), or 'start' (default)")
    parser.add_argument("--dice", help="the roll, e.g. 31 or 3-1; taken from the ID when "
                                       "it holds one; without dice the position is rated "
                                       "before its roll (or its pending segment played)")
    parser.add_argument("--variant", choices=VARIANTS, default=None,
                        help="game of a 'start' position or of an ID (default backgammon)")
    parser.add_argument("--ply", type=integer, default=0,
                        help=f"search depth 0..{MAX_PLY} (default 0: the network alone); "
                             f"with --rollout the checker play inside it, 0..2")
    parser.add_argument("--model", default=None,
                        help="model file (default models/<variant>.npz)")
    parser.add_argument("--no-prune", action="store_true",
                        help="every play inside the search (and of a rollout's trials) "
                             "rated by the network; by default backgammon's pruning "
                             "network passes each roll's best four to it")
    parser.add_argument("--filters", default=None, metavar="K/W,...",
                        help="the search's move filters, one level for each ply below "
                             "--ply: K/W keeps at most K plays within W equity of the "
                             "best, - skips the level (default at 2-ply 8/0.16,4/0.12; "
                             "GNU Backgammon's normal filter 8/0.16,-)")
    parser.add_argument("--top", type=integer, default=None,
                        help=f"show only the first N plays (default {DEFAULT_SHOWN:,}; "
                             f"0: all)")
    parser.add_argument("--board", action="store_true", help="draw the position first")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rolls", action="store_true",
                        help="each of the 21 rolls' best play and its equity, and their "
                             "mean (without --dice: the position before its roll)")
    ro = parser.add_argument_group("rollouts")
    ro.add_argument("--rollout", action="store_true",
                    help="roll out (the plays of --dice, or the position before its roll)")
    add_rollout_arguments(ro, TRIALS, "trials per play")
    ro.add_argument("--cubeful", action="store_true", help="cubeful rollout (backgammon)")
    ro.add_argument("--candidates", type=integer, default=5,
                    help="plays of the roll rolled out, the best at 0-ply (default 5)")
    ro.add_argument("--stop", type=float, default=None, metavar="SIGMAS",
                    help="stop once the best play leads every other by SIGMAS standard "
                         "errors (checked every 1296 trials; cubeless)")
    add_cluster_arguments(ro, "the search's threads here; the numbers do not depend on it")
    args = parse_args(parser, argv)
    if not args.rollout:
        given = [a.option_strings[0] for a in ro._group_actions
                 if a.dest != "rollout" and getattr(args, a.dest) != a.default]
        if given:
            parser.error(f"{', '.join(given)}: rollout option(s); add --rollout")
    elif args.stop is not None and args.cubeful:
        parser.error("--stop with --cubeful: the early stop compares cubeless equities")
    elif args.top is not None:
        parser.error(f"--top {args.top} lists a roll's ranked plays; with --rollout, "
                     f"--candidates N says how many plays are rolled out")
    if args.rollout and not 0 <= args.ply <= 2:
        parser.error(f"--ply {args.ply}: expected 0..2 with --rollout (the checker play "
                     f"inside the rollout)")
    if args.top is not None and args.top < 0:
        parser.error(f"--top {args.top}: expected 0 (all plays) or more")
    if args.rolls and (args.rollout or args.top is not None or args.dice is not None):
        parser.error("--rolls lists the best play of every roll: leave out --dice, --top "
                     "and --rollout")
    if args.board and args.json:
        parser.error("--board draws the board in the text output; --json has none")
    top = DEFAULT_SHOWN if args.top is None else args.top        # 0: all
    if args.stop is not None and not 0 < args.stop < 100:       # also catches nan
        parser.error(f"--stop {args.stop}: expected a number of standard errors between 0 "
                     f"and 100")
    try:
        check_ply(args.ply)
        pos, info = parse_position(args.position, args.variant)
        if args.dice is not None and pos.pending:
            raise DiceError(f"--dice {args.dice}: the position has pending dice "
                            f"{'-'.join(map(str, pos.pending))} to play first; leave out "
                            f"--dice")
        if args.rolls and pos.pending:
            raise DiceError(f"--rolls: the position has pending dice "
                            f"{'-'.join(map(str, pos.pending))} to play, not a roll to come")
        if args.dice is not None:
            dice = parse_dice(args.dice)
            held = getattr(info, "dice", None) if info is not None else None
            if held and sorted(held) != sorted(dice):
                print(f"note: the ID's dice {held[0]}-{held[1]} are not used: --dice "
                      f"{dice[0]}-{dice[1]} is played instead", file=sys.stderr)
        elif args.rolls:
            dice = "evaluate"
            if info is not None and getattr(info, "dice", None):
                print(f"note: the ID's dice {info.dice[0]}-{info.dice[1]} are not used: "
                      f"--rolls lists every roll", file=sys.stderr)
        elif pos.pending:
            dice = None
        elif info is not None and getattr(info, "dice", None):
            dice = tuple(info.dice)
        else:
            dice = "evaluate"
        if dice != "evaluate":
            check_game_on(pos)
            dice = check_dice(dice, pos.pending)
        elif args.top is not None and not args.rollout:
            parser.error(f"--top {args.top} lists a roll's plays: give --dice (or a "
                         f"position whose ID holds the dice)")
        settings = {"prune": False} if args.no_prune else {}
        if args.filters is not None:
            if args.rollout:
                parser.error("--filters sets the search's move filters; a rollout's "
                             "checker play keeps the default ones")
            settings.update(ply=args.ply, filters=parse_filters(args.filters, args.ply))
        try:
            search = Search.load(pos.variant, args.model, **settings)
            note = None
        except NoModelError as exc:
            if args.model is not None:        # a model asked for by name must be there
                raise
            search, note = None, str(exc)
        if args.rollout:
            if search is None:
                raise NoModelError(f"{note}: a rollout needs one")
            if dice == "evaluate" and (args.stop is not None
                                       or args.candidates != parser.get_default("candidates")):
                parser.error("--stop and --candidates roll out the plays of a roll: give "
                             "--dice (or a position whose ID holds the dice)")
            return _rollout(args, pos, info, dice, search)
        if args.rolls:
            if search is None:
                raise NoModelError(f"{note}: --rolls rates the plays")
            check_game_on(pos)
            return _rolls(args, pos, search, roll_map(search, pos, args.ply,
                                                      _cube_state(pos, info)))
        if search is None:
            result = None if dice == "evaluate" else candidates(pos, dice, top or None)
        elif dice == "evaluate":
            result = search.evaluate(pos, args.ply)
        elif (cube := _cube_state(pos, info)) is not None:
            result = rank_cubefully(search, pos, dice, args.ply, cube, top=top or None)
        else:
            result = search.analyse(pos, dice, args.ply, top=top or None)
    except NardyError as exc:
        print(f"error: {as_option(str(exc))}", file=sys.stderr)
        return 2
    if double_offered(info):
        print("note: the ID holds a double offered; python -m engine.cube_cli --position "
              "ID gives the response to it", file=sys.stderr)
    if getattr(info, "match_length", 0) and not isinstance(result, Analysis):
        what = ("the evaluation is cubeless (money equity); python -m engine.cube_cli "
                "gives the cube analysis at the score" if isinstance(result, Evaluation)
                else "the plays are listed unranked")
        print(f"note: the ID holds a {info.match_length}-point match; {what}",
              file=sys.stderr)
    elif isinstance(result, Analysis) and getattr(info, "match_length", 0) and (
            not result.candidates or result.candidates[0].cubeful_equity is None):
        why = (f"{pos.variant} has no cube" if pos.variant != "backgammon" else
               f"longer than the match equity table covers ({default_table().length} "
               f"points)")
        print(f"note: the ID holds a {info.match_length}-point match, {why}: plays are "
              f"ranked by cubeless money equity", file=sys.stderr)
    model = None if search is None else {
        "file": args.model or _shown(model_path(pos.variant)),
        "sizes": search.evaluator.network.sizes}
    if args.json:
        print(json.dumps(_json(pos, dice, args, model, note, result)))
        return 0
    if args.board:
        print(render(pos))
        print()
    if dice == "evaluate":
        print(f"{pos.variant}, before the roll")
    else:
        roll = f"{dice[0]}-{dice[1]}" if dice else "pending " + "-".join(map(str, pos.pending))
        print(f"{pos.variant}, {roll} to play")
    if note is not None:
        print(f"note: {note}")
        if result is None:
            return 0
        plays, count = result
        print(f"{count} legal play(s), unranked:")
        for i, c in enumerate(plays, 1):
            print(f"{i:5d}. {c.move}")
        _say_cut(len(plays), count)
        return 0
    print(f"model {model['file']} ({model['sizes']}), {args.ply}-ply")
    if isinstance(result, Evaluation):
        print(format_evaluation(result))
        return 0
    print(f"{result.plays} legal play(s), {result.evaluated} positions rated")
    if result.candidates and result.candidates[0].cubeful_equity is not None:
        print(_ranking_line(_cube_state(pos, info), args.ply))
    elif pos.variant == "backgammon" and result.candidates and info is None:
        # a gnubg user reads Eq. as cubeful (helper 136)
        print("ranked by cubeless money equity (the position holds no cube: give its "
              "Match ID too, or an XGID, for the cube's equities)")
    print(format_analysis(result))
    _say_cut(len(result.candidates), result.plays)
    return 0


def _cube_state(pos: Position, info) -> CubeState | None:
    """The cube (and match score) of a backgammon ID that holds them (``info``), when
    the plays are ranked by cubeful equity there (money play, or a match the match
    equity table covers), else None."""
    if pos.variant != "backgammon" or info is None:
        return None
    state = CubeState.from_info(info)
    return state if cubeful(state, pos.variant) else None


def _ranking_line(st: CubeState | None, ply: int = 0) -> str:
    """What the plays are ranked by, said above them; deeper than 0-ply, that the
    search's chances are cubeless and the cube is valued on them at the root (GNU
    Backgammon weighs the cube at every ply: its n-ply cubeful equities differ)."""
    assert st is not None
    owner = {"centre": "centred", "me": "the mover's", "them": "the opponent's"}[st.owner]
    deep = (f" ({ply}-ply cubeless chances, the cube valued on them as at 0-ply)"
            if ply else "")
    if st.money:
        jacoby = ", Jacoby rule" if st.jacoby and st.owner == "centre" else ""
        return (f"ranked by cubeful money equity{deep}: cube {st.value}, {owner}{jacoby}; "
                f"Eq. in units of the cube")
    a, b = st.away
    return (f"ranked by cubeful match equity{deep}: the mover {a}-away, the opponent "
            f"{b}-away, "
            f"cube {st.value}, {owner}{' (Crawford)' if st.crawford else ''}; Eq. on the "
            f"cube's normalised scale (a pass of a double +1.000), MWC the match "
            f"winning chance")


@dataclass(frozen=True)
class RollBest:
    """One roll of :func:`roll_map`: the roll, its chance, its best play."""

    dice: tuple[int, int]
    chance: float
    """1/36 for a double, 2/36 for the others."""
    best: Candidate
    value: float
    """What the play is ranked by: its cubeful equity where the plays are ranked
    cubefully (a cube state given), else its cubeless equity."""


def roll_map(search: Search, position: Position, ply: int,
             cube: CubeState | None = None) -> list[RollBest]:
    """Each of the 21 rolls of ``position`` (before its roll) with its best play at
    ``ply``, the best roll first (GNU Backgammon's temperature map, as a list); ranked
    by cubeful equity at ``cube`` where one is given (:func:`rank_cubefully`). At
    0-ply their mean, weighted by the rolls' chances, is the position's 1-ply value."""
    out = []
    for dice, chance in ALL_21:
        roll = (dice.high, dice.low)
        a = (rank_cubefully(search, position, roll, ply, cube, top=1) if cube is not None
             else search.analyse(position, roll, ply, top=1))
        b = a.best
        out.append(RollBest(roll, chance, b, b.equity if b.cubeful_equity is None
                            else b.cubeful_equity))
    out.sort(key=lambda r: -r.value)
    return out


def _rolls(args, pos: Position, search: Search, rolls: list[RollBest]) -> int:
    """``--rolls``: print (or write as JSON) :func:`roll_map`'s list."""
    mean = sum(r.chance * r.value for r in rolls)
    cubeful_ranked = rolls[0].best.cubeful_equity is not None
    if args.json:
        print(json.dumps({"position": pos.to_json(), "ply": args.ply,
                          "cubeful": cubeful_ranked, "mean": round(mean, 6),
                          "rolls": [{"dice": list(r.dice), "chance": r.chance,
                                     "equity": round(r.value, 6), "move": r.best.move,
                                     "probabilities": r.best.to_json()["probabilities"]}
                                    for r in rolls]}))
        return 0
    if args.board:
        print(render(pos))
        print()
    what = "cubeful equity" if cubeful_ranked else "cubeless equity"
    print(f"{pos.variant}, the 21 rolls before the roll: each roll's best play at "
          f"{args.ply}-ply, best roll first ({what} of the side on roll, after its play)")
    width = max(len(r.best.move) for r in rolls)
    for r in rolls:
        print(f"  {r.dice[0]}-{r.dice[1]}  {r.best.move:<{width}}  Eq.: {r.value:+.3f}  "
              f"(vs the mean {r.value - mean:+.3f})")
    print(f"mean over the 36 rolls: {mean:+.3f}")
    return 0


def _se(x) -> str:
    """A standard error as printed: ``n/a`` where there is none (a single trial)."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.3f}"


def _se_line(se: dict) -> str:
    return (f"[{_se(se['win'])} {_se(se['win_gammon'])} {_se(se['win_backgammon'])} - "
            f"{_se(se['win'])} {_se(se['lose_gammon'])} {_se(se['lose_backgammon'])}]")


def format_rollout(r: RolloutResult, label: str = "") -> list[str]:
    """One rollout as GNU Backgammon prints it: equity [standard error], the chances,
    their standard errors."""
    cf = ""
    if r.cubeful_equity is not None:
        cf = f"  CF {r.cubeful_equity:+.3f} [{_se(r.se['cubeful_equity'])}]"
    return [f"{label}Eq.: {r.equity:+.3f} [{_se(r.se['equity'])}]{cf}",
            f"       {_probs_line(r.probabilities)}",
            f"       {_se_line(r.se)}"]


def _rollout(args, pos: Position, info, dice, search: Search) -> int:
    """``--rollout``: print (or write as JSON) the rollout of the position before its
    roll (``dice`` ``"evaluate"``) or of the candidates of a roll (``dice``; None: a
    pending segment's)."""
    from tqdm import tqdm

    settings = RolloutSettings(args.trials, args.truncate, args.ply, args.seed,
                               not args.no_vr, stop_sigmas=args.stop,
                               prune=not args.no_prune)
    cube = None
    if args.cubeful:
        cube = (CubeState.from_info(info) if info is not None
                and hasattr(info, "cube_value") else CubeState())
    engine = Rollout(search, settings, make_backend(args.backend, args.address))
    bar = tqdm(total=settings.trials, unit="trial", file=sys.stderr, leave=False,
               disable=settings.trials <= BATCH or args.json)

    def progress(done: int) -> None:
        bar.update(done - bar.n)

    try:
        if dice == "evaluate":
            result = engine.position(pos, settings, progress, cube=cube)
        else:
            result = engine.candidates(pos, dice, args.candidates, settings, progress,
                                       cube=cube)
    finally:
        bar.close()
    done = result.trials if dice == "evaluate" else result[0].result.trials
    how = (f"{done} trials" + (f" (stopped early of {settings.trials})"
                               if done < settings.trials else "") + ", "
           + (f"truncated after {settings.truncate} rolls" if settings.truncate
              else "played to the end")
           + f", {settings.ply}-ply play, seed {settings.seed}"
           + (", variance reduction" if settings.variance_reduction else "")
           + (", cubeful" if cube is not None else ""))
    if args.json:
        out = {"position": pos.to_json(), "rollout": {"trials": settings.trials,
               "truncate": settings.truncate, "ply": settings.ply, "seed": settings.seed,
               "variance_reduction": settings.variance_reduction,
               "cubeful": cube is not None}}
        if dice == "evaluate":
            out.update(result.to_json())
        else:
            out["dice"] = list(dice) if dice else None
            out["candidates"] = [c.to_json() for c in result]
        print(json.dumps(out))
        return 0
    if args.board:
        print(render(pos))
        print()
    if dice == "evaluate":
        print(f"{pos.variant}, rollout before the roll: {how}")
        print("\n".join(format_rollout(result, "       ")))
        return 0
    roll = f"{dice[0]}-{dice[1]}" if dice else "pending " + "-".join(map(str, pos.pending))
    print(f"{pos.variant}, {roll} to play, rollout of {len(result)} play(s): {how}")
    width = max(len(c.move) for c in result)
    for i, c in enumerate(result, 1):
        diff = "" if i == 1 else f" ({-c.behind:+.3f}{'' if c.significant else ' ?'})"
        head, *rest = format_rollout(c.result)
        print(f"{i:5d}. Rollout  {c.move:<{width}}  {head}{diff}")
        print("\n".join(rest))
    if any(not c.significant for c in result[1:]):
        print("(?: not significantly behind the best at 95%)")
    return 0


def _plain(doc: str | None) -> str:
    """``doc`` without its reStructuredText roles and literals (``:func:`x``` as ``x``),
    for ``--help``."""
    import re
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc or "")
    return text.replace("``", "")


def _say_cut(shown: int, count: int) -> None:
    if shown < count:
        print(f"(the first {shown:,} of {count:,} plays; --top N shows N, --top 0 all)")


def _shown(path) -> str:
    """``path`` relative to the working folder when it lies inside it."""
    import os
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else str(path)
    except ValueError:
        return str(path)


def _json(pos, dice, args, model, note, result) -> dict:
    out = {"position": pos.to_json(), "ply": args.ply, "model": model}
    if note is not None:
        out["note"] = note
    if dice != "evaluate":
        out["dice"] = list(dice) if dice else None
    if result is None:
        return out
    if isinstance(result, Evaluation):
        out.update(result.to_json())
        return out
    if isinstance(result, tuple):
        plays, out["count"] = result
        out["candidates"] = [{"move": c.move, "position": c.position.to_json()}
                             for c in plays]
        return out
    def value(c) -> float:              # what the plays are ranked by
        return c.equity if c.cubeful_equity is None else c.cubeful_equity
    best = value(result.best)
    out["count"] = result.plays
    out["evaluated"] = result.evaluated
    out["candidates"] = [{**c.to_json(), "diff": round(value(c) - best, 6)}
                         for c in result.candidates]
    return out


if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
