"""An ASCII drawing of a position, in the manner of gnubg's board, for people.

The side to move plays ``X`` from its point 24 down to 1 (bottom right is its home);
the opponent is ``O``. Points are labelled in the side to move's numbering.
"""

from __future__ import annotations

from engine.rules.position import Position


def _stack(count: int, mark: str, row: int) -> str:
    """What row ``row`` (0 = nearest the edge) of a point with ``count`` checkers shows:
    the fifth row shows the count when the stack is taller than five."""
    if row == 4 and count > 5:
        return str(count)
    return mark if count > row else "."


def render(pos: Position) -> str:
    """The position as text: 12 points on top (13..24), 12 below (12..1)."""
    rules = pos.rules
    cells: dict[int, tuple[int, str]] = {}
    for p in range(1, 25):
        mine = pos.me[p - 1]
        theirs = pos.them[rules.opposite_point(p) - 1]
        if mine and theirs:    # plakoto: one pinned under the other side's checkers
            pinned_mine = p in pos.pinned[0]
            cells[p] = (mine + theirs, "O" if pinned_mine else "X")
        elif mine:
            cells[p] = (mine, "X")
        elif theirs:
            cells[p] = (theirs, "O")
        else:
            cells[p] = (0, ".")
    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    lines = [" " + " ".join(f"{p:>2}" for p in top)]
    for row in range(5):
        lines.append(" " + " ".join(f"{_stack(*cells[p], row):>2}" for p in top))
    lines.append("")
    for row in range(4, -1, -1):
        lines.append(" " + " ".join(f"{_stack(*cells[p], row):>2}" for p in bottom))
    lines.append(" " + " ".join(f"{p:>2}" for p in bottom))
    pips = pos.pip_counts()
    info = [f"{pos.variant}: X (to move) pips {pips[0]}, off {pos.off[0]}, bar {pos.bar[0]}; "
            f"O pips {pips[1]}, off {pos.off[1]}, bar {pos.bar[1]}"]
    if pos.pinned[0] or pos.pinned[1]:
        info.append(f"pinned: X on {list(pos.pinned[0])}, O on {list(pos.pinned[1])} "
                    f"(each in its owner's numbering)")
    if pos.pending:
        info.append(f"pending dice for X: {list(pos.pending)}")
    return "\n".join(lines + info)
