"""Match review speed: the wall time of ``python -m engine.review``'s analysis of a match
file (every play and cube decision of both players rated) beside GNU Backgammon's own
``analyse match`` of the same file at the same depth, on one thread each.

    python benchmarks/review.py                      # the 5-point match of tests/data, 0-2 ply
    python benchmarks/review.py --file M.mat --plies 0 1 --no-gnubg

GNU Backgammon (Debian's ``gnubg``, when installed) runs ``import mat FILE``, its
analysis set to the same plies for chequer play and cube decisions (``set analysis
chequerplay evaluation plies N``, ``... cubedecision ...``, one thread, no noise), and
the ``analyse match`` command alone is timed inside its Python (``time.perf_counter``).
The engine's time is :func:`engine.cli.review.review` alone, the search loaded and its
kernels compiled before (a warm-up review of the first game at each depth). Both rate the same decisions (the
file's plays and cube actions, and every chance to double); their networks differ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gnubg_rollout import find_gnubg  # noqa: E402

from engine.cli._decide import search_for  # noqa: E402
from engine.cli.review import review, totals  # noqa: E402
from engine.notation.matfile import MatchRecord, read_mat, replay  # noqa: E402

DEFAULT_FILE = ROOT / "tests" / "data" / "matches" / "gnubg_5_point.mat"
_MARK = "NARDY_GNUBG_REVIEW"
_SCRIPT = """
import gnubg, time
for c in {cmds!r}:
    gnubg.command(c)
t0 = time.perf_counter()
gnubg.command("analyse match")
print("\\n{mark} WALL %.6f" % (time.perf_counter() - t0), flush=True)
"""


def gnubg_analyse(path: Path, ply: int, timeout: float = 3600.0) -> float:
    """Seconds GNU Backgammon's ``analyse match`` of ``path`` takes at ``ply``."""
    exe = find_gnubg()
    if exe is None:
        raise RuntimeError("gnubg is not installed")
    cmds = ["set threads 1", f"import mat {path}"]
    for what in ("chequerplay", "cubedecision"):
        cmds += [f"set analysis {what} evaluation plies {ply}",
                 f"set analysis {what} evaluation noise 0",
                 f"set analysis {what} evaluation cubeful on"]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(_SCRIPT.format(cmds=cmds, mark=_MARK))
        script = f.name
    try:
        out = subprocess.run([exe, "-t", "-q", "-r", "-p", script], capture_output=True,
                             text=True, timeout=timeout).stdout
    finally:
        os.unlink(script)
    for line in out.splitlines():
        if line.startswith(f"{_MARK} WALL "):
            return float(line.split()[-1])
    raise RuntimeError(f"gnubg printed no time; its output ended: {out[-500:]!r}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE, help="the match file")
    ap.add_argument("--plies", type=int, nargs="+", default=[0, 1, 2],
                    help="search depths (0..3)")
    ap.add_argument("--no-gnubg", action="store_true", help="leave GNU Backgammon out")
    args = ap.parse_args(argv)
    record = read_mat(args.file)
    decisions = sum(1 for _ in replay(record))
    search = search_for("backgammon", threads=1)
    first = MatchRecord(record.length, record.players, record.games[:1], record.header)
    for ply in args.plies:                          # load and compile before timing
        review(first, search, ply)
    gnubg = None if args.no_gnubg else find_gnubg()
    print(f"{args.file.name}: {len(record.games)} games, {decisions} decisions; one thread; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'ply':>3}  {'engine s':>9}  {'per decision ms':>15}  {'gnubg s':>8}  {'ratio':>6}"
          f"  engine mEMG/play (first, second)")
    rows = []
    for ply in args.plies:
        t0 = time.perf_counter()
        assessed = review(record, search, ply)
        ours = time.perf_counter() - t0
        rates = [f"{t.play_rate:.1f}" for t in totals(record, assessed)]
        theirs = gnubg_analyse(args.file.resolve(), ply) if gnubg else None
        ratio = f"{ours / theirs:6.2f}" if theirs else "     -"
        print(f"{ply:>3}  {ours:9.2f}  {1000 * ours / decisions:15.2f}  "
              f"{theirs if theirs is not None else float('nan'):8.2f}  {ratio}  "
              f"{', '.join(rates)}")
        rows.append({"ply": ply, "engine_s": round(ours, 3), "gnubg_s": theirs})
    print(json.dumps({"file": args.file.name, "decisions": decisions, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
