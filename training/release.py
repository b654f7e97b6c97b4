"""Release a trained network into ``models/``, with a card of measured facts.

    python -m training.release --run runs/bg80 [--pubeval-games 20000] [--random-games 5000]
                                              [--heuristic-games 5000]

Copies the run's latest weights (or those of ``--checkpoint``) to
``models/<variant>.npz`` -- or, for a run folder of :mod:`training.supervised`, its
best network (``model.npz``) -- and writes
``models/<variant>.json``: games trained, training wall time, the machine, the settings,
and the strength measured here and now with the duplicate-dice duel of
:mod:`engine.play.duel` (ppg with a 95% confidence interval and the number of games) against
PubEval (backgammon and portes), random play, the hand-written player of
:mod:`engine.eval.heuristic` (every game) and, head to head, the released network it
replaces (``--replaces``, read before it is overwritten). (GNU Backgammon's 0-ply evaluator is
slow to drive from Python; ``benchmarks/strength.py --b gnubg0`` measures it.) A
supervised network's card keeps its own (the method, settings, data provenance, each
epoch's errors, the command) and, as ``stages``, the card of the network it started
from (``--init``), read before anything is overwritten: each stage's settings and
measures. Nothing in the card is typed in by hand.

The model and its card are written together: both into temporary files in ``--out``
first, then moved into place, so a failure (a full disk; a folder where one of them
goes, which is refused before any match is played) leaves the old model and card as
they were, in one line ``error: cannot write <path>: <reason>`` and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.cli._common import (
    OutputError,
    WriteError,
    non_negative_int,
    output_folder,
    run as run_cli,
    writing,
)
from engine.errors import NardyError
from engine.eval.network import Network, utc_now
from engine.play.duel import MAX_GAMES, duel
from engine.rules.variants import HIT, OPPOSITE, get_rules

from . import checkpoint
from .config import TrainConfig


def machine() -> str:
    """The processor, its cores and the system, as the cards name the machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def _measure(net: Network, opponent, games: int, seed: int) -> dict:
    t0 = time.perf_counter()
    r = duel(net, opponent, games, seed, net.variant)
    return {"opponent": opponent, "games": r.games, "seed": seed, "ppg": round(r.ppg, 4),
            "ci95": round(r.ci95(), 4), "win_rate": round(r.rate(0), 4),
            "seconds": round(time.perf_counter() - t0, 1),
            "command": f"python benchmarks/strength.py --a models/{net.variant}.npz "
                       f"--b {opponent} --games {games} --seed {seed}"}


def supervised_run(run) -> tuple[Network, dict] | None:
    """The best network of a :mod:`training.supervised` run folder and its checkpoint's
    record, or None where ``run`` holds no such run (a self-play run, say)."""
    import json

    from engine.eval.network import read_npz
    folder = Path(run)
    if not ((folder / "model.npz").is_file() and (folder / "checkpoint.npz").is_file()):
        return None
    net = Network.load(folder / "model.npz")
    if not str(net.info.get("method", "")).startswith("supervised"):
        return None
    got = read_npz(folder / "checkpoint.npz", ("run",))
    try:
        record = json.loads(got["run"].tobytes()) if "run" in got else {}
    except (ValueError, RecursionError):
        record = {}
    return net, record if isinstance(record, dict) else {}


def duel_games(text: str) -> int:
    """An ``argparse`` type: a duel's game count, 0 (none) or an even number up to
    :data:`engine.play.duel.MAX_GAMES` (games come in pairs on the same dice); checked
    here, not after the duels before it have run."""
    n = non_negative_int(text)
    if n and (n % 2 or n > MAX_GAMES):
        raise argparse.ArgumentTypeError(f"{text.strip()}: expected 0 or an even number "
                                         f"2..{MAX_GAMES:,} (games come in pairs on the "
                                         f"same dice)")
    return n


def seed64(text: str) -> int:
    """An ``argparse`` type: a seed 0 .. 2**64 - 1 (the duels' dice)."""
    n = non_negative_int(text)
    if n >= 2 ** 64:
        raise argparse.ArgumentTypeError(f"{text.strip()}: expected a seed 0 .. 2**64 - 1")
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m training.release",
        description="Release a trained network into models/ (or --out) with a card of "
                    "facts measured here and now: its strength against PubEval (or the "
                    "heuristic and random play) and against the network it replaces, "
                    "the training settings and wall time. training/README.md says more.")
    ap.add_argument("--run", required=True,
                    help="run folder of training.selfplay or training.supervised")
    ap.add_argument("--checkpoint", help="release this checkpoint of the run (a rung of "
                                         "benchmarks/ladder.py) instead of the newest")
    ap.add_argument("--out", default="models", help="folder of released models")
    ap.add_argument("--pubeval-games", type=duel_games, default=20_000)
    ap.add_argument("--random-games", type=duel_games, default=5_000)
    ap.add_argument("--heuristic-games", type=duel_games, default=5_000)
    ap.add_argument("--init", help="the model the run was warm-started from (--init of "
                                   "training.selfplay), for the card's train command")
    ap.add_argument("--seed", type=seed64, default=1)
    ap.add_argument("--replaces", metavar="MODEL",
                    help="the released model this one replaces (default: <--out>/<variant>.npz "
                         "when it exists): measured head to head before it is overwritten")
    ap.add_argument("--replaces-games", type=duel_games, default=20_000)
    args = ap.parse_args(argv)
    files = checkpoint.checkpoints(args.run)
    supervised = None
    if not files and not args.checkpoint:
        try:
            supervised = supervised_run(args.run)
        except NardyError as exc:
            print(f"error: --run {args.run}: {exc}", file=sys.stderr)
            return 2
    if args.checkpoint and Path(args.checkpoint).resolve().parent != Path(args.run).resolve():
        ap.error(f"--checkpoint {args.checkpoint} is not a checkpoint of --run {args.run} "
                 f"(the card names the run)")
    try:
        # the newest checkpoint, or the one named: an unreadable newest one is not
        # passed over for an older one without the user's word
        state = checkpoint.load(args.checkpoint or files[-1]) if (
            args.checkpoint or files) else None
    except checkpoint.CheckpointError as exc:
        hint = "" if args.checkpoint else (
            f"; to release an older one, name it with --checkpoint "
            f"({', '.join(p.name for p in files[-3:-1]) or 'none other'})")
        print(f"error: {exc}{hint}", file=sys.stderr)
        return 2
    if state is None and supervised is None:
        print(f"error: no checkpoint in {args.run} (neither a training.selfplay run nor a "
              f"training.supervised one with its model.npz)", file=sys.stderr)
        return 2
    try:                                   # checked before hours of measuring
        output_folder(args.out)
    except OutputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stages = []
    if supervised is not None:
        net = supervised[0]
        init = net.info.get("settings", {}).get("init")
        if init:                # the first stage's card, before --out overwrites it
            try:
                first = Network.load(init)
            except NardyError as exc:
                print(f"error: the run's --init model: {exc} (its card is the card's "
                      f"first stage)", file=sys.stderr)
                return 2
            if first.sizes == net.sizes and np.array_equal(first.w1t, net.w1t):
                print(f"error: the run's --init model {init} holds this run's network "
                      f"(released already?): the card of the network it started from "
                      f"is no longer there to be its first stage", file=sys.stderr)
                return 2
            stages.append({"model": init, "card": first.info})
    else:
        net = state.net
    if state is not None and state.games == 0:
        print("warning: this checkpoint holds no self-play games: the network released "
              "is the run's starting one (random weights, or its --init model)",
              file=sys.stderr)
    rules = get_rules(net.variant)
    problem = _targets_problem(args.out, net.variant)   # before hours of measuring
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    # the model it replaces (named, or the one in --out), checked before hours of
    # measuring
    old_path = Path(args.replaces or Path(args.out) / f"{net.variant}.npz")
    old = None
    if args.replaces_games and (args.replaces or old_path.exists()):
        try:
            old = Network.load(old_path)
        except NardyError as exc:
            print(f"error: --replaces: {exc} (--replaces-games 0 releases without the match)",
                  file=sys.stderr)
            return 2
        if old.variant != net.variant:
            print(f"error: --replaces {old_path}: a model of {old.variant}, the run's is of "
                  f"{net.variant} (--replaces-games 0 releases without the match)",
                  file=sys.stderr)
            return 2
    strength = []
    if rules.meet == HIT and rules.geometry == OPPOSITE and args.pubeval_games:
        strength.append(_measure(net, "pubeval", args.pubeval_games, args.seed))
        print(strength[-1], flush=True)
    for opponent, games in (("random", args.random_games),
                            ("heuristic", args.heuristic_games)):
        if games:
            strength.append(_measure(net, opponent, games, args.seed))
            print(strength[-1], flush=True)
    if old is not None:
        t0 = time.perf_counter()
        r = duel(net, old, args.replaces_games, args.seed, net.variant)
        strength.append({
            "opponent": f"the network it replaces ({old_path}, {old.sizes}, released "
                        f"{old.info.get('released', '?')})",
            "games": r.games, "seed": args.seed, "ppg": round(r.ppg, 4),
            "ci95": round(r.ci95(), 4), "win_rate": round(r.rate(0), 4),
            "seconds": round(time.perf_counter() - t0, 1),
            "command": f"python benchmarks/strength.py --variant {net.variant} --a NEW "
                       f"--b OLD --games {args.replaces_games} --seed {args.seed}"})
        print(strength[-1], flush=True)
    info = dict(net.info)
    if supervised is not None:
        elapsed = supervised[1].get("elapsed")
        info.update({"released": utc_now(),
                     "training_seconds": round(float(elapsed), 1) if isinstance(
                         elapsed, (int, float)) and not isinstance(elapsed, bool) else None,
                     "machine": machine(), "run": str(args.run),
                     "train_command": net.info.get("command", ""),
                     "strength_0ply": strength, "stages": stages})
        return _write(net, info, args.out)
    defaults = TrainConfig(variant=net.variant).to_dict()
    changed = " ".join(f"--set {k}={v}" for k, v in state.config.to_dict().items()
                       if v != defaults[k] and k not in ("variant", "seed"))
    init = f" --init {args.init}" if args.init else ""
    info.update({
        "released": utc_now(),
        "trained_games": int(state.games),
        "training_seconds": round(float(state.elapsed), 1),
        "machine": machine(),
        "run": str(args.run),
        "train_command": f"python -m training.selfplay --variant {net.variant} "
                         f"--games {state.games} --out {args.run} "
                         f"--seed {state.config.seed}{init}"
                         + (f" {changed}" if changed else ""),
        "strength_0ply": strength,
        "learning_curve": [list(h) for h in state.history],
    })
    if state.resumes:
        info["resumed_with_changes"] = [list(r) for r in state.resumes]
    return _write(net, info, args.out)


def _targets(out, variant: str) -> tuple[Path, Path]:
    """The two files a release writes into ``out``: the model and its card."""
    path = Path(out) / f"{variant}.npz"
    return path, path.with_suffix(".json")


def _targets_problem(out, variant: str) -> str | None:
    """Why the model or its card cannot be written into ``out`` (a folder or another
    non-file in the way), or None: checked before any match is played, so that the
    hours of measuring are not lost to it, nor the old model to a card that cannot
    follow it."""
    for path in _targets(out, variant):
        if (path.exists() or path.is_symlink()) and not path.is_file():
            kind = "a folder" if path.is_dir() else "not a regular file"
            return (f"cannot write {path}: it is {kind} (the release writes the model "
                    f"{variant}.npz and its card {variant}.json there); remove it or "
                    f"choose another --out")
    return None


def _write(net: Network, info: dict, out) -> int:
    """Release ``net`` with the card ``info`` into ``out``: the model and its card are
    written by :meth:`Network.save` (atomically, checked) into a temporary folder inside
    ``out``, then both moved into place with ``os.replace``, so that a failure (a full
    disk, a folder where the card goes) leaves the old model and card as they were,
    never a new model with the old card or none. An ``OSError`` is one line, ``error:
    cannot write <path>: <reason>``, and exit status 2."""
    net.info = info
    path, card = _targets(out, net.variant)
    problem = _targets_problem(out, net.variant)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    stage = None
    try:
        with writing(path.parent):
            path.parent.mkdir(parents=True, exist_ok=True)
            stage = Path(tempfile.mkdtemp(prefix=f".{net.variant}.release.", dir=path.parent))
        try:
            net.save(stage / path.name, card_file=True)
        except OSError as exc:        # the model, or (the model written) its card
            raise WriteError(card if (stage / path.name).exists() else path, exc) from None
        _replace_both([(stage / path.name, path), (stage / card.name, card)], stage)
    except NardyError as exc:     # WriteError, or a card that is not plain JSON data
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
    print(f"wrote {path} and its card {card}")
    return 0


def _replace_both(moves: list[tuple[Path, Path]], stage: Path) -> None:
    """``os.replace`` each ``(new, target)`` of ``moves``; when one fails, the targets
    already replaced get their old files back (hard links to them kept in ``stage``
    first; a target that was not there is removed again), and
    :class:`engine.cli._common.WriteError` names the target that failed."""
    done: list[tuple[Path, Path | None, bool]] = []   # (target, its old file, had one)
    try:
        for i, (new, target) in enumerate(moves):
            had = target.is_file()
            old: Path | None = stage / f"old-{i}-{target.name}"
            try:
                if had:
                    os.link(target, old)
            except OSError:           # no hard links here: replaced without a way back
                old = None
            with writing(target):
                os.replace(new, target)
            done.append((target, old, had))
    except WriteError:
        for target, old, had in reversed(done):      # put back what was replaced
            try:
                if not had:
                    target.unlink()
                elif old is not None:
                    os.replace(old, target)
            except OSError:
                pass
        raise


if __name__ == "__main__":
    run_cli(main)
