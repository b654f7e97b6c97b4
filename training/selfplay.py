"""``python -m training.selfplay``: train a network by TD(lambda) self-play.

    python -m training.selfplay --variant backgammon --games 2000000 --out runs/bg80 \\
        --workers 2 --set size=standard --set alpha=0.1
    python -m training.selfplay --out runs/bg80 --games 2000000 --resume   # after a stop or a kill

``--games`` is the run's **total**: rerunning the same command with ``--resume`` finishes
it. The run folder gets ``checkpoint-<games>.npz`` every ``checkpoint_minutes`` (written
atomically: a kill loses at most one interval) and ``model.npz`` / ``model.json``, the
latest weights as a model file with its card. The progress bar shows games/s and the
running strength figure: points per game of the greedy (0-ply) network against PubEval
(backgammon, portes) or the hand-written heuristic of :mod:`engine.eval.heuristic` (the other
games), over ``eval_games`` games.

``--backend ray`` puts the workers on a Ray cluster (:mod:`training.cluster`: the
driver is their parameter server) with the same checkpoints, resume and progress bar.

SIGTERM (or Ctrl-C) stops the run: the workers stop, the final checkpoint is written,
then the final strength figure is measured and the checkpoint written again with it. A
second signal skips that figure; it cannot cost the final checkpoint, because signals
are only noted while the workers stop and a checkpoint is written (:class:`training.trainer.HeldSignals`).

A worker killed from outside (``kill -9``, the kernel's out-of-memory killer) stops the
run too: the other workers stop, the final checkpoint is written, one line names the
worker, and the command exits with status 2; ``--resume`` goes on. An ``--out`` that
cannot be written into (read-only, full) is refused before the first game; a checkpoint
that cannot be written later ends the run in one line with status 2, the checkpoints
before it kept.

Every game trains through the same code: the rules table drives move generation and
:func:`engine.rules.scoring.score_table` the exact score of a finished game (backgammon 1/2/3;
portes, fevga 1/2; plakoto 1/2 and the mother pin 2; long nardy, gul bara oyn 1, mars 2,
koks 3 when that option is on), mapped to the network's five outputs. The input
encoding is the game's default: ``tesauro198`` for backgammon and portes, ``nardy255``
for the others, which adds plakoto's pins, the turns completed and gul bara's pending
dice.

Workers are processes forked from this one; the weights live in shared memory and
every worker updates them in place (Hogwild), so ``--workers`` scales with cores. The
network learns only from its own games.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from engine.cli._common import (  # noqa: E402
    MAX_WORKERS,
    OutputError,
    folder_lock,
    non_negative_int,
    output_folder,
    run as run_cli,
    worker_count,
)
from engine.cluster import add_arguments as add_cluster_arguments  # noqa: E402
from engine.eval.encoding import extends  # noqa: E402
from engine.eval.network import Network, NetworkFileError  # noqa: E402
from engine.movegen.generate import usable_cores  # noqa: E402

from . import checkpoint  # noqa: E402
from .config import (  # noqa: E402
    ConfigError,
    TrainConfig,
    describe,
    load_config,
    parse_set,
    read_config_file,
)
from .trainer import Trainer, WorkerDied  # noqa: E402

ARCH_KEYS = ("variant", "size", "hidden", "encoder")
"""Config keys a resumed run may not change."""


# --------------------------------------------------------------------- CLI
def _interrupt(signum, frame):
    """SIGTERM stops the run like Ctrl-C: workers stop, a checkpoint is written."""
    raise KeyboardInterrupt


def check_arguments(args) -> None:
    """What can be checked of the command line before ``--out`` is made or locked, so
    that a refused command leaves no empty run folder behind: the config of a fresh
    run (fields, types, ranges, the game), the ``--set`` fields and config file of a
    resumed one (checked again against its run in :func:`build_state`), and, for
    ``--resume``, that ``--out`` is there (what it holds is checked under its lock).
    Raises :class:`ConfigError`."""
    if args.resume:
        if not os.path.lexists(args.out):
            raise ConfigError(f"--resume: no checkpoint in {str(args.out)!r} (no such "
                              f"folder)")
        if args.config:
            read_config_file(args.config)
        TrainConfig.typed(parse_set(args.set))
        return
    extra = {k: v for k, v in (("variant", args.variant), ("seed", args.seed))
             if v is not None}
    load_config(args.config, args.set, extra)


def build_state(args) -> checkpoint.RunState:
    """The run to continue (``--resume``) or a fresh one from the config."""
    try:
        out = output_folder(args.out)
    except OutputError as exc:
        raise ConfigError(str(exc)) from None
    if (out / "checkpoint.npz").exists():
        raise ConfigError(f"{str(out)!r} holds a supervised run (checkpoint.npz, "
                          f"training.supervised); self-play needs a folder of its own")
    if args.resume:
        state = checkpoint.latest(out)
        if state is None:
            raise ConfigError(f"--resume: no checkpoint in {str(out)!r}")
        if args.init:      # the same command with --resume: the run began from it
            print(f"note: --init {args.init} is read when a run starts; the resumed run "
                  f"goes on from its checkpoint's weights", file=sys.stderr)
        if args.seed is not None and args.seed != state.config.seed:
            raise ConfigError("--seed with --resume: the seed is stored in the run")
        changes = {}
        if args.config:                 # the fields the file sets, defaults or not
            changes.update(read_config_file(args.config))
        changes.update(parse_set(args.set))
        if args.variant is not None:
            changes["variant"] = args.variant
        fixed = [k for k in (*ARCH_KEYS, "seed")
                 if k in changes and changes[k] != getattr(state.config, k)]
        if fixed:
            raise ConfigError(f"--resume cannot change {fixed}: start a new run instead")
        before = state.config.to_dict()
        state.config = TrainConfig.from_dict(changes, state.config)
        after = state.config.to_dict()
        changed = {k: [before[k], after[k]] for k in after if after[k] != before[k]}
        if changed:
            state.resumes.append([int(state.games), changed])
        return state
    if checkpoint.checkpoints(out):
        raise ConfigError(f"{str(out)!r} already holds a run; pass --resume to continue it "
                          f"or choose another --out")
    held = [n for n in ("model.npz", "model.json") if (out / n).exists()]
    if held:                         # a released network, or its card alone
        them = "them" if len(held) > 1 else "it"
        raise ConfigError(f"{str(out)!r} holds {' and '.join(held)} but no checkpoint of "
                          f"a run; a fresh run would overwrite {them}: choose another --out")
    extra = {}
    if args.variant is not None:
        extra["variant"] = args.variant
    if args.seed is not None:
        extra["seed"] = args.seed
    cfg = load_config(args.config, args.set, extra)
    net = Network.create(cfg.variant, cfg.hidden_units, cfg.encoder_name,
                         np.random.default_rng(cfg.seed), cfg.init_scale)
    if args.init:
        net = warm_start(net, Network.load(args.init))
    return checkpoint.RunState(cfg, net)


def warm_start(fresh: Network, trained: Network) -> Network:
    """``fresh``'s architecture with ``trained``'s weights: the inputs both encoders
    share (the same leading inputs, e.g. the 198 of ``tesauro198`` inside
    ``tesauro198+f5`` or ``nardy255``) keep their trained weights, inputs the trained
    network lacks start at zero, so the new network first plays exactly as the trained
    one. A larger hidden layer keeps the trained units and adds ``fresh``'s random ones
    with zero output weights (the same evaluations again, until they learn). The trained
    network may be of another game (portes from backgammon: the same board and moves);
    the new run then learns its own game's scoring."""
    n = trained.n_inputs
    h = trained.hidden
    if h > fresh.hidden or not extends(fresh.encoder, trained.encoder):
        raise ConfigError(f"--init: {trained!r} cannot seed {fresh!r} (the shared inputs "
                          f"must agree and the hidden layer may only grow)")
    net = fresh.copy()
    net.w1t[:, :h] = 0.0
    net.w1t[:n, :h] = trained.w1t
    net.b1[:h] = trained.b1
    net.w2[:, :h] = trained.w2
    net.w2[:, h:] = 0.0
    net.b2[:] = trained.b2
    net.info = {"warm_start": {"model": trained.sizes, "variant": trained.variant,
                               "encoder": trained.encoder.name,
                               "trained_games": trained.info.get("trained_games"),
                               "training_seconds": trained.info.get("training_seconds")}}
    return net


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.selfplay",
                                 description="Train a network by TD(lambda) self-play.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", help="game to learn (default: backgammon)")
    ap.add_argument("--games", type=non_negative_int, default=None,
                    help="total games of the run (a resumed run counts its past games)")
    ap.add_argument("--out", help="run folder (checkpoints, model.npz)")
    ap.add_argument("--resume", action="store_true", help="continue the run in --out")
    ap.add_argument("--seed", type=non_negative_int,
                    help="seed of a fresh run (default: config seed)")
    ap.add_argument("--init", metavar="MODEL",
                    help="start a fresh run from a trained model's weights (inputs the "
                         "model lacks start at zero)")
    ap.add_argument("--workers", type=worker_count, default=min(usable_cores(), MAX_WORKERS),
                    help=f"worker processes, 1 .. {MAX_WORKERS} (default: the cores this "
                         f"process may use)")
    ap.add_argument("--config", help="JSON file of TrainConfig fields")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override one config field (repeatable)")
    ap.add_argument("--config-help", action="store_true", help="list the config fields")
    ap.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    cl = ap.add_argument_group("cluster (training.cluster)")
    add_cluster_arguments(cl, "--workers processes forked here, sharing the weights")
    cl.add_argument("--sync-games", type=non_negative_int, default=None, metavar="K",
                    help="with --backend ray: games a worker plays between two exchanges "
                         "of weights (default 100)")
    args = ap.parse_args(argv)
    if args.config_help:
        print(describe())
        return 0
    if args.games is not None and not 1 <= args.games < 2**63:
        ap.error(f"--games {args.games}: expected the run's total, 1 .. 2**63 - 1")
    if not args.out or args.games is None:
        ap.error("--out and --games are required")
    if args.backend != "ray" and (args.address is not None or args.sync_games is not None):
        ap.error("--address and --sync-games are for --backend ray")
    if args.sync_games is not None and args.sync_games < 1:
        ap.error("--sync-games must be at least 1")
    try:
        check_arguments(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with folder_lock(args.out):    # one run at a time in a folder
            return _train(args)
    except OutputError as exc:         # the folder in use by another run, or unwritable
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _train(args) -> int:
    """The run of :func:`main`'s checked arguments, with its folder held."""
    try:
        state = build_state(args)
    except (ConfigError, checkpoint.CheckpointError, NetworkFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if state.games >= args.games:
        print(f"{args.out}: already {state.games} games (target {args.games})")
        return 0
    run_dir = Path(args.out)
    run_dir.mkdir(parents=True, exist_ok=True)
    if args.backend == "ray":
        from engine.cluster import ClusterError

        from .cluster import SYNC_GAMES, RayTrainer
        try:
            trainer: Trainer = RayTrainer(state, run_dir, args.workers, args.address,
                                          args.sync_games or SYNC_GAMES)
        except ClusterError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        trainer = Trainer(state, run_dir, args.workers)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        trainer.run(args.games, quiet=args.quiet)
    except KeyboardInterrupt:          # before the workers started: nothing to save
        print("interrupted before training started", file=sys.stderr)
        return 130
    except (checkpoint.CheckpointError, ConfigError, OutputError, WorkerDied) as exc:
        # weights gone bad, every game abandoned, a checkpoint that cannot be written
        # (a full disk: the ones before it stay), a worker killed (its checkpoint
        # written): the workers are stopped
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    run_cli(main)
