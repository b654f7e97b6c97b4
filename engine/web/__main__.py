"""``python -m engine.web [--host 127.0.0.1] [--port 8080]``: serve the web board."""

from __future__ import annotations

import argparse
import sys

from engine.cli._common import integer


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m engine.web",
                                     description="Serve the web board: play and analyse "
                                                 "the six games in a browser.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=integer, default=8080, help="port (default 8080)")
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"--port {args.port}: expected 1..65535")
    if not args.host.strip() or any(c.isspace() for c in args.host):
        parser.error(f"--host {args.host!r}: expected an address such as 127.0.0.1 (an "
                     f"empty one would listen on every interface)")
    try:
        import uvicorn

        from engine.web.app import app
    except ImportError as exc:
        sys.exit(f"engine.web needs the optional extra 'web' ({exc.name} is missing): "
                 f"pip install -e '.[web]'")
    from engine.search import precompile
    precompile.allow()       # a cold start compiles on two cores
    print(f"nardy web board on http://{args.host}:{args.port}/ (the first search "
          f"compiles kernels for about 20 s)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
