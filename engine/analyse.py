"""``python -m engine.analyse``: the legal plays of a position and roll, for people.

Reads a position in any notation :func:`engine.notation.parse_position` knows (Position
JSON, GNU Backgammon Position ID or ``PositionID:MatchID``, XGID, or ``start``) and a
roll, and prints the legal plays in standard move notation, best first once a trained
network ranks them, in the manner of gnubg's ``hint``. ``--json`` prints the same as one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass

from .board import render
from .errors import NardyError
from .movegen import check_dice, successors
from .movetext import format_move
from .notation import parse_dice, parse_position
from .position import Position
from .variants import VARIANTS


@dataclass(frozen=True)
class Candidate:
    """One legal play: the position after it (next side to move) and its move text."""

    position: Position
    """The successor, seen from the next side to move."""
    move: str
    """The play in standard notation (``24/18 13/11``)."""


def candidates(position: Position, dice) -> list[Candidate]:
    """Every legal play of ``position`` for ``dice`` (None: a pending segment)."""
    dice = check_dice(dice, position)
    return [Candidate(s, format_move(position, s, dice)) for s in successors(position, dice)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.analyse", description=__doc__)
    parser.add_argument("--position", default="start",
                        help="Position JSON, GNU Backgammon ID (PositionID[:MatchID]), "
                             "XGID, or 'start' (default)")
    parser.add_argument("--dice", help="the roll, e.g. 31 or 3-1; taken from the ID when "
                                       "it holds one; omit for a gul bara pending segment")
    parser.add_argument("--variant", choices=VARIANTS, default=None,
                        help="game of a 'start' position or of an ID (default backgammon)")
    parser.add_argument("--top", type=int, default=0, help="show only the first N plays")
    parser.add_argument("--board", action="store_true", help="draw the position first")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    try:
        pos, info = parse_position(args.position, args.variant)
        if args.dice is not None:
            dice = parse_dice(args.dice)
        elif pos.pending:
            dice = None
        elif info is not None and getattr(info, "dice", None):
            dice = tuple(info.dice)
        else:
            raise NardyError("no dice: give --dice (e.g. --dice 31)")
        plays = candidates(pos, dice)
    except NardyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    shown = plays[:args.top] if args.top > 0 else plays
    if args.json:
        print(json.dumps({"position": pos.to_json(), "dice": list(dice) if dice else None,
                          "count": len(plays),
                          "candidates": [{"move": c.move, "position": c.position.to_json()}
                                         for c in shown]}))
        return 0
    if args.board:
        print(render(pos))
        print()
    roll = f"{dice[0]}-{dice[1]}" if dice else "pending " + "-".join(map(str, pos.pending))
    print(f"{pos.variant}, {roll}: {len(plays)} legal play(s)")
    for i, c in enumerate(shown, 1):
        print(f"{i:4d}. {c.move}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
