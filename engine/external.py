"""``python -m engine.external``: GNU Backgammon's external player, :mod:`engine.cli.external`."""

from engine.cli.external import main

if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
