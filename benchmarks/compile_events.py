"""Where a cold start's compiling goes, kernel by kernel: one command run in this
process on an empty numba cache, with numba's compile events recorded.

    python benchmarks/compile_events.py                       # engine.analyse --position start --dice 31
    python benchmarks/compile_events.py --ply 2 --top 30

Each kernel's seconds are exclusive of the kernels compiled inside it (its callees)
and inclusive of them, with the number of signatures compiled. The cache goes to a
fresh temporary folder (``NUMBA_CACHE_DIR``, removed at the end), so nothing is loaded
from an earlier run.
Arguments after the options are passed to ``engine.analyse``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

CACHE = tempfile.mkdtemp(prefix="nardy-compile-events-")
os.environ["NUMBA_CACHE_DIR"] = CACHE          # before numba is imported
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from numba.core import event  # noqa: E402


class _Times(event.Listener):
    """Exclusive and inclusive seconds of each compiled kernel."""

    def __init__(self):
        self.stack: list = []
        self.excl: dict = {}
        self.incl: dict = {}
        self.count: dict = {}

    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        self.stack.append([f"{f.__module__}.{f.__qualname__}", time.perf_counter(), 0.0])

    def on_end(self, ev):
        name, t0, inner = self.stack.pop()
        d = time.perf_counter() - t0
        self.incl[name] = self.incl.get(name, 0.0) + d
        self.excl[name] = self.excl.get(name, 0.0) + d - inner
        self.count[name] = self.count.get(name, 0) + 1
        if self.stack:
            self.stack[-1][2] += d


def main() -> int:
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    top = 18
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    times = _Times()
    event.register("numba:compile", times)
    from engine.cli.analyse import main as analyse
    argv = ["--position", "start", "--dice", "31"] + args
    t0 = time.perf_counter()
    sys.argv = ["engine.analyse"] + argv
    try:
        analyse()
    except SystemExit:
        pass
    wall = time.perf_counter() - t0
    print(f"\n$ engine.analyse {' '.join(argv)}: {wall:.1f} s, "
          f"{sum(times.excl.values()):.1f} s compiling ({time.strftime('%Y-%m-%d %H:%M')})")
    print(f"{'excl s':>7} {'incl s':>7} {'sigs':>4}  kernel")
    for name, s in sorted(times.excl.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{s:7.2f} {times.incl[name]:7.2f} {times.count[name]:4d}  {name}")
    shutil.rmtree(CACHE, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
