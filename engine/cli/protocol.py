"""The JSON-lines engine protocol (``python -m engine.protocol``), per docs/protocol.md.

One request per line on standard input, one reply per line on standard output, in
order, flushed after each; logs go to standard error. Bad input of any kind gets an
``error`` reply (a short ``code`` and a message quoting what was wrong) and the process
serves the next line: bytes that are not UTF-8, a line longer than :data:`MAX_LINE`,
JSON nested too deep, numbers JSON has not (``NaN``, ``Infinity``, ``1e400``). Standard
input is read as bytes and each line decoded alone; replies are strict JSON in ASCII,
so neither side's encoding can stop the process. Commands are looked up in
:data:`COMMANDS`; later parts of the engine register theirs there.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import traceback
from typing import Any, Callable

from engine.cli._common import RequestError, field, parse_args, read_line
from engine.errors import NardyError, clip, describe, quote
from engine.movegen.generate import cascade_threads, successor_arrays
from engine.movegen.keys import key_order, keys_sha256
from engine.notation.parse import parse_position
from engine.rules.dice import check_dice
from engine.rules.position import Position
from engine.rules.scoring import check_game_on
from engine.search import precompile

DEFAULT_LIMIT = 100_000
"""``limit`` of ``moves`` and ``best`` when the request has none."""
MAX_LIMIT = DEFAULT_LIMIT
"""The most plays a reply lists, whatever ``limit`` a request gives (any integer from
0 up is taken, as the protocol has no maximum): a gul bara cascade has up to a million
plays, and listing all of them took minutes, gigabytes and a 221 MB reply line. Above
it a reply is cut as above ``limit`` (``moves`` sends the plays' digest, ``best`` the
best ones), and says so (``truncated``)."""
MAX_LINE = 1 << 20
"""The longest request line read, in bytes (1 MiB; a request is a few hundred bytes). A
longer line is skipped to its end without being kept and gets a ``line_too_long``
error, so one runaway line cannot fill the memory."""


def _position(req: dict) -> Position:
    return parse_position(field(req, "position"))[0]


def _limit(req: dict) -> int:
    """The request's ``limit`` (default :data:`DEFAULT_LIMIT`), at most :data:`MAX_LIMIT`."""
    limit = field(req, "limit", DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise RequestError("invalid_limit", f"limit = {quote(limit)}: expected an integer "
                                            f"0 or more")
    return min(limit, MAX_LIMIT)


def cmd_moves(req: dict) -> dict:
    """``moves``: every distinct legal successor, with its move text."""
    pos = _position(req)
    check_game_on(pos)
    dice = check_dice(field(req, "dice"), pos.pending)
    limit = _limit(req)
    arrays = successor_arrays(pos, dice)
    order = key_order(arrays, cascade_threads())
    reply: dict = {"count": len(order)}
    if len(order) > limit:
        reply["truncated"] = True
        reply["successors_sha256"] = keys_sha256(arrays, pos.variant, order,
                                                 cascade_threads())
        return reply
    from engine.notation.movetext import format_moves
    succ = [Position.from_array(arrays[i], pos.variant) for i in order]
    reply["successors"] = [s.to_json() for s in succ]
    reply["moves"] = format_moves(pos, succ, dice)
    return reply


_SEARCHES: dict = {}
_ROLLOUTS = {"backend": "local", "address": None, "made": None}
"""Where ``rollout`` plays its trials (``python -m engine.protocol --backend ray``); the
Ray backend is made at the first rollout, not when the server starts."""


def rollout_backend():
    """The backend of the ``rollout`` command: None (the local one) or the
    :class:`engine.cluster.RayBackend` the server was started with."""
    if _ROLLOUTS["backend"] == "local":
        return None
    if _ROLLOUTS["made"] is None:
        from engine.cluster import make_backend
        _ROLLOUTS["made"] = make_backend(_ROLLOUTS["backend"], _ROLLOUTS["address"])
    return _ROLLOUTS["made"]


def search_of(variant: str):
    """The :class:`engine.search.nply.Search` of ``variant``'s released model, loaded once
    per model file (raises ``no_model`` for a game without one)."""
    from engine.eval.evaluator import model_path
    from engine.search.nply import Search
    path = str(model_path(variant))
    if path not in _SEARCHES:
        _SEARCHES[path] = Search.load(variant)
    return _SEARCHES[path]


def _ply(req: dict) -> int:
    from engine.search.nply import check_ply
    return check_ply(field(req, "ply", 0))


def cmd_best(req: dict) -> dict:
    """``best``: the plays of the roll rated at ``ply``, best first (docs/protocol.md):
    at ply 0 every play; deeper, those the move filters kept, and ``cut`` says how many
    they left out.

    ``limit`` (default 100000, and no more than that listed, as for ``moves``): when the
    roll has more plays than that (a gul bara cascade can have a million),
    ``candidates`` holds the best ``limit`` of them, and the reply adds ``"truncated":
    true`` and ``count``, the number of plays rated.

    Extension: ``match`` (with ``cube``, ``jacoby`` and ``beavers``, as the ``cube``
    command reads them; backgammon; ``null`` for money play) ranks the plays by the
    mover's cubeful equity at that cube and score
    (:func:`engine.cli._decide.rank_cubefully`); each candidate then adds
    ``cubeful_equity`` (and ``mwc`` in a match), and the reply ``cubeful_equity``."""
    pos, info = parse_position(field(req, "position"))
    check_game_on(pos)         # before the dice: a finished game has no roll to check
    dice = check_dice(field(req, "dice"), pos.pending)
    ply = _ply(req)
    limit = _limit(req)
    search = search_of(pos.variant)
    if "match" in req:
        # extension: a backgammon game's plays ranked by cubeful equity
        from engine.cli._decide import cubeful, rank_cubefully
        from engine.cube.decision import CubeError
        if pos.variant != "backgammon":
            raise CubeError(f"match with {pos.variant}: only backgammon has a cube")
        state = _cube_commands().state_from_request(req, info)
        if cubeful(state, pos.variant):
            analysis = rank_cubefully(search, pos, dice, ply, state, top=max(limit, 1))
        else:                   # beyond the table's reach: cubeless, as best_play plays
            analysis = search.analyse(pos, dice, ply, top=max(limit, 1))
    else:
        analysis = search.analyse(pos, dice, ply, top=max(limit, 1))
    best = analysis.best
    # the plays rated at ``ply``: a play a move filter cut keeps a shallower rating, on
    # another scale, and listed below the others it broke the ranking by equity
    deep = [c for c in analysis.candidates if c.ply == ply]
    reply = {"best": best.position.to_json(), "move": best.move,
             "equity": round(best.equity, 6), "ply": ply, "evaluated": analysis.evaluated,
             "candidates": [c.to_json() for c in deep[:limit]]}
    if best.cubeful_equity is not None:
        reply["cubeful_equity"] = round(best.cubeful_equity, 6)
    if ply and analysis.plays <= limit:
        reply["cut"] = analysis.plays - len(deep)
    if analysis.plays > limit:
        reply["truncated"] = True
        reply["count"] = analysis.plays
    return reply


def cmd_evaluate(req: dict) -> dict:
    """``evaluate``: the ``ply``-ply outputs and equity of the side to move, before it
    rolls (docs/protocol.md)."""
    pos = _position(req)
    ply = _ply(req)
    return search_of(pos.variant).evaluate(pos, ply).to_json()


def cmd_rollout(req: dict) -> dict:
    """``rollout``: the rollout of the position before its roll, or with ``dice`` of the
    best ``candidates`` plays of that roll, each on the same dice (docs/protocol.md)."""
    from engine.search.rollout import Rollout, RolloutError, RolloutSettings
    pos, info = parse_position(field(req, "position"))
    settings = RolloutSettings(
        trials=field(req, "trials", 1296), truncate=field(req, "truncate", 0),
        ply=field(req, "ply", 0), seed=field(req, "seed", 1),
        variance_reduction=field(req, "variance_reduction", True))
    cubeful = field(req, "cubeful", False)
    if not isinstance(cubeful, bool):
        raise RolloutError(f"cubeful = {quote(cubeful)}: expected true or false")
    cube = _cube_commands().state_from_request(req, info) if cubeful else None
    engine = Rollout(search_of(pos.variant), settings, rollout_backend())
    if "dice" not in req or (req["dice"] is None and not pos.pending):    # null: absent
        if pos.pending and pos.is_over():
            # a gul bara cascade that ended the game: its exact result, as ``evaluate``
            # gives it (the dice left over play no part in it)
            pos = dataclasses.replace(pos, pending=())
        return engine.position(pos, settings, cube=cube).to_json()
    check_game_on(pos)
    dice = check_dice(req["dice"], pos.pending)
    count = field(req, "candidates", 5)
    cands = engine.candidates(pos, dice, count, settings, cube=cube)
    return {"candidates": [c.to_json() for c in cands], "trials": cands[0].result.trials}


def _cube_commands():
    """The ``cube`` and ``met`` handlers (:mod:`engine.cube_cli`), imported on first use."""
    from engine.cli import cube as cube_cli
    return cube_cli


COMMANDS: dict[str, Callable[[dict], dict]] = {
    "moves": cmd_moves,
    "best": cmd_best,
    "evaluate": cmd_evaluate,
    "rollout": cmd_rollout,
    "cube": lambda req: _cube_commands().cmd_cube(req),
    "met": lambda req: _cube_commands().cmd_met(req),
}


def _error(rid: Any, code: str, message: str) -> dict:
    return {"id": rid, "error": {"code": code, "message": message}}


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _float_sized_int(text: str) -> int:
    value = int(text)
    if abs(value) > sys.float_info.max:
        raise ValueError(f"number {clip(text, 40)} is too large for a 64-bit float")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {clip(text)} is too large for a 64-bit float")
    return value


def parse_request(line: str) -> Any:
    """``json.loads`` of strict JSON: ``NaN``, ``Infinity`` and numbers beyond a float's
    range (``1e400``, or an integer of 309 digits) raise :class:`ValueError`, so nothing
    the engine echoes (an ``id``) can make its reply invalid JSON, or be read by a
    client's JSON library as infinite."""
    return json.loads(line, parse_constant=_no_constant, parse_float=_finite_float,
                      parse_int=_float_sized_int)


def handle_line(line: str) -> dict:
    """The reply to one request line (never raises)."""
    try:
        req = parse_request(line)
    except (ValueError, RecursionError) as exc:
        return _error(None, "bad_json", f"line {quote(line.strip())} is not valid JSON: "
                                        f"{clip(str(exc))}")
    if not isinstance(req, dict):
        return _error(None, "bad_request", f"request {quote(line.strip())}: expected a "
                                           f"JSON object")
    rid = req.get("id")
    cmd = req.get("cmd")
    handler = COMMANDS.get(cmd) if isinstance(cmd, str) else None
    if handler is None:
        return _error(rid, "unknown_cmd", f"cmd {quote(cmd)}: expected one of "
                                          f"{sorted(COMMANDS)}")
    try:
        reply = handler(req)
    except NardyError as exc:            # RequestError and every input error: its code
        return _error(rid, exc.code, str(exc))
    except Exception as exc:  # a bug: report it, keep serving
        traceback.print_exc(file=sys.stderr)
        return _error(rid, "internal_error", describe(exc))
    if "id" in req:
        reply = {"id": rid, **reply}
    return reply


def handle_bytes(raw: bytes) -> dict | None:
    """The reply to one line of standard input as bytes (its newline removed), or None
    for a blank line (JSON whitespace only), which gets no reply. A line that is not
    UTF-8 gets ``bad_encoding``."""
    if raw.startswith(b"\xef\xbb\xbf"):       # a byte order mark (Windows tools write one)
        raw = raw[3:]
    if not raw.strip(b" \t\r\n"):
        return None
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(None, "bad_encoding", f"line {quote(raw)} is not UTF-8: {exc.reason} "
                                            f"at byte {exc.start}")
    return handle_line(line)


def reply_text(reply: dict) -> str:
    """``reply`` as one line of strict JSON, ASCII only. A reply that cannot be written so
    (a NaN equity) is a bug: it is logged to standard error and replaced by an
    ``internal_error`` reply, so the line is JSON all the same."""
    try:
        return json.dumps(reply, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        print(f"engine.protocol: internal error: reply not JSON ({describe(exc)}): "
              f"{quote(reply)}", file=sys.stderr)
        message = f"the reply could not be written as JSON ({type(exc).__name__})"
        try:
            return json.dumps(_error(reply.get("id"), "internal_error", message),
                              separators=(",", ":"), allow_nan=False)
        except (ValueError, TypeError, RecursionError):
            return json.dumps(_error(None, "internal_error", message), separators=(",", ":"))


def serve(stdin=None, stdout=None) -> None:
    """Serve requests from the binary stream ``stdin`` (default: standard input's
    bytes) to the binary stream ``stdout`` until end of file, one reply line per line
    that is not blank."""
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    while True:
        read = read_line(stdin, MAX_LINE)
        if read is None:
            return
        raw, size = read
        if size:
            reply = _error(None, "line_too_long", f"a request line of {size:,} bytes "
                                                  f"(starting {quote(raw[:40])}) is "
                                                  f"longer than the {MAX_LINE:,} read")
        else:
            reply = handle_bytes(raw)
            if reply is None:
                continue
        stdout.write(reply_text(reply).encode("ascii") + b"\n")
        stdout.flush()


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m engine.protocol [--backend ray [--address A]]``."""
    precompile.allow()       # a cold start compiles on two cores
    import argparse

    from engine.cluster import add_arguments
    ap = argparse.ArgumentParser(prog="python -m engine.protocol",
                                 description="The JSON-lines engine protocol on standard "
                                             "input and output (docs/protocol.md).")
    add_arguments(ap, "the rollout command's trials played here")
    args = parse_args(ap, argv)
    if args.backend != "ray" and args.address is not None:
        ap.error("--address is for --backend ray")
    _ROLLOUTS.update(backend=args.backend, address=args.address, made=None)
    serve()


if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
