"""Index layout of the flat ``int16`` state array used by the numba core.

A state is always seen from the side to move. Each side has a block of 26 slots:
slot 0 is the checkers borne off, slots 1..24 the side's own points 1..24 (in its own
numbering), slot 25 the bar. Plakoto pins are flags per point in the owner's numbering.
The tail holds turn counters, gul bara's pending dice and scratch fields that move
generation uses while it builds a turn (cleared in every successor it returns).

Kept in a module of its own, with no numba import, so that Python code and kernels
share one definition (numba freezes these ints at compile time).
"""

SIDE = 26            # slots per side
ME = 0               # my block: ME + 0 = off, ME + p = point p, ME + 25 = bar
THEM = 26            # opponent's block, in the opponent's own numbering
OFF = 0
BAR = 25
PIN_ME = 52          # PIN_ME + p = 1 if my checker on my point p is pinned
PIN_THEM = 78        # PIN_THEM + q = 1 if the opponent's checker on its point q is pinned
TURNS_ME = 104
TURNS_THEM = 105
NPEND = 106          # number of pending dice (gul bara)
PEND = 107           # PEND .. PEND + 23: pending dice in playing order
MAXPEND = 24
# scratch, used only inside move generation
HEADS = 131          # checkers that left the head this turn / segment
USED = 132           # single moves played this turn / segment
SINGLE = 133         # die value of a one-die play (forced-play "larger die" rule)
OVER = 134           # 1 once the game has ended during the turn
STATE_LEN = 136
KEY_LEN = 131        # slots that define a position (scratch excluded)
