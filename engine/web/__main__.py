"""``python -m engine.web [--host 127.0.0.1] [--port 8080]``: serve the web board."""

from __future__ import annotations

import argparse
import sys

from engine.cli._common import listen_host, port_number


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m engine.web",
                                     description="Serve the web board: play and analyse "
                                                 "the six games in a browser.")
    parser.add_argument("--host", type=listen_host, default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=port_number, default=8080,
                        help="port, 1..65535 (default 8080)")
    args = parser.parse_args(argv)
    try:
        import uvicorn

        from engine.web.app import app
    except ImportError as exc:
        sys.exit(f"engine.web needs the optional extra 'web' ({exc.name} is missing): "
                 f"pip install -e '.[web]'")
    problem = _cannot_listen(args.host, args.port)
    if problem:
        parser.error(problem)
    from engine.search import precompile
    precompile.allow()       # a cold start compiles on two cores
    shown = f"[{args.host}]" if ":" in args.host else args.host      # an IPv6 address
    print(f"nardy web board on http://{shown}:{args.port}/ (the first search "
          f"compiles kernels for about 20 s)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


def _cannot_listen(host: str, port: int) -> str | None:
    """Why the server could not listen on ``host:port`` (an unknown host, a port in use
    or not allowed), found by binding a socket there first, or None. Without it the
    program said it served the board and then stopped with uvicorn's error."""
    import socket
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port,
                                                          type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        return f"--host {host!r}: {getattr(exc, 'strerror', None) or exc}"
    try:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn does
            s.bind(addr)
    except OSError as exc:
        return f"--host {host!r} --port {port}: cannot listen there ({exc.strerror or exc})"
    return None


if __name__ == "__main__":
    main()
