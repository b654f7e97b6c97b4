"""``python -m engine.ubgi``: UBGI v0.2, the Universal Backgammon Interface, :mod:`engine.cli.ubgi`."""

from engine.cli.ubgi import main

if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
