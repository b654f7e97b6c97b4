"""Targets for supervised training from the engine's own search: each position of a
:class:`training.positions.PositionSet` gets its n-ply outputs
(:meth:`engine.search.nply.Search.values_of`: the five probabilities for the side to
move before it rolls, every roll's best play searched ``ply - 1`` deeper) by the
project's own network. Nothing from another engine enters.

Work is split into chunks of positions that worker processes (spawned) label in parallel, each
with its own search on one thread; every finished chunk is written at once to
``<out>.parts/`` so that a killed run resumes where it stopped (resuming is automatic:
finished chunks are read, not labelled again). The labels do not depend on the
number of workers or the chunk size. The settings (model, ply, filters, bear-off
tables, wall time) go into the set's provenance (``info["labels"]``).

    python -m training.label --positions runs/sl/pos.npz --ply 2 --out runs/sl/lab.npz
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.cli._common import (
    MAX_WORKERS,
    folder_lock,
    non_negative_int,
    output_folder,
    run as run_cli,
    worker_count,
    writing,
)
from engine.cluster import add_arguments as add_cluster_arguments, make_backend
from engine.errors import NardyError, quote
from engine.eval.evaluator import Evaluator, model_path
from engine.eval.network import atomic_savez, read_npz, sane
from engine.movegen.generate import usable_cores
from engine.rules.scoring import score_table
from engine.search.nply import MAX_PLY, Search, SearchSettings
from training.positions import PositionSet, PositionSetError, set_output

if TYPE_CHECKING:
    from engine.search.rollout import RolloutSettings

CHUNK = 200
"""Positions a worker labels at a time (and a part file holds)."""

_search: Search | None = None           # each worker's own


def _search_of(model: str | None, variant: str, race: bool, prune: bool = False) -> Search:
    """The labelling search: ``model`` (None: the released one, with the game's pruning
    and race networks; ``race`` False leaves the race network out; ``prune``: each
    roll's play inside the search picked by the pruning network)."""
    return Search(Evaluator.load(variant, model, race=None if race else False),
                  SearchSettings(prune=prune), threads=1)


def _race_file(model: str | None, variant: str, race: bool) -> str | None:
    """The race network file the labelling search uses (:func:`_search_of`), or None."""
    path = model_path(variant, "race")
    return str(path) if race and model is None and path.exists() else None


def _prune_file(model: str | None, variant: str, prune: bool) -> str | None:
    """The pruning network file the labelling search picks its plays with, or None."""
    path = model_path(variant, "prune")
    return str(path) if prune and model is None and path.exists() else None


def _init(model: str | None, variant: str, race: bool = True, prune: bool = False) -> None:
    """A worker process's set-up: one thread, and its own search."""
    global _search
    for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[k] = "1"
    _search = _search_of(model, variant, race, prune)


def _use(search: Search) -> None:
    """Label in this process with ``search``."""
    global _search
    _search = search


def _label(job):
    lo, states, ply, rollout = job
    assert _search is not None
    if rollout is None:
        return lo, _search.values_of(states, ply).astype(np.float32)
    from engine.search.rollout import play_chunk
    got = play_chunk(_search, states, 0, rollout.trials, rollout)
    adjusted = got.plain - got.luck if rollout.variance_reduction else got.plain
    # a luck-adjusted mean is an estimate and may stray past 0 or 1 (a near-certain
    # win's gammon chance at -0.0004) or out of the cumulative order: a target is a
    # chance the game can have, as the evaluator's values are (network.sane)
    out = np.clip(adjusted.mean(axis=1), 0.0, 1.0)
    sc = score_table(_search.evaluator.rules)
    for row, state in zip(out, states):
        sane(row, sc, state)
    return lo, out.astype(np.float32)


def _settings(variant: str, model: str | None, ply: int, race: bool, prune: bool,
              rollout) -> dict:
    """What a labelling's chunks depend on: the model file's bytes (its digest), the
    search's depth and helpers, the rollout's settings."""
    import hashlib

    def digest(f) -> str | None:
        return (hashlib.sha256(Path(f).read_bytes()).hexdigest()
                if f is not None and Path(f).is_file() else None)
    path = Path(model) if model is not None else model_path(variant)
    # the helper networks the search uses count as the model does: labels made with
    # another race or pruning network are other labels
    return {"model": str(path), "sha256": digest(path), "ply": None if rollout else ply,
            "race": race, "prune": prune, "rollout": repr(rollout) if rollout else None,
            "race_sha256": digest(_race_file(model, variant, race)),
            "prune_sha256": digest(_prune_file(model, variant, prune))}


def _same_settings(parts: Path, settings: dict) -> None:
    """Record ``settings`` in the chunk folder ``parts``, or check them against the ones
    recorded there: chunks of another labelling (another model, depth or rollout) are
    not taken for this one's. The model is compared by its bytes' digest, not its path
    (the same file named another way, or a copy of it, labels alike)."""
    import json
    f = parts / "settings.json"
    if f.exists() and any(parts.glob("part-*.npz")):
        try:
            old = json.loads(f.read_text())
        except ValueError:
            old = None
        diff = sorted(k for k in settings if k != "model" and (
            not isinstance(old, dict) or old.get(k) != settings[k]))
        if diff:
            raise PositionSetError(f"{parts} holds the chunks of another labelling "
                                   f"(differing: {', '.join(diff)}); remove it or give "
                                   f"another --out")
        return
    tmp = f.with_suffix(".tmp")
    with writing(f):
        tmp.write_text(json.dumps(settings, sort_keys=True))
        os.replace(tmp, f)


def label(positions: PositionSet, model: str | None, ply: int, *, workers: int = 1,
          parts: Path | None = None, chunk: int = CHUNK,
          progress=None, backend=None, race: bool = True, prune: bool = False,
          rollout: "RolloutSettings | None" = None) -> PositionSet:
    """``positions`` with their ``ply``-ply targets by ``model`` (default: the game's
    released model, with its pruning and race networks; ``race`` False: without the
    race network; ``prune``: the search's plays picked by the pruning network,
    ``SearchSettings.prune``); with ``rollout``
    (:class:`engine.search.rollout.RolloutSettings`) each target is instead the position's rollout by that search (luck-adjusted mean
    of the five outputs; ``ply`` unused), trials seeded by the settings. ``parts``: a
    folder for the finished chunks (resumable: a chunk whose states match is read, not
    labelled again; the folder records the labelling's settings, and one of other
    settings is refused); None keeps them in memory. ``progress(done)`` is called as chunks finish.
    ``backend``: None labels here (``workers`` processes), a
    :class:`engine.cluster.RayBackend` on its cluster (``workers`` is then unused); the
    labels are the same."""
    if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= MAX_PLY:
        raise PositionSetError(f"ply = {quote(ply)}: expected an integer 0..{MAX_PLY}")
    if isinstance(workers, bool) or not isinstance(workers, int) or not (
            1 <= workers <= MAX_WORKERS):
        raise PositionSetError(f"workers = {quote(workers)}: expected an integer 1 .. "
                               f"{MAX_WORKERS}")
    if backend is not None and rollout is not None:
        raise PositionSetError("rollout labels run here (--workers), not on a cluster backend")
    # the search, built here first: a model that cannot label these positions is an
    # error before any chunk folder is written or any worker started
    search = _search_of(model, positions.variant, race, prune)
    n = len(positions)
    targets = np.zeros((n, 5), np.float32)
    todo = []
    if parts is not None:
        with writing(parts):
            parts.mkdir(parents=True, exist_ok=True)
        _same_settings(parts, _settings(positions.variant, model, ply, race, prune, rollout))
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        f = parts / f"part-{lo:09d}-{hi:09d}.npz" if parts is not None else None
        if f is not None and f.exists():
            got = read_npz(f, ("targets", "states"))
            kept = got.get("targets")
            if (kept is not None and kept.shape == (hi - lo, 5)
                    and np.array_equal(got.get("states"), positions.states[lo:hi])
                    and bool(np.all((kept >= 0) & (kept <= 1)))):   # not NaN either
                targets[lo:hi] = got["targets"]
                continue
        todo.append((lo, positions.states[lo:hi], ply, rollout))
    t = time.time()
    done = n - sum(len(j[1]) for j in todo)
    if progress is not None:
        progress(done)

    def finished(lo, got):
        nonlocal done
        targets[lo:lo + len(got)] = got
        if parts is not None:
            f = parts / f"part-{lo:09d}-{lo + len(got):09d}.npz"
            with writing(f):
                atomic_savez(f, {"targets": got, "states": positions.states[lo:lo + len(got)]})
        done += len(got)
        if progress is not None:
            progress(done)

    if backend is not None:
        if todo:
            for lo, got in backend.values(search, [(j[0], j[1]) for j in todo], ply):
                finished(lo, got)
    elif workers == 1:
        _use(search)
        for job in todo:
            finished(*_label(job))
    elif todo:
        # spawned, not forked: a fork of a process that runs threads (the search's,
        # torch's) can hang in the child; a worker that dies raises BrokenProcessPool
        # instead of leaving the run waiting
        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"),
                                 initializer=_init,
                                 initargs=(model, positions.variant, race, prune)) as pool:
            try:
                for fut in as_completed([pool.submit(_label, job) for job in todo]):
                    finished(*fut.result())
            except BaseException:
                # a chunk that cannot be written (a full disk), a worker gone, a
                # Ctrl-C: the chunks not started are dropped, not labelled for nothing
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    info = dict(positions.info)
    how = ({"by": "engine.search.nply.Search.values_of", "ply": ply} if rollout is None
           else {"by": "engine.search.rollout.play_chunk", "trials": rollout.trials,
                 "truncate": rollout.truncate, "ply_inside": rollout.ply,
                 "seed": rollout.seed, "variance_reduction": rollout.variance_reduction})
    info["labels"] = {**how,
                      "model": model or f"models/{positions.variant}.npz",
                      "filters": "default (SearchSettings)", "bearoff": True,
                      "prune": bool(prune),
                      "race_network": _race_file(model, positions.variant, race),
                      "prune_network": _prune_file(model, positions.variant, prune),
                      "positions": n, "labelled_now": int(sum(len(j[1]) for j in todo)),
                      "workers": workers if backend is None else repr(backend),
                      "seconds": round(time.time() - t, 1),
                      "made": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    return PositionSet(positions.variant, positions.states, positions.klass,
                       positions.source, targets, info, positions.decision)


def same_file(a, b) -> bool:
    """Whether the paths ``a`` and ``b`` name one file (the same path once resolved, or
    two names of one file: a link, another spelling)."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
        return os.path.samefile(a, b)
    except OSError:                 # one of them missing: not the same file
        return False


def _keep_other_labels(out: Path, positions: PositionSet, ply: int, prune: bool,
                       rollout) -> None:
    """Refuse an ``out`` that holds the labels of other positions, or of another depth
    or rollout (hours of labels; with its chunk folder gone nothing else guards them).
    The same positions labelled the same way may be written again: that is a rerun."""
    if not out.is_file():
        return
    old = PositionSet.load(out)
    if old.targets is None:
        return
    how = old.info.get("labels")
    if not isinstance(how, dict):          # a join of several labellings, or none said
        raise PositionSetError(f"--out {quote(str(out))} holds a labelled set of "
                               f"{len(old):,} positions whose labelling it does not say "
                               f"as one (a join of sets?); refusing to overwrite it: "
                               f"remove it or choose another --out")
    want = ({"ply": ply, "trials": None} if rollout is None else
            {"trials": rollout.trials, "truncate": rollout.truncate, "seed": rollout.seed})
    same = (old.variant == positions.variant and old.states.shape == positions.states.shape
            and np.array_equal(old.states, positions.states)
            and all(how.get(k) == v for k, v in want.items())
            and bool(how.get("prune")) == bool(prune))
    if not same:
        raise PositionSetError(f"--out {quote(str(out))} holds the labels of other "
                               f"positions or of another labelling ({len(old):,} "
                               f"positions, {_described(how)}); refusing to overwrite "
                               f"them: remove it or choose another --out")


def _described(how: dict) -> str:
    if how.get("trials"):
        return f"{how['trials']}-trial rollouts"
    return f"{how.get('ply', '?')}-ply" + (", pruned" if how.get("prune") else "")


def main(argv=None) -> int:
    """``python -m training.label``: label a position set by the engine's search."""
    ap = argparse.ArgumentParser(prog="python -m training.label",
                                 description="Label positions with the engine's n-ply search.")
    ap.add_argument("--positions", required=True, help="position set (.npz)")
    ap.add_argument("--model", default=None, help="model (default: the released one)")
    ap.add_argument("--ply", type=non_negative_int, default=2,
                    help="depth of the search's value of each position (default: 2)")
    ap.add_argument("--workers", type=worker_count, default=min(usable_cores(), MAX_WORKERS),
                    help=f"worker processes of --backend local, 1 .. {MAX_WORKERS} (default: "
                         f"the cores this process may use)")
    ap.add_argument("--rollout", type=non_negative_int, default=0, metavar="TRIALS",
                    help="label by a rollout of TRIALS trials (0-ply play, variance "
                         "reduction) instead of the n-ply value; 0: off")
    ap.add_argument("--truncate", type=non_negative_int, default=0,
                    help="with --rollout: rolls before the network ends a trial (0: "
                         "played out)")
    ap.add_argument("--seed", type=non_negative_int, default=1, help="with --rollout: the dice's seed")
    ap.add_argument("--no-race", action="store_true",
                    help="search without the released race network")
    ap.add_argument("--prune", action="store_true",
                    help="inside the search, pick each roll's play with the pruning network "
                         "(how the race network's labels in training/README.md were made)")
    ap.add_argument("--out", required=True, help="labelled set (.npz)")
    add_cluster_arguments(ap, "--workers processes here; the labels do not depend on it")
    args = ap.parse_args(argv)
    if not args.rollout:
        given = [f"--{k}" for k in ("truncate", "seed")
                 if getattr(args, k) != ap.get_default(k)]
        if given:
            ap.error(f"{', '.join(given)}: rollout settings; add --rollout TRIALS")
    if args.ply > MAX_PLY:          # before the chunk folder is made
        ap.error(f"--ply {args.ply}: expected 0..{MAX_PLY}")
    try:
        from tqdm import tqdm

        if same_file(args.out, args.positions):
            raise PositionSetError(f"--out {quote(args.out)} is the --positions file: the "
                                   f"labelled set would overwrite its input; choose "
                                   f"another --out")
        set_output(args.out, labelled=True)
        output_folder(str(args.out) + ".parts", "--out's chunk folder", make=False)

        ps = PositionSet.load(args.positions)
        parts = Path(str(args.out) + ".parts")
        what = f"{args.rollout}-trial rollout" if args.rollout else f"{args.ply}-ply"
        rollout = None
        if args.rollout:            # checked before the chunk folder is made
            from engine.search.rollout import RolloutSettings
            rollout = RolloutSettings(args.rollout, args.truncate, seed=args.seed)
        _keep_other_labels(Path(args.out), ps, args.ply, args.prune, rollout)
        with folder_lock(parts, "--out's chunk folder", "--out"):   # one labelling at a time
            backend = make_backend(args.backend, args.address)
            bar = tqdm(total=len(ps), unit="pos", desc=f"{what} labels",
                       file=sys.stderr, smoothing=0.05)

            def progress(done):
                bar.update(done - bar.n)

            out = label(ps, args.model, args.ply, workers=args.workers, parts=parts,
                        progress=progress, backend=backend, race=not args.no_race,
                        prune=args.prune, rollout=rollout)
            bar.close()
            out.save(args.out)
    except NardyError as exc:
        if "bar" in locals():
            bar.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    lab = out.info["labels"]
    print(f"{len(out):,} positions labelled by {what} in {lab['seconds']} s "
          f"({lab['labelled_now']:,} now) -> {args.out}")
    return 0


if __name__ == "__main__":
    run_cli(main)
