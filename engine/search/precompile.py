"""A second process that compiles some of the search's kernels while the program
compiles the others: a cold start on two cores compiles for about 40% less time
(benchmarks/README.md, "Two processes for a cold search").

A search compiles one large kernel, :func:`engine.search.nply.expand`, and numba
compiles each kernel it calls (the move generator's walk, the rating of a roll's plays,
the static evaluation, ...) on the way, one after the other: numba compiles under one
lock per process. Each compiled kernel goes into numba's cache with the code that its
callers link in, and a caller compiled later in *any* process loads it from there
instead of compiling it. So when a command-line program is about to compile the search
(:func:`spawn`, called where :mod:`engine.search.nply` announces the compile:
:data:`~engine.search.nply.on_cold_start`), it starts
``python -m engine.search.precompile VARIANT ENCODER``, which compiles the kernels that
``expand`` reaches last (:data:`ORDER`), on networks of the same encoder (the kernels'
types depend on the encoder, not on the weights), while the program compiles from the
top. A kernel either process finds cached when it gets to it is loaded, so nothing is
compiled twice unless both reach it at once; results do not change (the same kernels,
compiled from the same source).

Only programs that ask for it (:func:`allow`: ``engine.analyse``, the protocol, UBGI,
the external player, ``engine.play``, ``engine.cube_cli``, the web board) spawn the
helper, only when the cache lacks this search's ``expand`` (a 0-ply decision's: the
parent's hidden layer, ``_node_ref``; the helper then compiles its deeper kernels too,
unused by that run but cached for the next), only with two cores or
more, and never when ``NARDY_PRECOMPILE=0`` (the test suite sets it: its two workers
already use both cores). The helper is stopped when the program exits.

Both processes write numba's cache, each kernel's index and data files whole. They
must compile the same signatures of a kernel: numba numbers a kernel's data files by
its index as each process last read it, so two *different* signatures compiled at once
could end up under one name. ``tests/test_precompile.py`` checks that the helper's
calls have exactly the types the search passes.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from engine.eval.evaluator import Evaluator
from engine.eval.network import Network, delta_work
from engine.movegen.generate import usable_cores
from engine.rules.position import Position
from engine.rules.scoring import N_OUTPUTS
from engine.search import nply

ROOT = Path(__file__).resolve().parents[2]
"""The folder that holds the ``engine`` package (the helper's import path)."""

ORDER = ("_rate_children", "static_probs", "_filter", "exact_batch", "best_of_pairs",
         "roll_average")
"""What the helper compiles, in this order: the kernels :func:`engine.search.nply.
expand` calls late in its source (its compile reaches its callees in source order,
the parent's hidden layer and the move generator first, which the program compiles
meanwhile), then those a search of one ply or more calls from Python after
``expand``."""

_allowed = False
_helper: subprocess.Popen | None = None


def allow() -> None:
    """Let :func:`spawn` start the helper in this process (command-line programs), and
    have the search call it when it is about to compile
    (:data:`engine.search.nply.on_cold_start`)."""
    global _allowed
    _allowed = True
    nply.on_cold_start = spawn


def enabled() -> bool:
    """Whether :func:`spawn` may start a helper: allowed by the program, not turned off
    by ``NARDY_PRECOMPILE=0``, two cores or more, a Python to start (not a frozen
    program), none started yet."""
    return (_allowed and _helper is None and os.environ.get("NARDY_PRECOMPILE", "1") != "0"
            and usable_cores() >= 2 and bool(sys.executable)
            and not getattr(sys, "frozen", False))


def command(variant: str, encoder: str) -> list[str]:
    """The helper's command line."""
    return [sys.executable, "-m", "engine.search.precompile", variant, encoder]


def environment() -> dict:
    """The helper's environment: this one (the same numba cache, the same working
    folder), no helper of its own, and the folder holding ``engine`` last on its import
    path where it is not an installed package's (the program may have found ``engine``
    through a path of its own)."""
    env = dict(os.environ, NARDY_PRECOMPILE="0")
    if ROOT.name not in ("site-packages", "dist-packages"):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"),
                                                         str(ROOT)]))
    return env


_lock = threading.Lock()


def spawn(variant: str, encoder: str) -> bool:
    """Start the helper for a search of ``variant`` on networks of ``encoder`` when
    :func:`enabled`; the caller has found the search's kernels missing from the cache.
    Returns whether it started one. The helper writes nothing anywhere but numba's
    cache, and is stopped when this process exits. Never raises: without a helper this
    process compiles everything, as it would anyway."""
    global _helper
    with _lock:                          # two searches starting at once: one helper
        if not enabled():
            return False
        try:
            _helper = subprocess.Popen(command(variant, encoder), env=environment(),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
        except Exception:
            return False
    atexit.register(_stop)
    return True


def _stop() -> None:
    """Stop the helper if it still runs (what it has cached stays cached: numba writes
    each cache file whole, under a temporary name first)."""
    if _helper is not None and _helper.poll() is None:
        _helper.terminate()
        try:
            _helper.wait(2)
        except subprocess.TimeoutExpired:
            _helper.kill()


def warm(variant: str, encoder: str) -> None:
    """Compile the kernels of :data:`ORDER` for a search of ``variant`` on networks of
    ``encoder``, each called on a small example with the types the search passes
    (the start position, a one-unit network)."""
    net_, ctx = Evaluator(Network.create(variant, 1, encoder), bearoff=False).kernel_args()
    todo = calls(variant, net_, ctx)
    for name in ORDER:
        kernel, args = todo[name]
        kernel(*args)


def calls(variant: str, net_, ctx) -> dict:
    """:func:`warm`'s calls: ``{name: (kernel, arguments)}`` for the kernels of
    :data:`ORDER`, on the start position of ``variant``."""
    start = Position.start(variant).to_array()
    kids = np.repeat(start[None, :], 2, axis=0)
    probs = np.zeros((2, N_OUTPUTS))
    eq = np.zeros(2)
    idx = np.arange(2, dtype=np.int64)
    nh = net_.b1.shape[0]
    return {
        "_rate_children": (nply._rate_children,
                           (start.copy(), np.zeros(nh, np.float32), delta_work(), False, kids,
                            1, net_, ctx, probs, eq, nply.rate_space(2, nh))),
        "static_probs": (nply.static_probs, (kids, 1, net_, ctx, probs)),
        "_filter": (nply._filter, (eq, idx, 2, 1, 0.0)),
        "exact_batch": (nply.exact_batch, (kids, ctx, probs)),
        "best_of_pairs": (nply.best_of_pairs, (eq, idx, 2)),
        "roll_average": (nply.roll_average, (np.zeros((21, N_OUTPUTS)),
                                             np.arange(21, dtype=np.int64), 1, nply._ROLLS)),
    }


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.search.precompile VARIANT ENCODER``: :func:`warm`."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m engine.search.precompile VARIANT ENCODER", file=sys.stderr)
        return 2
    warm(args[0], args[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
