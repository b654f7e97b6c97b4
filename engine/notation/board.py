"""An ASCII drawing of a position, in the manner of gnubg's board, for people.

The side to move plays ``X`` from its point 24 down to 1 (bottom right is its home);
the opponent is ``O``. Points are labelled in the side to move's numbering.
"""

from __future__ import annotations

from engine.rules.position import Position


def _stack(marks: list, row: int) -> str:
    """What row ``row`` (0 = nearest the edge) of a point holding the checkers
    ``marks`` (from the edge up) shows: the fifth row shows the count when the stack is
    taller than five."""
    if row == 4 and len(marks) > 5:
        return str(len(marks))
    return marks[row] if len(marks) > row else "."


def render(pos: Position) -> str:
    """The position as text: 12 points on top (13..24), 12 below (12..1). A pinned
    plakoto checker is drawn in lower case (``x``, ``o``) at the foot of its point,
    under the checkers of the side that pins it."""
    rules = pos.rules
    cells: dict[int, list] = {}
    for p in range(1, 25):
        q = rules.opposite_point(p)
        mine = pos.me[p - 1]
        theirs = pos.them[q - 1]
        if mine and theirs:    # plakoto: one pinned under the other side's checkers
            if p in pos.pinned[0]:
                cells[p] = ["x"] * mine + ["O"] * theirs
            else:
                cells[p] = ["o"] * theirs + ["X"] * mine
        else:
            cells[p] = ["X"] * mine + ["O"] * theirs
    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    lines = [" " + " ".join(f"{p:>2}" for p in top)]
    for row in range(5):
        lines.append(" " + " ".join(f"{_stack(cells[p], row):>2}" for p in top))
    lines.append("")
    for row in range(4, -1, -1):
        lines.append(" " + " ".join(f"{_stack(cells[p], row):>2}" for p in bottom))
    lines.append(" " + " ".join(f"{p:>2}" for p in bottom))
    pips = pos.pip_counts()
    info = [f"{pos.variant}: X (to move) pips {pips[0]}, off {pos.off[0]}, bar {pos.bar[0]}; "
            f"O pips {pips[1]}, off {pos.off[1]}, bar {pos.bar[1]}"]
    if pos.pinned[0] or pos.pinned[1]:
        theirs = sorted(rules.opposite_point(q) for q in pos.pinned[1])
        info.append(f"pinned (x, o): X on {list(pos.pinned[0])}, O on {theirs} (points "
                    f"as drawn)")
    if pos.pending:
        info.append(f"pending dice for X: {list(pos.pending)}")
    return "\n".join(lines + info)
