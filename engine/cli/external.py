"""GNU Backgammon's external player (``python -m engine.external``), per
``docs/external.md``.

GNU Backgammon plays a player set with ``set player <n> external <socket>`` by
connecting to that socket and, at each of that player's decisions, sending one FIBS board
string (``board:...``, :mod:`engine.notation.fibs`) and reading one line back: a move in
its notation (``24/18 13/11``, ``bar/22*``, an empty line when no move is possible),
``double`` or ``roll`` before the roll, ``take``, ``drop`` or ``beaver`` when doubled.
This server answers those requests on a TCP port of localhost and/or a Unix socket, with
the engine's search.

It also answers the rest of GNU Backgammon's external-interface language (its
``external`` command; ``external_l.l`` / ``external_y.y`` in its sources), one line per
request: a board followed by session options (``jacobyrule``, ``crawfordrule``,
``beavers`` on/off, ``resignation N`` for the answer to a resignation: ``accept`` /
``reject``), ``evaluation fibsboard <board>`` with evaluation options (``plies N``,
``cubeful``, ``cubeless``, ``cube on|off``; ``prune``, ``noise``, ``deterministic``
are accepted and change nothing), ``version``, ``help``, ``exit`` / ``quit``.

A request it cannot serve is answered ``Error: <what was wrong>`` (GNU Backgammon prints
such a line and stops asking) and the connection serves the next request.

The board string carries the cube, the score and whether this is the Crawford game, but
neither the Jacoby rule nor whether beavers are allowed: those come from the command line
(``--jacoby``/``--no-jacoby``, ``--beavers``/``--no-beavers``), their defaults being GNU
Backgammon's (Jacoby on, beavers allowed), or from a request's session options.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import socketserver
import stat
import sys
import threading
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any, Callable

from engine.cli import _decide
from engine.cli._common import (
    integer,
    is_whole,
    listen_host,
    parse_args,
    port_number,
    thread_count,
)
from engine.cube.decision import CubeState
from engine.cube.met import default_table
from engine.errors import NardyError, clip, describe, quote
from engine.notation.fibs import PREFIX, SCORE_CONVENTIONS, FibsView, parse_fibs_board
from engine.notation.movetext import NO_MOVE, format_move, gnu_ending
from engine.search import precompile
from engine.search.nply import MAX_PLY, check_ply

VERSION = "0.1.0"
INTERFACE = "2"
"""The version of GNU Backgammon's external interface this server speaks."""
MAX_REQUEST = 1 << 16
"""The longest request line read, in bytes (GNU Backgammon's own buffer is 256)."""
_TRUE = ("yes", "on", "true")
_FALSE = ("no", "off", "false")


class RequestError(NardyError):
    """A request line the server cannot serve."""

    code = "bad_request"


@dataclass(frozen=True)
class Settings:
    """How the server plays (the command line's options, a request's session options)."""

    ply: int = 2
    """Depth of checker play (GNU Backgammon's plies, 0..3)."""
    cube_ply: int = 2
    """Depth of cube decisions."""
    jacoby: bool = True
    """Money play: the Jacoby rule."""
    beavers: bool = True
    """Money play: beavers allowed (GNU Backgammon allows three by default)."""
    crawford_rule: bool = True
    """Match play: the Crawford rule (off: no game is the Crawford game)."""
    scores: str = "gnubg"
    """Whose points the board's score fields hold (:data:`SCORE_CONVENTIONS`)."""
    threads: int | None = None
    """Search threads (default: the engine's)."""


# --------------------------------------------------------------------- requests
def _bool(word: str, option: str) -> bool:
    w = word.lower()
    if w in _TRUE:
        return True
    if w in _FALSE:
        return False
    raise RequestError(f"option {option} {quote(word)}: expected on or off")


@dataclass
class _Options:
    resignation: int = 0
    plies: int | None = None
    cubeful: bool = False


_SESSION = ("jacobyrule", "crawfordrule", "beavers", "resignation")
_EVAL = ("plies", "cube", "cubeful", "cubeless", "prune", "noise", "deterministic")


def _options(words: list[str], settings: Settings, evaluation: bool) -> tuple[Settings,
                                                                            _Options]:
    """The session (and, for ``evaluation``, evaluation) options after a board."""
    opts = _Options()
    i = 0
    while i < len(words):
        key = words[i].lower()
        arg = words[i + 1] if i + 1 < len(words) else None
        allowed = _SESSION + (_EVAL if evaluation else ())
        if key not in allowed:
            raise RequestError(f"option {quote(words[i])}: expected one of "
                               f"{', '.join(allowed)}")
        if key in ("cubeful", "cubeless"):
            opts.cubeful = key == "cubeful"
            i += 1
            continue
        if key in ("prune", "deterministic"):       # a flag, or a flag and a boolean
            i += 2 if arg is not None and arg.lower() in _TRUE + _FALSE else 1
            continue
        if arg is None:
            raise RequestError(f"option {key} needs a value")
        if key == "jacobyrule":
            settings = replace(settings, jacoby=_bool(arg, key))
        elif key == "crawfordrule":
            settings = replace(settings, crawford_rule=_bool(arg, key))
        elif key == "beavers":
            settings = replace(settings, beavers=_bool(arg, key))
        elif key == "cube":
            opts.cubeful = _bool(arg, key)
        elif key == "resignation":
            if arg not in ("0", "1", "2", "3"):
                raise RequestError(f"option resignation {quote(arg)}: expected 0..3")
            opts.resignation = int(arg)
        elif key == "plies":
            if not is_whole(arg) or int(arg) > MAX_PLY:
                raise RequestError(f"option plies {quote(arg)}: expected 0..{MAX_PLY}")
            opts.plies = int(arg)
        elif key == "noise":
            try:
                float(arg)
            except ValueError:
                raise RequestError(f"option noise {quote(arg)}: expected a number") from None
        i += 2
    return settings, opts


def cube_state(view: FibsView, settings: Settings) -> CubeState:
    """The cube and match state of a board, from the side on roll, with the settings'
    Jacoby, beavers and Crawford rule."""
    if view.match_length:
        crawford = view.crawford and settings.crawford_rule
        return CubeState(view.cube, view.owner, view.match_length, view.score, crawford,
                         False, False)
    return CubeState(view.cube, view.owner, 0, (0, 0), False, settings.jacoby,
                     settings.beavers)


def _cubeful(decision) -> tuple[float, str]:
    """The equity of the proper cube action, and which of the three it is (a beavered
    double: twice the take)."""
    if decision.action == "double_beaver" and decision.double_take is not None:
        return 2.0 * decision.double_take, "double_take"
    if _decide.doubles(decision) and decision.double_take is not None:
        if decision.double_take < decision.double_pass:
            return decision.double_take, "double_take"
        return decision.double_pass, "double_pass"
    return decision.no_double, "no_double"


def decide(view: FibsView, settings: Settings, resignation: int = 0,
           raccoon: bool = False) -> str:
    """The reply to a board (without its newline). ``raccoon``: the board (a beavered
    double, :func:`raccooned`) asks the beaverer, not the doubler."""
    search = _decide.search_for(view.position.variant, settings.threads)
    state = cube_state(view, settings)
    if resignation and view.decision in ("take", "beaver"):
        raise RequestError(f"resignation {resignation} with a double on offer: the board "
                           f"asks for the answer to the double first")
    if view.decision == "take":
        return {"take": "take", "pass": "drop", "beaver": "beaver"}[
            _decide.answer(search, view.position, state, settings.cube_ply).answer]
    if view.decision == "beaver" and raccoon:
        # the doubler redoubled the beavered cube: the beaverer takes it at twice its
        # value, its own, or drops it; never beaver again (GNU Backgammon allows as
        # many as its `set beavers`, which the board does not say)
        again = replace(state, value=view.cube, owner="me", beavers=False)
        return "take" if _decide.answer(search, view.position, again,
                                        settings.cube_ply).answer == "take" else "drop"
    if view.decision == "beaver":
        return _beavered(view, state, settings)
    if resignation:
        return _resignation(view, state, settings, resignation)
    if view.decision == "move":
        best = _decide.best_play(search, view.position, view.dice, settings.ply, state).best
        # GNU Backgammon takes only the game-ending play that uses the most dice
        text = format_move(view.position, gnu_ending(view.position, best.position, view.dice),
                           view.dice)
        return "" if text == NO_MOVE else text
    if not state.can_double():
        return "roll"
    decision = _decide.cube_advice(search, view.position, state, settings.cube_ply)
    return "double" if _decide.doubles(decision) else "roll"


def _beavered(view: FibsView, state: CubeState, settings: Settings) -> str:
    """``take`` or ``drop`` for the side on roll, whose double was beavered: taken, the
    game goes on at twice the cube, the opponent's, with the side on roll to roll;
    dropped, it loses the cube's value (never a raccoon: GNU Backgammon reads a
    ``beaver`` reply here as one)."""
    search = _decide.search_for(view.position.variant, settings.threads)
    after = replace(state, value=2 * state.value, owner="them")
    decision = _decide.cube_advice(search, view.position, after, settings.cube_ply)
    if state.money:                 # normalised to the doubled cube: dropping is -1/2
        return "take" if decision.no_double >= -0.5 else "drop"
    me, them = state.away
    assert decision.mwc is not None
    drop = default_table().after(me, them, -state.value)
    return "take" if decision.mwc["no_double"] >= drop else "drop"


def _resignation(view: FibsView, state: CubeState, settings: Settings, points: int) -> str:
    """``accept`` when the side on roll's resignation of ``points`` (1 single, 2 gammon,
    3 backgammon) is worth no more to it than playing on, by its cubeless chances at the
    score (after its best play of the dice where the board holds them), else ``reject``
    (:func:`engine.play.resign.accepts`: GNU Backgammon's ``getResignEquities`` rule,
    by which its own external player answers). The side on roll resigns, as in GNU
    Backgammon's own external player (``ExtFIBSBoard`` in its ``external.c`` values the
    resignation for the player on roll)."""
    search = _decide.search_for(view.position.variant, settings.threads)
    return ("accept" if _decide.accepts_resignation(search, view.position, state, points,
                                                    settings.cube_ply, view.dice)
            else "reject")


def raccooned(view: FibsView, previous: tuple | None, scores: str) -> bool:
    """Whether ``view``, a beavered double, asks the beaverer about a raccoon: GNU
    Backgammon writes the board after a raccoon as after a beaver (the doubler on roll,
    the other side's cube, a double on offer), but asks the side that beavered
    (``play.c``: ``fTurn != fMove``). It is a raccoon when the connection's previous
    request, ``previous`` (request, reply), was a double of the same position, answered
    ``beaver``, at a quarter of this cube (beavered, then raccooned: twice doubled)."""
    if view.decision != "beaver" or previous is None or previous[1] != "beaver":
        return False
    words = previous[0].split()
    if not words or words[0][:len(PREFIX)].lower() != PREFIX:
        return False
    try:
        before = parse_fibs_board(PREFIX + words[0][len(PREFIX):]).view(scores)
    except NardyError:
        return False
    return (before.decision == "take" and before.position == view.position
            and view.cube == 4 * before.cube)


def evaluate(view: FibsView, settings: Settings, opts: _Options) -> str:
    """``evaluation``'s reply: the side on roll's five cubeless probabilities and its
    money equity (cubeful with ``cubeful``, else cubeless) or, in match play, its match
    winning chance (cubeful with ``cubeful``), as ``%f`` numbers: what GNU Backgammon's
    own server answers."""
    ply = settings.cube_ply if opts.plies is None else check_ply(opts.plies)
    search = _decide.search_for(view.position.variant, settings.threads)
    state = cube_state(view, settings)
    if _decide.within_table(state) is not state:
        raise RequestError(f"match to {state.match_length} at {state.score[0]}-"
                           f"{state.score[1]}: a match winning chance needs the match "
                           f"equity table, which reaches {default_table().length} points away")
    decision = _decide.cube_advice(search, view.position, state, ply)
    p = decision.probabilities
    if opts.cubeful and state.money:
        r = _cubeful(decision)[0]
    elif opts.cubeful:
        assert decision.mwc is not None
        r = decision.mwc[_cubeful(decision)[1]]
    elif state.money:
        r = decision.cubeless_equity
    else:
        assert decision.mwc is not None
        r = decision.mwc["cubeless"]
    return " ".join(f"{x:f}" for x in (*p, r))


HELP = ("requests: board:<FIBS board> [jacobyrule|crawfordrule|beavers on|off] "
        "[resignation N] | evaluation fibsboard board:<FIBS board> [plies N] "
        "[cubeful|cubeless] | version | help | exit")


def answer(line: str, settings: Settings, previous: tuple | None = None) -> str | None:
    """The reply to one request line (without its newline; None: close the connection).
    ``previous``: the connection's previous request and reply (for a raccoon,
    :func:`raccooned`). Never raises: a request that cannot be served is answered
    ``Error: ...``."""
    text = line.strip(" \t\r\n\x00")
    words = text.split()
    if not words:
        return "Error: no command given"
    head = words[0].lower()
    try:
        if head in ("exit", "quit") and len(words) == 1:
            return None
        if head == "version" and len(words) == 1:
            # four lines, as GNU Backgammon's own server writes them
            return (f"Interface: {INTERFACE}\nRFBF: 0\nEngine: nardy\nSoftware: nardy "
                    f"{VERSION}")
        if head == "help" and len(words) == 1:
            return HELP
        if head in ("exit", "quit", "version", "help"):
            raise RequestError(f"{head} takes no arguments, got "
                               f"{quote(clip(' '.join(words[1:]), 40))}")
        if head == "set":
            raise RequestError(f"set option {quote(' '.join(words[1:2]))} not supported")
        if head == "evaluation":
            if len(words) < 3 or words[1].lower() != "fibsboard":
                raise RequestError("expected: evaluation fibsboard board:... [options]")
            board = parse_fibs_board(words[2])
            s, opts = _options(words[3:], settings, evaluation=True)
            return evaluate(board.view(s.scores), s, opts)
        if text[:len(PREFIX)].lower() == PREFIX:
            board = parse_fibs_board(PREFIX + words[0][len(PREFIX):])
            s, opts = _options(words[1:], settings, evaluation=False)
            view = board.view(s.scores)
            return decide(view, s, opts.resignation, raccooned(view, previous, s.scores))
        raise RequestError(f"unknown request {quote(clip(words[0], 40))}; {HELP}")
    except NardyError as exc:
        return _error(str(exc))
    except Exception as exc:  # a bug: report it, keep serving
        traceback.print_exc(file=sys.stderr)
        return _error(f"internal error: {describe(exc)}")


MAX_ERROR = 254
"""Bytes of an ``Error:`` line before its newline: GNU Backgammon reads an answer into a
256-byte buffer (``ExternalRead`` in its ``external.c``), so a longer line would be cut
and its tail taken for the answer to the next request."""


def _error(text: str) -> str:
    """``Error: <text>`` on one line of at most :data:`MAX_ERROR` bytes."""
    line = "Error: " + " ".join(text.split())
    raw = line.encode("utf-8")
    if len(raw) <= MAX_ERROR:
        return line
    return raw[:MAX_ERROR - 3].decode("utf-8", "ignore") + "..."


# --------------------------------------------------------------------- the server
class _Log:
    """The optional request log: one JSON object a line."""

    def __init__(self, path: str | None):
        self.file = open(path, "a", encoding="utf-8") if path else None
        self.lock = threading.Lock()
        self.requests = 0
        self.errors = 0

    def write(self, peer: str, request: str, reply: str | None, seconds: float) -> None:
        with self.lock:
            self.requests += 1
            self.errors += reply is not None and reply.startswith("Error:")
            if self.file:
                self.file.write(json.dumps({"peer": peer, "request": request,
                                            "reply": reply, "seconds": round(seconds, 4)})
                                + "\n")
                self.file.flush()


class _Handler(socketserver.BaseRequestHandler):
    """One connection: request lines in, reply lines out, in order."""

    server: Any

    def handle(self) -> None:
        conn: socket.socket = self.request
        peer = str(self.client_address or "unix")
        buf = b""
        skipping = False
        previous = None                     # (request, reply): a raccoon's context
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            while True:
                end = buf.find(b"\n")
                if end < 0:
                    if len(buf) > MAX_REQUEST:
                        if not skipping:
                            self._refuse(conn, peer)
                        skipping, buf, previous = True, b"", None
                    break
                raw, buf = buf[:end], buf[end + 1:]
                if skipping:
                    skipping = False
                    continue
                if len(raw) > MAX_REQUEST:  # a whole line in one read: refused all the same
                    previous = None         # no raccoon after it: it answered no beaver
                    if not self._refuse(conn, peer):
                        return
                    continue
                # GNU Backgammon ends each request with a NUL after its newline: the
                # NUL leads the next line and is dropped (a blank line after it is a
                # blank line, answered as one)
                line = raw.replace(b"\x00", b"").decode("utf-8", "replace")
                start = time.perf_counter()
                with self.server.engine_lock:
                    reply = answer(line, self.server.settings, previous)
                    previous = (line, reply)
                    if self.server.observe is not None:
                        self.server.observe(line, reply)
                self.server.log.write(peer, line.rstrip("\r"), reply,
                                      time.perf_counter() - start)
                if reply is None:
                    return
                if not self._reply(conn, reply):
                    return

    def _refuse(self, conn: socket.socket, peer: str) -> bool:
        """A request longer than :data:`MAX_REQUEST` bytes refused unread: answered,
        logged and counted as an error like any other request."""
        reply = f"Error: request longer than {MAX_REQUEST} bytes"
        self.server.log.write(peer, f"<more than {MAX_REQUEST} bytes, not read>", reply,
                              0.0)
        return self._reply(conn, reply)

    @staticmethod
    def _reply(conn: socket.socket, text: str) -> bool:
        try:
            conn.sendall(text.encode("utf-8", "replace") + b"\n")
            return True
        except OSError:
            return False


class _TCPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    allow_reuse_address = True
    daemon_threads = True


class _TCPServer6(_TCPServer):
    address_family = socket.AF_INET6


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class ListenError(NardyError):
    """A place the server cannot listen on, named by its command-line option: an
    address that does not resolve or cannot be bound, a port out of range, a socket
    path taken by something else."""

    code = "cannot_listen"


_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def free_socket_path(path: str) -> None:
    """Make ``path`` free for a Unix socket: remove a stale socket there (one a server
    left when it ended without removing it: nothing accepts connections on it), else a
    :class:`ListenError` naming the path, which is left as it is: when it is anything
    but a socket (a user's file, which was deleted silently before), or a socket a
    server is listening on (whose clients would have lost it to this one)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ListenError(f"--socket {quote(path)}: cannot look at the path "
                          f"({exc.strerror or exc})") from None
    if not stat.S_ISSOCK(mode):
        kind = next((k for test, k in _KINDS if test(mode)), "not a socket")
        raise ListenError(f"--socket {quote(path)}: the path exists and is not a socket "
                          f"({kind}); expected a new path or a stale socket to replace "
                          f"(nothing was removed)")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(path)
        except OSError:
            pass                            # refused: a stale socket
        else:
            raise ListenError(f"--socket {quote(path)}: a server is listening on this "
                              f"socket; stop it or give another path")
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ListenError(f"--socket {quote(path)}: cannot remove the stale socket "
                          f"({exc.strerror or exc})") from None


def _tcp_server(host: str, port: int) -> _TCPServer:
    """A TCP server on ``host:port``, of the address family ``host`` resolves to (an
    IPv6 address such as ``::1`` too); a :class:`ListenError` naming both when it
    cannot listen there."""
    where = f"--host {quote(host)} --port {port}"
    if not 0 <= port <= 65535:
        raise ListenError(f"{where}: expected a port number, 0..65535")
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except (OSError, UnicodeError, ValueError) as exc:
        raise ListenError(f"--host {quote(host)}: cannot find the address "
                          f"({getattr(exc, 'strerror', None) or exc})") from None
    try:
        return (_TCPServer6 if family == socket.AF_INET6 else _TCPServer)(
            (host, port), _Handler)
    except (OSError, OverflowError, TypeError, ValueError) as exc:
        raise ListenError(f"{where}: cannot listen there "
                          f"({getattr(exc, 'strerror', None) or exc})") from None


def make_servers(settings: Settings, port: int | None = None, host: str = "127.0.0.1",
                 unix: str | None = None, log: str | None = None,
                 observe: Callable[[str, str | None], None] | None = None) -> list:
    """The listening servers (TCP on ``host:port``, a Unix socket at ``unix``), sharing
    one engine lock and one log; port 0 picks a free port (``server_address``).
    ``observe(request, reply)``, when given, is called with each request and its reply
    before the reply is sent (benchmarks/gnubg_external.py records with it). A place it
    cannot listen on raises :class:`ListenError` (with no server left open); a stale
    socket at ``unix`` is replaced, anything else there is refused
    (:func:`free_socket_path`)."""
    journal = _Log(log)
    shared = {"settings": settings, "engine_lock": threading.Lock(), "log": journal,
              "observe": observe}
    servers: list = []
    try:
        if port is not None:
            servers.append(_tcp_server(host, port))
        if unix is not None:
            free_socket_path(unix)
            try:
                servers.append(_UnixServer(unix, _Handler))
            except (OSError, ValueError) as exc:
                raise ListenError(f"--socket {quote(unix)}: cannot listen there "
                                  f"({getattr(exc, 'strerror', None) or exc})") from None
    except BaseException:
        close_servers(servers, None, serving=False)
        if journal.file:
            journal.file.close()
        raise
    for s in servers:
        for k, v in shared.items():
            setattr(s, k, v)
    return servers


def close_servers(servers: list, unix: str | None, serving: bool = True) -> None:
    """Stop (when ``serving``: ``shutdown`` waits for a ``serve_forever`` loop, for ever
    where none runs) and close ``servers``, and remove the Unix socket at ``unix`` (only
    if a socket is still what is there)."""
    for s in servers:
        if serving:
            s.shutdown()
        s.server_close()
    if unix is not None:
        try:
            if stat.S_ISSOCK(os.lstat(unix).st_mode):
                os.unlink(unix)
        except OSError:
            pass


def warm_up(settings: Settings) -> None:
    """Load the model and compile the search kernels before the first connection."""
    from engine.rules.position import Position
    search = _decide.search_for("backgammon", settings.threads)
    start = Position.start("backgammon")
    search.evaluate(start, 1)
    search.analyse(start, (3, 1), 0, top=1)


def main(argv=None) -> int:
    """Entry point of ``python -m engine.external``."""
    precompile.allow()       # a cold start compiles on two cores
    ap = argparse.ArgumentParser(
        prog="python -m engine.external",
        description="GNU Backgammon's external player: answers FIBS board strings with "
                    "the engine's moves and cube actions (docs/external.md).")
    ap.add_argument("--port", type=port_number,
                    help="TCP port on --host, 1..65535 (in GNU Backgammon: set player 1 "
                         "external localhost:PORT)")
    ap.add_argument("--host", type=listen_host, default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1, localhost only; not "
                         "empty, which would be every interface)")
    ap.add_argument("--socket", dest="unix", metavar="PATH",
                    help="Unix socket path (in GNU Backgammon: set player 1 external "
                         "PATH): a new path, or a stale socket, which is replaced; a file "
                         "or a socket a server listens on is refused")
    ap.add_argument("--ply", type=integer, default=2,
                    help=f"checker-play depth, GNU Backgammon's plies 0..{MAX_PLY} "
                         f"(default 2)")
    ap.add_argument("--cube-ply", type=integer, default=None,
                    help="cube-decision depth (default: --ply)")
    ap.add_argument("--jacoby", dest="jacoby", action="store_true", default=True,
                    help="money: the Jacoby rule (default on, as in GNU Backgammon)")
    ap.add_argument("--no-jacoby", dest="jacoby", action="store_false")
    ap.add_argument("--beavers", dest="beavers", action="store_true", default=True,
                    help="money: beavers allowed (default on, as in GNU Backgammon)")
    ap.add_argument("--no-beavers", dest="beavers", action="store_false")
    ap.add_argument("--no-crawford-rule", dest="crawford_rule", action="store_false",
                    default=True, help="match play without the Crawford rule")
    ap.add_argument("--scores", choices=SCORE_CONVENTIONS, default="gnubg",
                    help="whose points the board's score fields hold: gnubg (as GNU "
                         "Backgammon writes them for its external players, the default) "
                         "or fibs (the player's, then the opponent's)")
    ap.add_argument("--threads", type=thread_count, default=None,
                    help="search threads (default: the cores this process may use, at "
                         "most 4)")
    ap.add_argument("--log", metavar="FILE", help="append each request and reply to FILE "
                                                  "(JSON lines)")
    ap.add_argument("--once", action="store_true",
                    help="exit when the first connection closes")
    args = parse_args(ap, argv)
    if args.port is None and args.unix is None:
        ap.error("give --port N and/or --socket PATH")
    try:
        check_ply(args.ply)
        cube_ply = check_ply(args.ply if args.cube_ply is None else args.cube_ply)
    except NardyError as exc:
        ap.error(str(exc))
    settings = Settings(args.ply, cube_ply, args.jacoby, args.beavers, args.crawford_rule,
                        args.scores, args.threads)
    # bound first, so that a place it cannot listen on is refused before the warm-up
    # (half a minute on a cold cache); a client that connects meanwhile waits for it
    try:
        servers = make_servers(settings, args.port, args.host, args.unix, args.log)
    except ListenError as exc:
        ap.error(str(exc))
    except OSError as exc:                  # the --log file
        print(f"engine.external: --log {quote(args.log)}: cannot append to it "
              f"({exc.strerror or exc})", file=sys.stderr)
        return 2
    try:
        warm_up(settings)
    except BaseException as exc:
        close_servers(servers, args.unix, serving=False)
        if isinstance(exc, (OSError, NardyError)):
            print(f"engine.external: {exc}", file=sys.stderr)
            return 2
        raise
    for s in servers:
        addr = s.server_address
        if isinstance(addr, tuple):
            where = f"[{addr[0]}]:{addr[1]}" if ":" in addr[0] else f"{addr[0]}:{addr[1]}"
        else:
            where = addr
        print(f"engine.external: listening on {where}", file=sys.stderr, flush=True)
    done = threading.Event()
    if args.once:
        for s in servers:
            original = s.process_request_thread

            def once(request, client_address, _original=original):
                try:
                    _original(request, client_address)
                finally:
                    done.set()
            s.process_request_thread = once
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for t in threads:
        t.start()
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    close_servers(servers, args.unix)
    log = servers[0].log
    print(f"engine.external: served {log.requests} requests ({log.errors} answered "
          f"Error)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
