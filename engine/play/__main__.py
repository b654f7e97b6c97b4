"""``python -m engine.play``: the terminal game of :mod:`engine.cli.play`."""

from engine.cli._common import run
from engine.cli.play import main

run(main)
