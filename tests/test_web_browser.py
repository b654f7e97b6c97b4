"""The web board in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright against ``engine.web`` served on localhost. Full games of backgammon (with
the cube) and long nardy are played by clicks on the board (the first turn by
dragging); a hint, a position set up
by its GNU Backgammon ID, a rollout and cube advice are asked for. Screenshots of each game's
board go to ``build/test-artifacts/`` (or ``$NARDY_ARTIFACTS``).

Skipped, with the reason, where Playwright or a Chromium binary is missing
(``apt-get install chromium``; ``.ci/run`` installs it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (starlette, uvicorn) is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("NARDY_ARTIFACTS", ROOT / "build" / "test-artifacts"))
CHROMIUM = os.environ.get("NARDY_CHROMIUM") or shutil.which("chromium") or shutil.which(
    "chromium-browser")
if not CHROMIUM:
    pytest.skip("no Chromium binary (apt-get install chromium, or set NARDY_CHROMIUM)",
                allow_module_level=True)

pytestmark = pytest.mark.xdist_group("search")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server():
    from engine.web.app import make_app
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(make_app(), host="127.0.0.1", port=port,
                                        log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not srv.started:
        assert time.time() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    pg = browser.new_page(viewport={"width": 1400, "height": 950})
    errors: list = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.set_default_timeout(180_000)
    pg.goto(server + "/")
    pg.wait_for_selector("body[data-ready='1']")
    yield pg
    pg.close()
    assert not errors, errors


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#board").screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _settle(page) -> None:
    page.wait_for_function("document.body.dataset.busy !== '1' && "
                           "document.getElementById('board').dataset.waiting !== ''")
    status = page.locator("#status")
    assert "error" not in (status.get_attribute("class") or ""), status.text_content()


def _click_point(page, p: int) -> None:
    page.click(f"#board [data-point='{p}']")


def _play_game(page, variant: str, *, cube: bool = False, double_at: int = 8,
               hint_at: int = 3, limit: int = 6000) -> dict:
    """Start a game of ``variant`` and play it to the end by clicks on the board."""
    page.select_option("#variant", variant)
    page.select_option("#mode", "game")
    if variant == "backgammon":
        page.set_checked("#cube", cube)
    page.click("#start")
    _settle(page)
    board = page.locator("#board")
    turns = doubles = takes = hints = 0
    for _ in range(limit):
        waiting = board.get_attribute("data-waiting")
        if waiting == "finished":
            break
        if waiting == "double":
            doubles += 1
            page.click("#double" if doubles == double_at else "#roll")
        elif waiting == "take":
            takes += 1
            if takes == 1:                      # advice on the engine's double
                page.click("#cube-advice")
                _settle(page)
                assert "of the engine's double" in page.locator("#cube-action").text_content()
            page.click("#take")
        elif waiting == "move":
            steps = json.loads(board.get_attribute("data-steps"))
            if steps:
                if turns + 1 == hint_at and not hints:
                    page.click("#hint")
                    _settle(page)
                    assert page.locator("#hint-table tr").count() >= 2
                    hints += 1
                a, b, _die = steps[0]
                if not turns:                   # the first turn's steps by dragging
                    page.drag_and_drop(f"#board [data-point='{a}']",
                                       f"#board [data-point='{b}']")
                else:
                    _click_point(page, a)
                    _click_point(page, b)
            else:
                assert page.locator("#done").is_enabled()
                page.click("#done")
                turns += 1
        else:
            raise AssertionError(f"board waiting for {waiting!r}")
        _settle(page)
    else:
        raise AssertionError(f"{variant}: the game did not end in {limit} actions")
    _shot(page, f"game-{variant}")
    status = page.locator("#status").text_content()
    assert "win" in status, status
    log = page.locator("#log li").all_text_contents()
    assert any(line.startswith("you ") for line in log)
    assert any(line.startswith("engine ") for line in log)
    return {"turns": turns, "doubles": doubles, "takes": takes, "status": status,
            "log": log}


def test_each_game_is_drawn_at_its_start(page):
    for variant in ("backgammon", "portes", "plakoto", "fevga", "long_nardy", "gul_bara"):
        page.select_option("#variant", variant)
        assert page.locator("#board").get_attribute("data-variant") == variant
        checkers = page.locator("#board circle.checker")
        assert checkers.count() >= 2 * 5          # stacks above five show a count
        _shot(page, f"start-{variant}")


def test_a_full_backgammon_game_with_the_cube_by_clicks(page):
    game = _play_game(page, "backgammon", cube=True, double_at=1)
    assert game["doubles"] >= 1
    assert "you double to 2" in game["log"], game["log"]
    assert "engine takes" in game["log"] or "engine passes" in game["log"], game["log"]
    # the game saved as a match file, which reads back and replays
    from engine.notation.matfile import parse_mat, replay
    with page.expect_download() as info:
        page.click("#save-mat")
    text = Path(info.value.path()).read_text()
    assert info.value.suggested_filename.endswith(".mat")
    record = parse_mat(text)
    assert record.length == 0 and len(record.games) == 1
    assert any(d.action == "double" and d.player == 0 for d in replay(record))
    from engine.notation.sgf import parse_sgf
    with page.expect_download() as info:
        page.click("#save-sgf")
    assert info.value.suggested_filename.endswith(".sgf")
    assert len(list(replay(parse_sgf(Path(info.value.path()).read_text())))) == len(
        list(replay(record)))
    # and reviewed: the totals of both sides
    page.click("#review")
    _wait_idle(page)
    rows = page.locator("#review-table tr").all_text_contents()
    assert len(rows) == 3 and rows[1].startswith("you") and rows[2].startswith("nardy"), rows


def test_a_full_long_nardy_game_by_clicks(page):
    game = _play_game(page, "long_nardy")
    # played to its end: the winner moved 15 checkers 24 points each, at most 24 pips a
    # turn, so its side of the log has 15 turns or more (the clicker's own turns with a
    # play can be fewer: a strong engine blocks it, and its blocked turns pass by)
    sides = [sum(line.startswith(who) for line in game["log"]) for who in ("you ", "engine ")]
    assert max(sides) >= 15, game["log"]


def test_a_position_set_up_by_its_id_with_a_hint_and_cube_advice(page):
    page.fill("#position-text", "XGID=-----aEaC---eE---c-e----B-:0:0:1:00:0:0:0:0:10")
    page.fill("#setup-dice", "")
    page.click("#setup")
    _wait_idle(page)
    assert "Set-up position" in page.locator("#status").text_content()
    page.click("#cube-advice")
    _wait_idle(page)
    assert "Proper action" in page.locator("#cube-action").text_content()
    page.fill("#position-text", "4HPwATDgc/ABMA")
    page.fill("#setup-dice", "31")
    page.click("#setup")
    _wait_idle(page)
    page.click("#hint")
    _wait_idle(page)
    rows = page.locator("#hint-table tr").all_text_contents()
    assert "8/5 6/5" in rows[1] and " eq." not in rows[0], rows
    page.fill("#position-text", "4HPwATDgc/ABMA:MAHgADAAKAAA")      # 7-point match, 3-5
    page.click("#setup")
    _wait_idle(page)
    page.click("#hint")
    _wait_idle(page)
    assert "match eq." in page.locator("#hint-table tr").all_text_contents()[0]
    page.fill("#position-text", "4HPwATDgc/ABMA")
    page.click("#setup")
    _wait_idle(page)
    page.click("#rollout")
    _wait_idle(page)
    assert page.locator("#rollout-table tr").count() == 4
    page.click("#copy")
    _wait_idle(page)
    assert "4HPwATDgc/ABMA" in page.locator("#ids").text_content()
    _shot(page, "setup-hint")


def _wait_idle(page) -> None:
    page.wait_for_function("document.body.dataset.busy !== '1'")
    status = page.locator("#status")
    assert "error" not in (status.get_attribute("class") or ""), status.text_content()


@pytest.mark.parametrize("mode, cube, unit", [("match", True, "match eq."),
                                              ("match", False, "match eq."),
                                              ("game", True, "cubeful eq.")])
def test_a_hint_with_the_cube_or_the_score_ranks_cubefully(page, mode, cube, unit):
    """In a backgammon match the hint sends the game's score and cube (without the cube,
    one dead at 1), in a money game with the cube the cube and the Jacoby rule, and the
    plays come ranked by match equity or cubeful equity (the table says so)."""
    page.select_option("#variant", "backgammon")
    page.select_option("#mode", mode)
    if mode == "match":
        page.fill("#length", "5")
    page.set_checked("#cube", cube)
    page.click("#start")
    _settle(page)
    board = page.locator("#board")
    for _ in range(200):
        waiting = board.get_attribute("data-waiting")
        if waiting == "move" and json.loads(board.get_attribute("data-steps")):
            break
        page.click("#roll" if waiting == "double" else "#take" if waiting == "take"
                   else "#done")
        _settle(page)
    else:
        raise AssertionError("no move of the person's came")
    page.click("#hint")
    _settle(page)
    rows = page.locator("#hint-table tr").all_text_contents()
    assert unit in rows[0] and len(rows) >= 2, rows


def test_a_position_set_up_during_a_game_and_back_to_the_game(page):
    """Setting up a position during a game hid every control of the game, and the way
    out was New game. ``Back to the game`` returns to it; an ID's own dice are kept for
    the hint when none are typed."""
    page.select_option("#variant", "portes")
    page.select_option("#mode", "game")
    page.click("#start")
    _settle(page)
    board = page.locator("#board")
    while board.get_attribute("data-waiting") != "move":
        page.wait_for_function("document.getElementById('board').dataset.waiting === 'move'")
    page.fill("#position-text", "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10")
    page.fill("#setup-dice", "")
    page.click("#setup")
    _wait_idle(page)
    assert page.locator("#back").is_visible() and not page.locator("#undo").is_visible()
    page.click("#hint")
    _wait_idle(page)
    assert "8/5 6/5" in page.locator("#hint-table tr").all_text_contents()[1]
    page.click("#back")
    assert not page.locator("#back").is_visible() and page.locator("#undo").is_visible()
    assert board.get_attribute("data-waiting") == "move"
    assert board.get_attribute("data-variant") == "portes"


def test_a_match_file_reviewed_and_a_costly_decision_shown(page):
    """A GNU Backgammon .sgf file chosen in the Match file box: both players' totals,
    their costliest decisions, and one of them set up on the board by its XGID."""
    page.set_input_files("#review-file", str(ROOT / "tests" / "data" / "matches" /
                                             "gnubg_5_point.sgf"))
    page.wait_for_selector("#file-review-table")
    _wait_idle(page)
    rows = page.locator("#file-review-table tr").all_text_contents()
    assert len(rows) == 3 and rows[1].startswith("gnubg") and rows[2].startswith("root")
    assert "Intermediate" in rows[1] or "Advanced" in rows[1] or "Expert" in rows[1], rows
    # the luck: the first player's negative (GNU Backgammon: Bad dice, man!), the
    # second's rated None; test_review pins the rates
    assert re.search(r"-\d+\.\d{3}", rows[1]) and "None" in rows[2], rows
    # the errors in match winning chance and the luck-adjusted results, opposite
    assert "errors (MWC)" in rows[0] and "luck-adjusted result" in rows[0], rows
    adjusted = [float(re.findall(r"([+-]\d+\.\d\d)%", row)[-1]) for row in rows[1:]]
    assert abs(adjusted[0] + adjusted[1]) < 0.02, rows
    worst = page.locator("#file-review-worst tr")
    assert worst.count() >= 2
    xgid = worst.nth(1).locator("button").get_attribute("title")
    worst.nth(1).locator("button").click()
    _wait_idle(page)
    assert "Set-up position" in page.locator("#status").text_content()
    assert page.locator("#position-text").input_value() == xgid


def test_resignations_by_the_buttons(page, monkeypatch):
    """The Resign button (the level in the game's words) ends a plakoto game the engine
    accepts; the engine's own resignation (made to offer one here) is accepted with the
    Accept button."""
    page.select_option("#variant", "plakoto")
    page.select_option("#mode", "game")
    page.click("#start")
    _settle(page)
    board = page.locator("#board")
    while board.get_attribute("data-waiting") != "move":
        page.wait_for_timeout(50)
    levels = page.locator("#resign-level option").all_text_contents()
    assert levels == ["single", "double game"], levels
    page.select_option("#resign-level", "2")
    page.click("#resign")
    page.wait_for_function("document.getElementById('board').dataset.waiting === 'finished'")
    status = page.locator("#status").text_content()
    assert "the engine wins 2 points (you resigned a double game)" in status, status

    import engine.web.session as web_session
    monkeypatch.setattr(web_session, "resignation_offer", lambda *a, **k: 1)
    page.select_option("#variant", "backgammon")
    page.set_checked("#cube", False)
    page.click("#start")
    _settle(page)
    for _ in range(400):
        waiting = board.get_attribute("data-waiting")
        if waiting == "accept":
            break
        assert waiting == "move", waiting
        steps = json.loads(board.get_attribute("data-steps"))
        if steps:
            _click_point(page, steps[0][0])
            _click_point(page, steps[0][1])
        else:
            page.click("#done")
        _settle(page)
    assert "The engine resigns a single game (1 point to you)" in page.locator(
        "#status").text_content()
    page.click("#accept")
    page.wait_for_function("document.getElementById('board').dataset.waiting === 'finished'")
    status = page.locator("#status").text_content()
    assert "you win 1 point (the engine resigned a single game)" in status, status
