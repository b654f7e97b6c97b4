"""``python -m engine.protocol``: the JSON-lines engine protocol, :mod:`engine.cli.protocol`."""

from engine.cli.protocol import main

if __name__ == "__main__":
    from engine.cli._common import run
    run(main)
