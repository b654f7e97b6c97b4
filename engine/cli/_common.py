"""What every command-line entry point shares: a quiet exit when its reader goes away,
and the argument types the parsers check with.

:func:`run` is the ``if __name__ == "__main__"`` of ``engine.analyse``,
``engine.cube_cli``, ``engine.play``, ``engine.protocol``, ``training.selfplay`` and
``training.release``. Piped into ``head`` (or a protocol client that hangs up), a
program's next write raises :class:`BrokenPipeError`; Python's advice ("Note on
SIGPIPE" in the :mod:`signal` docs) is to catch it, point standard output at
``/dev/null`` so that the flush at exit cannot raise again, and exit with status 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, NoReturn

from engine.errors import quote


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
    sys.exit(code)


def non_negative_int(text: str) -> int:
    """An ``argparse`` type: a whole number 0 or more (a seed), else a one-line error."""
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"{quote(text)}: expected a whole number 0 or more")
    return int(digits)
