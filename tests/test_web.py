"""The web board's server (engine.web.app): the page, the protocol's commands over
HTTP, positions by ID, and sessions against the engine played through the API with
every kind of bad request answered 4xx while the session lives on."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
pytest.importorskip("httpx", reason="starlette's test client needs httpx")

from starlette.testclient import TestClient  # noqa: E402

from engine.cli.protocol import handle_line  # noqa: E402
from engine.web.app import MAX_BODY, make_app  # noqa: E402

pytestmark = pytest.mark.xdist_group("search")


@pytest.fixture(scope="module")
def client():
    with TestClient(make_app()) as c:
        yield c


def test_the_page_and_its_files_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200 and "<svg id=\"board\"" in page.text
    assert "http" not in page.text.replace("http-equiv", "")       # nothing from a CDN
    assert client.get("/static/board.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/static/nothing.js").status_code == 404


def test_games_give_each_game_its_geometry(client):
    games = {g["variant"]: g for g in client.get("/api/games").json()["games"]}
    assert set(games) == {"backgammon", "portes", "plakoto", "fevga", "long_nardy",
                          "gul_bara"}
    assert games["backgammon"]["opposite"][1] == 24 and games["backgammon"]["bar"]
    assert games["long_nardy"]["opposite"][1] == 13 and not games["long_nardy"]["bar"]
    assert games["plakoto"]["meet"] == "pin" and games["fevga"]["meet"] == "hold"
    assert games["backgammon"]["cube"] and not games["portes"]["cube"]


def test_protocol_commands_answer_as_the_protocol_does(client):
    req = {"cmd": "best", "position": "start", "dice": [3, 1]}
    over_http = client.post("/api/best", json=req).json()
    assert over_http == handle_line(__import__("json").dumps(req))
    assert over_http["move"] == "8/5 6/5"
    moves = client.post("/api/moves", json={"position": "start", "dice": [6, 5]}).json()
    assert moves["count"] == 7


@pytest.mark.parametrize("path, body, status, code", [
    ("/api/best", {"position": "start", "dice": [3, 9]}, 400, "invalid_dice"),
    ("/api/best", {"dice": [3, 1]}, 400, "missing_field"),
    ("/api/evaluate", {"position": "start", "ply": 7}, 400, "invalid_ply"),
    ("/api/cube", {"position": {"variant": "portes", "me": [1]}}, 400, "invalid_position"),
    ("/api/nothing", {}, 404, "unknown_cmd"),
    ("/api/best", [1, 2], 400, "bad_request"),
    ("/api/position", {"position": "not an id"}, 400, "invalid_notation"),
    ("/api/sessions", {"variant": "chess"}, 400, "invalid_session"),
    ("/api/sessions", {"mode": "match", "length": 0}, 400, "invalid_session"),
    ("/api/sessions", {"mode": "match", "length": 65}, 400, "invalid_session"),
    ("/api/sessions", {"variant": "fevga", "cube": True}, 400, "invalid_session"),
    ("/api/sessions", {"ply": 3}, 400, "invalid_session"),
    ("/api/sessions", {"colour": "white"}, 400, "invalid_session"),
    ("/api/sessions", {"mode": "game", "length": 7}, 400, "invalid_session"),
    ("/api/sessions", {"mode": "tavli", "length": 3, "variant": "long_nardy"}, 400,
     "invalid_session"),
    ("/api/position", {"position": "start", "variant": ""}, 400, "invalid_variant"),
    ("/api/position", {"position": "start", "variant": 0}, 400, "invalid_variant"),
])
def test_bad_requests_get_4xx_with_the_typed_error(client, path, body, status, code):
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["message"] and "Traceback" not in err["message"]


def test_routes_and_methods_that_do_not_exist_answer_json(client):
    for method, path, status in (("GET", "/api/best", 405), ("PUT", "/api/sessions/x/act", 405),
                                 ("POST", "/api/x/y", 404), ("GET", "/nothing", 404)):
        r = client.request(method, path)
        assert r.status_code == status and r.json()["error"]["message"].startswith(method), \
            (method, path, r.text)
        assert status != 405 or "allow" in r.headers


def test_bodies_that_are_not_json_or_too_long(client):
    r = client.post("/api/best", content=b'{"position": NaN}')
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_json"
    r = client.post("/api/best", content=b"\xff\xfe")
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_encoding"
    r = client.post("/api/best", content=b" " * (MAX_BODY + 1))
    assert r.status_code == 413 and "accepted" in r.json()["error"]["message"]

    def chunks():                         # no Content-Length: refused as it streams
        for _ in range(MAX_BODY // 4096 + 2):
            yield b" " * 4096
    r = client.post("/api/best", content=chunks())
    assert r.status_code == 413 and "more than" in r.json()["error"]["message"]
    r = client.post("/api/best", content=b" " * MAX_BODY)        # the most accepted
    assert r.status_code == 400 and r.json()["error"]["code"] == "missing_field"


def test_positions_by_id_and_back(client):
    r = client.post("/api/position", json={"position": "4HPwATDgc/ABMA"}).json()
    assert r["position"]["me"][5] == 5 and r["gnubg_id"] == "4HPwATDgc/ABMA"
    again = client.post("/api/position", json={"position": r["xgid"]}).json()
    assert again["position"] == r["position"]
    nardy = client.post("/api/position", json={"position": "start",
                                               "variant": "long_nardy"}).json()
    assert nardy["position"]["me"][23] == 15 and "xgid" not in nardy


def _play_out(client, state, rng, take=True, limit=2000, double=0.0):
    """Answer every question of a session with random legal choices until it ends
    (doubling with chance ``double``, taking as ``take`` says: True, False or None for
    a coin's choice)."""
    for _ in range(limit):
        if state["finished"]:
            return state
        sid = state["id"]
        # the game named is the board's (helper 135: a tavli game the person started
        # was named as the game before it until a turn of it was played)
        assert state["waiting"] is None or state["variant"] == state["board"]["variant"]
        if state["waiting"] == "double":
            state = client.post(f"/api/sessions/{sid}/act",
                                json={"double": rng.random() < double}).json()
        elif state["waiting"] == "take":
            answer = rng.random() < 0.5 if take is None else take
            state = client.post(f"/api/sessions/{sid}/act", json={"take": answer}).json()
        elif state["waiting"] == "move":
            steps, turn = [], state["turn"]
            while turn["steps"]:
                steps.append(rng.choice(turn["steps"]))
                turn = client.post(f"/api/sessions/{sid}/walk", json={"steps": steps}).json()
            assert turn["complete"]
            state = client.post(f"/api/sessions/{sid}/act", json={"move": steps}).json()
        else:
            state = client.get(f"/api/sessions/{sid}?after={state.get('serial', 0)}").json()
        assert "id" in state, state
    raise AssertionError("the session did not end")


def test_a_backgammon_money_game_with_the_cube_played_through_the_api(client):
    state = client.post("/api/sessions", json={"variant": "backgammon", "cube": True,
                                               "seed": 5}).json()
    assert state["cube"] == {"value": 1, "owner": "centre", "crawford": False}
    end = _play_out(client, state, random.Random(5))
    assert end["result"] and end["winner"] in ("you", "engine")
    points = end["score"]["you"] + end["score"]["engine"]
    assert points >= 1 and points % end["cube"]["value"] == 0
    moves = [e for e in end["log"] if e["who"] in ("you", "engine") and e["dice"]]
    assert len(moves) >= 10 and all(e["move"] for e in moves)


def test_a_session_survives_bad_answers(client):
    state = client.post("/api/sessions", json={"variant": "plakoto", "seed": 2}).json()
    while state["waiting"] != "move":
        state = client.get(f"/api/sessions/{state['id']}?after={state.get('serial', 0)}").json()
    sid = state["id"]
    for body, code in [({"double": True}, "invalid_session"),
                       ({"move": [[3, 1, 2]]}, "illegal_move"),
                       ({"move": []}, "invalid_session"),
                       ({"move": "13/7"}, "invalid_session"),
                       ({"take": True, "move": []}, "invalid_session"),
                       ({"move": [], "note": "x"}, "invalid_session")]:
        r = client.post(f"/api/sessions/{sid}/act", json=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == code, (body, r.text)
    r = client.post(f"/api/sessions/{sid}/walk", json={"steps": [[25, 1, 6]]})
    assert r.status_code == 400 and "legal steps" in r.json()["error"]["message"]
    after = client.get(f"/api/sessions/{sid}").json()
    assert after["serial"] == state["serial"] and after["turn"] == state["turn"]
    assert client.get("/api/sessions/feedbeef").status_code == 404
    assert client.delete(f"/api/sessions/{sid}").json() == {"ended": sid}
    assert client.get(f"/api/sessions/{sid}").status_code == 404


def _waiting_for_a_move(client, body):
    state = client.post("/api/sessions", json=body).json()
    while state["waiting"] != "move":
        state = client.get(f"/api/sessions/{state['id']}?after={state.get('serial', 0)}").json()
    return state


def _a_legal_move(client, state, rng):
    steps, turn = [], state["turn"]
    while turn["steps"]:
        steps.append(rng.choice(turn["steps"]))
        turn = client.post(f"/api/sessions/{state['id']}/walk", json={"steps": steps}).json()
    return steps


def _until(client, state, waiting, rng, double=False):
    """Play legal moves (and answer ``double`` before rolls) until the session asks
    ``waiting``."""
    sid = state["id"]
    while state["waiting"] != waiting:
        if state["waiting"] == "move":
            state = client.post(f"/api/sessions/{sid}/act",
                                json={"move": _a_legal_move(client, state, rng)}).json()
        elif state["waiting"] == "double":
            state = client.post(f"/api/sessions/{sid}/act", json={"double": double}).json()
        else:
            state = client.get(f"/api/sessions/{sid}?after={state.get('serial', 0)}").json()
        assert "id" in state, state
    return state


def test_a_question_takes_one_answer(client):
    """A second answer to a question the game has not taken up yet is refused: two
    requests answering at once were both told their answer was played."""
    from engine.web import app as web_app
    state = _waiting_for_a_move(client, {"variant": "plakoto", "seed": 3})
    sid = state["id"]
    steps = _a_legal_move(client, state, random.Random(3))
    session = web_app._SESSIONS[sid]
    with session._cond:              # another request's answer, not yet taken up
        session._answer = (None,)
    r = client.post(f"/api/sessions/{sid}/act", json={"move": steps})
    assert r.status_code == 400 and "answered already" in r.json()["error"]["message"]
    with session._cond:
        session._answer = None
    r = client.post(f"/api/sessions/{sid}/act", json={"move": steps})
    assert r.status_code == 200 and r.json()["serial"] > state["serial"], r.text
    client.delete(f"/api/sessions/{sid}")


def test_an_answer_naming_its_question_is_not_read_as_the_next_one(client):
    """A retried ``act`` (its first request answered, the reply lost) was checked
    against the game's next question: a double refused by a retried ``double: false``
    after the engine's turn, or a move played twice where it was legal again. With the
    state's ``serial`` beside the answer, a question the game has moved on from is
    refused, and the game is where the first answer left it."""
    state = _waiting_for_a_move(client, {"variant": "plakoto", "seed": 3})
    sid = state["id"]
    steps = _a_legal_move(client, state, random.Random(3))
    for serial in (0, "1", 1.0, True, None):
        r = client.post(f"/api/sessions/{sid}/act", json={"move": steps, "serial": serial})
        assert r.status_code == 400 and r.json()["error"]["message"].startswith(
            "serial = "), (serial, r.text)
    r = client.post(f"/api/sessions/{sid}/act", json={"move": steps,
                                                      "serial": state["serial"] + 1})
    assert r.status_code == 400 and "moved on from question" in r.json()["error"]["message"]
    first = client.post(f"/api/sessions/{sid}/act", json={"move": steps,
                                                          "serial": state["serial"]})
    assert first.status_code == 200 and first.json()["serial"] > state["serial"], first.text
    again = client.post(f"/api/sessions/{sid}/act", json={"move": steps,
                                                          "serial": state["serial"]})
    assert again.status_code == 400, again.text
    message = again.json()["error"]["message"]
    assert f"moved on from question {state['serial']}" in message, message
    after = client.get(f"/api/sessions/{sid}").json()
    assert after["serial"] == first.json()["serial"] and after["log"] == first.json()["log"]
    client.delete(f"/api/sessions/{sid}")


def test_more_sessions_than_kept_end_the_one_used_longest_ago(client, monkeypatch):
    """A new session beyond the cap ended a finished one however recently it was used:
    a player downloading the match file of the game he had just finished got a 404,
    while an abandoned board's unfinished session lived on. Now the one used longest
    ago goes, a finished one first only once it has been idle a while."""
    from engine.web import app as web_app
    for sid in list(web_app._SESSIONS):
        client.delete(f"/api/sessions/{sid}")
    monkeypatch.setattr(web_app, "MAX_SESSIONS", 3)

    def new(seed: int) -> str:
        return client.post("/api/sessions", json={"variant": "fevga", "seed": seed}).json()["id"]

    ids = [new(i) for i in range(3)]
    idle = web_app._SESSIONS[ids[0]]                 # abandoned, its game not over
    web_app._SESSIONS[ids[1]].finished = True
    assert client.get(f"/api/sessions/{ids[1]}").status_code == 200   # just used
    ids.append(new(3))
    assert [client.get(f"/api/sessions/{i}").status_code for i in ids] == [404, 200, 200, 200]
    assert "ended (closed to make room" in idle.state()["error"]       # its waiting board
    for i in (2, 1, 3):                              # used longest ago: ids[2]
        client.get(f"/api/sessions/{ids[i]}")
    web_app._USED[ids[1]] -= web_app.FINISHED_IDLE_S + 1    # finished, idle 10 minutes
    ids.append(new(4))
    assert client.get(f"/api/sessions/{ids[1]}").status_code == 404
    assert client.get(f"/api/sessions/{ids[2]}").status_code == 200
    ids.append(new(5))                               # none finished: the one used longest ago
    gone = client.get(f"/api/sessions/{ids[3]}")
    assert gone.status_code == 404 and "keeps 3 sessions" in gone.json()["error"]["message"]
    assert gone.json()["error"]["code"] == "unknown_session"
    for sid in list(web_app._SESSIONS):
        client.delete(f"/api/sessions/{sid}")
    assert not web_app._USED


def test_a_tavli_match_rotates_the_games(client):
    state = client.post("/api/sessions", json={"mode": "tavli", "length": 3,
                                               "seed": 3}).json()
    assert state["variant"] == "portes"
    end = _play_out(client, state, random.Random(3))
    assert max(end["score"].values()) >= 3 and "match" in end["result"]
    games = {e["game"]: e["variant"] for e in end["log"] if "variant" in e}
    assert games[1] == "portes" and games[2] == "plakoto" and len(games) >= 2


def test_a_backgammon_match_with_the_cube_reaches_its_length(client):
    state = client.post("/api/sessions", json={"mode": "match", "length": 3, "cube": True,
                                               "ply": 0, "seed": 11}).json()
    assert state["length"] == 3 and state["cube"]["value"] == 1
    longest = client.post("/api/sessions", json={"mode": "match", "length": 64, "cube": True,
                                                 "ply": 0, "seed": 11}).json()
    assert longest["length"] == 64           # GNU Backgammon's longest, the table's reach
    end = _play_out(client, state, random.Random(11))
    assert max(end["score"].values()) >= 3 and "match" in end["result"]
    results = [e for e in end["log"] if e["who"] == "result"]
    assert len(results) == len({e["game"] for e in end["log"]})
    assert end["game"] == len(results)          # not one more after the match ended


@pytest.mark.parametrize("mode, cube, seed", [("match", True, 3), ("game", True, 4),
                                              ("game", False, 6)])
def test_the_games_played_are_saved_as_a_match_file(client, mode, cube, seed):
    """A session's backgammon games as a .mat match file: read back and replayed on the
    board, every game, play, double and answer as the log has them, the points as the
    results said."""
    from engine.notation.matfile import parse_mat, replay
    req = {"variant": "backgammon", "mode": mode, "cube": cube, "seed": seed}
    if mode == "match":
        req["length"] = 3
    state = client.post("/api/sessions", json=req).json()
    sid = state["id"]
    early = client.get(f"/api/sessions/{sid}/mat").json()
    assert f" {req.get('length', 0)} point match" in early["mat"]
    end = _play_out(client, state, random.Random(seed), take=None, double=0.3)
    reply = client.get(f"/api/sessions/{sid}/mat").json()
    assert reply["filename"] == f"nardy-{sid}.mat"
    record = parse_mat(reply["mat"])
    from engine.notation.sgf import parse_sgf
    sgf = client.get(f"/api/sessions/{sid}/mat?format=sgf").json()
    assert sgf["filename"] == f"nardy-{sid}.sgf"
    assert [(d.kind, d.position, d.after, d.action) for d in replay(parse_sgf(sgf["sgf"]))] \
        == [(d.kind, d.position, d.after, d.action) for d in replay(record)]
    bad = client.get(f"/api/sessions/{sid}/mat?format=xg")
    assert bad.status_code == 400 and "format" in bad.json()["error"]["message"]
    assert record.players == ("you", "nardy") and record.length == (3 if mode == "match"
                                                                    else 0)
    decisions = list(replay(record))
    log = [e for e in end["log"] if e["who"] in ("you", "engine")]
    plays = [e for e in log if e["dice"]]
    assert sum(d.kind == "play" for d in decisions) == len(plays)
    cube_words = [e["move"] for e in log if not e["dice"]]
    assert sum(d.action == "double" for d in decisions) == sum(
        w.startswith("double") for w in cube_words)
    assert sum(d.kind == "answer" for d in decisions) == sum(
        w in ("take", "takes", "pass", "passes") for w in cube_words)
    won = {"you": 0, "engine": 0}
    for g in record.games:
        won[("you", "engine")[g.winner]] += g.points
    assert won == end["score"]
    assert ('CubeLimit "1"' in reply["mat"]) == (not cube)
    # the games reviewed: every play of both sides rated, the totals for each
    rev = client.get(f"/api/sessions/{sid}/review?ply=0").json()
    assert rev["players"] == ["you", "nardy"] and len(rev["totals"]) == 2
    rated = [d for d in rev["decisions"] if d["kind"] == "play"]
    assert len(rated) == len(plays) and all(d["cost"] >= 0 for d in rated)
    assert sum(t["plays"] for t in rev["totals"]) == sum(not d["forced"] for d in rated)


def test_a_review_needs_games_and_a_shallow_search(client):
    state = client.post("/api/sessions", json={"variant": "backgammon", "seed": 2}).json()
    sid = state["id"]
    for ply in ("2", "x", "-1"):
        reply = client.get(f"/api/sessions/{sid}/review?ply={ply}")
        assert reply.status_code == 400 and "ply" in reply.json()["error"]["message"]
    for seed in range(20):          # a session whose first roll is yours: no play yet
        state = client.post("/api/sessions", json={"variant": "backgammon",
                                                   "seed": seed}).json()
        if not state["log"]:
            break
    else:
        raise AssertionError("the engine opened every game")
    reply = client.get(f"/api/sessions/{state['id']}/review")
    assert reply.status_code == 400 and "nothing to review" in reply.text


def test_a_tavli_session_has_no_match_file(client):
    state = client.post("/api/sessions", json={"mode": "tavli", "length": 1,
                                               "seed": 1}).json()
    reply = client.get(f"/api/sessions/{state['id']}/mat")
    assert reply.status_code == 400 and "backgammon" in reply.json()["error"]["message"]


def test_the_engine_plays_a_match_for_the_score():
    """With the cube the board's engine plays as the protocols' engines do, by cubeful
    equity: at double match point 4-3 from the start is 24/20 13/10 (the best winning
    chance), not the cubeless money best 13/10 13/9; in money play with the Jacoby rule
    24/20 13/10 too (a gammon counts for nothing while the cube is centred), and without it
    13/10 13/9."""
    from engine.cube.decision import CubeState
    from engine.movegen.generate import successors
    from engine.rules.position import Position
    from engine.search.nply import Search
    from engine.web.session import GameSession, _Engine
    search = Search.load("backgammon")
    session = GameSession("backgammon", "match", 7, cube=True,
                          search_of=lambda variant: search)
    engine = _Engine(session)
    start = Position.start()
    succ = successors(start, (4, 3))
    moves = {s.key(): c.move for c in search.analyse(start, (4, 3)).candidates
             for s in succ if s.key() == c.position.key()}
    dmp = CubeState(match_length=7, score=(6, 6))
    assert moves[succ[engine.choose_with_cube(start, (4, 3), succ, dmp)].key()] == "24/20 13/10"
    assert moves[succ[engine.choose(start, (4, 3), succ)].key()] == "13/10 13/9"
    # money play with the cube: cubeful; with the Jacoby rule a gammon counts for
    # nothing while the cube is centred, and 24/20 13/10 gains
    money = CubeState()
    assert moves[succ[engine.choose_with_cube(start, (4, 3), succ, money)].key()] == "24/20 13/10"
    no_jacoby = CubeState(jacoby=False)
    assert moves[succ[engine.choose_with_cube(start, (4, 3), succ, no_jacoby)].key()] == \
        "13/10 13/9"


def test_a_match_without_the_cube_is_played_for_the_score():
    """A backgammon match without the cube: the engine played for money (13/10 13/9 for
    4-3 from the start at double match point) where the score made the winning chance
    all that counts (24/20 13/10, as with the cube)."""
    from engine.movegen.generate import successors
    from engine.rules.position import Position
    from engine.search.nply import Search
    from engine.web.session import GameSession, _Engine
    search = Search.load("backgammon")
    session = GameSession("backgammon", "match", 7, cube=False,
                          search_of=lambda variant: search)
    try:
        engine = _Engine(session)
        start = Position.start()
        succ = successors(start, (4, 3))
        moves = {s.key(): c.move for c in search.analyse(start, (4, 3)).candidates
                 for s in succ if s.key() == c.position.key()}
        session.score = [6, 6]
        assert moves[succ[engine.choose(start, (4, 3), succ)].key()] == "24/20 13/10"
        money = GameSession("backgammon", "game", cube=False, search_of=lambda v: search)
        try:
            assert moves[succ[_Engine(money).choose(start, (4, 3), succ)].key()] == \
                "13/10 13/9"
        finally:
            money.close()
    finally:
        session.close()


def test_a_tavli_game_the_person_starts_is_named_as_its_board():
    """A tavli game the person starts (having won the last) asks for the person's play
    before any turn of it is played: the session named it as the game before (portes
    over a plakoto board; helper 135). The engine here plays its worst play, the person
    the search's best, so the person wins and starts the next game."""
    from engine.search.nply import Search
    from engine.web.session import GameSession
    searches = {}

    def search(variant):
        return searches.setdefault(variant, Search.load(variant))

    class Worst:                  # the search, but for the play it picks
        def __init__(self, variant):
            self.real = search(variant)

        def __getattr__(self, name):
            return getattr(self.real, name)

        def best(self, position, dice, ply):
            return self.real.analyse(position, dice).candidates[-1]

    def steps_to(walk, key, steps):
        turn = walk.walk(steps)
        if not turn.steps:
            return steps if walk.successors[turn.end].key() == key else None
        for step in turn.steps:
            found = steps_to(walk, key, [*steps, list(step)])
            if found is not None:
                return found
        return None

    session = GameSession(mode="tavli", length=3, seed=4, search_of=Worst)
    try:
        starts = 0
        for _ in range(400):
            session.wait(None, 60)
            state = session.state()
            if state["finished"]:
                break
            assert state["variant"] == state["board"]["variant"], state["log"][-3:]
            need = session._need
            if state["waiting"] == "accept":              # the engine resigns
                session.act({"accept": True, "serial": state["serial"]}, timeout=60)
                continue
            assert state["waiting"] == "move", state["waiting"]
            if state["game"] > 1 and not any(e["game"] == state["game"]
                                             for e in state["log"]):
                starts += 1                    # the person's first play of the game
                break
            best = search(need.position.variant).best(need.position, need.dice, 0)
            steps = steps_to(need.walk, best.position.key(), [])
            session.act({"move": steps, "serial": state["serial"]}, timeout=60)
        assert starts == 1 and not session.state()["error"]
    finally:
        session.close()


def test_a_session_ended_before_its_game_says_why():
    """A deleted or evicted session's board read ``finished`` with no result and no
    reason ("null. Press New game"); a match over kept showing a next game's reset
    cube."""
    from types import SimpleNamespace

    from engine.rules.scoring import Kind
    from engine.search.nply import Search
    from engine.web.session import GameSession
    search = Search.load("backgammon")
    session = GameSession("backgammon", "match", 3, cube=True, search_of=lambda v: search)
    session.close("closed to make room: the server keeps 32 sessions")
    assert "ended (closed to make room" in session.state()["error"]
    session = GameSession("backgammon", "match", 3, cube=True, search_of=lambda v: search)
    try:
        session.cube_value, session.cube_owner = 4, "you"
        record = SimpleNamespace(variant="backgammon", winner=1, points=4, passed=False, resigned=0,
                                 kind=Kind.SINGLE, cube_value=4)
        session._on_game(SimpleNamespace(record=record))
        state = session.state()
        assert state["score"] == {"you": 0, "engine": 4}
        assert state["cube"]["value"] == 4 and state["game"] == 1
        assert state["result"] == "the engine wins 4 points (a single game)"
    finally:
        session.close()
    # each game's own words, and the Jacoby rule's single said
    money = GameSession("backgammon", "game", cube=True, search_of=lambda v: search)
    nardy = GameSession("long_nardy", "game", search_of=lambda v: search)
    try:
        jacoby = SimpleNamespace(variant="backgammon", winner=0, points=1, passed=False, resigned=0,
                                 kind=Kind.GAMMON, cube_value=1)
        assert money._result_text(jacoby) == ("you win 1 point (a gammon, a single by the "
                                              "Jacoby rule: the cube was not turned)")
        mars = SimpleNamespace(variant="long_nardy", winner=1, points=2, passed=False, resigned=0,
                               kind=Kind.GAMMON, cube_value=1)
        assert nardy._result_text(mars) == "the engine wins 2 points (mars)"
    finally:
        money.close()
        nardy.close()


def test_long_polls_hold_no_thread():
    """A board waiting for the engine's next question (``?after=``) holds no worker
    thread while it waits: with more polls open than the thread pool has threads
    (anyio's 40), the server still answers at once, and the polls answer when the
    game moves on."""
    import asyncio
    import time

    import httpx

    async def run():
        transport = httpx.ASGITransport(app=make_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://board",
                                     timeout=60) as c:
            state = (await c.post("/api/sessions", json={"variant": "plakoto",
                                                         "seed": 4})).json()
            while state["waiting"] != "move":
                state = (await c.get(f"/api/sessions/{state['id']}"
                                     f"?after={state.get('serial', 0)}")).json()
            sid, serial = state["id"], state["serial"]
            polls = [asyncio.create_task(c.get(f"/api/sessions/{sid}?after={serial}"))
                     for _ in range(60)]
            await asyncio.sleep(0.5)
            assert not any(p.done() for p in polls)      # waiting for the game
            t = time.perf_counter()
            games = await c.get("/api/games")
            assert games.status_code == 200 and time.perf_counter() - t < 5
            steps, turn = [], state["turn"]
            rng = random.Random(4)
            while turn["steps"]:
                steps.append(rng.choice(turn["steps"]))
                turn = (await c.post(f"/api/sessions/{sid}/walk",
                                     json={"steps": steps})).json()
            after = await c.post(f"/api/sessions/{sid}/act", json={"move": steps})
            assert after.status_code == 200 and after.json()["serial"] != serial
            answers = await asyncio.wait_for(asyncio.gather(*polls), 30)
            assert {r.status_code for r in answers} == {200}
            assert all(r.json()["serial"] != serial or r.json()["finished"]
                       for r in answers)
            await c.delete(f"/api/sessions/{sid}")

    asyncio.run(run())


def test_a_turn_s_steps_are_walked_outside_the_session_s_lock():
    """A gul bara cascade's first walk can take seconds (a 1-1 cascade of 346,799
    plays: 9 s), and :meth:`GameSession.state` ran it holding the session's lock,
    which the server's event loop also takes (``moved_on``, a long poll's check): a
    second request on the session froze every session's requests until the walk was
    done. The walk now runs after the lock is let go."""
    import threading
    import time

    from engine.search.nply import Search
    from engine.web.session import GameSession
    search = Search.load("backgammon")
    session = GameSession("backgammon", "game", seed=1, search_of=lambda v: search)
    try:
        session.wait(None, 60)
        with session._cond:
            need = session._need
        assert need is not None and need.kind == "move"
        walking, real = threading.Event(), need.walk.walk

        def slow_walk(played=()):
            walking.set()
            time.sleep(1.0)
            return real(played)

        need.walk.walk = slow_walk
        states: list = []
        reader = threading.Thread(target=lambda: states.append(session.state()))
        reader.start()
        assert walking.wait(10)
        t = time.perf_counter()
        assert session.moved_on(None)
        assert time.perf_counter() - t < 0.5          # not held up by the walk
        reader.join(10)
        assert states and states[0]["turn"]["steps"] and states[0]["serial"] == need.serial
    finally:
        session.close()


def test_the_engine_s_double_keeps_the_board_on_the_person_s_side(client):
    """When the engine doubled, the state showed the engine's side of the board (the
    game loop hands the taker the doubler's position), the pips swapped, and the page's
    cube advice mixed the engine's position with the person's cube. The board stays the
    person's; ``cube_state`` gives the doubler's position and cube for the advice."""
    from engine import Position
    rng = random.Random(1)
    state = client.post("/api/sessions", json={"variant": "backgammon", "cube": True,
                                               "seed": 1}).json()
    sid = state["id"]
    for _ in range(400):
        assert not state["finished"], "the engine never doubled"
        if state["waiting"] == "take":
            break
        if state["waiting"] == "double":
            c = state["cube_state"]
            assert c["doubler"] == "you" and c["position"] == state["board"]
            state = client.post(f"/api/sessions/{sid}/act", json={"double": False}).json()
        elif state["waiting"] == "move":
            steps = _a_legal_move(client, state, rng)
            state = client.post(f"/api/sessions/{sid}/act", json={"move": steps}).json()
        else:
            state = client.get(f"/api/sessions/{sid}?after={state.get('serial', 0)}").json()
    c = state["cube_state"]
    assert c["doubler"] == "engine" and c["owner"] in ("centre", "me")
    assert Position.from_json(c["position"]).flip().to_json() == state["board"]
    advice = client.post("/api/cube", json={"position": c["position"],
                                            "cube": {"value": c["value"],
                                                     "owner": c["owner"]}}).json()
    assert advice["action"] in ("double_take", "double_pass", "too_good_pass",
                                "too_good_take", "no_double")
    client.delete(f"/api/sessions/{sid}")


def test_a_game_without_a_model_is_refused_at_its_start(client, tmp_path, monkeypatch):
    """Without a model file the session started (200) and its game then died with
    "internal error" and a traceback; it is refused at once, as /api/best is."""
    monkeypatch.setenv("NARDY_MODELS", str(tmp_path))
    for body in ({"variant": "plakoto", "seed": 1}, {"mode": "tavli", "length": 3}):
        r = client.post("/api/sessions", json=body)
        assert r.status_code == 404 and r.json()["error"]["code"] == "no_model", r.text


def test_a_position_id_keeps_its_dice_cube_and_score(client):
    """The answer dropped the info's tuples (dice, score), and an XGID's dice and cube
    were lost in its GNU Backgammon ID (and a Match ID's in its XGID)."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:1:1:1:52:2:3:0:7:10"
    r = client.post("/api/position", json={"position": xgid}).json()
    assert r["info"]["dice"] == [5, 2] and r["info"]["score"] == [2, 3]
    assert r["xgid"] == xgid
    back = client.post("/api/position", json={"position": r["gnubg_id"]}).json()
    assert back["info"]["dice"] == [5, 2] and back["info"]["score"] == [2, 3]
    assert back["info"]["cube_value"] == 2 and back["info"]["cube_owner"] == "me"
    assert back["info"]["match_length"] == 7 and back["xgid"] == xgid


def test_an_id_that_cannot_hold_the_state_is_left_out(client):
    """A Match ID after a beaver (GNU Backgammon wrote it) and one with a Crawford flag
    at 2-3 of 7 got a money game's XGID, cube centred; an XGID's cube of 65536 got a
    money game's GNU Backgammon ID (helper 124's audit against gnubg 1.07)."""
    for text in ("jGfwATDgc/ABMA:EREAAEAAAAAE", "4HPwATDgc/ABMA:sAHgACAAGAAA"):
        r = client.post("/api/position", json={"position": text}).json()
        assert r["gnubg_id"] == text and "xgid" not in r
    big = "XGID=-b----E-C---eE---c-e----B-:16:1:1:00:0:0:0:0:20"
    r = client.post("/api/position", json={"position": big}).json()
    assert r["info"]["cube_value"] == 65536 and r["xgid"] == big and "gnubg_id" not in r


@pytest.mark.parametrize("body, words", [
    ({"position": "start", "trials": 1296 * 7}, "at most"),
    ({"position": "start", "dice": [3, 1], "trials": 1296, "candidates": 7}, "at most"),
    ({"position": "start", "dice": [3, 1], "trials": 1600}, "at most"),   # 5 candidates
    ({"position": "start", "trials": 36, "ply": 1}, "0-ply"),
    # a null is the protocol's default (5 candidates, 1296 trials), which was not counted
    ({"position": "start", "dice": [3, 1], "trials": 2000, "candidates": None},
     "2000 x 5 candidate(s) = 10,000 trials: the board's server plays at most 7,776"),
    ({"position": "start", "dice": [3, 1], "trials": 1_000_000, "candidates": None},
     "at most 7,776"),
    ({"position": "start", "dice": [3, 1], "trials": None, "candidates": 7}, "1296 x 7"),
])
def test_the_board_s_rollouts_are_bounded(client, body, words):
    """One rollout request held the one search lock of every session's engine: 5,184
    trials stalled a 0-ply evaluation 10 s, and the protocol allows a million."""
    r = client.post("/api/rollout", json=body)
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_large", r.text
    assert words in r.json()["error"]["message"]


def test_a_rollout_at_the_board_s_limit_is_played(client, monkeypatch):
    """The limit counts the trials the protocol plays: a rollout of the position
    (``dice`` null before a roll) is one root, not five candidates, and a request at the
    limit is played (the limit lowered to keep it quick)."""
    from engine.web import app as web_app
    monkeypatch.setattr(web_app, "MAX_ROLLOUT_TRIALS", 8)
    r = client.post("/api/rollout", json={"position": "start", "dice": [3, 1],
                                          "trials": 4, "candidates": 2})
    assert r.status_code == 200 and r.json()["trials"] == 4, r.text
    assert len(r.json()["candidates"]) == 2
    r = client.post("/api/rollout", json={"position": "start", "dice": None, "trials": 8})
    assert r.status_code == 200, r.text
    r = client.post("/api/rollout", json={"position": "start", "dice": [3, 1], "trials": 4,
                                          "candidates": None})
    assert r.status_code == 400 and r.json()["error"]["code"] == "too_large"
    assert "4 x 5 candidate(s) = 20 trials" in r.json()["error"]["message"]
    assert "at most 8 trials" in r.json()["error"]["message"]
    r = client.post("/api/rollout", json={"position": "start", "dice": [3, 1], "trials": 4,
                                          "candidates": "2"})     # the protocol's own error
    assert r.status_code == 400 and "candidates" in r.json()["error"]["message"], r.text


def test_session_answers_name_their_fields(client):
    state = _waiting_for_a_move(client, {"variant": "fevga", "seed": 4})
    sid = state["id"]
    for after in ("1_0", "\u0663", "x", ""):
        r = client.get(f"/api/sessions/{sid}?after={after}")
        assert r.status_code == 400 and "after" in r.json()["error"]["message"], after
    r = client.post(f"/api/sessions/{sid}/act", json={"move": None})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("move = null")
    r = client.post(f"/api/sessions/{sid}/walk", json={"steps": 3})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("steps = 3")
    client.delete(f"/api/sessions/{sid}")


def test_the_server_names_an_ipv6_host_in_brackets(monkeypatch, capsys):
    """``--host ::1`` printed http://::1:8080/, not a URL."""
    import uvicorn

    from engine.search import precompile
    from engine.web import __main__ as web_main
    monkeypatch.setattr(web_main, "_cannot_listen", lambda host, port: None)
    monkeypatch.setattr(precompile, "allow", lambda: None)
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    for host, url in (("::1", "http://[::1]:8123/"), ("127.0.0.1", "http://127.0.0.1:8123/")):
        monkeypatch.setattr("sys.argv", ["engine.web", "--host", host, "--port", "8123"])
        web_main.main()
        assert url in capsys.readouterr().err


def test_a_client_gone_while_its_body_streams_in_is_no_internal_error(capsys):
    """A client that went away in the middle of its body raised starlette's
    ClientDisconnect, answered as an internal error with a traceback on stderr."""
    import asyncio

    from engine.web.app import make_app

    async def run():
        sent = []

        async def receive():
            if not sent:
                sent.append(1)
                return {"type": "http.request", "body": b'{"position": ', "more_body": True}
            return {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/api/best", "headers": [],
                 "query_string": b"", "root_path": "", "scheme": "http",
                 "server": ("board", 80), "http_version": "1.1"}
        await make_app()(scope, receive, send)
        return [m for m in sent if isinstance(m, dict)]

    messages = asyncio.run(run())
    start = next(m for m in messages if m["type"] == "http.response.start")
    assert start["status"] == 499
    assert "Traceback" not in capsys.readouterr().err


MATCHES = Path(__file__).parent / "data" / "matches"


def test_a_match_file_is_reviewed(client):
    """``POST /api/review``: a .mat or GNU Backgammon .sgf file's text, every decision
    of both players rated, as ``python -m engine.review --json`` rates them."""
    from engine.cli.review import main as review_main
    for name in ("gnubg_money.sgf", "raccoon_redoubled.mat", "native1.sgf", "native1.mat"):
        reply = client.post("/api/review", json={"text": (MATCHES / name).read_text()})
        assert reply.status_code == 200, reply.text
        got = reply.json()
        assert got["players"] == ["gnubg", "root"] and got["ply"] == 0, name
        assert len(got["totals"]) == 2 and got["decisions"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert review_main([str(MATCHES / "native1.mat"), "--json"]) == 0
    assert json.loads(out.getvalue())["decisions"] == got["decisions"]


@pytest.mark.parametrize("body, status, words", [
    ({"text": "not a match file"}, 400, "match length"),
    ({"text": "(;FF[4]GM[1];B[dd])"}, 400, "not a backgammon game"),
    ({}, 400, "text"),
    ({"text": 5}, 400, "expected a match file's text"),
    ({"text": " 5 point match\n"}, 400, "no games"),
    ({"text": "(;FF[4]GM[6]MI[length:5])", "ply": 0}, 400, "no decision"),
    ({"text": "(;FF[4]GM[6]MI[length:5];B[21lnst])", "ply": 2}, 400, "ply = 2"),
    ({"text": "(;FF[4]GM[6]MI[length:5];B[21lnst])", "ply": True}, 400, "ply = true"),
    ({"text": "(;FF[4]GM[6]MI[length:5];B[21lnst])", "ply": 1.0}, 400,
     "ply = 1.0: expected 0 .. 1"),
    ({"text": "(;FF[4]GM[6]MI[length:0]CV[" + "9" * 5000 + "];W[31hefe])"}, 400, "CV "),
    ({"text": " " + "9" * 5000 + " point match"}, 400, "match length"),
])
def test_a_bad_match_file_is_a_400_saying_what(client, body, status, words):
    reply = client.post("/api/review", json=body)
    assert reply.status_code == status and words in reply.json()["error"]["message"], \
        reply.text


def test_a_match_file_too_long_for_the_board_s_server(client, monkeypatch):
    from engine.web import app
    monkeypatch.setattr(app, "MAX_REVIEW_DECISIONS", 10)
    reply = client.post("/api/review", json={"text": (MATCHES / "native1.mat").read_text()})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "too_large"
    assert "python -m engine.review" in reply.json()["error"]["message"]


def test_the_person_resigns_and_the_engine_answers(client, monkeypatch):
    """``{"resign": level}`` on the person's turn: at the start a gammon's resignation
    gives the engine more than it expects, so it accepts and the game ends (the match
    file says ``Wins 2 points``); a level the game has not, or not a number, is refused
    by name; declined, the game waits on for the same move."""
    state = _waiting_for_a_move(client, {"variant": "backgammon", "seed": 7})
    sid = state["id"]
    for bad, words in [(0, "resignation level 0"), (4, "resignation level 4"),
                       ("gammon", "resignation level 'gammon'"), (2.0, "level 2.0")]:
        r = client.post(f"/api/sessions/{sid}/act", json={"resign": bad})
        assert r.status_code == 400 and words in r.json()["error"]["message"], (bad, r.text)
    end = client.post(f"/api/sessions/{sid}/act",
                      json={"resign": 2, "serial": state["serial"]}).json()
    assert end["finished"] and end["winner"] == "engine" and end["score"] == {
        "you": 0, "engine": 2}
    assert "you resigned a gammon" in end["result"]
    assert "resign a gammon (2 points): the engine accepts" in end["log"][-2]["move"]
    mat = client.get(f"/api/sessions/{sid}/mat").json()["mat"]
    assert "Wins 2 points" in mat
    # the dice the person resigned after, written with no play (GNU Backgammon read a
    # game of a Wins line alone as unfinished)
    from engine.notation.matfile import parse_mat
    *_, rolled, won = parse_mat(mat).games[0].actions
    assert (rolled.player, rolled.kind, rolled.dice, rolled.move) == (
        0, "roll", tuple(state["dice"]), "") and (won.player, won.value) == (1, 2)
    r = client.post(f"/api/sessions/{sid}/act", json={"resign": 1})
    assert r.status_code == 400 and "not waiting" in r.json()["error"]["message"]

    import engine.web.session as web_session
    monkeypatch.setattr(web_session, "accepts_resignation", lambda *a, **k: False)
    state = _waiting_for_a_move(client, {"variant": "plakoto", "seed": 7})
    sid = state["id"]
    r = client.post(f"/api/sessions/{sid}/act", json={"resign": 3})
    assert r.status_code == 400 and "in plakoto" in r.json()["error"]["message"]
    after = client.post(f"/api/sessions/{sid}/act", json={"resign": 2}).json()
    assert not after["finished"] and after["waiting"] == "move"
    assert after["serial"] == state["serial"] and after["turn"] == state["turn"]
    assert after["log"][-1]["move"].endswith("the engine declines")
    r = client.post(f"/api/sessions/{sid}/act", json={"resign": 1})
    assert r.status_code == 400 and "declined a resignation of" in r.json()["error"]["message"]
    moved = client.post(f"/api/sessions/{sid}/act",
                        json={"move": _a_legal_move(client, after, random.Random(1))}).json()
    assert moved.get("serial") != state["serial"] or moved["finished"]
    client.delete(f"/api/sessions/{sid}")


def test_a_resignation_while_the_engine_s_double_is_asked_says_so(client, monkeypatch):
    """Regression: a resignation sent while the game waits for the answer to the
    engine's double was refused as "the game waits for 'take', not 'move'", naming an
    answer the person never sent (the message meant for it was unreachable)."""
    from engine.play.match import DecisionCubePolicy
    monkeypatch.setattr(DecisionCubePolicy, "double", lambda self, p, s: True)
    state = client.post("/api/sessions", json={"variant": "backgammon", "cube": True,
                                               "seed": 3}).json()
    state = _until(client, state, "take", random.Random(4))
    r = client.post(f"/api/sessions/{state['id']}/act", json={"resign": 1})
    message = r.json()["error"]["message"]
    assert r.status_code == 400 and "not 'move'" not in message, message
    assert "a resignation is offered on your turn (the game waits for 'take'" in message
    client.delete(f"/api/sessions/{state['id']}")


def test_the_engine_resigns_and_the_person_answers(client, monkeypatch):
    """Before its roll the engine resigns where it is sure to lose (here made to, on
    every turn): the person is asked (``accept``, with the level, its points and its
    words); rejected, the game goes on and the engine does not offer that level again
    in the game; accepted, the person wins its points."""
    import engine.web.session as web_session
    monkeypatch.setattr(web_session, "resignation_offer", lambda *a, **k: 1)
    rng = random.Random(3)
    state = client.post("/api/sessions", json={"variant": "backgammon", "seed": 11}).json()
    sid = state["id"]
    asked = 0
    for _ in range(200):
        if state["finished"]:
            break
        if state["waiting"] == "accept":
            asked += 1
            assert state["resignation"] == {"level": 1, "points": 1,
                                            "words": "a single game"}
            r = client.post(f"/api/sessions/{sid}/act", json={"take": True})
            assert r.status_code == 400
            state = client.post(f"/api/sessions/{sid}/act", json={"accept": False}).json()
            assert state["log"][-1]["move"] == "reject" or not state["finished"]
        elif state["waiting"] == "move":
            state = client.post(f"/api/sessions/{sid}/act",
                                json={"move": _a_legal_move(client, state, rng)}).json()
        else:
            state = client.get(f"/api/sessions/{sid}?after={state.get('serial', 0)}").json()
    assert asked == 1 and state["finished"] and "resigned" not in (state["result"] or "")
    state = client.post("/api/sessions", json={"variant": "fevga", "seed": 12}).json()
    sid = state["id"]
    state = _until(client, state, "accept", rng)
    assert state["resignation"]["words"] == "a single game"
    end = client.post(f"/api/sessions/{sid}/act", json={"accept": True}).json()
    assert end["finished"] and end["winner"] == "you" and end["score"]["you"] == 1
    assert "the engine resigned a single game" in end["result"]


def test_beavers_in_a_money_game(client, monkeypatch):
    """``beavers`` (a money game with the cube): after taking the engine's double the
    person is asked ``beaver`` (the cube then at four times, his); the engine beavers
    the person's double where its cube policy says so (both made to here); the match
    file holds the beaver; beavers outside a money game with the cube are refused."""
    for body in ({"variant": "backgammon", "beavers": True},
                 {"variant": "backgammon", "mode": "match", "length": 3, "cube": True,
                  "beavers": True},
                 {"variant": "backgammon", "cube": True, "beavers": 1}):
        r = client.post("/api/sessions", json=body)
        assert r.status_code == 400 and "beavers" in r.json()["error"]["message"], body
    from engine.play.match import DecisionCubePolicy
    monkeypatch.setattr(DecisionCubePolicy, "double", lambda self, p, s: True)
    monkeypatch.setattr(DecisionCubePolicy, "take", lambda self, p, s: True)
    monkeypatch.setattr(DecisionCubePolicy, "beaver", lambda self, p, s: False)
    rng = random.Random(4)
    state = client.post("/api/sessions", json={"variant": "backgammon", "cube": True,
                                               "beavers": True, "seed": 3}).json()
    sid = state["id"]
    state = _until(client, state, "take", rng)
    state = client.post(f"/api/sessions/{sid}/act", json={"take": True}).json()
    assert state["waiting"] == "beaver" and state["cube_state"]["beavers"] is True
    state = client.post(f"/api/sessions/{sid}/act", json={"beaver": True}).json()
    assert state["cube"]["value"] == 4 and state["cube"]["owner"] == "you"
    assert any(e["who"] == "you" and e["move"] == "beavers to 4" for e in state["log"])
    _beaver_written(client, sid, 0)
    client.delete(f"/api/sessions/{sid}")

    monkeypatch.setattr(DecisionCubePolicy, "double", lambda self, p, s: False)
    monkeypatch.setattr(DecisionCubePolicy, "beaver", lambda self, p, s: True)
    state = client.post("/api/sessions", json={"variant": "backgammon", "cube": True,
                                               "beavers": True, "seed": 3}).json()
    sid = state["id"]
    state = _until(client, state, "double", rng)
    state = client.post(f"/api/sessions/{sid}/act", json={"double": True}).json()
    assert state["cube"]["value"] == 4 and state["cube"]["owner"] == "engine", state["cube"]
    moves = [e["move"] for e in state["log"] if e["who"] == "engine"]
    assert "takes" in moves and "beavers to 4" in moves
    assert "Beavers => 4" in client.get(f"/api/sessions/{sid}/mat").json()["mat"]
    _beaver_written(client, sid, 1)
    client.delete(f"/api/sessions/{sid}")


def _beaver_written(client, sid: str, who: int) -> None:
    """The session's match file holds ``who``'s beaver as GNU Backgammon writes one, in
    the take's place: it replays (with the take before it the file was refused, 'beaver
    with no double on offer'), and the .sgf is written (it was refused, 400)."""
    from engine.notation.matfile import parse_mat, replay
    mat = client.get(f"/api/sessions/{sid}/mat").json()["mat"]
    assert [(d.player, d.action) for d in replay(parse_mat(mat))
            if d.kind == "answer"] == [(who, "beaver")]
    assert client.get(f"/api/sessions/{sid}/mat", params={"format": "sgf"}).status_code == 200
