"""GNU Backgammon's own rollout of a position, run through Debian's ``gnubg`` program.

A benchmark helper (``benchmarks/rollout.py`` prints these figures beside ours); the
tests never need it. The PyPI ``gnubg_nn.rollout`` crashes, so this drives the real
program instead: ``gnubg -t -q -r -p SCRIPT`` runs a small script in gnubg's embedded
Python, which issues these gnubg commands through ``gnubg.command``::

    set threads T
    set jacoby off                 (cubeless equity counts gammons)
    set player 0 human / set player 1 human
    set output digits 4 / set output winpc off / set output mwc off
    set rollout trials N / seed S / cubeful off|on / initial off
    set rollout varredn on / quasirandom on / later enable off
    set rollout chequerplay plies 0 / cubedecision plies 0
    set rollout truncation enable on|off / truncation plies K
    set rollout limit enable off / jsd stop off
    new game
    set matchid cAkAAAAAAAAA       (money game, centred cube, player 1 on roll, no dice)
    set board POSITION_ID
    rollout

and times the ``rollout`` command alone (``time.perf_counter`` around it).

Why a pseudo-terminal: gnubg prints rollout figures only as "progress", which it shows
only when its standard output is a terminal (``fShowProgress = isatty(stdout)``); on a
pipe, ``rollout`` prints "Rollout done. Printing final results." and nothing else. The
block printed after that line is parsed::

    Current Position:
      0.5294 0.1470 0.0060 - 0.4706 0.1240 0.0046 CL +0.0833
     [0.0013 0.0011 0.0003 - 0.0013 0.0012 0.0002 CL  0.0034] 1r
    Truncated cubeless rollout (depth 7) (truncated at one-sided bearoff) with variance reduction
    144 games, Mersenne Twister dice gen. with seed 1 and quasi-random dice

``rollout`` rolls out the board as it stands, the player on roll rolling first (no cube
action at the top, ``fCubeDecTop`` false), and reports from that player's point of view,
so the figures are those of the Position ID's side to move before its roll. gnubg also
stops a trial when the position reaches its one-sided bear-off database, valuing it
there. Output carries 4 decimals (``set output digits`` above 4 overflows gnubg's
buffers).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import tempfile
import time

# money game, cube 1 centred, game playing, player 1 on roll, dice not rolled
_MATCH_ID = "cAkAAAAAAAAA"
_MARK = "NARDY_GNUBG_ROLLOUT"
_NUM = r"([+-]?\d+\.\d+)"
_PROBS = re.compile(r"^\s+" + r"\s+".join([_NUM] * 3) + r"\s+-\s+" + r"\s+".join([_NUM] * 3)
                    + r"\s+CL\s+" + _NUM + r"(?:\s+CF\s+" + _NUM + ")?\s*$", re.M)
_SES = re.compile(r"^\s*\[" + r"\s+".join([_NUM] * 3) + r"\s+-\s+" + r"\s+".join([_NUM] * 3)
                  + r"\s+CL\s+" + _NUM + r"(?:\s+CF\s+" + _NUM + r")?\]", re.M)
_GAMES = re.compile(r"^(\d+) games?,", re.M)


def find_gnubg() -> str | None:
    """The ``gnubg`` program: on the PATH, or Debian's ``/usr/games/gnubg``."""
    return shutil.which("gnubg") or (
        "/usr/games/gnubg" if os.access("/usr/games/gnubg", os.X_OK) else None)


def _commands(position_id: str, trials: int, truncate: int | None, seed: int,
              threads: int, cubeful: bool) -> list[str]:
    onoff = {True: "on", False: "off"}
    cmds = [f"set threads {threads}", "set jacoby off",
            "set player 0 human", "set player 1 human",
            "set output digits 4", "set output winpc off", "set output mwc off",
            f"set rollout trials {trials}", f"set rollout seed {seed}",
            f"set rollout cubeful {onoff[cubeful]}", "set rollout initial off",
            "set rollout varredn on", "set rollout quasirandom on",
            "set rollout later enable off",
            "set rollout chequerplay plies 0", "set rollout cubedecision plies 0",
            f"set rollout truncation enable {onoff[bool(truncate)]}",
            "set rollout limit enable off", "set rollout jsd stop off"]
    if truncate:
        cmds.append(f"set rollout truncation plies {truncate}")
    return cmds + ["new game", f"set matchid {_MATCH_ID}", f"set board {position_id}"]


_SCRIPT = """
import gnubg, json, time
for c in json.loads({cmds!r}):
    gnubg.command(c)
print("\\n{mark} POSITION " + gnubg.positionid() + " " + gnubg.matchid(), flush=True)
t0 = time.perf_counter()
gnubg.command("rollout")
dt = time.perf_counter() - t0
print("\\n{mark} WALL %.6f" % dt, flush=True)
"""


def _run_on_pty(argv: list[str], timeout: float) -> str:
    """Run ``argv`` with stdout and stderr on a pseudo-terminal; all it printed."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                                close_fds=True)
    except OSError as e:
        os.close(master)
        raise RuntimeError(f"cannot run {argv[0]}: {e}") from e
    finally:
        os.close(slave)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"gnubg did not finish within {timeout:.0f} s")
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    data = b""
                if not data:
                    break
                chunks.append(data)
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"gnubg did not exit within {timeout:.0f} s") from None
    finally:
        if proc.poll() is None:          # a timeout, an error or Ctrl-C: no gnubg left behind
            proc.kill()
            proc.wait()
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r", "")


def gnubg_rollout(position_id: str, trials: int = 1296, truncate: int | None = 7,
                  seed: int = 1, threads: int = 1, cubeful: bool = False,
                  timeout: float = 1800.0, program: str | None = None) -> dict:
    """GNU Backgammon's rollout of ``position_id`` (money, cube centred, side to move
    before its roll, its point of view): 0-ply chequer play, variance reduction,
    quasi-random dice, cubeless unless ``cubeful``; truncated after ``truncate`` plies
    (``None`` or 0: played out, to the end or gnubg's one-sided bear-off database).

    Returns ``equity`` (cubeless, gammons counted) and ``se``, ``probs`` and
    ``probs_se`` (gnubg's win, win gammon, win backgammon, lose gammon, lose
    backgammon), ``cubeful_equity`` and ``cubeful_se`` (``None`` unless ``cubeful``),
    ``trials`` done, ``seconds`` (the ``rollout`` command alone), ``process_seconds``
    (the whole gnubg run) and ``settings`` (gnubg's own description of the rollout).
    Raises :class:`RuntimeError` when gnubg is missing, fails or prints no figures.
    """
    program = program or find_gnubg()
    if program is None:
        raise RuntimeError("gnubg is not installed (apt-get install gnubg)")
    cmds = _commands(position_id, trials, truncate, seed, threads, cubeful)
    script = _SCRIPT.format(cmds=json.dumps(cmds), mark=_MARK)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    try:
        t0 = time.perf_counter()
        out = _run_on_pty([program, "-t", "-q", "-r", "-p", f.name], timeout)
        process_seconds = time.perf_counter() - t0
    finally:
        os.unlink(f.name)

    def fail(why: str) -> RuntimeError:
        return RuntimeError(f"gnubg rollout of {position_id}: {why}; output ends:\n"
                            + out[-1500:])

    if "Unknown keyword" in out:
        raise fail("gnubg rejected a command")
    pos = re.search(_MARK + r" POSITION (\S+) (\S+)", out)
    if not pos or pos.groups() != (position_id, _MATCH_ID):
        raise fail(f"board set to {pos and pos.groups()!r}, not {(position_id, _MATCH_ID)!r}")
    wall = re.search(_MARK + r" WALL (\S+)", out)
    done = out.rfind("Rollout done.")
    if not wall or done < 0:
        raise fail("the rollout did not finish")
    final = out[done:]
    probs, ses, games = _PROBS.search(final), _SES.search(final), _GAMES.search(final)
    if not (probs and ses and games):
        raise fail("no rollout figures after 'Rollout done.'")
    try:
        p = [float(x) for x in probs.groups()[:6]]
        s = [float(x) for x in ses.groups()[:6]]
        seconds = float(wall.group(1))
    except ValueError as e:
        raise fail(f"unreadable figures ({e})") from None
    cf, cf_se = probs.group(8), ses.group(8)
    settings = final[games.start():].split("Time elapsed")[0].strip()
    context = final[final.find("\n", ses.end()) + 1:games.start()].strip()
    return {
        "equity": float(probs.group(7)),
        "se": float(ses.group(7)),
        "probs": [p[0], p[1], p[2], p[4], p[5]],
        "probs_se": [s[0], s[1], s[2], s[4], s[5]],
        "cubeful_equity": float(cf) if cf else None,
        "cubeful_se": float(cf_se) if cf_se else None,
        "trials": int(games.group(1)),
        "seconds": seconds,
        "process_seconds": process_seconds,
        "settings": " | ".join(line.strip() for line in (context + "\n" + settings)
                               .splitlines() if line.strip()),
    }


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("position_id", nargs="?", default="4HPwATDgc/ABMA")
    ap.add_argument("--trials", type=int, default=1296)
    ap.add_argument("--truncate", type=int, default=7, help="0: no truncation")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cubeful", action="store_true")
    a = ap.parse_args()
    print(json.dumps(gnubg_rollout(a.position_id, a.trials, a.truncate, a.seed, a.threads,
                                   a.cubeful), indent=1))
