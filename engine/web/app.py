"""The web board's server: the page, and a JSON API over the protocol's own commands.

Routes (all JSON bodies are strict JSON, as the protocol reads them):

- ``GET /``: the board page; ``GET /static/...``: its script and style, served from the
  package (nothing from a CDN).
- ``GET /api/games``: the six games, their geometry and start positions.
- ``POST /api/{cmd}``: a protocol command (``moves``, ``best``, ``evaluate``, ``cube``,
  ``rollout``, ``met``; ``docs/protocol.md``), its request object as the body, its
  reply as the answer. A ``rollout`` here plays at most :data:`MAX_ROLLOUT_TRIALS`
  trials over its candidates, at 0-ply inside (``too_large`` beyond): every session's
  engine waits for it.
- ``POST /api/position``: ``{"position": text}`` read as Position JSON, a GNU Backgammon
  ID, an XGID or a FIBS board string; the answer gives the position and its IDs (each
  one only where it holds the state read with the position: no XGID for a beaver on
  offer, no GNU Backgammon ID for a cube above 32768).
- ``POST /api/sessions``: a game or match against the engine (:mod:`engine.web.session`;
  a game without a model file is refused, 404 ``no_model``);
  ``GET /api/sessions/{id}`` its state (``?after=serial`` waits for the next question);
  ``POST /api/sessions/{id}/walk`` the legal steps after ``{"steps": [...]}``;
  ``POST /api/sessions/{id}/act`` an answer (``move``, ``double``, ``take``, ``accept``
  the engine's resignation, or ``resign`` on the person's turn; with the
  state's ``serial`` beside it, an answer to a question the game has moved on from is
  refused, so a retried request is not read as the next question's answer);
  ``GET /api/sessions/{id}/mat`` a backgammon session's games so far as a match file
  (``{"mat": text, "filename": ...}``, the ``.mat`` text GNU Backgammon, eXtreme Gammon
  and ``python -m engine.review`` read; ``?format=sgf``: ``{"sgf": text, ...}``, GNU
  Backgammon's own SGF); ``GET /api/sessions/{id}/review?ply=0`` those
  games reviewed, every decision of both sides rated (``ply`` 0 or 1; the JSON of
  ``python -m engine.review --json``);
  ``DELETE /api/sessions/{id}`` ends it.
- ``POST /api/review``: ``{"text": ..., "ply": 0}``, a match file's text (``.mat``, or
  GNU Backgammon's ``.sgf``) reviewed as ``python -m engine.review --json`` reviews it
  (up to :data:`MAX_REVIEW_DECISIONS` decisions, ``ply`` 0 or 1). The server keeps
  :data:`MAX_SESSIONS` sessions; one more ends a finished one unused for over
  :data:`FINISHED_IDLE_S` (10 minutes), else the one used longest ago (:func:`_to_end`).
  A question takes one answer: a second before the game takes up the first is refused.

A request the engine cannot serve gets a 4xx answer ``{"error": {"code", "message"}}``
with the typed error's message (404 for an unknown command, session or model, 413 for
a body over 1 MiB, 400 otherwise); a bug gets 500 with a one-line message, its traceback
on standard error only.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, NamedTuple

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from engine.cli import protocol
from engine.cli._common import field, is_whole
from engine.errors import NardyError, describe, quote
from engine.rules.position import Position
from engine.rules.variants import HIT, OPPOSITE, PIN, VARIANTS, get_rules
from engine.web.session import GameSession, SessionError

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 1 << 20
MAX_SESSIONS = 32
"""Sessions kept at once; a new one beyond it ends another (:func:`_to_end`)."""
FINISHED_IDLE_S = 600.0
"""How long a finished session goes unused (s) before it is ended ahead of unfinished
ones to make room: a player who has just finished still downloads the match file or
reviews the game."""

_NOT_FOUND = {"unknown_cmd", "no_model", "unknown_session"}


class ApiError(NardyError):
    def __init__(self, code: str, message: str, status: int = 400):
        super().__init__(message)
        self.code, self.status = code, status


def _error(code: str, message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class _Later(NamedTuple):
    """A handler's answer that is the session's state once the game has moved on from
    the question ``serial`` (None: once it asks anything) or ended, or after
    ``timeout`` seconds. The wait is the event loop's, not a thread's: the worker
    threads are few (anyio's 40), and a board's long-poll held one each, so that
    40 open boards stopped the server until a poll ran out."""
    session: GameSession
    serial: int | None
    timeout: float


WAIT_POLL_S = 0.05
"""How often a waiting request looks at its session (s)."""


async def _state_later(later: _Later, request: Request) -> dict | None:
    """The state :class:`_Later` asks for; None when the client went away first."""
    import anyio
    from starlette.concurrency import run_in_threadpool
    deadline = anyio.current_time() + later.timeout
    while not later.session.moved_on(later.serial) and anyio.current_time() < deadline:
        if await request.is_disconnected():
            return None
        await anyio.sleep(WAIT_POLL_S)
    return await run_in_threadpool(later.session.state)


def _guarded(handler: Callable[..., Any]) -> Callable[[Request], Any]:
    """Run ``handler(request, body)`` on a worker thread and turn its result or error
    into a JSON answer (a :class:`_Later` after its wait)."""
    async def endpoint(request: Request):
        try:
            body = None
            if request.method in ("POST", "PUT"):
                body = _json_body(await _read_body(request))
            from starlette.concurrency import run_in_threadpool
            result = await run_in_threadpool(handler, request, body)
            if isinstance(result, _Later):
                result = await _state_later(result, request)
                if result is None:
                    return _error("gone", "the client went away", 499)
            return JSONResponse(result)
        except ClientDisconnect:         # gone while its body streamed in: no one to answer
            return _error("gone", "the client went away", 499)
        except ApiError as exc:
            return _error(exc.code, str(exc), exc.status)
        except NardyError as exc:
            return _error(exc.code, str(exc), 404 if exc.code in _NOT_FOUND else 400)
        except Exception as exc:  # a bug: say so in one line, keep serving
            traceback.print_exc(file=sys.stderr)
            return _error("internal_error", describe(exc), 500)
    return endpoint


async def _read_body(request: Request) -> bytes:
    """The body, read as it streams in and refused (413) once it passes :data:`MAX_BODY`
    bytes, or at once when its ``Content-Length`` says it will: a huge body is never
    held whole."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY:
        raise ApiError("body_too_large", f"a request body of {int(declared):,} bytes is "
                                         f"longer than the {MAX_BODY:,} accepted", 413)
    parts, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise ApiError("body_too_large", f"a request body of more than {MAX_BODY:,} "
                                             f"bytes (the most accepted)", 413)
        parts.append(chunk)
    return b"".join(parts)


def _json_body(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError("bad_encoding", f"the body is not UTF-8: {exc.reason} at byte "
                                       f"{exc.start}") from None
    if not text.strip():
        return {}
    try:
        return protocol.parse_request(text)
    except (ValueError, RecursionError) as exc:
        raise ApiError("bad_json", f"body {quote(text)} is not valid JSON: {exc}") from None


def _object(body: Any) -> dict:
    if not isinstance(body, dict):
        raise ApiError("bad_request", f"body {quote(body)}: expected a JSON object")
    return body


# ------------------------------------------------------------------ engine state
_SEARCH_LOCK = threading.Lock()
"""One search at a time: the sessions' engines and the API's commands share the
searches, whose kernels keep work buffers."""
_SESSIONS: "OrderedDict[str, GameSession]" = OrderedDict()
"""The sessions kept, the one used longest ago first (under ``_SESSIONS_LOCK``)."""
_USED: dict[str, float] = {}
"""When each session kept was last used (``time.monotonic()``; under ``_SESSIONS_LOCK``)."""
_SESSIONS_LOCK = threading.Lock()


def _to_end() -> str:
    """The session a new one beyond :data:`MAX_SESSIONS` ends: the finished one used
    longest ago among those unused for over :data:`FINISHED_IDLE_S`, else the one used
    longest ago, finished or not. Finished sessions went first however recent, so a
    player downloading the match file of the game he had just finished lost it to a new
    one while an abandoned board's session lived on. Call under ``_SESSIONS_LOCK``."""
    now = time.monotonic()
    return next((sid for sid, s in _SESSIONS.items()
                 if s.finished and now - _USED.get(sid, now) > FINISHED_IDLE_S),
                next(iter(_SESSIONS)))


def _session(request: Request) -> GameSession:
    sid = request.path_params["sid"]
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(sid)
        if session is None:
            raise ApiError("unknown_session", f"session {quote(sid)} does not exist: it "
                                              f"ended (the server keeps {MAX_SESSIONS} "
                                              f"sessions, the ones used last), or the "
                                              f"server restarted", 404)
        _SESSIONS.move_to_end(sid)
        _USED[sid] = time.monotonic()
    return session


# ------------------------------------------------------------------ handlers
def games(request: Request, body: Any) -> dict:
    from engine.eval.evaluator import model_path
    out = []
    for v in VARIANTS:
        rules = get_rules(v)
        out.append({
            "variant": v, "geometry": "opposite" if rules.geometry == OPPOSITE else "same",
            "meet": "hit" if rules.meet == HIT else ("pin" if rules.meet == PIN else "hold"),
            "bar": rules.meet == HIT, "cube": bool(rules.cube),
            "opposite": [0] + [rules.opposite_point(p) for p in range(1, 25)],
            "start": Position.start(v).to_json(), "model": model_path(v).exists()})
    return {"games": out}


def command(request: Request, body: Any) -> dict:
    cmd = request.path_params["cmd"]
    handler = protocol.COMMANDS.get(cmd)
    if handler is None:
        raise ApiError("unknown_cmd", f"command {quote(cmd)}: expected one of "
                                      f"{sorted(protocol.COMMANDS)}", 404)
    req = _object(body)
    if cmd == "rollout":
        _check_rollout_size(req)
    with _SEARCH_LOCK:
        return handler(req)


MAX_ROLLOUT_TRIALS = 6 * 1296
"""The most trials a rollout request of the board's server plays, over all its
candidates (the page asks for 3 x 1296): the games and requests of every session wait
for one search at a time, and the protocol's own limits (a million trials, 2-ply play
inside) would hold them for hours. ``python -m engine.protocol`` and ``engine.analyse
--rollout`` take the protocol's limits."""


def _check_rollout_size(req: dict) -> None:
    """Refuse a rollout over :data:`MAX_ROLLOUT_TRIALS` trials, or with checker play
    inside above 0-ply, before the protocol plays it. The fields are read as
    :func:`engine.cli.protocol.cmd_rollout` reads them, so that the count is of the
    trials it would play: a null field is its default (``"candidates": null`` is 5
    candidates, ``"trials": null`` 1296 trials; counting only integers let a null
    through at any size), and ``"dice": null`` before a roll is a rollout of the
    position, one root. The candidates are counted as asked (a roll with fewer plays
    rolls out fewer). A field that is not a whole number is left to the protocol, which
    refuses it before the first trial (as one below 1); ``truncate`` only shortens the
    trials."""
    from engine.notation.parse import parse_position
    from engine.search.rollout import TRIALS
    ply = field(req, "ply", 0)
    if type(ply) is int and ply > 0:
        raise ApiError("too_large", f"ply = {ply}: the board's server plays rollouts at "
                                    f"0-ply inside (the protocol, python -m "
                                    f"engine.protocol, takes 1 and 2)")
    trials = field(req, "trials", TRIALS)
    if "dice" not in req or (req["dice"] is None
                             and not parse_position(field(req, "position"))[0].pending):
        count = 1                                   # the position's rollout
    else:
        count = field(req, "candidates", 5)
    if type(trials) is int and type(count) is int and trials > 0 and count > 0 \
            and trials * count > MAX_ROLLOUT_TRIALS:
        raise ApiError("too_large", f"trials = {trials} x {count} candidate(s) = "
                                    f"{trials * count:,} trials: the board's server plays "
                                    f"at most {MAX_ROLLOUT_TRIALS:,} trials a request (the "
                                    f"protocol, python -m engine.protocol, takes more)")


def position(request: Request, body: Any) -> dict:
    from engine.notation.parse import parse_position
    req = _object(body)
    variant = req.get("variant")
    if variant is not None:
        get_rules(variant)                 # an unknown game: VariantError, named
    pos, info = parse_position(field(req, "position"), variant)
    out: dict = {"position": pos.to_json()}
    if pos.variant == "backgammon":
        from engine.notation.gnubg_id import format_gnubg
        from engine.notation.parse import as_match_info, as_xgid_info
        from engine.notation.xgid import format_xgid
        # each ID where it can hold the position's state (the cube, score and dice
        # read with it): not a money game's default in its place
        match, xgid = as_match_info(info), as_xgid_info(info)
        if info is None or match is not None:
            out["gnubg_id"] = format_gnubg(pos, match)
        if info is None or xgid is not None:
            out["xgid"] = format_xgid(pos, xgid)
    if info is not None:
        out["info"] = {k: list(v) if isinstance(v, tuple) else v
                       for k, v in vars(info).items()}
    return out


def new_session(request: Request, body: Any) -> _Later:
    req = _object(body)
    known = {"variant", "mode", "length", "ply", "cube", "beavers", "seed"}
    extra = set(req) - known
    if extra:
        raise SessionError(f"fields {sorted(extra)}: expected only {sorted(known)}")
    session = GameSession(**req, search_of=protocol.search_of, lock=_SEARCH_LOCK)
    with _SESSIONS_LOCK:
        _SESSIONS[session.id] = session
        _USED[session.id] = time.monotonic()
        while len(_SESSIONS) > MAX_SESSIONS:
            sid = _to_end()
            _USED.pop(sid, None)
            _SESSIONS.pop(sid).close(f"closed to make room: the server keeps "
                                     f"{MAX_SESSIONS} sessions")
    return _Later(session, None, 120.0)


def session_state(request: Request, body: Any) -> dict | _Later:
    session = _session(request)
    after = request.query_params.get("after")
    if after is None:
        return session.state()
    digits = after[1:] if after[:1] == "-" else after
    if not is_whole(digits) or len(digits) > 30:
        raise ApiError("bad_request", f"after = {quote(after)}: expected an integer "
                                      f"(the serial of the last question seen)")
    return _Later(session, int(after), 30.0)


def session_walk(request: Request, body: Any) -> dict:
    return _session(request).walk(field(_object(body), "steps"))


def session_act(request: Request, body: Any) -> _Later:
    session = _session(request)
    return _Later(session, session.answer(_object(body)), 120.0)


def session_mat(request: Request, body: Any) -> dict:
    session = _session(request)
    kind = request.query_params.get("format", "mat")
    if kind not in ("mat", "sgf"):
        raise ApiError("bad_request", f"format = {quote(kind)}: expected mat (the "
                                      f"default) or sgf")
    return {kind: session.match_file(kind), "filename": f"nardy-{session.id}.{kind}"}


MAX_REVIEW_PLY = 1
"""The deepest search a review on the board's server rates at: every session's engine
waits for it (a 5-point match takes seconds at 0-ply, a minute at 2-ply)."""


def session_review(request: Request, body: Any) -> dict:
    from engine.cli.review import review, to_json
    from engine.notation.matfile import parse_mat
    session = _session(request)
    text = request.query_params.get("ply", "0")
    if text not in [str(p) for p in range(MAX_REVIEW_PLY + 1)]:
        raise ApiError("bad_request", f"ply = {quote(text)}: expected 0 .. {MAX_REVIEW_PLY} "
                                      f"(a review on the board's server)")
    ply = int(text)
    text = session.match_file()
    if "Game " not in text:
        raise ApiError("bad_state", "no game played yet: nothing to review")
    record = parse_mat(text)
    with _SEARCH_LOCK:
        return to_json(record, review(record, protocol.search_of("backgammon"), ply), ply)


MAX_REVIEW_DECISIONS = 5_000
"""The most decisions a match file sent to the board's server is reviewed with (a long
session; about twenty seconds at 0-ply, every session's engine waiting):
``python -m engine.review`` takes any file."""


def review_file(request: Request, body: Any) -> dict:
    """``POST /api/review``: ``{"text": a match file's text (.mat or GNU Backgammon's
    .sgf), "ply": 0 or 1}``, every decision of both players rated."""
    from engine.cli.review import review, to_json
    from engine.notation.matfile import replay
    from engine.notation.sgf import parse_match
    body = _object(body)
    text = field(body, "text")
    if not isinstance(text, str):
        raise ApiError("bad_request", f"text = {quote(text)}: expected a match file's text "
                                      f"(a string)")
    ply = body.get("ply", 0)
    if type(ply) is not int or ply not in range(MAX_REVIEW_PLY + 1):   # 1.0 is in range(2)
        raise ApiError("bad_request", f"ply = {quote(ply)}: expected 0 .. {MAX_REVIEW_PLY} "
                                      f"(a review on the board's server)")
    record = parse_match(text)
    count = sum(1 for _ in replay(record))
    if count > MAX_REVIEW_DECISIONS:
        raise ApiError("too_large", f"{count:,} decisions: the board's server reviews up to "
                                    f"{MAX_REVIEW_DECISIONS:,}; python -m engine.review "
                                    f"takes any file")
    if count == 0:
        raise ApiError("bad_request", "the file holds no decision to review")
    with _SEARCH_LOCK:
        return to_json(record, review(record, protocol.search_of("backgammon"), ply), ply)


def end_session(request: Request, body: Any) -> dict:
    session = _session(request)
    with _SESSIONS_LOCK:
        _SESSIONS.pop(session.id, None)
        _USED.pop(session.id, None)
    session.close()
    return {"ended": session.id}


async def index(request: Request):
    return FileResponse(STATIC / "index.html")


def make_app() -> Starlette:
    """The ASGI application."""
    routes = [
        Route("/", index),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/api/games", _guarded(games)),
        Route("/api/position", _guarded(position), methods=["POST"]),
        Route("/api/sessions", _guarded(new_session), methods=["POST"]),
        Route("/api/sessions/{sid}", _guarded(session_state), methods=["GET"]),
        Route("/api/sessions/{sid}", _guarded(end_session), methods=["DELETE"]),
        Route("/api/sessions/{sid}/walk", _guarded(session_walk), methods=["POST"]),
        Route("/api/sessions/{sid}/act", _guarded(session_act), methods=["POST"]),
        Route("/api/sessions/{sid}/mat", _guarded(session_mat), methods=["GET"]),
        Route("/api/sessions/{sid}/review", _guarded(session_review), methods=["GET"]),
        Route("/api/review", _guarded(review_file), methods=["POST"]),
        Route("/api/{cmd}", _guarded(command), methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: _http_error})


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own answers (no such route, a method a route does not take) in the
    API's error form, where they were plain text."""
    status = getattr(exc, "status_code", 500)
    code = {404: "not_found", 405: "method_not_allowed"}.get(status, "http_error")
    detail = getattr(exc, "detail", "") or ""
    response = _error(code, f"{request.method} {request.url.path}: {detail}".strip(), status)
    response.headers.update(getattr(exc, "headers", None) or {})     # a 405's Allow
    return response


app = make_app()
