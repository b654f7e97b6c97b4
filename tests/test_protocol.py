"""The JSON-lines protocol: replies, errors that keep the process alive, truncation."""

import hashlib
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from engine import Position
from engine.protocol import handle_line

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
        (json.dumps({"cmd": "moves", "position": "not-an-id", "dice": [3, 1]}),
         "invalid_notation"),
        (json.dumps({"cmd": "best", "position": START, "dice": [3, 1], "ply": 9}),
         "invalid_ply"),
    ]
    for line, code in cases:
        reply = handle_line(line)
        assert reply["error"]["code"] == code, (line, reply)
        assert reply["error"]["message"]


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


# ------------------------------------------------------------------ error messages
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
    from engine.dice import Dice
    from engine.errors import NardyError
    from engine.gnubg_id import position_from_gnubg
    from engine.movetext import parse_move
    from engine.variants import get_rules
    from engine.xgid import parse_xgid
    from training.config import ConfigError, TrainConfig
    start = Position.start("backgammon")
    calls = [lambda: Dice.of(HUGE), lambda: get_rules(HUGE),
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
