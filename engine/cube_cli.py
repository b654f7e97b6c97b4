"""``python -m engine.cube_cli``: cube advice, :mod:`engine.cli.cube`."""

from engine.cli.cube import main

if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
