"""GNU Backgammon's external player (engine/cli/external.py): the answers to the board
strings GNU Backgammon sent (tests/data/fibs), the rest of its external-interface
requests, errors that keep the connection serving, and scripted sessions over TCP and a
Unix socket, as GNU Backgammon sends them (each line followed by a NUL byte)."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from engine.cli.external import Settings, answer, cube_state, make_servers
from engine.movegen.generate import successors
from engine.notation.fibs import gnubg_board, parse_fibs_board
from engine.notation.movetext import parse_move
from engine.rules.position import Position

pytestmark = pytest.mark.xdist_group("search")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "fibs" / "gnubg_boards.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines()
        if line and not line.startswith("#")]
EXTERNAL = [r for r in ROWS if r["source"] == "external"]
FAST = Settings(ply=0, cube_ply=0)
START = Position.start("backgammon")
AHEAD = Position.from_literal("x 6:5 5:5 4:5; o 8:4 7:4 6:4 5:3")    # a race, 75 v 99
BEHIND = AHEAD.flip()                                                # 99 v 75
GAMMON = Position.from_literal("x 6:4 5:4 4:4 3:3; o 18:5 17:5 16:5")


def board(position=START, **kw) -> str:
    kw.setdefault("on_roll_is_o", True)
    kw.setdefault("names", ("nardy", "gnubg"))
    return gnubg_board(position, **kw).text()


def test_every_recorded_request_gets_a_fitting_legal_answer():
    kinds = set()
    for row in EXTERNAL:
        reply = answer(row["board"] + "\n\x00", FAST)
        view = parse_fibs_board(row["board"]).view("gnubg")
        kinds.add(view.decision)
        if view.decision == "move":
            parse_move(reply, view.position, view.dice, successors(view.position, view.dice))
        elif view.decision == "cube":
            assert reply in ("roll", "double"), row
        else:
            assert reply in ("take", "drop", "beaver"), row
    assert kinds == {"move", "cube", "take"}


def test_a_game_ending_play_is_the_one_gnubg_lists():
    """With 5-1, a checker on my 2 point and a blot of his on my 1 point, ``2/off`` and
    ``2/1*/off`` both end the game (docs/rules.md counts a game-ending play as using
    every die); GNU Backgammon lists only the one that uses both dice, so that is the
    reply."""
    last = Position.from_literal("x 2:1; o 24:1 6:3 5:3 4:3 3:3 2:2")
    assert answer(board(last, dice=(5, 1)), FAST) == "2/1*/off"


def test_a_dance_is_an_empty_line():
    # the side on roll is on the bar against a closed board
    closed = Position.from_literal("x bar:1 6:14; o 6:2 5:2 4:2 3:2 2:2 1:2 24:3")
    assert answer(board(closed, dice=(6, 5)), FAST) == ""


def test_no_cube_in_the_crawford_game_and_for_the_post_crawford_leader():
    crawford = board(AHEAD, match_length=5, score=(0, 4), crawford=True)
    assert parse_fibs_board(crawford).view("gnubg").crawford
    assert answer(crawford, FAST) == "roll"
    leader = board(AHEAD, match_length=5, score=(4, 2), post_crawford=True)
    assert answer(leader, FAST) == "roll"            # a dead cube never doubles
    trailer = board(AHEAD, match_length=5, score=(2, 4), post_crawford=True)
    assert answer(trailer, FAST) == "double"
    assert answer(board(AHEAD), FAST) == "double"


def test_the_play_is_chosen_by_cubeful_equity():
    """At double match point the play with the best winning chance, which is not the
    best cubeless money play of 4-3 from the start (13/10 13/9 there, 24/20 13/10 here); in
    money play by cubeful money equity: with the Jacoby rule (GNU Backgammon's default)
    the play of the best cubeful value (24/20 13/10 too: a gammon counts for nothing while
    the cube is centred), and without it the cubeless best."""
    from engine.cube.decision import CubeState, play_value
    from engine.search.nply import Search
    plays = Search.load("backgammon").analyse(START, (4, 3), 0).candidates
    by_win = max(plays, key=lambda c: c.probabilities[0]).move
    assert by_win != plays[0].move
    dmp = board(START, dice=(4, 3), match_length=7, score=(6, 6), post_crawford=True)
    assert answer(dmp, FAST) == by_win
    cubeful = max(plays, key=lambda c: play_value(c.probabilities, c.position,
                                                  CubeState())[0]).move
    jacoby = answer(board(START, dice=(4, 3)), FAST)
    assert jacoby == cubeful == "24/20 13/10" and jacoby != plays[0].move
    assert answer(board(START, dice=(4, 3)), replace(FAST, jacoby=False)) == plays[0].move


def test_a_match_beyond_the_table_still_answers_its_cube_questions():
    """GNU Backgammon plays matches to 64; beyond the 25 points away of the table as
    published every cube request was an error, which stops GNU Backgammon's game for the
    player. The table now reaches 64 away, as GNU Backgammon extends its own, and every
    cube question of such a match is answered at its score; the Crawford game stays
    without a cube."""
    for length, score in ((30, (0, 0)), (64, (10, 3))):
        assert answer(board(START, match_length=length, score=score), FAST) in (
            "roll", "double")
        assert answer(board(AHEAD, match_length=length, score=score), FAST) == "double"
        taken = board(BEHIND, match_length=length, score=score, doubled=True)
        assert answer(taken, FAST) in ("take", "drop")
    crawford = board(AHEAD, match_length=30, score=(0, 29), crawford=True)
    assert answer(crawford, FAST) == "roll"


def test_beavers_follow_the_settings_and_the_session_option():
    offered = board(BEHIND, doubled=True)       # the doubler is the underdog
    assert answer(offered, FAST) == "beaver"
    assert answer(offered, Settings(ply=0, cube_ply=0, beavers=False)) == "take"
    assert answer(offered + " beavers off", FAST) == "take"
    assert answer(board(BEHIND, doubled=True, match_length=5), FAST) == "take"
    assert answer(board(AHEAD, doubled=True), FAST) == "drop"


def test_a_beavered_double_is_answered_by_the_doubler():
    """After a beaver GNU Backgammon asks the doubler, still on roll, to take the cube
    at twice its value or drop: this board is what gnubg 1.07.001 sent the engine (O,
    99 pips to 57) after beavering its double. Answering ``beaver`` there, as the side
    not on roll would, is read by gnubg as a raccoon."""
    sent = ("board:gnubg:nardy:0:0:0:0:0:0:0:3:3:3:0:2:2:2:0:0:0:0:0:0:0:0:-3:-3:-3:-2:-2:"
            "-2:0:1:0:0:0:0:2:0:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")
    view = parse_fibs_board(sent).view("gnubg")
    assert (view.decision, view.cube, view.owner) == ("beaver", 2, "them")
    assert view.names == ("nardy", "gnubg")
    assert answer(sent, FAST) == "drop"
    assert gnubg_board(view.position, on_roll_is_o=True, names=("nardy", "gnubg"), cube=2,
                       owner="them", doubled=True).text() == sent
    ahead = board(AHEAD, cube=2, owner="them", doubled=True)
    assert parse_fibs_board(ahead).view("gnubg").decision == "beaver"
    assert answer(ahead, FAST) == "take"


# what gnubg 1.07.001 sent after its player doubled (O, 60 pips to 30) and the engine
# beavered, then after it raccooned: the same board at four times the cube, which reads
# as a beaver of the doubler's but asks the beaverer (play.c: fTurn != fMove)
DOUBLED = ("board:me:nardy:0:0:0:0:0:0:0:3:3:3:3:3:0:0:0:0:0:0:0:0:0:0:0:0:0:-5:-5:-5:0:1:"
           "0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")
RACCOONED = DOUBLED.replace(":0:0:0:0:1:1:1:1:1:-1:", ":0:0:0:0:4:0:1:1:1:-1:")


def test_a_raccoon_is_answered_by_the_beaverer():
    assert answer(DOUBLED, FAST) == "beaver"
    assert parse_fibs_board(RACCOONED).view("gnubg").decision == "beaver"
    assert answer(RACCOONED, FAST) == "drop"        # alone: the doubler's answer
    assert answer(RACCOONED, FAST, (DOUBLED, "beaver")) == "take"
    assert answer(RACCOONED, FAST, (DOUBLED, "take")) == "drop"
    assert answer(RACCOONED, FAST, (DOUBLED.replace(":3:3:3:3:3:0:", ":3:3:3:3:2:1:", 1),
                                    "beaver")) == "drop"   # another position
    with tempfile.TemporaryDirectory() as tmp:   # over a connection, as gnubg asks
        servers = make_servers(FAST, port=0, log=os.path.join(tmp, "log.jsonl"))
        threading.Thread(target=servers[0].serve_forever, daemon=True).start()
        try:
            with socket.create_connection(servers[0].server_address) as sock:
                assert _session(sock, [DOUBLED, RACCOONED]) == ["beaver", "take"]
            with socket.create_connection(servers[0].server_address) as sock:
                assert _session(sock, [RACCOONED]) == ["drop"]
            with socket.create_connection(servers[0].server_address) as sock:
                # a refused line between them: the beaver is no longer the context
                from engine.cli.external import MAX_REQUEST
                assert _session(sock, [DOUBLED, " " * (MAX_REQUEST + 1), RACCOONED])[::2] \
                    == ["beaver", "drop"]
        finally:
            servers[0].shutdown()
            servers[0].server_close()


def test_jacoby_and_crawford_options_reach_the_cube_state():
    view = parse_fibs_board(board()).view("gnubg")
    assert cube_state(view, FAST).jacoby
    assert not cube_state(view, Settings(jacoby=False)).jacoby
    crawford = parse_fibs_board(board(match_length=5, score=(4, 0), crawford=True))
    assert cube_state(crawford.view("gnubg"), FAST).crawford
    assert not cube_state(crawford.view("gnubg"), Settings(crawford_rule=False)).crawford


def test_resignations_are_accepted_when_they_give_enough():
    """The side on roll resigns and the engine answers for its opponent, as GNU
    Backgammon's external player does."""
    b = board(GAMMON.flip())                  # the side on roll loses a gammon
    assert answer(b + " jacobyrule off resignation 1", FAST) == "reject"
    assert answer(b + " jacobyrule off resignation 2", FAST) == "accept"
    assert answer(b + " jacobyrule off resignation 3", FAST) == "accept"
    assert answer(b + " resignation 1", FAST) == "accept"     # Jacoby: no gammons yet
    # the side on roll wins a gammon: any resignation of its is welcome
    assert answer(board(GAMMON) + " jacobyrule off resignation 1", FAST) == "accept"
    # gnubg 1.07.001's own external player answered accept to this board: O on roll,
    # certain to win a backgammon, resigns a single game
    o_wins = ("board:p:q:0:0:0:0:3:-8:-7:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:1:0:"
              "0:0:0:1:1:1:0:1:-1:0:25:12:0:0:0:0:0:0:1")
    assert answer(o_wins + " resignation 1 jacobyrule off", FAST) == "accept"


def test_evaluation_gives_six_numbers():
    reply = answer(f"evaluation fibsboard {board()} plies 0 cubeful", FAST)
    nums = [float(x) for x in reply.split()]
    assert len(nums) == 6 and 0.4 < nums[0] < 0.6 and -0.3 < nums[5] < 0.3
    cubeless = [float(x) for x in answer(f"evaluation fibsboard {board()} cubeless",
                                         FAST).split()]
    match = [float(x) for x in answer(f"EVALUATION fibsboard {board(match_length=7)}",
                                      FAST).split()]
    assert 0.4 < match[5] < 0.6                       # a match winning chance
    assert cubeless[:5] == nums[:5]
    # cubeful in match play: a match winning chance too, as GNU Backgammon answers
    ahead = board(AHEAD, match_length=7, score=(2, 3))
    mwc = [float(x) for x in answer(f"evaluation fibsboard {ahead} plies 0 cubeful",
                                    FAST).split()]
    money = [float(x) for x in answer(f"evaluation fibsboard {board(AHEAD)} plies 0 cubeful",
                                      FAST).split()]
    # far ahead in the race at 5-away, 4-away: doubled out, 4-away all, an even match
    assert mwc[5] == 0.5 and money[5] == 1.0


@pytest.mark.parametrize("line, words", [
    ("", "no command given"),
    ("  \r", "no command given"),
    ("fly away", "unknown request"),
    ("set debug on", "not supported"),
    ("board:a:b:1:2", "fields"),
    (board().replace(":1:1:0:1:-1:", ":1:1:0:5:-1:"), "colour"),
    (board() + " plies 2", "option 'plies'"),
    (board() + " jacobyrule maybe", "expected on or off"),
    (board() + " resignation 5", "resignation"),
    ("evaluation " + board(), "evaluation fibsboard"),
    (f"evaluation fibsboard {board()} plies 9", "plies"),
    (f"evaluation fibsboard {board()} plies \u00b2", "plies"),     # passed isdigit
    (board(Position.start("backgammon"), dice=(3, 1)).replace(":0:25:", ":0:0:"), "bar"),
    ("version 2", "version takes no arguments, got '2'"),        # was "unknown request"
    ("help me", "help takes no arguments"),
    ("exit now", "exit takes no arguments"),
    (board().replace(":0:25:", ":0:1048576:", 1), "of at most 6 digits"),
])
def test_bad_requests_are_answered_error(line, words):
    reply = answer(line, FAST)
    assert reply.startswith("Error: ") and words in reply, reply
    assert "\n" not in reply
    assert len(reply.encode()) <= 254          # GNU Backgammon reads 256 bytes a line


def test_a_long_error_is_cut_to_one_line_gnubg_can_read():
    long_names = board(names=("n" * 200, "g" * 200)).replace(":0:25:", ":0:0:")
    for line in (long_names, "fly " + "é" * 400, "x" * 600):
        reply = answer(line, FAST)
        assert reply.startswith("Error: ") and len(reply.encode()) <= 254, reply


FIBS_CRAWFORD = ("board:gnubg:nardy:5:0:4:0:0:0:0:5:5:5:0:0:0:0:0:0:0:0:0:0:-4:-4:-4:-3:0:0:0:"
                 "0:0:1:{dice}:0:0:1:0:0:0:1:-1:0:25:0:0:0:0:0:0:0:0")


def test_the_crawford_game_as_fibs_writes_it_is_no_double_on_offer():
    """FIBS writes the Crawford game with both may-double flags 0 and the cube at 1;
    read as a double on offer, it got 'crawford with a turned cube', or with dice 'a
    double offered after the roll'."""
    view = parse_fibs_board(FIBS_CRAWFORD.format(dice="0:0")).view("gnubg")
    assert view.decision == "cube" and view.crawford
    assert answer(FIBS_CRAWFORD.format(dice="0:0"), FAST) == "roll"
    rolled = FIBS_CRAWFORD.format(dice="3:1")
    view = parse_fibs_board(rolled).view("gnubg")
    parse_move(answer(rolled, FAST), view.position, (3, 1))
    # both flags 0 outside the Crawford game is still a double on offer
    after = FIBS_CRAWFORD.format(dice="0:0")[:-3] + "1:0"        # did Crawford: 1
    assert parse_fibs_board(after).view("gnubg").decision == "take"


def test_a_resignation_with_a_double_on_offer_is_refused():
    """It was answered 'beaver', an answer to the double, where 'resignation N' asks
    for accept or reject."""
    offered = board(BEHIND, doubled=True)
    assert answer(offered, FAST) == "beaver"
    reply = answer(offered + " resignation 1", FAST)
    assert reply.startswith("Error: resignation 1 with a double on offer"), reply


def test_version_help_exit():
    assert answer("version", FAST).split("\n") == [
        "Interface: 2", "RFBF: 0", "Engine: nardy", "Software: nardy 0.1.0"]
    assert "evaluation fibsboard" in answer("help", FAST)
    assert answer("exit", FAST) is None and answer("QUIT\n", FAST) is None


def _session(sock: socket.socket, lines: list[str]) -> list[str]:
    """Send each line as GNU Backgammon does (newline and NUL) and read one reply."""
    replies = []
    f = sock.makefile("rb")
    for line in lines:
        sock.sendall(line.encode() + b"\n\x00")
        if line == "exit":
            assert f.readline() == b""            # the server closes the connection
            break
        replies.append(f.readline().decode().rstrip("\n"))
    return replies


SCRIPT = [board(dice=(3, 1)), "this is not a board", board(),
          board(BEHIND, doubled=True),
          board(dice=(6, 6)), "exit"]


def _check_script(replies: list[str]) -> None:
    assert len(replies) == 5
    assert replies[0] == "8/5 6/5"
    assert replies[1].startswith("Error: unknown request")
    assert replies[2] in ("roll", "double")
    assert replies[3] == "beaver"
    parse_move(replies[4], START, (6, 6))


def test_a_scripted_session_over_tcp_and_a_unix_socket():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nardy.sock")
        log = os.path.join(tmp, "log.jsonl")
        servers = make_servers(FAST, port=0, unix=path, log=log)
        threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
        for t in threads:
            t.start()
        try:
            tcp = socket.create_connection(servers[0].server_address)
            with tcp:
                _check_script(_session(tcp, SCRIPT))
            unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            unix.connect(path)
            with unix:
                _check_script(_session(unix, SCRIPT))
        finally:
            for s in servers:
                s.shutdown()
                s.server_close()
        rows = [json.loads(x) for x in Path(log).read_text().splitlines()]
        assert len(rows) == 12 and rows[-1]["reply"] is None
        assert servers[0].log.errors == 2


def test_a_line_over_the_limit_is_refused_even_when_it_arrives_whole():
    """A board followed by 100,000 spaces and its newline, read in one piece, was
    answered as a board; the limit held only for a line without its newline yet."""
    from engine.cli.external import MAX_REQUEST
    (server,) = make_servers(FAST, port=0)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        with socket.create_connection(server.server_address) as tcp:
            long_line = board(dice=(3, 1)) + " " * (MAX_REQUEST + 10)
            replies = _session(tcp, [long_line, board(dice=(3, 1)), "exit"])
    finally:
        server.shutdown()
        server.server_close()
    assert replies[0] == f"Error: request longer than {MAX_REQUEST} bytes"
    assert replies[1] == "8/5 6/5"
    # refused unread, it is still a request answered Error (the log and the count)
    assert (server.log.requests, server.log.errors) == (3, 1)


def test_the_command_line_serves_a_connection_then_exits():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "nardy.sock")
        proc = subprocess.Popen([sys.executable, "-m", "engine.external", "--socket", path,
                                 "--ply", "0", "--once"], cwd=ROOT, stderr=subprocess.PIPE,
                                text=True)
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                if "listening on" in line:
                    break
            unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            unix.connect(path)
            with unix:
                assert _session(unix, [board(dice=(3, 1)), "exit"]) == ["8/5 6/5"]
            rest = proc.stderr.read()
            assert proc.wait(60) == 0
        finally:
            proc.kill()
        assert "served 2 requests (0 answered Error)" in rest
        assert not os.path.exists(path)


def test_the_command_line_wants_a_place_to_listen():
    out = subprocess.run([sys.executable, "-m", "engine.external"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--port" in out.stderr


def test_a_file_at_the_socket_path_is_kept_and_refused(tmp_path):
    """``--socket PATH`` removed whatever stood at PATH: a user's file was lost
    silently. Only a stale socket is replaced; anything else is refused, left as it was,
    with an error naming the path (and the command line says so before its warm-up)."""
    from engine.cli.external import ListenError
    path = tmp_path / "notes.txt"
    path.write_text("mine\n")
    with pytest.raises(ListenError, match="exists and is not a socket") as info:
        make_servers(FAST, unix=str(path))
    assert repr(str(path)) in str(info.value) and "a regular file" in str(info.value)
    assert path.read_text() == "mine\n"
    with pytest.raises(ListenError, match=r"not a socket \(a folder\)"):
        make_servers(FAST, unix=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "engine.external", "--socket", str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert f"--socket {str(path)!r}: the path exists and is not a socket" in last, last
    assert path.read_text() == "mine\n"


@pytest.mark.parametrize("args, said", [
    (["--log", "/nonexistent/x.log"],
     "--log '/nonexistent/x.log': cannot append to it (No such file or directory)"),
    (["--threads", "0"], "--threads: '0': expected a number of search threads, 1 .. 256"),
])
def test_a_bad_log_or_thread_count_is_named_before_the_warm_up(tmp_path, args, said):
    """A --log file that cannot be opened printed a bare '[Errno 2] ...'; --threads 0
    was refused only after the model had loaded."""
    out = subprocess.run([sys.executable, "-m", "engine.external", "--socket",
                          str(tmp_path / "s.sock"), *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert said in out.stderr.strip().splitlines()[-1], out.stderr


def test_a_stale_socket_is_replaced_and_a_live_one_refused(tmp_path):
    """A socket a server left behind (nothing accepts on it) is replaced; one a server
    still listens on is refused, that server keeping it."""
    from engine.cli.external import ListenError
    path = str(tmp_path / "nardy.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()                                 # the file stays, nothing listens
    assert os.path.exists(path)
    (server,) = make_servers(FAST, unix=path)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        with pytest.raises(ListenError, match="a server is listening on this socket"):
            make_servers(FAST, unix=path)
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.connect(path)
        with unix:
            assert _session(unix, [board(dice=(3, 1)), "exit"]) == ["8/5 6/5"]
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("argv, words", [
    (["--port", "70000"], "argument --port: '70000': expected a port number, 1..65535"),
    (["--port", "0"], "argument --port: '0': expected a port number, 1..65535"),
    (["--port", "31415", "--host", ""], "argument --host: '': expected an address such "
                                        "as 127.0.0.1 (an empty one would listen on every "
                                        "interface)"),
    (["--port", "31415", "--host", b"a\xffb"], "argument --host: 'a\\udcffb': expected an "
                                               "address"),
    (["--port", "31415", "--host", "256.1.1.1"], "--host '256.1.1.1': cannot find the "
                                                 "address"),
])
def test_a_bad_host_or_port_is_a_usage_error(argv, words):
    """``--port 70000`` died with OverflowError, a host with a byte that is not UTF-8
    with TypeError (tracebacks), and an empty host listened on every interface: now
    each is a usage error naming the option and what it expects, before the warm-up."""
    out = subprocess.run([sys.executable, "-m", "engine.external", *argv], cwd=ROOT,
                         capture_output=True, timeout=120)
    err = out.stderr.decode("utf-8", "replace")
    assert out.returncode == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m engine.external: error: ") and words in last, last


def test_a_host_make_servers_cannot_use_is_an_error_not_a_traceback():
    """Through the API too: NUL, an unencodable name, a port out of range."""
    from engine.cli.external import ListenError
    for host, port in (("a\x00b", 0), ("a\udcffb", 0), ("127.0.0.1", 70000)):
        with pytest.raises(ListenError, match="--host"):
            make_servers(FAST, port=port, host=host)


def test_an_ipv6_address_is_served():
    """``--host ::1`` failed: the TCP server was IPv4 only."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    from engine.cli.external import ListenError
    try:
        (server,) = make_servers(FAST, port=0, host="::1")
    except ListenError as exc:                     # no ::1 on this machine
        pytest.skip(str(exc))
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        with socket.create_connection(server.server_address[:2]) as tcp:
            assert _session(tcp, [board(dice=(3, 1)), "exit"]) == ["8/5 6/5"]
    finally:
        server.shutdown()
        server.server_close()


def test_a_blank_line_sent_as_gnubg_sends_lines_is_answered():
    """A blank line framed as GNU Backgammon frames its requests (newline, then a NUL)
    got no reply, the NUL before it read as all there was, and the client waited for
    ever; it is answered as a blank line is (helper 96's fuzzing)."""
    (server,) = make_servers(FAST, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with socket.create_connection(server.server_address) as sock:
            sock.settimeout(60)
            assert _session(sock, ["", "   ", "version"])[:2] == [
                "Error: no command given"] * 2
    finally:
        server.shutdown()
        server.server_close()
