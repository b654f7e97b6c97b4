"""Cold and warm start of each entry point: what a first run pays numba to compile.

    python benchmarks/compile.py [--only analyse-0 analyse-2 ...] [--keep DIR]

Each entry point (:data:`ENTRIES`) runs twice in a fresh process: first with an empty
numba cache (``NUMBA_CACHE_DIR`` set to a new folder, so every kernel it reaches is
compiled and written there), then again on that cache (the warm start a user has from
the second run on). Each entry gets a cache of its own, so its cold figure is what a
fresh install pays for that command alone. Wall seconds of the whole command, process
start and imports included; the bear-off tables are built once beforehand (they are
data, not compilation). Cores should be idle: a second job on the machine inflates the
cold figures.

A cold search compiles on two processes (:mod:`engine.search.precompile`); ``--alone``
adds a column with the same cold start on one (``NARDY_PRECOMPILE=0``, a cache of its
own), run first.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_ID = "4HPwATDgc/ABMA"


def _request(**fields) -> str:
    return json.dumps({"id": 1, **fields}) + "\n"


ENTRIES = {
    "analyse-0": (["-m", "engine.analyse", "--position", "start", "--dice", "31"], None),
    "analyse-2": (["-m", "engine.analyse", "--position", "start", "--dice", "31",
                   "--ply", "2"], None),
    "analyse-3": (["-m", "engine.analyse", "--position", "start", "--dice", "31",
                   "--ply", "3"], None),
    "protocol-moves": (["-m", "engine.protocol"],
                       _request(cmd="moves", position=START_ID, dice=[3, 1])),
    "protocol-best-0": (["-m", "engine.protocol"],
                        _request(cmd="best", position=START_ID, dice=[3, 1], ply=0)),
    "protocol-best-2": (["-m", "engine.protocol"],
                        _request(cmd="best", position=START_ID, dice=[3, 1], ply=2)),
    "cube": (["-m", "engine.cube_cli", "--position", START_ID], None),
    "selfplay": (["-m", "training.selfplay", "--variant", "backgammon", "--games", "200",
                  "--workers", "1", "--quiet", "--out", "{tmp}/run"], None),
    "duel": (["-c", "from engine.play.duel import duel; from engine.eval.network import Network; "
                    "print(duel(Network.load('models/backgammon.npz'), 'pubeval', 20, 1))"],
             None),
}
"""name: (python arguments, standard input)."""


def run(args: list[str], stdin: str | None, cache: Path, tmp: Path,
        **extra: str) -> tuple[float, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), OMP_NUM_THREADS="1", **extra)
    cmd = [sys.executable] + [a.replace("{tmp}", str(tmp)) for a in args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, text=True, capture_output=True, cwd=ROOT,
                          env=env)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return dt, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", choices=list(ENTRIES), default=list(ENTRIES))
    ap.add_argument("--keep", type=Path, help="keep the caches under this folder")
    ap.add_argument("--alone", action="store_true",
                    help="also the cold start without the compile helper")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "engine.eval.bearoff", "--build"], cwd=ROOT, check=True,
                   capture_output=True)
    base = Path(tempfile.mkdtemp(prefix="nardy-compile-"))
    alone_head = f" {'alone s':>8}" if args.alone else ""
    print(f"{'entry':<17}{alone_head} {'cold s':>8} {'warm s':>8}", flush=True)
    try:
        for name in args.only:
            argv, stdin = ENTRIES[name]
            cache, tmp = base / name / "cache", base / name / "tmp"
            tmp.mkdir(parents=True)
            alone = ""
            if args.alone:
                t, _ = run(argv, stdin, base / name / "alone", tmp, NARDY_PRECOMPILE="0")
                alone = f" {t:8.1f}"
                shutil.rmtree(tmp)
                tmp.mkdir()
            cold, _ = run(argv, stdin, cache, tmp)
            shutil.rmtree(tmp)
            tmp.mkdir()
            warm, _ = run(argv, stdin, cache, tmp)
            print(f"{name:<17}{alone} {cold:8.1f} {warm:8.2f}", flush=True)
    finally:
        if args.keep:
            shutil.copytree(base, args.keep, dirs_exist_ok=True)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
