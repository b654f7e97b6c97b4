"""GNU Backgammon against the engine through its external player (``engine.external``).

Uses Debian's ``gnubg`` when it is installed (``apt-get install gnubg``; it lives in
``/usr/games``) and installs nothing. It starts the external-player server in this
process on a free localhost port, then runs ``gnubg -t`` (on a pseudo-terminal, so that
its board displays arrive line by line) with ``set player 1 external localhost:PORT``
(``--engine-player 0`` makes the engine its player 0 instead), GNU Backgammon's own
player at ``--gnubg-plies`` against the engine at ``--ply``:

* a money session of ``--games`` games (``new session``, then ``new game``), and
* ``--matches`` matches to ``--length`` points (``new match``).

At each request GNU Backgammon waits for the answer, and the Position ID and Match ID it
displayed since the previous request, when they are of a decision of the engine's
player, are those of the state it asks about (it does not display every roll it makes for
its external player; such requests are only checked for legality). The script checks
that the engine read the board string as GNU Backgammon meant it (position, dice, cube
value and owner, score, match length, Crawford game, a double on offer), that every move
it answers is legal (:func:`engine.notation.movetext.parse_move` against the legal
plays), and counts the errors, the cube actions and the results GNU Backgammon prints::

    python benchmarks/gnubg_external.py --games 100 --matches 10
    python benchmarks/gnubg_external.py --games 20 --matches 3 --seed 3 \\
        --engine-player both --record tests/data/fibs/gnubg_boards.jsonl  # the test data

``--record`` writes up to ``--record-limit`` of the requests that have IDs (board string,
GNU Backgammon's ``PositionID:MatchID`` of the same state, the reply), then asks GNU Backgammon for the ``show board`` of each of
those states with ``set output rawboard on`` (FIBS's own field order), for
``tests/test_fibs.py``. The summary (JSON) goes to standard output.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.cli.external import Settings, make_servers, warm_up  # noqa: E402
from engine.movegen.generate import successors  # noqa: E402
from engine.notation.fibs import parse_fibs_board  # noqa: E402
from engine.notation.gnubg_id import position_from_gnubg, position_id  # noqa: E402
from engine.notation.movetext import parse_move  # noqa: E402

_ID = re.compile(r"Position ID: ([A-Za-z0-9+/]{14}).*?Match ID\s*: ([A-Za-z0-9+/]{12})",
                 re.S)
_WIN = re.compile(r"(\w+) wins an? (single game|gammon|backgammon) and (\d+) points?\.")
_DROP = re.compile(r"(\w+) refuses the cube and gives up (\d+) points?\.")
_SCORE = re.compile(r"The score \(after (\d+) games?\) is: (\S+) (\d+), (\S+) (\d+)")
ENGINE, GNUBG = "nardy", "gnubg"


def find_gnubg() -> str | None:
    """The ``gnubg`` program: on the PATH, or Debian's ``/usr/games/gnubg``."""
    found = shutil.which("gnubg")
    if found:
        return found
    return "/usr/games/gnubg" if os.access("/usr/games/gnubg", os.X_OK) else None


class Gnubg:
    """``gnubg -t`` with its output on a pseudo-terminal, read by a thread."""

    def __init__(self, program: str, commands: list[str]):
        master, slave = pty.openpty()
        self.proc = subprocess.Popen([program, "-t", "-q", "-r"], stdin=subprocess.PIPE,
                                     stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.master = master
        self.text = ""
        self.lock = threading.Lock()
        self.last = time.monotonic()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        assert self.proc.stdin is not None
        self.proc.stdin.write(("\n".join(commands) + "\n").encode())
        self.proc.stdin.close()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.5)
                if not ready:
                    if self.proc.poll() is not None:
                        return
                    continue
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.text += data.decode("utf-8", "replace").replace("\r", "")
                self.last = time.monotonic()

    def quiet(self, seconds: float = 0.05, limit: float = 2.0) -> str:
        """The output so far, once none has come for ``seconds``."""
        start = time.monotonic()
        while time.monotonic() - start < limit:
            with self.lock:
                if time.monotonic() - self.last >= seconds:
                    return self.text
            time.sleep(seconds / 2)
        with self.lock:
            return self.text

    def wait(self, timeout: float) -> int:
        rc = self.proc.wait(timeout)
        self.reader.join(5)
        return rc


def _session_commands(args, port: int, engine: int) -> list[str]:
    g = 1 - engine
    setup = ["set automatic game off", f"set player {g} name {GNUBG}", f"set player {g} gnu",
             f"set player {g} chequerplay evaluation plies {args.gnubg_plies}",
             f"set player {g} cubedecision evaluation plies {args.gnubg_plies}",
             f"set player {engine} name {ENGINE}",
             f"set player {engine} external localhost:{port}", f"set seed {args.seed}"]
    # a money session game by game; a match plays on by itself with automatic games
    money = ["new session"] + ["new game"] * (args.games - 1) if args.games else []
    matches = ["set automatic game on"] + [f"new match {args.length}"] * args.matches
    return setup + money + ["show score"] + matches + ["show score", "quit", "y"]


def _check(record: dict) -> list[str]:
    """What the engine got wrong in one request (empty: nothing)."""
    problems = []
    board = parse_fibs_board(record["board"])
    view = board.view("gnubg")
    if record["gnubg_id"]:
        pos, info = position_from_gnubg(record["gnubg_id"])
        assert info is not None
        want = {"position": position_id(pos), "cube": info.cube_value,
                "owner": info.cube_owner, "length": info.match_length,
                "score": tuple(info.score) if info.match_length else (),
                "crawford": info.crawford, "doubled": info.doubled,
                "dice": tuple(sorted(info.dice)) if info.dice and not info.doubled else None}
        got = {"position": position_id(view.position), "cube": view.cube,
               "owner": view.owner, "length": view.match_length,
               "score": tuple(view.score) if view.match_length else (),
               "crawford": view.crawford, "doubled": view.decision in ("take", "beaver"),
               "dice": tuple(sorted(view.dice)) if view.dice else None}
        for k in want:
            if want[k] != got[k]:
                problems.append(f"{k}: gnubg {want[k]}, read {got[k]}")
    if view.decision == "move":
        try:
            parse_move(record["reply"] or "", view.position, view.dice,
                       successors(view.position, view.dice))
        except ValueError as exc:
            problems.append(f"illegal move {record['reply']!r}: {exc}")
    elif record["reply"] not in {"cube": ("roll", "double"), "take": ("take", "drop", "beaver"),
                                 "beaver": ("take", "drop")}[view.decision]:
        problems.append(f"reply {record['reply']!r} to a {view.decision} decision")
    return problems


def _who(name: str) -> str:
    """GNU Backgammon's own player is named gnubg; the other is the engine (GNU
    Backgammon names its player 1 after the user again when a match starts)."""
    return GNUBG if name == GNUBG else ENGINE


def _results(text: str) -> dict:
    wins = {ENGINE: {"single game": 0, "gammon": 0, "backgammon": 0, "points": 0},
            GNUBG: {"single game": 0, "gammon": 0, "backgammon": 0, "points": 0}}
    for name, kind, points in _WIN.findall(text):
        wins[_who(name)][kind] += 1
        wins[_who(name)]["points"] += int(points)
    drops = {ENGINE: 0, GNUBG: 0}
    for name, _ in _DROP.findall(text):
        drops[_who(name)] += 1
    return {"games": sum(sum(w[k] for k in ("single game", "gammon", "backgammon"))
                         for w in wins.values()), "wins": wins, "drops": drops}


def play(args, program: str, engine: int) -> tuple[dict, list[dict], str]:
    settings = Settings(ply=args.ply, cube_ply=args.ply)
    warm_up(settings)
    records: list[dict] = []
    holder: dict = {}

    def observe(line: str, reply: str | None) -> None:
        text = holder["gnubg"].quiet()
        since = records[-1]["at"] if records else 0
        gid = None
        ids = _ID.findall(text[since:])
        if ids:
            # the last board shown since the previous request, if it is one where the
            # external player decides: GNU Backgammon does not show every roll it
            # makes for its external player
            pid, mid = ids[-1]
            info = position_from_gnubg(f"{pid}:{mid}")[1]
            if info is not None and info.turn == engine:
                gid = f"{pid}:{mid}"
        records.append({"board": line.strip("\x00\r\n "), "reply": reply,
                        "gnubg_id": gid, "at": len(text)})

    server = make_servers(settings, port=0, observe=observe)[0]
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    start = time.perf_counter()
    gnubg = Gnubg(program, _session_commands(args, port, engine))
    holder["gnubg"] = gnubg
    rc = gnubg.wait(args.timeout)
    seconds = time.perf_counter() - start
    server.shutdown()
    server.server_close()
    text = gnubg.text
    money_end = _money_end(text, args.games)
    sections = {"money": text[:money_end], "matches": text[money_end:]}
    problems = []
    for r in records:
        for p in _check(r):
            problems.append({"board": r["board"], "reply": r["reply"], "problem": p})
    replies: dict = {}
    for r in records:
        key = r["reply"] if r["reply"] in ("roll", "double", "take", "drop", "beaver") else (
            "error" if (r["reply"] or "").startswith("Error") else "move")
        replies[key] = replies.get(key, 0) + 1
    summary = {
        "gnubg": subprocess.run([program, "--version"], capture_output=True,
                                text=True).stdout.splitlines()[0],
        "engine_player": engine, "engine_ply": args.ply, "gnubg_plies": args.gnubg_plies,
        "seed": args.seed,
        "seconds": round(seconds, 1), "gnubg_exit": rc, "requests": len(records),
        "checked_against_ids": sum(r["gnubg_id"] is not None for r in records),
        "replies": replies, "problems": len(problems), "problem_list": problems[:20],
        "gnubg_warnings": len(re.findall(r"(?i)warning|badly formed|illegal", text)),
        "money": {**_results(sections["money"]),
                  "final": _last_score(sections["money"])},
        "matches": {"played": args.matches, "length": args.length,
                    **_results(sections["matches"]),
                    "won": _match_winners(sections["matches"])},
    }
    return summary, records, text


def _money_end(text: str, games: int) -> int:
    """Where the money session's output ends: after its last game's score line."""
    if not games:
        return 0
    ends = [m.end() for m in _SCORE.finditer(text) if int(m.group(1)) == games]
    return ends[0] if ends else len(text)


def _last_score(text: str) -> dict | None:
    scores = _SCORE.findall(text)
    if not scores:
        return None
    games, a, sa, b, sb = scores[-1]
    return {"games": int(games), _who(a): int(sa), _who(b): int(sb)}


def _match_winners(text: str) -> dict:
    won = {ENGINE: 0, GNUBG: 0}
    # GNU Backgammon prints this right after the score line's closing parenthesis
    for name in re.findall(r"(\w+) has won the match\.", text):
        won[_who(name)] += 1
    return won


def _sample(records: list[dict], limit: int) -> list[dict]:
    """At most ``limit`` records: every one of a kind seen rarely (a double offered, a
    cube turned, the Crawford game, a checker on the bar, no legal move, a match score),
    then others evenly spread, in their order."""
    def rare(r: dict) -> bool:
        b = parse_fibs_board(r["board"])
        return bool(b.was_doubled or b.cube > 1 or b.board[0] or b.board[25]
                    or r["reply"] in ("", "double", "drop", "beaver")
                    or (b.match_length and (b.score or b.opponent_score))
                    or b.redoubles == 0 or b.did_crawford)
    keep = [i for i, r in enumerate(records) if rare(r)][:limit // 2]
    rest = [i for i in range(len(records)) if i not in set(keep)]
    room = limit - len(keep)
    if rest and room > 0:
        step = max(1, len(rest) // room)
        keep += rest[::step][:room]
    return [records[i] for i in sorted(keep)]


def rawboards(program: str, ids: list[str]) -> list[dict]:
    """GNU Backgammon's ``show board`` with ``set output rawboard on`` for each
    ``PositionID:MatchID`` (each ``set gnubgid`` shows the board too: the last board
    before the next marker, the answer to ``show jacoby``, is the one)."""
    marker = "show jacoby"
    commands = ["set player 0 human", "set player 1 human", "set output rawboard on",
                "new game", marker]
    for gid in ids:
        commands += [f"set gnubgid {gid}", "show board", marker]
    commands += ["quit", "y"]
    out = subprocess.run([program, "-t", "-q", "-r"], input="\n".join(commands) + "\n",
                         capture_output=True, text=True, timeout=600).stdout
    chunks = re.split(r"^New money sessions are played .*$", out, flags=re.M)[1:-1]
    if len(chunks) != len(ids):
        raise RuntimeError(f"{len(chunks)} answers for {len(ids)} IDs")
    rows = []
    for chunk, gid in zip(chunks, ids):
        boards = re.findall(r"^(board:\S+)$", chunk, re.M)
        if not boards:
            raise RuntimeError(f"no raw board for {gid}")
        rows.append({"board": boards[-1], "gnubg_id": gid, "source": "rawboard"})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=100, help="money games (default 100)")
    ap.add_argument("--matches", type=int, default=10, help="matches (default 10)")
    ap.add_argument("--length", type=int, default=5, help="match length (default 5)")
    ap.add_argument("--ply", type=int, default=2, help="the engine's plies (default 2)")
    ap.add_argument("--gnubg-plies", type=int, default=0,
                    help="GNU Backgammon's plies (default 0)")
    ap.add_argument("--seed", type=int, default=1, help="GNU Backgammon's dice seed")
    ap.add_argument("--engine-player", choices=("0", "1", "both"), default="1",
                    help="GNU Backgammon's player the engine is (default 1; both: one "
                         "run each)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds GNU Backgammon "
                                                                "may run")
    ap.add_argument("--record", metavar="FILE", help="write the requests as test data")
    ap.add_argument("--record-limit", type=int, default=300,
                    help="most requests --record keeps (default 300)")
    ap.add_argument("--transcript", metavar="FILE", help="write GNU Backgammon's output")
    args = ap.parse_args()
    program = find_gnubg()
    if program is None:
        print("gnubg not found (Debian: apt-get install gnubg); nothing run",
              file=sys.stderr)
        return 2
    players = {"0": [0], "1": [1], "both": [1, 0]}[args.engine_player]
    summaries, records, texts = [], [], []
    for engine in players:
        summary, recs, text = play(args, program, engine)
        summaries.append(summary)
        records += [dict(r, engine_player=engine) for r in recs]
        texts.append(text)
    if args.transcript:
        Path(args.transcript).write_text("\n".join(texts))
    print(json.dumps(summaries[0] if len(summaries) == 1 else summaries, indent=2))
    if args.record:
        recs = _sample([r for r in records if r["gnubg_id"]], args.record_limit)
        rows = [{"board": r["board"], "gnubg_id": r["gnubg_id"], "reply": r["reply"],
                 "source": "external", "engine_player": r["engine_player"]} for r in recs]
        ids = sorted({r["gnubg_id"] for r in recs})
        rows += rawboards(program, ids)
        with open(args.record, "w") as f:
            f.write(f"# {summaries[0]['gnubg']}; benchmarks/gnubg_external.py --games "
                    f"{args.games} --matches {args.matches} --seed {args.seed} "
                    f"--engine-player {args.engine_player} --record ...\n")
            for row in rows:
                f.write(json.dumps(row) + "\n")
        print(f"wrote {len(rows)} records to {args.record}", file=sys.stderr)
    return 1 if any(sm["problems"] for sm in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
