"""Where a rollout's time goes, numba kernel by kernel: Linux ``perf`` samples of this
process, the kernels named through a perf map the process writes of its own code.

    python benchmarks/kernel_profile.py                                # the opening, truncated at 7
    python benchmarks/kernel_profile.py --position contact --truncate 0 --seconds 10

``perf`` names code made at run time only through ``/tmp/perf-<pid>.map`` (start,
size and name of each function). numba keeps a kernel's machine code, with its
symbols, only when it compiled the kernel in this process, not when it loaded it
from its cache; so the script first points ``NUMBA_CACHE_DIR`` at a new, empty
temporary folder (a cold compile of the search kernels, about a minute) unless
``--keep-cache`` is given (then most kernels come unnamed, as bare addresses). It
then rolls the position out once as a warm-up, writes the map (:func:`write_perf_map`,
from each kernel's object code through ``nm`` and the address numba gives its entry),
and rolls it out again and again on ``--threads`` search threads while ``perf
record`` samples the process for ``--seconds``; the report lists each function's share
of the samples, numba's mangled names shortened to ``module.function``
(:func:`short_name`). Inlined callees count in their caller. Needs ``perf`` and
``nm`` (binutils); a benchmark only, never the tests' concern.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PART = re.compile(r"(\d+)")


def short_name(symbol: str) -> str:
    """``engine.eval.network.hidden_deltas`` for numba's mangled
    ``_ZN6engine4eval7network13hidden_deltasB4v121B76c8...E5ArrayIsLi...``: the
    length-prefixed parts after ``_ZN`` joined by dots, up to the first part that is
    not one (numba's ``B`` version and ABI tags). Other names come back unchanged."""
    if not symbol.startswith("_ZN"):
        return symbol
    i, parts = 3, []
    while i < len(symbol) and symbol[i].isdigit():
        m = _PART.match(symbol, i)
        n = int(m.group(1))
        start = m.end()
        parts.append(symbol[start:start + n])
        i = start + n
    if not parts:
        return symbol
    # numba writes "<locals>" as "_3clocals_3e" and "." inside a part as "_2e"
    return ".".join(p.replace("_3clocals_3e", "<locals>").replace("_2e", ".")
                    for p in parts)


def _text_symbols(obj: bytes) -> list[tuple[int, int, str]]:
    """``(offset, size, name)`` of the functions defined in the object code ``obj``
    (``nm -S --defined-only``)."""
    with tempfile.NamedTemporaryFile(suffix=".o", delete=False) as f:
        f.write(obj)
        name = f.name
    try:
        out = subprocess.run(["nm", "-S", "--defined-only", name], capture_output=True,
                             text=True, check=True).stdout
    finally:
        os.unlink(name)
    rows = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in ("t", "T"):
            rows.append((int(p[0], 16), int(p[1], 16), p[3]))
    return rows


def write_perf_map(path: str | os.PathLike) -> int:
    """Write the perf map of every numba kernel this process compiled (``start size
    name`` in hex, one line a function, by address) to ``path``; returns how many
    functions it holds. A kernel loaded from numba's cache has no object code here
    and is left out; so is one whose entry numba cannot give."""
    import gc

    from numba.core.registry import CPUDispatcher

    rows: dict[int, tuple[int, str]] = {}
    seen: set[int] = set()
    for obj in gc.get_objects():
        try:
            if not isinstance(obj, CPUDispatcher):
                continue
        except ReferenceError:          # a weak proxy whose object is gone
            continue
        for cres in obj.overloads.values():
            lib = cres.library
            code = getattr(lib, "_compiled_object", None)
            if id(lib) in seen or not code:
                continue
            seen.add(id(lib))
            syms = _text_symbols(code)
            entry = cres.fndesc.llvm_func_name
            base = None
            for off, _, name in syms:
                if name == entry:
                    base = lib.get_pointer_to_function(name) - off
            if base is None:
                continue
            for off, size, name in syms:
                rows[base + off] = (max(size, 1), name)
    with open(path, "w") as f:
        for addr in sorted(rows):
            size, name = rows[addr]
            f.write(f"{addr:x} {size:x} {name}\n")
    return len(rows)


def _report(data: str, top: int) -> list[tuple[float, str]]:
    """The ``top`` functions of ``perf report`` on ``data``: ``(percent, name)``."""
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol",
                          "--stdio"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            rows.append((float(m.group(1)), short_name(m.group(2))))
    merged: dict[str, float] = {}
    for pct, name in rows:          # one function compiled twice (two types) counts once
        merged[name] = merged.get(name, 0.0) + pct
    return sorted(((p, n) for n, p in merged.items()), reverse=True)[:top]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--position", default="opening", choices=("opening", "contact", "race"),
                    help="a position of benchmarks/rollout.py")
    ap.add_argument("--truncate", type=int, default=7, help="rolls; 0 plays the trials out")
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=6.0, help="how long perf samples")
    ap.add_argument("--top", type=int, default=20, help="functions listed")
    ap.add_argument("--keep-cache", action="store_true",
                    help="load numba's cached kernels (fast start, kernels unnamed)")
    args = ap.parse_args(argv)
    for tool in ("perf", "nm"):
        if shutil.which(tool) is None:
            ap.error(f"{tool} is not installed (perf: linux-perf; nm: binutils)")
    work = tempfile.mkdtemp(prefix="nardy-profile-")   # perf's data, the fresh cache
    if not args.keep_cache:
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(work, "numba")   # read at numba's import
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    perf_map = f"/tmp/perf-{os.getpid()}.map"
    try:
        return _profile(args, os.path.join(work, "perf.data"), perf_map)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if os.path.exists(perf_map):
            os.unlink(perf_map)


def _profile(args, data: str, perf_map: str) -> int:
    """:func:`main`'s work: the warm-up, the map, the sampled rollouts, the report."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from rollout import POSITIONS

    from engine.notation.parse import parse_position
    from engine.search.nply import Search
    from engine.search.rollout import Rollout, RolloutSettings

    pos = parse_position(POSITIONS[args.position])[0]
    rollout = Rollout(Search.load("backgammon", threads=args.threads))
    settings = RolloutSettings(trials=args.trials, truncate=args.truncate)
    t0 = time.perf_counter()
    rollout.position(pos, settings)
    print(f"warm-up rollout (compiles when the cache is fresh): {time.perf_counter() - t0:.1f} s",
          flush=True)
    named = write_perf_map(perf_map)
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "2000", "-p", str(os.getpid()),
                             "-o", data, "--", "sleep", str(args.seconds)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    runs, spent = 0, 0.0
    while perf.poll() is None:
        t0 = time.perf_counter()
        rollout.position(pos, settings)
        spent += time.perf_counter() - t0
        runs += 1
    err = perf.stderr.read().decode()
    if perf.returncode != 0 or not os.path.exists(data):
        print(f"perf record failed: {err.strip()}", file=sys.stderr)
        return 1
    print(f"{args.position}, truncate {args.truncate or 'none'}, {args.trials} trials, "
          f"{args.threads} thread(s): {runs} rollouts sampled, {spent / max(runs, 1):.2f} s "
          f"each; {named} functions named")
    print(f"{'share':>7s}  function")
    for pct, name in _report(data, args.top):
        print(f"{pct:6.2f}%  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
