"""A trained network as the starting network of another game with the same board.

    python -m training.transfer --model models/backgammon.npz --variant portes --out runs/portes/init.npz

Portes is backgammon's board and moves with another scoring (no backgammon: a gammon is
the most a game can win), so the backgammon network already plays it: its weights,
unchanged, rate portes positions, and the evaluator zeroes the backgammon outputs a
game without 3-point results cannot have (:func:`engine.eval.network.sane`). The file
written is that network, declared a network of ``--variant``, with a card saying where
it came from (the source's card kept whole under ``transferred_from``): the
``--init`` of :mod:`training.positions`' self-play, :mod:`training.label`'s
``--model`` and :mod:`training.supervised`'s ``--init`` in the target game
(training/README.md, "Portes from backgammon"). The weights are those of
:func:`training.selfplay.warm_start` (the same hidden layer, the same inputs), which
a TD run's ``--init`` from another game uses too.

A game whose board the network's inputs do not describe is refused (the encoder's
check, :func:`engine.eval.encoding.encoder_problem`), as is an output file that is
already there.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from engine.cli._common import output_file
from engine.errors import NardyError, quote
from engine.eval.network import Network, utc_now
from engine.rules.variants import VARIANTS
from training.selfplay import warm_start


class TransferError(NardyError):
    """A transfer that cannot be made (the game, the files)."""

    code = "invalid_transfer"


def transfer(source: Network, variant: str, path: str | None = None) -> Network:
    """``source``'s weights as a network of ``variant`` (:func:`warm_start` onto a
    network of the same encoder and hidden size), its card naming the source
    (``path``, when given) and keeping the source's card whole."""
    if variant not in VARIANTS:
        raise TransferError(f"variant {quote(variant)}: expected one of {list(VARIANTS)}")
    if variant == source.variant:
        raise TransferError(f"the network already plays {variant}: nothing to transfer")
    try:
        fresh = Network(variant, source.encoder, np.zeros_like(source.w1t),
                        np.zeros_like(source.b1), np.zeros_like(source.w2),
                        np.zeros_like(source.b2))
    except NardyError as exc:
        raise TransferError(f"a {source.variant} network ({source.encoder.name}) cannot "
                            f"play {variant}: {exc}") from exc
    net = warm_start(fresh, source)
    net.info = {"method": f"transfer (training.transfer): the {source.variant} network's "
                          f"weights, unchanged, as a {variant} network",
                "made": utc_now(),
                "transferred_from": {"model": str(path) if path is not None else None,
                                     "variant": source.variant, "sizes": source.sizes,
                                     "card": source.info}}
    return net


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.transfer",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="the trained network (.npz)")
    ap.add_argument("--variant", required=True, choices=list(VARIANTS),
                    help="the game the new network is to play")
    ap.add_argument("--out", required=True, help="the new network's file (.npz)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if out.suffix != ".npz":
        ap.error(f"--out {args.out}: expected a .npz file")
    if out.is_file():
        ap.error(f"--out {args.out} already exists: choose another file")
    try:
        net = transfer(Network.load(args.model), args.variant, args.model)
        net.save(output_file(out))      # a folder given, or one that cannot be made: refused
    except NardyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:              # the write itself failed (a full disk): no file left
        print(f"error: writing {out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"{out}: {net!r}, from {args.model}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
