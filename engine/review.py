"""``python -m engine.review``: a match file analysed, :mod:`engine.cli.review`."""

from engine.cli.review import main

if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
