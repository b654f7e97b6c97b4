"""``python -m engine.analyse``: the analysis command line, :mod:`engine.cli.analyse`."""

from engine.cli.analyse import main

if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
