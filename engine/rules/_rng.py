"""The kernels' one random stream: splitmix64 in a one-element ``uint64`` array.

Every numba game loop draws its dice and random choices from such a state, seeded by
the caller (a numpy ``Generator`` through :func:`rng_state`, or a seed and stream
number through :func:`mix`), so no global generator is ever touched and a run is
reproduced from its seed. splitmix64 is Steele, Lea and Flood's generator ("Fast
splittable pseudorandom number generators", OOPSLA 2014), as in Java's
``SplittableRandom``.
"""

from __future__ import annotations

import numpy as np

from engine._jit import njit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
"""The stream's increment (the golden ratio's fraction in 64 bits)."""
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
_U11, _U27, _U30, _U31, _U32 = (np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31),
                                np.uint64(32))


def rng_state(rng: np.random.Generator) -> np.ndarray:
    """A fresh kernel random state (``uint64[1]``) drawn from ``rng``."""
    return rng.integers(0, 2**63, size=1, dtype=np.uint64)


def mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's output function on a ``uint64`` array (wrapping arithmetic): the
    seeding of many independent states at once."""
    with np.errstate(over="ignore"):
        z = (x ^ (x >> _U30)) * MIX1
        z = (z ^ (z >> _U27)) * MIX2
        return z ^ (z >> _U31)


@njit(cache=True)
def next_u64(st):
    """Advance ``st[0]`` and return the next 64 random bits."""
    st[0] += GAMMA
    z = st[0]
    z = (z ^ (z >> _U30)) * MIX1
    z = (z ^ (z >> _U27)) * MIX2
    return z ^ (z >> _U31)


@njit(cache=True)
def below(st, n):
    """A uniform int in ``0 .. n-1`` (n < 2**31; bias below 2**-32)."""
    return np.int64(((next_u64(st) >> _U32) * np.uint64(n)) >> _U32)


@njit(cache=True)
def die(st):
    """One die, 1 .. 6."""
    return below(st, 6) + 1


@njit(cache=True)
def uniform(st):
    """A uniform float in [0, 1) (53 random bits)."""
    return (next_u64(st) >> _U11) * (1.0 / 9007199254740992.0)
