"""What every command-line entry point shares: a quiet exit when its reader goes away,
the argument types the parsers check with (and :func:`parse_args`, which lets an
option's value start with ``-``), the checks of an output path before any
work and the one-line error of a failed write (:func:`output_folder`,
:func:`output_file`, :func:`writing`), a run folder held by one program at a time
(:func:`folder_lock`), the error of a protocol request
(:class:`RequestError`, :func:`field`), for the protocol's commands and the cube's, and
the bounded line reader of the line protocols (:func:`read_line`).

:func:`run` is the ``if __name__ == "__main__"`` of ``engine.analyse``,
``engine.cube_cli``, ``engine.play``, ``engine.protocol``, ``engine.ubgi``,
``engine.external``, ``training.selfplay``, ``training.release``, ``training.positions``,
``training.label`` and ``training.supervised``. Piped into ``head`` (or a protocol client that hangs up), a
program's next write raises :class:`BrokenPipeError`; Python's advice ("Note on
SIGPIPE" in the :mod:`signal` docs) is to catch it, point standard output at
``/dev/null`` so that the flush at exit cannot raise again, and exit with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, NoReturn

from engine.errors import NardyError, quote


def run(main: Callable[[], int | None]) -> NoReturn:
    """``sys.exit(main())``, without a traceback when standard output's reader has gone
    (also when ``main`` exits through ``argparse``, whose ``--help`` text is flushed
    here, not at interpreter exit where the error could only be printed)."""
    try:
        try:
            code = main()
        finally:
            sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 1
    except KeyboardInterrupt:             # Ctrl-C: the shell's status, no traceback
        print("interrupted", file=sys.stderr)
        code = 130
    except SystemError as exc:
        # Ctrl-C inside a numba kernel's call reaches Python as a SystemError ("returned
        # a result with an exception set"), or a chain of them, over the KeyboardInterrupt
        if not _interrupted(exc):
            raise
        print("interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised over, a KeyboardInterrupt."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__      # type: ignore[assignment]
    return False


class RequestError(NardyError):
    """A protocol request that is well-formed JSON but that the engine cannot serve as
    it stands (a required field missing, a ``limit`` out of range); ``code`` is the
    error code of its reply (``docs/protocol.md``)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def field(req: dict, name: str, default: Any = ...) -> Any:
    """``req[name]``; when it is absent, ``default``, or without one a ``missing_field``
    :class:`RequestError`. A field with a default that is ``null`` counts as absent (a
    client may write every field, null where it has nothing to say); a field without
    one keeps its null (``dice: null`` is a gul bara pending segment)."""
    if name in req and (req[name] is not None or default is ...):
        return req[name]
    if default is ...:
        raise RequestError("missing_field", f"request lacks the field {quote(name)}")
    return default


def read_line(stdin: BinaryIO, limit: int) -> tuple[bytes, int] | None:
    """The next line of ``stdin`` for a line protocol (``engine.protocol``,
    ``engine.ubgi``): ``(line, 0)``, the line without its LF; or, for a line of more
    than ``limit`` bytes (the CR of a CR LF ending not counted), ``(head, size)``: its
    first ``limit + 2`` bytes and its size, the rest read to its end in bounded pieces
    and dropped, never held; None at the end of the input."""
    raw = stdin.readline(limit + 2)             # a line of the limit, then CR LF
    if not raw:
        return None
    ended = raw.endswith(b"\n")
    line = raw[:-1] if ended else raw
    if len(line) - (ended and line.endswith(b"\r")) <= limit:
        return line, 0
    size = len(raw)
    while not ended:
        piece = stdin.readline(1 << 16)
        size += len(piece)
        ended = not piece or piece.endswith(b"\n")
    return raw, size


def parse_args(parser: argparse.ArgumentParser, argv: list[str] | None = None
               ) -> argparse.Namespace:
    """``parser.parse_args(argv)``, where an option that takes a value is given one that
    starts with a single ``-`` as the next word (``--score -1,0``, ``--probabilities
    -.5,...``, ``--filters -,8/0.16``, ``--stop -1e3``): argparse reads such a word as
    an option of its own, unless it is a plain negative number, and stops with
    "expected one argument", so the program's own check, which says what is wrong
    with the value, never saw it. Such a pair is passed as ``--option=VALUE``, the
    spelling argparse always takes. A word that is one of the parser's options
    (``-h``) stays an option, and nothing after ``--`` is touched."""
    args = list(sys.argv[1:] if argv is None else argv)
    takes_value = [s for a in parser._actions if a.nargs is None and a.option_strings
                   for s in a.option_strings if s.startswith("--")]
    options = {s for a in parser._actions for s in a.option_strings}
    out: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            out += args[i:]
            break
        value = args[i + 1] if i + 1 < len(args) else None
        if (word.startswith("--") and "=" not in word and len(word) > 2
                and (word in takes_value or word not in options)
                and any(s.startswith(word) for s in takes_value)
                and value is not None and value.startswith("-")
                and not value.startswith("--") and value not in options):
            out.append(f"{word}={value}")     # an abbreviation is argparse's to resolve
            i += 2
            continue
        out.append(word)
        i += 1
    return parser.parse_args(out)


def add_rollout_arguments(group, trials: int, trials_help: str) -> None:
    """The rollout settings the command lines share (:class:`engine.search.rollout.RolloutSettings`):
    ``--trials`` (default ``trials``), ``--truncate``, ``--seed``, ``--no-vr``."""
    group.add_argument("--trials", type=integer, default=trials,
                       help=f"{trials_help} (default {trials})")
    group.add_argument("--truncate", type=integer, default=0,
                       help="rolls after which the network ends a trial (default 0: to the "
                            "end)")
    group.add_argument("--seed", type=non_negative_int, default=1, help="dice seed (default 1)")
    group.add_argument("--no-vr", action="store_true", help="no variance reduction")


def as_option(message: str, names: dict | None = None) -> str:
    """An error of the rollout's settings (``trials = 0: ...``) as the option that gave
    the value (``--trials 0: ...``); ``names`` maps a setting to another option name
    (``{"ply": "--rollout-ply"}``)."""
    import re
    for setting, option in (names or {}).items():
        message = re.sub(rf"^{setting} = ", f"{option} ", message)
    return re.sub(r"^(trials|truncate|seed|candidates) = ", r"--\1 ", message)


def is_whole(text: str) -> bool:
    """Whether ``text`` is a whole number in ASCII digits (``str.isdigit`` also takes
    '²' and '٣', which ``int`` then refuses or reads as another script's digit)."""
    return text.isascii() and text.isdigit()


def integer(text: str) -> int:
    """An ``argparse`` type: a whole number, optionally signed, in ASCII digits (at most
    30), else a one-line error. Plain ``int`` takes '٣' (3) and '1_0' (10)."""
    digits = text.strip()
    body = digits[1:] if digits[:1] in "+-" else digits
    if not (body and is_whole(body)) or len(body) > 30:
        raise argparse.ArgumentTypeError(f"{quote(text)}: expected a whole number")
    return int(digits)


def non_negative_int(text: str) -> int:
    """An ``argparse`` type: a whole number 0 or more (a seed), else a one-line error."""
    digits = text.strip()
    if not is_whole(digits):
        raise argparse.ArgumentTypeError(f"{quote(text)}: expected a whole number 0 or more")
    return int(digits)


MAX_WORKERS = 256
"""The most worker processes a program starts (``--workers``), as many as a search's
threads (:data:`engine.search.nply.MAX_THREADS`): each is a whole process with its own
kernels and work spaces, so a mistyped count (100000 for 10) would start processes until
the machine's memory ran out, where a one-line error costs nothing."""


def _count(text: str, what: str) -> int:
    """``text`` as a whole number 1 .. :data:`MAX_WORKERS`, else an argparse error
    naming ``what`` it counts."""
    digits = text.strip()
    if not (is_whole(digits) and len(digits) <= 30 and 1 <= int(digits) <= MAX_WORKERS):
        raise argparse.ArgumentTypeError(f"{quote(text)}: expected a number of {what}, "
                                         f"1 .. {MAX_WORKERS}")
    return int(digits)


def worker_count(text: str) -> int:
    """An ``argparse`` type: a number of worker processes, 1 .. :data:`MAX_WORKERS`."""
    return _count(text, "worker processes")


def thread_count(text: str) -> int:
    """An ``argparse`` type: a search's threads (``--threads``), 1 ..
    :data:`MAX_WORKERS`, the bound :data:`engine.search.nply.MAX_THREADS` also is."""
    return _count(text, "search threads")


MAX_PORT = 65535
"""The highest TCP port (a port is 16 bits)."""


def port_number(text: str) -> int:
    """An ``argparse`` type: a TCP port to listen on, 1 .. :data:`MAX_PORT`, else a
    one-line error. A larger number made the bind raise ``OverflowError`` with a
    traceback; 0 (any free port) would leave a client nothing to connect to."""
    digits = text.strip()
    if not (is_whole(digits) and len(digits) <= 30 and 1 <= int(digits) <= MAX_PORT):
        raise argparse.ArgumentTypeError(f"{quote(text)}: expected a port number, "
                                         f"1..{MAX_PORT}")
    return int(digits)


def listen_host(text: str) -> str:
    """An ``argparse`` type: an address to listen on (``127.0.0.1``, ``::1``, a host
    name), else a one-line error. Refused: an empty one, which the socket library reads
    as every interface (a server meant for this machine would serve the network); one
    with spaces or control characters (a NUL made the bind raise ``TypeError``); and one
    that is not text a host name can be written in (bytes that are not UTF-8 reach
    Python's ``argv`` as lone surrogates, on which the bind raised ``TypeError`` too).
    Whether the address exists here is found out by binding it."""
    expected = "expected an address such as 127.0.0.1"
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{quote(text)}: {expected} (an empty one would "
                                         f"listen on every interface)")
    try:
        text.encode("idna")               # what the socket library encodes a host with
    except UnicodeError:
        raise argparse.ArgumentTypeError(f"{quote(text)}: {expected} (not a host name: "
                                         f"a label empty or over 63 characters, or bytes "
                                         f"that are not UTF-8)") from None
    if not text.isprintable() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"{quote(text)}: {expected}, without spaces or "
                                         f"control characters")
    return text


class OutputError(NardyError):
    """An output path a program cannot write: a file where a folder must be, or the
    other way round, or a folder that cannot be made or written into."""


class WriteError(OutputError):
    """An ``OSError`` while a program writes its results (a full disk, a folder made
    read-only under it), as one line that names the file: ``cannot write <path>:
    <strerror>``. The program's earlier files (an older checkpoint) stay as they
    were: every result is written to a temporary file first and then renamed."""

    def __init__(self, path, exc: OSError):
        super().__init__(f"cannot write {path}: {exc.strerror or exc}")
        self.path = Path(path)
        self.errno = exc.errno


@contextmanager
def writing(path) -> Iterator[None]:
    """A ``with`` block that writes ``path``: an ``OSError`` raised in it becomes a
    :class:`WriteError` naming ``path``. The errors of a write often name no file (a
    full disk fails ``write``, not ``open``) or a temporary one the user never sees."""
    try:
        yield
    except OSError as exc:
        raise WriteError(path, exc) from None


def output_folder(path, what: str = "--out", make: bool = True) -> Path:
    """``path`` as a folder to write into, made with its parents when missing (unless
    not ``make``); an :class:`OutputError` naming ``what`` when a file stands in the way,
    the folder cannot be made, or a small file cannot be written into it (or, where it
    is still to be made, into the nearest folder above it that exists): a read-only or
    full disk. So a program fails before its work, not after it."""
    p = Path(path)
    _make_folder(p, p, what, make)
    return p


def output_file(path, what: str = "--out") -> Path:
    """``path`` as a file to write, its folder made and written into
    (:func:`output_folder`); an :class:`OutputError` when ``path`` is a folder."""
    p = Path(path)
    if p.is_dir():
        raise OutputError(f"{what} {quote(str(p))} is a folder; expected a file name")
    _make_folder(p.parent, p, what)
    return p


LOCK_NAME = ".nardy-lock"
"""The file in a run folder that :func:`folder_lock` locks."""


class FolderBusy(OutputError):
    """A run folder another program is writing into now (:func:`folder_lock`)."""


@contextmanager
def folder_lock(path, what: str = "--out", instead: str | None = None) -> Iterator[Path]:
    """Hold the folder ``path`` (made when missing, as :func:`output_folder` makes it)
    for this program during the ``with`` block: a second program given the same folder
    meanwhile (the same command started twice, a ``--resume`` while the run still
    goes) gets a :class:`FolderBusy` before any work, naming ``what``, the process that
    holds it, and the option to change (``instead``, default ``what``). Two runs in
    one folder would each write checkpoints and delete the other's older ones.

    The lock is an exclusive ``flock`` of the file :data:`LOCK_NAME` in the folder,
    which holds the holder's process id for that message: the kernel releases it
    when the holder ends in any way, ``kill -9`` included, so the file left behind
    never blocks a later run. Worker processes forked inside the block hold it with
    their parent. Once it holds the folder, it removes the temporary files
    (``.<name>.<random>.tmp``, :func:`engine.eval.network.atomic_write_bytes`) that a
    write cut short by ``kill -9`` left: a checkpoint's size each. Where ``fcntl`` is
    missing (Windows) the folder is not locked."""
    folder = output_folder(path, what)
    try:
        import fcntl
    except ImportError:                   # pragma: no cover - not POSIX
        yield folder
        return
    lock = folder / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise OutputError(f"{what} {quote(str(path))}: cannot open {quote(str(lock))} "
                          f"({exc.strerror or exc})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            by = f"process {holder}" if holder.isdigit() else "another process"
            raise FolderBusy(f"{what} {quote(str(path))} is in use by {by} (a run "
                             f"writing into it now): wait for it to end, stop it, or "
                             f"give another {instead or what}") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        for tmp in folder.glob(".*.tmp"):  # a write a kill cut short: no one else writes here
            try:
                tmp.unlink()
            except OSError:
                pass
        yield folder
    finally:
        os.close(fd)                      # the lock goes with the last descriptor


PROBE = b"nardy: can this folder be written into?\n"
"""What :func:`_probe` writes (and removes at once)."""


def _make_folder(folder: Path, shown: Path, what: str, make: bool = True) -> None:
    for up in (folder, *folder.parents):
        if up.exists() and not up.is_dir():
            raise OutputError(f"{what} {quote(str(shown))}: {quote(str(up))} is a file; "
                              f"expected a folder")
    if make:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{what} {quote(str(shown))}: cannot make the folder "
                              f"{quote(str(folder))} ({exc.strerror or exc})") from None
    here = next((up for up in (folder, *folder.parents) if up.is_dir()), Path("."))
    _probe(here, shown, what)


def _probe(folder: Path, shown: Path, what: str) -> None:
    """Write a small file into ``folder`` (flushed to the disk) and remove it; an
    :class:`OutputError` when that fails: the mode, a read-only mount or a full disk
    would otherwise be found out only when the program writes its results."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".nardy-probe-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"{what} {quote(str(shown))}: cannot write into the folder "
                          f"{quote(str(folder))} ({exc.strerror or exc})") from None
    try:
        try:
            os.write(fd, PROBE)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OutputError(f"{what} {quote(str(shown))}: cannot write into the folder "
                          f"{quote(str(folder))} ({exc.strerror or exc})") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
