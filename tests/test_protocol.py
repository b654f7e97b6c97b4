"""The JSON-lines protocol: replies, errors that keep the process alive, truncation."""

import hashlib
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from engine import Position
from engine.cli.protocol import COMMANDS, MAX_LIMIT, MAX_LINE, handle_line, reply_text, serve

ROOT = Path(__file__).resolve().parent.parent
START = Position.start("backgammon").to_json()


def ask(**req):
    return handle_line(json.dumps(req))


def test_moves_opening_roll_from_every_notation():
    for position in (START, "4HPwATDgc/ABMA",
                     "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"):
        reply = ask(id=7, cmd="moves", position=position, dice=[3, 1])
        assert reply["id"] == 7 and reply["count"] == 16
        assert len(reply["successors"]) == len(reply["moves"]) == 16
        assert "8/5 6/5" in reply["moves"]
        keys = [Position.from_json(s).key() for s in reply["successors"]]
        assert keys == sorted(keys)


def test_truncated_reply_has_the_hash():
    full = ask(cmd="moves", position=START, dice=[1, 1])
    cut = ask(cmd="moves", position=START, dice=[1, 1], limit=3)
    assert cut["truncated"] is True and cut["count"] == full["count"] == 42
    assert "successors" not in cut and "moves" not in cut
    keys = sorted(Position.from_json(s).key() for s in full["successors"])
    assert cut["successors_sha256"] == hashlib.sha256("\n".join(keys).encode()).hexdigest()


def test_pending_segment_with_null_dice():
    pos = {"variant": "gul_bara", "me": [5, 0, 3] + [0] * 14 + [1, 0, 0, 0, 0, 0, 6],
           "them": [11, 1, 1, 1, 0, 0, 0, 0, 0, 1] + [0] * 14, "turns": [23, 24],
           "pending": [4, 5, 5, 5, 5, 6, 6, 6, 6]}
    reply = ask(cmd="moves", position=pos, dice=None)
    assert reply["count"] == 1
    after = reply["successors"][0]
    assert after["pending"] == [] and after["turns"] == [23, 24]


def test_errors_name_the_problem():
    cases = [
        ("not json", "bad_json"),
        ("[1, 2]", "bad_request"),
        (json.dumps({"cmd": "fly"}), "unknown_cmd"),
        (json.dumps({"cmd": "moves", "dice": [3, 1]}), "missing_field"),
        (json.dumps({"cmd": "moves", "position": {**START, "me": [17] + [0] * 23},
                     "dice": [3, 1]}), "invalid_position"),
        (json.dumps({"cmd": "moves", "position": {**START, "variant": "long_nardy",
                     "me": [0] * 23 + [14], "bar": [1, 0]}, "dice": [3, 1]}),
         "invalid_position"),
        (json.dumps({"cmd": "moves", "position": START, "dice": [0, 7]}), "invalid_dice"),
        # docs/protocol.md's code for an unknown game (it was invalid_position)
        (json.dumps({"cmd": "evaluate", "position": {**START, "variant": "chess"}}),
         "invalid_variant"),
        (json.dumps({"cmd": "evaluate", "position": {**START, "variant": 7}}),
         "invalid_variant"),
        (json.dumps({"cmd": "moves", "position": "not-an-id", "dice": [3, 1]}),
         "invalid_notation"),
        (json.dumps({"cmd": "best", "position": START, "dice": [3, 1], "ply": 9}),
         "invalid_ply"),
    ]
    for line, code in cases:
        reply = handle_line(line)
        assert reply["error"]["code"] == code, (line, reply)
        assert reply["error"]["message"]


def test_best_with_the_cube_ranks_by_cubeful_equity():
    """Extension: best with a match (and cube) ranks a backgammon roll's plays by the
    mover's cubeful equity at the score, with ``"match": null`` in money play; without
    ``match``, by cubeless equity, as the spec has it."""
    plain = ask(id=1, cmd="best", position="4HPwATDgc/ABMA", dice=[4, 3])
    assert plain["move"] == "13/10 13/9" and "cubeful_equity" not in plain
    assert all("mwc" not in c for c in plain["candidates"])
    dmp = ask(id=2, cmd="best", position="4HPwATDgc/ABMA", dice=[4, 3],
              match={"length": 7, "score": [6, 6]})
    assert dmp["move"] == "24/20 13/10" and dmp["cubeful_equity"] == dmp["candidates"][0][
        "cubeful_equity"]
    wins = [c["probabilities"]["win"] for c in dmp["candidates"]]
    assert wins == sorted(wins, reverse=True)
    assert all(c["mwc"] == pytest.approx(c["probabilities"]["win"], abs=2e-6)
               for c in dmp["candidates"])
    far = ask(id=4, cmd="best", position="4HPwATDgc/ABMA", dice=[4, 3],
              match={"length": 65, "score": [0, 0]})        # beyond the table: cubeless
    assert far["move"] == plain["move"] and "cubeful_equity" not in far
    # money play: with the Jacoby rule (the default) gammons count for nothing while
    # the cube is centred, and 24/20 13/10 gains; without it, the cubeless order's best
    money = ask(id=5, cmd="best", position="4HPwATDgc/ABMA", dice=[4, 3], match=None)
    values = [c["cubeful_equity"] for c in money["candidates"]]
    assert money["move"] == "24/20 13/10" and values == sorted(values, reverse=True)
    assert all("mwc" not in c for c in money["candidates"])
    no_jacoby = ask(id=6, cmd="best", position="4HPwATDgc/ABMA", dice=[4, 3], match=None,
                    jacoby=False, cube={"value": 2, "owner": "them"})
    assert no_jacoby["move"] == plain["move"] and "cubeful_equity" in no_jacoby
    # extension: a cube at its maximum is dead (a match played without the cube):
    # the plays ranked by the winning chance at double match point, as with a live cube
    dead = ask(id=7, cmd="best", position="4HPwATDgc/ABMA", dice=[4, 3],
               match={"length": 7, "score": [6, 6]}, cube={"value": 1, "max": 1})
    assert dead["move"] == "24/20 13/10"
    cube = ask(id=8, cmd="cube", position="4HPwATDgc/ABMA", match={"length": 7},
               cube={"value": 1, "owner": "centre", "max": 1})
    assert cube["action"] == "no_double" and cube["equities"]["double_take"] is None
    for bad in (0, 3, "1", True):
        reply = ask(id=9, cmd="cube", position="4HPwATDgc/ABMA", cube={"value": 2,
                                                                     "owner": "me",
                                                                     "max": bad})
        assert reply["error"]["code"] == "invalid_cube" and "max cube" in \
            reply["error"]["message"], (bad, reply)
    reply = ask(id=10, cmd="best", position="4HPwATDgc/ABMA", dice=[6, 4],
                match={"length": 7, "score": ["a", 0]})
    assert reply["error"]["code"] == "invalid_match"
    assert "('a', 0)" not in reply["error"]["message"], reply      # the list as sent
    for req, code in (({"match": {"length": 7, "score": [9, 6]}}, "invalid_match"),
                      ({"match": {"length": 7}, "cube": {"value": 3}}, "invalid_cube"),
                      ({"match": {"length": 7}, "position": {**START, "variant": "portes"}},
                       "invalid_cube")):
        reply = ask(id=3, cmd="best", **{"position": "4HPwATDgc/ABMA", "dice": [4, 3],
                                          **req})
        assert reply["error"]["code"] == code, reply


def test_both_sides_on_one_point_is_rejected_with_the_point():
    me = [0] * 24
    me[5] = 15
    them = [0] * 24
    them[18] = 15          # their 19 is my 6
    reply = ask(id="x", cmd="moves", position={"variant": "backgammon", "me": me,
                                                "them": them}, dice=[3, 1])
    assert reply["id"] == "x" and reply["error"]["code"] == "invalid_position"
    assert "point 6" in reply["error"]["message"]


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=80),
                 st.dictionaries(st.sampled_from(["cmd", "id", "position", "dice", "limit"]),
                                 st.one_of(st.none(), st.integers(), st.text(max_size=8),
                                           st.lists(st.integers(-2, 30), max_size=25)))
                 .map(json.dumps)))
def test_any_line_gets_a_reply_never_an_exception(line):
    reply = handle_line(line)
    assert isinstance(reply, dict)
    json.dumps(reply)
    if "error" in reply:
        assert reply["error"]["code"] != "internal_error", reply


def test_process_survives_bad_lines():
    lines = ["garbage", json.dumps({"id": 1, "cmd": "moves", "position": START,
                                    "dice": [6, 5]}), "{}", ""]
    proc = subprocess.run([sys.executable, "-m", "engine.protocol"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0
    replies = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [("error" in r) for r in replies] == [True, False, True]
    assert replies[1]["count"] == 7


# ------------------------------------------------------------------ bad bytes
def strict(text):
    """``json.loads`` as a strict JSON reader sees it: ``NaN`` and ``Infinity`` refused."""
    def refuse(name):
        raise ValueError(f"{name} in a reply")
    return json.loads(text, parse_constant=refuse)


def serve_bytes(data: bytes) -> list:
    out = io.BytesIO()
    serve(io.BytesIO(data), out)
    return [strict(line) for line in out.getvalue().decode("ascii").splitlines()]


def protocol_process(data: bytes) -> subprocess.CompletedProcess:
    """``python -m engine.protocol`` fed ``data``, with standard input decoded strictly
    wherever Python would decode it."""
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "engine.protocol"], input=data,
                          capture_output=True, cwd=ROOT, env=env, timeout=300)


def codes(replies) -> list:
    return [r["error"]["code"] if "error" in r else None for r in replies]


def test_a_byte_that_is_not_utf8_costs_one_reply_not_the_process():
    """Regression: standard input was decoded as one text stream, and one ``0xff`` byte
    ended the process with UnicodeDecodeError, answering nothing."""
    proc = protocol_process(b'\xff\n{"id":1,"cmd":"met","length":2}\n\xc3\x28 {"id":2}\n'
                            b'{"id":"\xed\xa0\x80"}\r\n{"id":3,"cmd":"met","length":1}')
    assert proc.returncode == 0, proc.stderr
    replies = [strict(x) for x in proc.stdout.decode("ascii").splitlines()]
    assert codes(replies) == ["bad_encoding", None, "bad_encoding", "bad_encoding", None]
    assert replies[1]["id"] == 1 and replies[4]["id"] == 3
    assert "xff" in replies[0]["error"]["message"]


def test_non_finite_numbers_are_not_json():
    """Regression: an ``id`` of NaN, Infinity or 1e400 (Python's json takes them) was
    echoed as it was, so the reply was not JSON."""
    for text in ("NaN", "Infinity", "-Infinity", "1e400", "-1e999"):
        reply = handle_line(f'{{"id": {text}, "cmd": "met", "length": 2}}')
        assert reply["id"] is None and reply["error"]["code"] == "bad_json", reply
        assert text.strip("-") in reply["error"]["message"]
        strict(reply_text(reply))
    reply = handle_line('{"id": 1e308, "cmd": "met", "length": 1}')
    assert reply["id"] == 1e308 and "error" not in reply
    # an integer beyond a float's range too (helper 133: 401 digits were echoed back,
    # which a client's JSON library reads as infinite)
    reply = handle_line('{"id": -1' + "0" * 400 + ', "cmd": "met", "length": 1}')
    assert reply["id"] is None and reply["error"]["code"] == "bad_json"
    assert "too large for a 64-bit float" in reply["error"]["message"]
    big = 10 ** 300
    assert handle_line(f'{{"id": {big}, "cmd": "met", "length": 1}}')["id"] == big


def test_a_reply_that_is_not_json_is_an_internal_error(monkeypatch, capsys):
    """A NaN in a reply would be a bug: the line is an ``internal_error``, logged."""
    monkeypatch.setitem(COMMANDS, "nan", lambda req: {"equity": float("nan")})
    reply = strict(reply_text(handle_line('{"id": 3, "cmd": "nan"}')))
    assert reply["id"] == 3 and reply["error"]["code"] == "internal_error"
    assert "internal error" in capsys.readouterr().err


def test_limit_above_the_most_a_reply_lists_is_served_up_to_it():
    """The protocol gives ``limit`` no maximum, so a larger one is taken; a reply still
    lists at most ``MAX_LIMIT`` plays (regression: with no bound, ``limit`` 10**6 on
    the largest gul bara cascade took 225 s, 2.7 GB and one 221 MB line)."""
    for limit in (MAX_LIMIT + 1, 10**30):
        reply = ask(cmd="moves", position=START, dice=[3, 1], limit=limit)
        assert reply["count"] == 16 and len(reply["successors"]) == 16, reply
        reply = ask(cmd="best", position=START, dice=[3, 1], limit=limit)
        assert len(reply["candidates"]) == 16 and "truncated" not in reply, reply
    for limit in (-1, 2.0, True, "5"):
        reply = ask(cmd="moves", position=START, dice=[3, 1], limit=limit)
        assert reply["error"]["code"] == "invalid_limit", reply
        assert "expected an integer 0 or more" in reply["error"]["message"]


def test_a_reply_lists_at_most_max_limit_plays(monkeypatch):
    """Above ``MAX_LIMIT`` plays a reply is cut as above ``limit``, whatever the limit."""
    import engine.cli.protocol as proto
    monkeypatch.setattr(proto, "MAX_LIMIT", 5)
    reply = ask(cmd="moves", position=START, dice=[3, 1], limit=10**6)
    assert reply["truncated"] and reply["count"] == 16 and "successors" not in reply
    assert len(reply["successors_sha256"]) == 64
    reply = ask(cmd="best", position=START, dice=[3, 1], limit=10**6)
    assert reply["truncated"] and reply["count"] == 16 and len(reply["candidates"]) == 5


HUGE = "x" * 10_000_000


@pytest.mark.parametrize("req", [
    {"cmd": HUGE},
    {"cmd": "moves", "position": HUGE, "dice": [3, 1]},
    {"cmd": "moves", "position": "XGID=" + HUGE, "dice": [3, 1]},
    {"cmd": "moves", "position": HUGE + ":" + HUGE, "dice": [3, 1]},
    {"cmd": "moves", "position": "{" + HUGE, "dice": [3, 1]},
    {"cmd": "moves", "position": {**START, "variant": HUGE}, "dice": [3, 1]},
    {"cmd": "moves", "position": {**START, HUGE: 1}, "dice": [3, 1]},
    {"cmd": "moves", "position": {**START, "me": [HUGE] * 24}, "dice": [3, 1]},
    {"cmd": "moves", "position": {**START, "pinned": HUGE}, "dice": [3, 1]},
    {"cmd": "moves", "position": START, "dice": [HUGE, 1]},
    {"cmd": "moves", "position": START, "dice": [3, 1], "limit": HUGE},
    {"cmd": "best", "position": START, "dice": [3, 1], "ply": HUGE},
    {"cmd": "met", "length": HUGE},
    {"cmd": "met", "length": 3, "gammon_rate": HUGE},
    {"cmd": "cube", "position": START, "cube": HUGE},
    {"cmd": "cube", "position": START, "cube": {"value": HUGE}},
    {"cmd": "cube", "position": START, "cube": {"value": 2, "owner": HUGE}},
    {"cmd": "cube", "position": START, "match": {"length": HUGE}},
    {"cmd": "cube", "position": START, "match": {"length": 5, "score": HUGE}},
    {"cmd": "cube", "position": START, "jacoby": HUGE},
    {"cmd": "cube", "position": START, "efficiency": HUGE},
])
def test_error_messages_quote_a_huge_field_in_part(req):
    """Regression: error messages quoted a 10 MB bad field in full."""
    reply = handle_line(json.dumps(req))
    code, message = reply["error"]["code"], reply["error"]["message"]
    assert code != "internal_error" and len(message) < 1000, (code, message[:300])
    assert "chars)" in message


def test_api_errors_quote_a_huge_input_in_part():
    """The same cut in the Python API: every error that quotes input uses
    :func:`engine.errors.quote`."""
    from engine.errors import NardyError
    from engine.notation.gnubg_id import position_from_gnubg
    from engine.notation.movetext import parse_move
    from engine.notation.xgid import parse_xgid
    from engine.rules.dice import Dice, parse_dice
    from engine.rules.variants import get_rules
    from training.config import ConfigError, TrainConfig
    start = Position.start("backgammon")
    calls = [lambda: Dice.of(HUGE), lambda: parse_dice(HUGE), lambda: get_rules(HUGE),
             lambda: Position.from_literal(HUGE), lambda: Position.from_json(HUGE),
             lambda: position_from_gnubg(HUGE), lambda: parse_xgid("XGID=" + HUGE),
             lambda: parse_move(HUGE, start, (3, 1)),
             lambda: parse_move("8/5 " + HUGE, start, (3, 1))]
    for call in calls:
        with pytest.raises(NardyError) as info:
            call()
        assert len(str(info.value)) < 1000 and "chars)" in str(info.value)
    for data in ({HUGE: 1}, {"variant": HUGE}, {"alpha": HUGE}):
        with pytest.raises(ConfigError) as info:
            TrainConfig.from_dict(data)
        assert len(str(info.value)) < 1000 and "chars)" in str(info.value)


def test_a_line_over_the_limit_is_skipped_with_one_reply():
    """A request line is read up to :data:`MAX_LINE` bytes; a longer one is skipped to its
    end unread and answered ``line_too_long``, and the next line is served."""
    def padded(size: int, rid: int) -> bytes:
        head = b'{"id":%d,"cmd":"met","length":1,"pad":"' % rid
        return head + b"x" * (size - len(head) - 2) + b'"}'

    assert len(padded(MAX_LINE, 1)) == MAX_LINE
    data = (padded(MAX_LINE, 1) + b"\n" + padded(MAX_LINE + 1, 2) + b"\n"
            + b"[" * (5 * MAX_LINE) + b"\n" + b'{"id":4,"cmd":"met","length":1}\n'
            + padded(MAX_LINE + 1, 5))
    replies = serve_bytes(data)
    assert codes(replies) == [None, "line_too_long", "line_too_long", None, "line_too_long"]
    assert replies[0]["id"] == 1 and replies[3]["id"] == 4
    assert f"{5 * MAX_LINE + 1:,} bytes" in replies[2]["error"]["message"]
    # the CR of a CR LF ending is not part of the line (helper 133: a line of the limit
    # then CR LF was refused), but a CR inside the limit's count is
    replies = serve_bytes(padded(MAX_LINE, 6) + b"\r\n" + padded(MAX_LINE + 1, 7) + b"\r\n"
                          + padded(MAX_LINE, 8) + b"\r\r\n" + b'{"id":9,"cmd":"met","length":1}\n')
    assert codes(replies) == [None, "line_too_long", "line_too_long", None]
    assert replies[0]["id"] == 6 and replies[3]["id"] == 9
    assert f"{MAX_LINE + 3:,} bytes" in replies[1]["error"]["message"]


def _fuzz_lines(rng: random.Random) -> list:
    """Seeded lines of every kind a broken client could send: random bytes, cut JSON,
    requests with random field values, numbers JSON has not, deep nesting, blanks."""
    requests = [{"cmd": "met", "length": 2}, {"cmd": "moves", "position": START, "dice": [3, 1]},
                {"cmd": "moves", "position": "4HPwATDgc/ABMA", "dice": [6, 6], "limit": 3},
                {"cmd": "moves", "position": START, "dice": [2, 2], "limit": 0}]
    values = [None, True, False, -1, 0, 1, 2, 3, 6, 7, 25, 99, 2**64, -2**63, 0.5, 1e308,
              "", "x", "start", "4HPwATDgc/ABMA", "\u2028\ud800\U0001f600", [], [3, 1],
              [0, 7], [1, 2, 3], [[]], {}, {"a": 1}, START, {**START, "me": [15] * 24},
              {**START, "variant": "long_nardy"}, [[[[[[[[1]]]]]]]]]
    lines = []
    for i in range(360):
        kind = i % 8
        if kind == 0:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(60)))
        elif kind == 1:
            text = json.dumps(rng.choice(requests)).encode()
            line = text[:rng.randrange(len(text))]
        elif kind == 2:
            req = {"id": i, "cmd": rng.choice(["moves", "moves", "met", "nope", None, 5])}
            for key in rng.sample(["position", "dice", "limit", "length", "gammon_rate"],
                                  rng.randrange(6)):
                req[key] = rng.choice(values)
            line = json.dumps(req).encode()
        elif kind == 3:
            number = rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400",
                                 "1" + "0" * 5000, "1e-400", "-0", "1" * 300])
            line = f'{{"id": {number}, "cmd": "met", "length": 2}}'.encode()
        elif kind == 4:
            depth = rng.choice([10, 500, 990, 1000, 5000, 100_000])
            line = rng.choice([b"[" * depth, b"[" * depth + b"]" * depth,
                               b'{"a":' * depth,
                               b'{"id":' + b"[" * depth + b"]" * depth
                               + b',"cmd":"met","length":1}'])
        elif kind == 5:
            line = bytearray(json.dumps(rng.choice(requests)).encode())
            for _ in range(rng.randrange(1, 4)):
                line[rng.randrange(len(line))] = rng.randrange(256)
            line = bytes(line)
        elif kind == 6:
            line = json.dumps(rng.choice(requests), ensure_ascii=False).encode() + b"\r"
        else:
            line = rng.choice([b"", b" ", b"\t \r", b"\x0c", b"\xc2\xa0", b"{}", b"null"])
        lines.append(line.replace(b"\n", b" "))
    lines.append(b'{"id": "long", "pad": "' + b"y" * (2 * MAX_LINE) + b'"}')
    return lines


def test_fuzz_the_process_with_random_bytes():
    """Hundreds of seeded bad lines through ``python -m engine.protocol``: it exits 0 at
    the end of its input, answers every line that is not blank with exactly one line of
    strict JSON in order, each a result or an ``error`` with ``code`` and ``message``,
    and never a traceback or an internal error."""
    lines = _fuzz_lines(random.Random(18))
    proc = protocol_process(b"\n".join(lines) + b"\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert b"Traceback" not in proc.stdout and b"Traceback" not in proc.stderr, proc.stderr
    replies = [strict(x) for x in proc.stdout.decode("ascii").splitlines()]
    asked = [line for line in lines if line.strip(b" \t\r")]
    assert len(replies) == len(asked)
    for line, reply in zip(asked, replies):
        assert isinstance(reply, dict), (line[:100], reply)
        if "error" in reply:
            error = reply["error"]
            assert set(error) == {"code", "message"} and isinstance(error["message"], str)
            assert error["code"] != "internal_error", (line[:100], error)
        else:
            assert "count" in reply or "pre_crawford" in reply, (line[:100], reply)
        try:
            req = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(req, dict) and isinstance(req.get("id"), int):
            assert reply["id"] == req["id"]
    assert codes(replies).count("line_too_long") == 1
    assert {"bad_encoding", "bad_json", "bad_request", "unknown_cmd"} <= set(codes(replies))


def test_probabilities_are_cumulative_and_triples_only_where_the_game_has_them():
    """Five independent sigmoids need not be in order: a plakoto position got
    win_gammon 0.94 above win 0.85 and lose_gammon 0.21 above the 0.15 of losing, and
    games without a 3-point result got backgammon chances of up to 6e-4."""
    odd = {"variant": "plakoto",
           "me": [0, 1, 2, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 3],
           "them": [0, 1, 1, 0, 4, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1],
           "pinned": [[2, 23], [7, 16, 18]], "turns": [20, 21]}
    for req in ({"cmd": "evaluate", "position": odd, "ply": 0},
                {"cmd": "evaluate", "position": odd, "ply": 1},
                {"cmd": "best", "position": odd, "dice": [6, 5]},
                {"cmd": "evaluate", "position": Position.start("portes").to_json()},
                {"cmd": "evaluate", "position": Position.start("fevga").to_json()},
                {"cmd": "evaluate", "position": "start"}):
        reply = handle_line(json.dumps(req))
        probs = [c["probabilities"] for c in reply["candidates"]] if "candidates" in reply \
            else [reply["probabilities"]]
        triple = req["position"] == "start"
        for p in probs:
            assert p["win_gammon"] <= p["win"] and p["win_backgammon"] <= p["win_gammon"]
            assert p["lose_gammon"] <= 1 - p["win"] + 1e-6
            assert p["lose_backgammon"] <= p["lose_gammon"]
            assert (p["win_backgammon"] > 0) == triple and (p["lose_backgammon"] > 0) == triple
        if "equity" in reply and "candidates" not in reply:
            p = reply["probabilities"]
            assert reply["equity"] == pytest.approx(
                2 * p["win"] - 1 + p["win_gammon"] - p["lose_gammon"] + p["win_backgammon"]
                - p["lose_backgammon"], abs=1e-5)


def test_best_candidates_are_ranked_by_equity_at_every_ply():
    """At ply 1 and more the plays a move filter cut were listed last with their 0-ply
    equities, above some of the deeper ones: the list was not ranked by equity."""
    pos = {"variant": "backgammon",
           "me": [1, 2, 0, 0, 0, 5, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
           "them": [0, 1, 0, 0, 0, 5, 0, 2, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0],
           "turns": [1, 2]}
    count = ask(cmd="moves", position=pos, dice=[6, 1])["count"]
    for ply in (0, 1):
        reply = ask(cmd="best", position=pos, dice=[6, 1], ply=ply)
        eq = [c["equity"] for c in reply["candidates"]]
        assert eq == sorted(eq, reverse=True) and eq[0] == reply["equity"]
        assert all(c["ply"] == ply for c in reply["candidates"])
        assert len(eq) + reply.get("cut", 0) == count
        assert ply == 0 or reply["cut"] > 0


def test_null_fields_count_as_absent_and_a_byte_order_mark_is_skipped():
    """A client that writes every field, null where it has nothing to say, was refused
    (``"ply": null`` an invalid ply, ``"dice": null`` of a rollout invalid dice); a line
    starting with a byte order mark was not JSON, and lost its id."""
    plain = ask(cmd="best", position="start", dice=[3, 1])
    assert ask(cmd="best", position="start", dice=[3, 1], ply=None, limit=None) == plain
    r = ask(cmd="rollout", position="start", trials=36, truncate=2, dice=None, seed=None,
            candidates=None, ply=None)
    assert r == ask(cmd="rollout", position="start", trials=36, truncate=2)
    cube = {"value": 1, "owner": "centre"}
    assert ask(cmd="cube", position="4HPwATDgc/ABMA", cube=cube, ply=None) == \
        ask(cmd="cube", position="4HPwATDgc/ABMA", cube=cube)
    assert ask(cmd="moves", position="start", dice=None)["error"]["code"] == "invalid_dice"
    from engine.cli.protocol import handle_bytes
    reply = handle_bytes(b'\xef\xbb\xbf{"id": 2, "cmd": "met", "length": 1}')
    assert reply["id"] == 2 and "pre_crawford" in reply
    # a mark and whitespace is a blank line (helper 133: it was answered bad_json)
    assert handle_bytes(b"\xef\xbb\xbf") is None and handle_bytes(b"\xef\xbb\xbf \t\r") is None
    # null inside the cube and match objects too (helper 133: refused, but for max)
    match = {"length": 7, "score": [2, 3], "crawford": False}
    nulls = ask(cmd="cube", position="4HPwATDgc/ABMA", cube={"value": None, "owner": None},
                match={"length": 7, "score": None, "crawford": None})
    assert "error" not in nulls
    assert nulls == ask(cmd="cube", position="4HPwATDgc/ABMA", match={"length": 7})
    assert nulls != ask(cmd="cube", position="4HPwATDgc/ABMA", match=match)
    assert ask(cmd="cube", position="4HPwATDgc/ABMA",
               match={"length": None})["error"]["code"] == "invalid_match"


def test_a_finished_cascade_with_dice_left_over_rolls_out_to_its_result():
    """A gul bara position whose cascade ended the game with pending dice left: a
    rollout without dice (the position before its roll) said ``invalid`` ("pending
    dice: no roll comes before them") where ``evaluate`` gave its exact result."""
    over = Position.start("gul_bara").to_json()
    over["them"], over["off"], over["pending"] = [0] * 24, [0, 15], [4, 4]
    r = ask(cmd="rollout", position=over, trials=36)
    assert r["equity"] == -2.0 and r["se"]["equity"] == 0.0, r
    assert r["probabilities"] == ask(cmd="evaluate", position=over)["probabilities"]
    for dice in (None, [4, 4]):           # the pending segment's plays: none
        r = ask(cmd="rollout", position=over, trials=36, dice=dice)
        assert r["error"]["code"] == "invalid_position", r
        assert "won by the opponent with mars, 2 points" in r["error"]["message"]
