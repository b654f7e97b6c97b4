"""How well each search setting chooses its play: the same decisions, each chooser's play
judged by GNU Backgammon's 2-ply evaluation.

    python benchmarks/search_choice.py --decisions 1000 --choosers 2 2:prune
    python benchmarks/search_choice.py --decisions 200 --choosers 0 1 1:prune 2 --seed 3
    python benchmarks/search_choice.py --choosers 0:model=models/backgammon.npz 0:model=new.npz
    python benchmarks/search_choice.py --agreement     # the pruning network and the network's
                                                       # tangent against the network
    python benchmarks/search_choice.py --agreement --rank-model runs/prune/t32/model.npz

Decisions: the contact decisions of :func:`rollout_choice.decisions` (positions from the
released network's own self-play, a random roll with at least two legal plays). A chooser
is ``PLY`` (:meth:`engine.search.nply.Search.best` at that depth with the released
search's defaults) with options after colons: ``noprune`` (every play inside the search
rated by the network, ``SearchSettings(prune=False)``), ``prune`` (each roll's play
inside the search picked by the pruning network, ``prune=True``), ``model=FILE`` (that
network instead of the released one, without the released pruning and race networks),
``prune=FILE`` (prune with that pruning network), ``keep=K`` (with pruning: the
network rates each roll's K best by the pruning network and picks among them,
``SearchSettings.prune_keep``), ``within=W`` (of those K, only the ones within W
equity of the pruning network's best, ``SearchSettings.prune_within``), ``filters=K/W,...`` (the root's move filters, one per level 0 .. PLY-1: keep at most K
plays within W equity of the best, ``-`` to skip a level; e.g. ``2:filters=8/0.16,3/0.08``
rates the 0-ply survivors at 1-ply and searches the best three of them at 2-ply).

Every distinct play the choosers make is valued by GNU Backgammon's evaluator at
``--judge-ply`` (``gnubg_nn.probabilities``, cubeless money equity for the mover); a
chooser's loss in a decision is the best judged value among the choosers' plays less its
own (mEMG: thousandths of a point). The pool of decisions is finite (200 self-play
games), so a run may end with fewer than ``--decisions``; the report gives the count.
Reported: each chooser's mean loss and time per
decision, and each chooser's loss less the first chooser's with its 95% interval (the
decisions are paired). GNU Backgammon only judges: none of it goes into the engine or
its training. Needs the PyPI package ``gnubg-nn``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
from rollout_choice import decisions, judge, the_judge  # noqa: E402

from engine._jit import njit  # noqa: E402
from engine.eval.encoding import MAX_COUNT, MAX_UNITS  # noqa: E402
from engine.eval.evaluator import Evaluator, NoModelError  # noqa: E402
from engine.eval.features import feature_values  # noqa: E402
from engine.eval.network import (  # noqa: E402
    NetworkFileError,
    hidden_full,
    kids_ref,
    output_probs,
)
from engine.movegen._core import turn  # noqa: E402
from engine.rules import _layout as L  # noqa: E402
from engine.rules.scoring import N_OUTPUTS, equity  # noqa: E402
from engine.search.nply import (  # noqa: E402
    Search,
    SearchError,
    SearchSettings,
    check_ply,
    parse_filters as nply_parse_filters,
)

OPTIONS = {"noprune": {"prune": False}, "prune": {"prune": True}}


def parse_filters(spec: str, text: str, ply: int) -> tuple:
    """The root filters of ``filters=K/W,...`` (``-``: a level skipped)."""
    try:
        return nply_parse_filters(text, ply)
    except SearchError as exc:
        raise SystemExit(f"chooser {spec!r}: {exc}")


def chooser(spec: str, threads: int):
    """``(name, choose)`` of a chooser spec (module docstring): ``choose(pos, dice)``
    returns the position after the play it picks."""
    ply_text, *opts = spec.split(":")
    try:
        ply = check_ply(int(ply_text))
    except ValueError:
        raise SystemExit(f"chooser {spec!r}: expected PLY[:option...], PLY an integer 0..3")
    settings, model, prune_file = {}, None, None
    for o in opts:
        if o.startswith("model="):
            model = o[len("model="):]
        elif o.startswith("prune="):
            prune_file = o[len("prune="):]
            settings["prune"] = True
        elif o.startswith("keep="):
            try:
                settings["prune_keep"] = int(o[len("keep="):])
            except ValueError:
                raise SystemExit(f"chooser {spec!r}: {o!r}: expected keep=K, K an integer")
        elif o.startswith("within="):
            try:
                settings["prune_within"] = float(o[len("within="):])
            except ValueError:
                raise SystemExit(f"chooser {spec!r}: {o!r}: expected within=W, W a number")
        elif o.startswith("filters="):
            settings["filters"] = parse_filters(spec, o[len("filters="):], ply)
        elif o in OPTIONS:
            settings.update(OPTIONS[o])
        else:
            raise SystemExit(f"chooser {spec!r}: unknown option {o!r}; expected one of "
                             f"{', '.join(OPTIONS)}, model=FILE, prune=FILE, keep=K or "
                             f"filters=K/W,...")
    if model is not None and settings.get("prune") and prune_file is None:
        raise SystemExit(f"chooser {spec!r}: prune needs the released model's pruning "
                         f"network (a model given by file has none; prune=FILE gives one)")
    try:
        evaluator = Evaluator.load("backgammon", model,
                                   **({"prune": prune_file} if prune_file else {}))
        search = Search(evaluator, SearchSettings(ply=ply, **settings), threads)
    except (SearchError, NoModelError, NetworkFileError) as exc:
        raise SystemExit(f"chooser {spec!r}: {exc}")
    return spec, lambda pos, dice: search.best(pos, dice).position


def contact_positions(tree) -> np.ndarray:
    """300 contact positions two rolls on from the middle game of ``rollout.py``: every
    play of its 21 rolls, ``tree``'s network's best reply to each, 300 of them drawn
    with seed 1 (``tree``: a search's :class:`engine.search.nply._Tree`)."""
    from engine.notation.parse import parse_position
    from engine.search.nply import _ROLLS
    root = parse_position("mPvNAAC1dcABAw", "backgammon")[0].to_array()[None]
    kids = tree.expand(root, _ROLLS, False, -1, 0.0, tree.net)[0]
    replies = tree.expand(kids, _ROLLS, False, 1, 0.0, tree.net)[0]
    pick = np.random.default_rng(1).choice(len(replies), 300, replace=False)
    return np.ascontiguousarray(replies[pick])


@njit
def _tangent_equities(states, rolls, net, ctx, out):
    """The mover's equity of every play of every roll of ``states`` (in the order of
    ``expand(..., keep=-1)``) by the network's tangent at the node: the equity of the
    parent as its kids' side sees it, plus the gradient there times the change of each
    kid's inputs (a sum over the few inputs that changed, no hidden layer). Returns the
    number of plays."""
    w1t, b1, w2, b2, uidx, uval, cidx, cval, fidx = net
    nh = b1.shape[0]
    gen = np.empty((64, L.STATE_LEN), np.int16)
    ref = np.empty(L.STATE_LEN, np.int16)
    h0 = np.empty(nh, np.float32)
    a = np.empty(nh)
    grad = np.empty(nh)
    z = np.empty(N_OUTPUTS)
    o = np.empty(N_OUTPUTS, np.float32)
    slope = np.array([2.0, 1.0, 1.0, -1.0, -1.0])    # d equity / d outputs
    c = np.empty(w1t.shape[0])
    k = 0
    for i in range(states.shape[0]):
        kids_ref(states[i], False, ref)
        hidden_full(ref, w1t, b1, uidx, uval, cidx, cval, fidx, h0)
        output_probs(h0, w2, b2, o)
        e0 = equity(o)
        for j in range(nh):
            a[j] = 1.0 / (1.0 + np.exp(-h0[j]))
        for q in range(N_OUTPUTS):
            z[q] = o[q]
        for j in range(nh):
            g = 0.0
            for q in range(N_OUTPUTS):
                g += slope[q] * z[q] * (1.0 - z[q]) * w2[q, j]
            grad[j] = g * a[j] * (1.0 - a[j])
        for r in range(w1t.shape[0]):
            t = 0.0
            for j in range(nh):
                t += w1t[r, j] * grad[j]
            c[r] = t
        fr = feature_values(fidx, ref)
        for r in range(rolls.shape[0]):
            n, gen = turn(ctx.walk, states[i], rolls[r, 0], rolls[r, 1], ctx.table,
                          ctx.scratch, gen, 0)
            for m in range(n):
                kid = gen[m]
                t = e0
                f = feature_values(fidx, kid)
                for q in range(fidx.shape[0]):
                    t += (f[q] - fr[q]) * c[fidx[q]]
                for slot in range(uidx.shape[0]):
                    x, y = ref[slot], kid[slot]
                    if x == y:
                        continue
                    x, y = min(x, MAX_COUNT - 1), min(y, MAX_COUNT - 1)
                    for u in range(MAX_UNITS):
                        idx = uidx[slot, u]
                        if idx < 0:
                            break
                        t += (uval[slot, y, u] - uval[slot, x, u]) * c[idx]
                out[k] = -t                  # the kid's side's equity, flipped
                k += 1
    return k


def prune_agreement(threads: int = 1, rank_model: str | None = None) -> None:
    """How well the pruning network stands in for the network inside the search: on the
    300 positions of :func:`contact_positions`, how
    often the pruning network's first play of a roll is the network's best, the equity
    its pick loses by the network's rating, how often the network's best is among its
    first k, and the time of one :func:`engine.search.nply.expand` pass of each."""
    from engine.search.nply import _ROLLS, SearchSettings
    search = Search.load("backgammon", threads=threads)
    tree = search._tree(SearchSettings(ply=0, prune=True))       # tree.rank: the pruning net
    rank = tree.rank
    if rank_model:
        from engine.eval.network import NetArrays, Network
        rank = NetArrays.of(Network.load(rank_model))
    states = contact_positions(tree)
    for net, name in ((tree.net, "network"), (rank, "pruning network")):
        tree.expand(states, _ROLLS, False, 1, 0.0, net)           # compiled, untimed
        t0 = time.perf_counter()
        tree.expand(states, _ROLLS, False, 1, 0.0, net)
        print(f"expand, best play of each roll by the {name}: "
              f"{time.perf_counter() - t0:.3f} s ({threads} thread(s))")
    _, probs, eq_main, pair = tree.expand(states, _ROLLS, False, -1, 0.0, tree.net)
    eq_rank = tree.expand(states, _ROLLS, False, -1, 0.0, rank)[2]
    eq_tangent = np.empty(len(pair))
    _tangent_equities(states[:1], _ROLLS, tree.net, tree.ctx, eq_tangent)   # compiled
    t0 = time.perf_counter()
    if _tangent_equities(states, _ROLLS, tree.net, tree.ctx, eq_tangent) != len(pair):
        raise RuntimeError("the tangent ranked other plays than expand")
    print(f"every play of each roll by the network's tangent: "
          f"{time.perf_counter() - t0:.3f} s (one thread)")
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    ends = np.r_[starts[1:], len(pair)]
    print(f"{len(states)} positions, {len(starts)} rolls, {len(pair) / len(starts):.1f} "
          f"plays a roll")
    for eq_by, name in ((eq_rank, "pruning network"), (eq_tangent, "network's tangent")):
        for k in (1, 2, 3, 5, 8):
            loss, same = [], 0
            for a, b in zip(starts, ends):
                em, top = eq_main[a:b], np.argsort(-eq_by[a:b], kind="stable")[:k]
                pick = top[np.argmax(em[top])]
                loss.append(em.max() - em[pick])
                same += em[pick] == em.max()
            print(f"best of the {name}'s first {k} by the network: the network's own "
                  f"best in {same / len(starts):.0%} of rolls, {np.mean(loss):.4f} "
                  f"equity lost")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=500)
    ap.add_argument("--choosers", nargs="+", default=["2", "2:prune"])
    ap.add_argument("--judge-ply", type=int, default=2, choices=(0, 1, 2))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--agreement", action="store_true",
                    help="instead: how well the pruning network stands in for the network "
                         "(no judge needed)")
    ap.add_argument("--rank-model", metavar="FILE",
                    help="with --agreement: this network in the pruning network's place")
    args = ap.parse_args(argv)
    if args.agreement:
        prune_agreement(rank_model=args.rank_model)
        return 0
    gnubg_nn = the_judge()
    if gnubg_nn is None:
        return 2
    choosers = [chooser(s, args.threads) for s in args.choosers]
    names = [c[0] for c in choosers]
    loss = np.zeros((args.decisions, len(choosers)))
    secs = np.zeros(len(choosers))
    stream = decisions(args.seed)
    first = next(stream)
    for _, choose in choosers:           # compiles the kernels (a cold cache) untimed
        choose(*first)
    t0, n, differ = time.time(), 0, 0
    for pos, dice in itertools.chain([first], stream):
        if n >= args.decisions:
            break
        picks = []
        for j, (_, choose) in enumerate(choosers):
            a = time.perf_counter()
            picks.append(choose(pos, dice))
            secs[j] += time.perf_counter() - a
        keys = [p.key() for p in picks]
        if len(set(keys)) > 1:
            differ += 1
            judged = {k: judge(gnubg_nn, p, args.judge_ply) for k, p in zip(keys, picks)}
            best = max(judged.values())
            loss[n] = [best - judged[k] for k in keys]
        n += 1
        if n % 50 == 0:
            print(f"{n:5d} decisions, {time.time() - t0:6.0f} s: mEMG lost "
                  + ", ".join(f"{s} {1000 * loss[:n, j].mean():.2f}"
                              for j, s in enumerate(names)), file=sys.stderr, flush=True)
    loss = loss[:n]
    print(f"decisions: {n} (contact, self-play of the released network, seed {args.seed});"
          f" judge GNU Backgammon {args.judge_ply}-ply; choices not all equal in {differ};"
          f" wall {time.time() - t0:.0f} s")
    print(f"{'chooser':12s} {'mEMG lost':>10s} {'ms/dec':>8s} {'vs ' + names[0]:>24s}")
    for j, s in enumerate(names):
        d = loss[:, j] - loss[:, 0]
        half = 1.96 * d.std(ddof=1) / np.sqrt(n) if n > 1 else float("nan")
        vs = "" if j == 0 else (f"{1000 * d.mean():+.2f} ({1000 * (d.mean() - half):+.2f} .. "
                                f"{1000 * (d.mean() + half):+.2f})")
        print(f"{s:12s} {1000 * loss[:, j].mean():10.2f} {1000 * secs[j] / max(n, 1):8.1f} "
              f"{vs:>24s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
