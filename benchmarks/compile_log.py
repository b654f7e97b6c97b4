"""Where a cold test run's numba compiling goes: a pytest plugin that logs every compile
event of each test process, and a summary of the logs.

    rm -rf /tmp/nbc /tmp/compile-log
    NUMBA_CACHE_DIR=/tmp/nbc PYTHONPATH=benchmarks bash scripts/test.sh -p compile_log
    python benchmarks/compile_log.py /tmp/compile-log

The plugin (loaded with ``-p compile_log``, ``benchmarks`` on ``PYTHONPATH``) listens
to numba's ``numba:compile`` events in the controller and in each xdist worker and, at
the end of the session, writes one JSON file per process into ``NARDY_COMPILE_LOG``
(default ``/tmp/compile-log``): for each compile, the kernel, its seconds *exclusive*
of the callees compiled inside it, and the test that was running. The summary prints
each process's seconds, the kernels by seconds, and how much of the compiling was done
twice: the kernels that more than one worker compiled (each worker compiles what its
tests need unless another has put it in the cache already).
"""

from __future__ import annotations

import collections
import json
import os
import sys
import time
from pathlib import Path

LOG_DIR = Path(os.environ.get("NARDY_COMPILE_LOG", "/tmp/compile-log"))

_stack: list = []
_log: list = []


def _listener():
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            _stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            t0, inner = _stack.pop()
            took = time.perf_counter() - t0
            if _stack:
                _stack[-1][1] += took
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = (f"{func.__module__}.{func.__qualname__}" if func is not None
                    else str(ev.data.get("dispatcher")))
            test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
            _log.append((name, took - inner, test))

    return event, Listener()


def pytest_configure(config):
    event, listener = _listener()
    event.register("numba:compile", listener)


def pytest_sessionfinish(session):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    (LOG_DIR / f"{worker}.json").write_text(json.dumps(_log))


def summary(folder: Path, top: int = 25) -> None:
    """Print the logs of ``folder``."""
    by_kernel: dict = collections.defaultdict(collections.Counter)
    for path in sorted(folder.glob("*.json")):
        rows = json.loads(path.read_text())
        print(f"{path.stem:6s} {sum(r[1] for r in rows):7.1f} s in {len(rows)} compiles")
        for name, secs, _ in rows:
            by_kernel[name][path.stem] += secs
    total = sum(sum(c.values()) for c in by_kernel.values())
    twice = sum(sum(c.values()) - max(c.values()) for c in by_kernel.values() if len(c) > 1)
    print(f"all    {total:7.1f} s; compiled again by another process: {twice:.1f} s")
    print(f"{'s':>7s}  processes  kernel")
    for name, c in sorted(by_kernel.items(), key=lambda x: -sum(x[1].values()))[:top]:
        print(f"{sum(c.values()):7.1f}  {len(c):9d}  {name}")


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=str(LOG_DIR),
                    help=f"the plugin's logs (default {LOG_DIR})")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    if not folder.is_dir() or not any(folder.glob("*.json")):
        print(f"{folder}: no compile logs there (run the tests with -p compile_log first)",
              file=sys.stderr)
        return 2
    summary(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
