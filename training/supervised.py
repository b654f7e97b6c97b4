"""Supervised training of a value network in torch on labelled position sets
(:mod:`training.positions`, :mod:`training.label`), exported to the project's ``.npz``
model format so that play and search stay in numba without torch.

The torch model is the engine's network exactly: inputs from the network's encoder,
one sigmoid hidden layer, five sigmoid outputs (``W1``, ``b1``, ``W2``, ``b2`` of
:class:`engine.eval.network.Network`). Training minimises the binary cross-entropy of
each of the five cumulative outputs against the targets (soft labels), with Adam on
shuffled mini-batches; a fixed share of the positions (chosen by the seed) is held out
for validation, and training stops when the validation loss has not improved for
``patience`` epochs, keeping the best weights. Validation also reports the mean
absolute equity error per position class and per source (self-play against set-ups:
the odd positions).

A play is chosen by its rank among its roll's other plays, which the mean error over
positions does not measure: a network can learn the values better and choose no
better. Where the data holds the candidates of decisions (``training.positions
--candidates K``: the positions after a roll's best few plays, each row numbered by its
decision), ``rank`` > 0 adds the ranking term: the mean squared error of each
candidate's equity less its decision's mean equity, against the same of the labels
(the differences between a roll's plays, not their level), weighted by ``rank``. Each
step then also takes ``batch // 4`` decisions. With ``rank_temp`` T > 0 the term is
listwise instead: over each decision's candidates, the Kullback-Leibler divergence from
the labels' softmax of equity / T to the network's (a choice among plays whose equities
lie within about T of each other weighs most, and a poor play's error hardly counts).
A decision's candidates are held out
together, and validation reports the choice among them: how often the network picks
the labels' best and the equity its picks lose by the labels, in thousandths.

Checkpoints (``<out>/checkpoint.npz``, plain arrays, no pickle: the weights, Adam's
moments and step, the best weights, the epoch, the losses, the SHA-256 of the data) are
written atomically after epoch 0 (the first measure, before any network is written) and
after every epoch, so a killed run, started again with the same command, resumes with
the same shuffles it would have had (only on the same data and settings). A checkpoint
is checked whole before a run resumes from it (every array's shape against the network,
finite values, the record's fields and ranges): a damaged one is refused, naming the
field, and left as it is. The best network goes to ``<out>/model.npz`` (with its card as
``.json``) whenever it improves. A run stops with an error, saving nothing of that
epoch, when its loss is not finite. A new run (no checkpoint to resume) refuses a folder
that holds a ``model.npz`` or ``model.json`` (it would replace them), ``--no-resume``
refuses a folder that holds a run already, and no run shares a folder with a self-play
run. ``--data`` refuses an unlabelled set (naming it) and a set given twice (validation
would share positions with training).

    python -m training.supervised --data runs/sl/lab.npz --init models/backgammon.npz \\
        --out runs/sl/net

Torch is the optional extra ``train`` (``pip install -e '.[train]'``, the CPU build of
``torch==2.13.0``); nothing else in the project needs it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shlex
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from engine.cli._common import folder_lock, output_folder, run as run_cli, writing
from engine.errors import NardyError, clip, quote
from engine.eval.encoding import encoder_problem, get_encoder
from engine.eval.network import Network, NetworkFileError, atomic_savez, check_hidden, read_npz
from engine.movegen.generate import usable_cores
from engine.rules import _layout as L
from engine.rules.scoring import N_OUTPUTS, equities
from training.positions import CLASSES, SOURCES, PositionSet, PositionSetError, class_option


class SupervisedError(NardyError):
    """A training request or checkpoint that cannot be used as asked."""

    code = "invalid_training"


@dataclass(frozen=True)
class Settings:
    """How a supervised run trains (stored in the checkpoint and the card)."""

    hidden: int = 0
    """Hidden units: 0 keeps the initial network's (128 without ``init``); with
    ``init``, more than its own widens it (:func:`widen`), fewer are refused."""
    encoder: str = "tesauro198+f13"
    """Input encoding (ignored with ``init``)."""
    init: str = ""
    """Model file to start from ('' = small random weights)."""
    reencode: str = ""
    """With ``init``: an encoder whose inputs extend the initial network's (e.g.
    ``tesauro198+f39`` for a ``tesauro198+f21`` network); the network reads it, its
    weights on the inputs it lacked starting at zero
    (:meth:`engine.eval.network.Network.reencoded`), so training starts from its play."""
    epochs: int = 40
    """Most epochs."""
    batch: int = 256
    """Positions per step."""
    lr: float = 1e-3
    """Adam's learning rate."""
    weight_decay: float = 0.0
    """L2 penalty on the weights (Adam's ``weight_decay``)."""
    valid: float = 0.1
    """Share of the positions held out for validation."""
    patience: int = 4
    """Epochs without a better validation loss before stopping."""
    seed: int = 1
    """Seeds the split, the initial weights and every epoch's shuffle."""
    rank: float = 0.0
    """Weight of the ranking term over each decision's candidates (0: off)."""
    rank_temp: float = 0.0
    """0: the ranking term is the mean square of the centred equity errors; > 0: the
    listwise term, softmax of equity / ``rank_temp`` (module docstring)."""
    split: str = "random"
    """How the validation rows are chosen: ``random``, a seeded permutation of the
    decisions (each a position and its roll's candidates, or a row of no decision) of
    the sets as given; ``hash``, by a seeded hash of each decision's first position, so
    that a position is held out or not whatever sets it is joined with and in whatever
    order. Fine-tuning a network on sets it was trained on needs ``hash`` both times:
    with ``random`` a different join holds out rows the network was trained on, whose
    loss no epoch beats, and the run stops at once."""

    def check(self) -> "Settings":
        for name, lo in (("hidden", 0), ("epochs", 1), ("batch", 1), ("patience", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise SupervisedError(f"{name} = {quote(v)}: expected an integer >= {lo}")
        if not (isinstance(self.lr, float) and 0 < self.lr <= 1):
            raise SupervisedError(f"lr = {quote(self.lr)}: expected a number 0 < lr <= 1 "
                                  f"(Adam's step; 1e-4 .. 1e-2 is usual)")
        for name in ("weight_decay", "rank", "rank_temp"):
            v = getattr(self, name)
            if not (isinstance(v, float) and math.isfinite(v) and v >= 0):
                raise SupervisedError(f"{name} = {quote(v)}: expected a number >= 0")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not (
                0 <= self.seed < 2**63):
            raise SupervisedError(f"seed = {quote(self.seed)}: expected an integer >= 0")
        if not 0.0 < self.valid < 0.5:
            raise SupervisedError(f"valid = {quote(self.valid)}: expected 0 < valid < 0.5")
        if self.split not in SPLITS:
            raise SupervisedError(f"split = {quote(self.split)}: expected one of "
                                  f"{', '.join(SPLITS)}")
        get_encoder(self.encoder)
        if self.reencode:
            if not self.init:
                raise SupervisedError(f"reencode = {quote(self.reencode)}: needs init (the "
                                      f"network to read the new encoder's inputs)")
            get_encoder(self.reencode)
        return self


def _torch():
    try:
        import torch
    except ImportError:
        raise SupervisedError("supervised training needs torch: pip install -e '.[train]' "
                              "(torch==2.13.0, CPU build)") from None
    torch.set_num_threads(torch_threads())
    return torch


def torch_threads() -> int:
    """Torch's threads for training: ``OMP_NUM_THREADS`` where it is set (a process
    beside others, as each test worker is, asks for 1: torch's idle threads spin and
    take the cores the others compute on), else the cores this process may use, at
    most 2 (more gain nothing on batches of this size)."""
    asked = os.environ.get("OMP_NUM_THREADS", "").strip()
    if asked.isdigit() and int(asked) > 0:
        return int(asked)
    return max(1, min(2, usable_cores()))


def widen(net: Network, hidden: int, rng: np.random.Generator,
          scale: float = 0.01) -> Network:
    """``net`` with ``hidden`` hidden units, computing the same outputs: the new units
    get small random input weights and zero output weights, so training starts from
    the initial network's play and the new units learn what it lacks."""
    extra = hidden - net.hidden
    w1t = np.concatenate([net.w1t, (rng.standard_normal((net.n_inputs, extra)) * scale
                                    ).astype(np.float32)], axis=1)
    b1 = np.concatenate([net.b1, np.zeros(extra, np.float32)])
    w2 = np.concatenate([net.w2, np.zeros((N_OUTPUTS, extra), np.float32)], axis=1)
    return Network(net.variant, net.encoder, np.ascontiguousarray(w1t), b1,
                   np.ascontiguousarray(w2), net.b2.copy(), dict(net.info))


def encode_all(net: Network, states: np.ndarray) -> np.ndarray:
    """The network's input rows (float32) of ``states``."""
    enc = net.encoder
    x = np.empty((len(states), enc.n_inputs), np.float32)
    for i in range(len(states)):
        x[i] = enc.encode(states[i])
    return x


class _Model:
    """The engine's network as torch tensors (parameters of a torch module)."""

    def __init__(self, torch, net: Network):
        nn = torch.nn
        self.torch = torch
        self.module = nn.Sequential(nn.Linear(net.n_inputs, net.hidden), nn.Sigmoid(),
                                    nn.Linear(net.hidden, N_OUTPUTS))
        self.set_arrays(net.w1t.T, net.b1, net.w2, net.b2)

    def set_arrays(self, w1, b1, w2, b2) -> None:
        l1, l2 = self.module[0], self.module[2]
        with self.torch.no_grad():
            for p, a in ((l1.weight, w1), (l1.bias, b1), (l2.weight, w2), (l2.bias, b2)):
                p.copy_(self.torch.from_numpy(np.ascontiguousarray(a, np.float32)))

    def arrays(self) -> tuple:
        l1, l2 = self.module[0], self.module[2]
        return tuple(p.detach().numpy().copy() for p in (l1.weight, l1.bias, l2.weight,
                                                          l2.bias))

    def network(self, variant: str, encoder: str, info: dict) -> Network:
        w1, b1, w2, b2 = self.arrays()
        return Network(variant, get_encoder(encoder), np.ascontiguousarray(w1.T), b1, w2,
                       b2, info)


SPLITS = ("random", "hash")
"""The ways :attr:`Settings.split` chooses the validation rows."""


def _state_hashes(states: np.ndarray, seed: int) -> np.ndarray:
    """A seeded 64-bit hash of each state row's position (its first ``KEY_LEN`` slots):
    a sum of the slots times random odd multipliers, then a 64-bit finaliser (the
    splitmix64 mix), all in wrapping ``uint64`` arithmetic."""
    mult = np.random.default_rng([seed, 7]).integers(1, 2**63, L.KEY_LEN, dtype=np.uint64)
    mult |= np.uint64(1)
    h = np.empty(len(states), np.uint64)
    with np.errstate(over="ignore"):
        for a in range(0, len(states), 65536):          # a few MB at a time
            rows = states[a:a + 65536, :L.KEY_LEN].astype(np.int64).view(np.uint64)
            h[a:a + 65536] = (rows * mult).sum(axis=1, dtype=np.uint64)
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def _split(n: int, valid: float, seed: int, decision: np.ndarray | None = None,
           states: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Training and validation rows; the candidates of one decision on one side. With
    ``states`` (:attr:`Settings.split` ``hash``) a decision is held out when the hash of
    its first row's position falls in the lowest ``valid`` of the range, else by a
    seeded permutation of the decisions."""
    cand = (np.zeros(n, bool) if decision is None else decision >= 0)
    unit = np.empty(n, np.int64)              # a decision, or a row that is none
    first = 0
    if cand.any():
        _, unit[cand] = np.unique(decision[cand], return_inverse=True)
        first = int(unit[cand].max()) + 1
    unit[~cand] = first + np.arange(int((~cand).sum()))
    units = first + int((~cand).sum())
    if states is not None:
        lead = np.full(units, n, np.int64)    # each unit's first row
        np.minimum.at(lead, unit, np.arange(n))
        h = _state_hashes(states[lead], seed)
        held = h < np.uint64(int(valid * 2.0**64))
        if held.all() or not held.any():      # a tiny set: one unit each way at least
            held = np.zeros(units, bool)
            held[int(np.argmin(h))] = True
        return np.flatnonzero(~held[unit]), np.flatnonzero(held[unit])
    if not cand.any():
        order = np.random.default_rng([seed, 3]).permutation(n)
        k = max(1, int(round(n * valid)))
        return np.sort(order[k:]), np.sort(order[:k])
    held = np.zeros(units, bool)
    held[np.random.default_rng([seed, 3]).permutation(units)[
        :max(1, int(round(units * valid)))]] = True
    return np.flatnonzero(~held[unit]), np.flatnonzero(held[unit])


def decision_rows(decision: np.ndarray | None, rows: np.ndarray) -> np.ndarray:
    """The decisions with two or more candidates among ``rows``: one line each, their
    rows in order, padded with -1 (``int64[decisions, widest]``)."""
    if decision is None:
        return np.zeros((0, 0), np.int64)
    r = rows[decision[rows] >= 0]
    d = decision[r]
    order = np.argsort(d, kind="stable")
    r, d = r[order], d[order]
    starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]]) if len(d) else np.zeros(0, int)
    sizes = np.diff(np.r_[starts, len(d)])
    keep = np.repeat(sizes >= 2, sizes)
    if not keep.any():
        return np.zeros((0, 0), np.int64)
    line = np.cumsum(np.r_[0, (sizes >= 2)[:-1]])          # each kept decision's line
    col = np.arange(len(d)) - np.repeat(starts, sizes)
    out = np.full((int((sizes >= 2).sum()), int(sizes.max())), -1, np.int64)
    out[np.repeat(line, sizes)[keep], col[keep]] = r[keep]
    return out


def choices(equity: np.ndarray, labels: np.ndarray, lines: np.ndarray) -> dict:
    """How a network's ``equity`` of each row chooses among each decision's candidates
    (``lines``, :func:`decision_rows`) against the ``labels``' equities: the share of
    decisions where it picks the labels' best, and the mean equity its pick loses by
    the labels, in thousandths. A candidate is seen by the opponent of the decision's
    mover, so the mover's best is the least."""
    if len(lines) == 0:
        return {}
    mask = lines >= 0
    idx = np.where(mask, lines, 0)
    net = np.where(mask, equity[idx], np.inf)
    lab = np.where(mask, labels[idx], np.inf)
    pick = lab[np.arange(len(lines)), np.argmin(net, axis=1)]
    return {"decisions": len(lines),
            "agree": round(float((pick == lab.min(axis=1)).mean()), 4),
            "loss_milli": round(float((pick - lab.min(axis=1)).mean() * 1000), 3)}


def _report(probs: np.ndarray, data: PositionSet, rows: np.ndarray) -> dict:
    """Mean absolute equity error on ``rows``, overall, by class and by source."""
    err = np.abs(equities(probs.astype(np.float64))
                 - equities(data.targets[rows].astype(np.float64)))
    out = {"all": round(float(err.mean()), 5)}
    for name, codes, k in (("class", data.klass[rows], CLASSES),
                           ("source", data.source[rows], SOURCES)):
        for c, label in enumerate(k):
            m = codes == c
            if m.any():
                out[f"{name}:{label}"] = round(float(err[m].mean()), 5)
    return out


_EQ_BASE = float(equities(np.zeros(N_OUTPUTS)))
_EQ_WEIGHTS = (equities(np.eye(N_OUTPUTS)) - _EQ_BASE).astype(np.float32)
"""The cubeless equity is affine in the five outputs: :func:`equities`' own weights, for
the torch tensors of the ranking term."""


def _rank_term(torch, model: _Model, x, y, lines, temp: float = 0.0):
    """The ranking term over the decisions ``lines`` (a tensor of :func:`decision_rows`):
    the mean square of each candidate's equity error less its decision's mean error; with
    ``temp`` > 0 the mean over the decisions of the Kullback-Leibler divergence from the
    labels' softmax of equity / ``temp`` over the candidates to the network's."""
    mask = lines >= 0
    rows = lines[mask]
    w = torch.from_numpy(_EQ_WEIGHTS)
    if temp > 0:                        # (equities less their common base: it cancels)
        pred = torch.full(lines.shape, -math.inf)
        label = torch.full(lines.shape, -math.inf)
        pred[mask] = (torch.sigmoid(model.module(x[rows])) @ w) / temp
        label[mask] = (y[rows] @ w) / temp
        target = torch.softmax(label, 1)
        gap = torch.log_softmax(label, 1) - torch.log_softmax(pred, 1)
        return (target * torch.where(mask, gap, torch.zeros(()))).sum() / lines.shape[0]
    err = torch.zeros(lines.shape)
    err[mask] = (torch.sigmoid(model.module(x[rows])) - y[rows]) @ w   # (the bases cancel)
    m = mask.float()
    centred = (err - (err * m).sum(1, keepdim=True) / m.sum(1, keepdim=True)) * m
    return (centred ** 2).sum() / m.sum()


def train(data: PositionSet, out: str | Path, settings: Settings, *, resume: bool = True,
          log=print, command: str = "") -> Network:
    """Train on ``data`` (labelled) into the folder ``out``; returns the best network
    (also written to ``out/model.npz``, its card naming ``command``, the command line
    that trained it, when given)."""
    torch = _torch()
    settings.check()
    if data.targets is None:
        raise SupervisedError("the position set has no targets: label it first "
                              "(python -m training.label)")
    if len(data) < 10:
        raise SupervisedError(f"{len(data)} positions: too few to train and validate")
    out = Path(out)
    ck_path = out / "checkpoint.npz"
    _check_folder(out, resume)
    if settings.init:
        net = Network.load(settings.init)
        if net.variant != data.variant:
            raise SupervisedError(f"init model plays {net.variant}, the data {data.variant}")
        if settings.reencode and settings.reencode != net.encoder.name:
            try:
                net = net.reencoded(settings.reencode)
            except NetworkFileError as e:
                raise SupervisedError(f"reencode = {quote(settings.reencode)}: {e}") from None
        encoder = net.encoder.name
        if settings.hidden and settings.hidden < net.hidden:
            raise SupervisedError(f"hidden = {settings.hidden}: the initial network has "
                                  f"{net.hidden} hidden units; expected 0 (keep them) or "
                                  f"more (widen it)")
        if settings.hidden > net.hidden:
            check_hidden(settings.hidden, net.encoder)
            net = widen(net, settings.hidden, np.random.default_rng([settings.seed, 5]))
    else:
        net, encoder = None, settings.encoder
    problem = encoder_problem(data.variant, encoder)
    if problem:                 # hand-crafted inputs of another family of games
        raise SupervisedError(problem)
    if net is None:
        net = Network.create(data.variant, settings.hidden or 128, settings.encoder,
                             np.random.default_rng([settings.seed, 5]), scale=0.1)
    output_folder(out)
    model = _Model(torch, net)
    opt = torch.optim.Adam(model.module.parameters(), lr=settings.lr,
                           weight_decay=settings.weight_decay)
    train_rows, valid_rows = _split(len(data), settings.valid, settings.seed, data.decision,
                                    data.states if settings.split == "hash" else None)
    lines, valid_lines = (decision_rows(data.decision, r) for r in (train_rows, valid_rows))
    if settings.rank > 0 and len(lines) == 0:
        raise SupervisedError(f"rank = {settings.rank}: the data holds no decision with two "
                              f"or more candidates to rank (make them with python -m "
                              f"training.positions --candidates K, then label them)")
    t0 = time.time()
    x = torch.from_numpy(encode_all(net, data.states))
    y = torch.from_numpy(np.clip(data.targets, 0.0, 1.0).astype(np.float32))
    log(f"{len(data):,} positions encoded ({net.n_inputs} inputs) in "
        f"{time.time() - t0:.1f} s; {len(train_rows):,} train, {len(valid_rows):,} valid")
    loss_fn = torch.nn.BCEWithLogitsLoss()
    epoch, best, stale, history, elapsed = 0, float("inf"), 0, [], 0.0
    digest = data_digest(data)
    best_arrays = model.arrays()
    steps_per_epoch = -(-len(train_rows) // settings.batch)
    resumed = resume and ck_path.exists()
    if resumed:
        epoch, best, stale, history, elapsed, best_arrays = _load(
            ck_path, model, opt, settings, digest, steps_per_epoch)
        log(f"resumed after epoch {epoch} (best validation loss {best:.5f})")
    xv, yv = x[valid_rows], y[valid_rows]
    label_eq = equities(data.targets)
    lines_t, valid_lines_t = torch.from_numpy(lines), torch.from_numpy(valid_lines)
    per_step = max(1, settings.batch // 4)      # decisions a step for the ranking term

    def valid_loss() -> tuple[float, np.ndarray]:
        with torch.no_grad():
            z = model.module(xv)
            v = float(loss_fn(z, yv))
            if settings.rank > 0 and len(valid_lines):
                v += settings.rank * float(_rank_term(torch, model, x, y, valid_lines_t,
                                                      settings.rank_temp))
            return v, torch.sigmoid(z).numpy()

    def report(p: np.ndarray) -> dict:
        rep = _report(p, data, valid_rows)
        if len(valid_lines):
            eq = np.zeros(len(data))
            eq[valid_rows] = equities(p)
            rep["choice"] = choices(eq, label_eq, valid_lines)
        return rep

    if not resumed:
        v0, p0 = valid_loss()
        if not math.isfinite(v0):           # (a checkpoint would keep a NaN best loss)
            raise SupervisedError(f"epoch 0: the validation loss is not finite ({v0}): "
                                  f"the targets or the initial network are not finite "
                                  f"numbers. No network was saved")
        history.append({"epoch": 0, "valid_loss": round(v0, 6),
                        "valid_eq_error": report(p0)})
        best = v0
        log(f"epoch 0: valid loss {v0:.5f}, equity error {history[-1]['valid_eq_error']}")
    start = time.time() - elapsed
    if not resumed:     # the folder is this run's before any network is written to it
        _save(ck_path, model, opt, settings, 0, best, 0, history, time.time() - start,
              best_arrays, digest)
    while epoch < settings.epochs and stale < settings.patience:
        epoch += 1
        order = np.random.default_rng([settings.seed, 17, epoch]).permutation(train_rows)
        if settings.rank > 0:
            line_order = torch.from_numpy(
                np.random.default_rng([settings.seed, 19, epoch]).permutation(len(lines)))
        model.module.train()
        total = 0.0
        for step, lo in enumerate(range(0, len(order), settings.batch)):
            idx = torch.from_numpy(order[lo:lo + settings.batch])
            opt.zero_grad()
            loss = loss_fn(model.module(x[idx]), y[idx])
            if settings.rank > 0:
                at = (step * per_step) % len(lines)
                some = lines_t[line_order[at:at + per_step]]
                loss = loss + settings.rank * _rank_term(torch, model, x, y, some,
                                                         settings.rank_temp)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        model.module.eval()
        v, p = valid_loss()
        if not (math.isfinite(total) and math.isfinite(v)):
            kept = (f"Nothing of this epoch was saved; {str(out / 'model.npz')!r} holds the "
                    f"best network so far" if (out / "model.npz").exists()
                    else "No network was saved")
            raise SupervisedError(f"epoch {epoch}: the loss is not finite (training "
                                  f"{total / len(order)}, validation {v}); lower --lr. {kept}")
        rep = report(p)
        history.append({"epoch": epoch, "train_loss": round(total / len(order), 6),
                        "valid_loss": round(v, 6), "valid_eq_error": rep})
        if v < best - 1e-6:
            best, stale, best_arrays = v, 0, model.arrays()
            _export(model, best_arrays, data, encoder, settings, history, out, command)
        else:
            stale += 1
        log(f"epoch {epoch}: train loss {total / len(order):.5f}, valid loss {v:.5f}"
            f"{' (best)' if stale == 0 else ''}, equity error {rep}")
        _save(ck_path, model, opt, settings, epoch, best, stale, history,
              time.time() - start, best_arrays, digest)
    if not (out / "model.npz").exists():
        _export(model, best_arrays, data, encoder, settings, history, out, command)
    return Network.load(out / "model.npz")


def _check_folder(out: Path, resume: bool) -> None:
    """``out`` as a supervised run's folder: a folder or a path to make one at (no file
    on the way, and a folder there or above it that a file can be written into), not a
    self-play run (whose ``model.npz`` this run would replace); a
    new run (nothing to resume) only where it replaces no ``model.npz`` or
    ``model.json`` (another run's or a released network, written over without a word
    before), and without ``resume`` not a run already (its best network would be
    replaced by a worse one)."""
    output_folder(out, make=False)                  # no file on the way; writable
    if not out.exists():
        return                                      # a new folder: nothing to replace
    if any(out.glob("checkpoint-*.npz")):
        raise SupervisedError(f"{str(out)!r} holds a self-play run (checkpoint-*.npz); "
                              f"a supervised run needs a folder of its own")
    if resume and (out / "checkpoint.npz").exists():
        return                                      # resumed: it updates its own model
    held = [n for n in ("checkpoint.npz", "model.npz", "model.json") if (out / n).exists()]
    if "checkpoint.npz" in held:
        raise SupervisedError(f"{str(out)!r} holds a run ({', '.join(held)}): resume "
                              f"it, or give a new --out (its network is not replaced)")
    if held:
        raise SupervisedError(f"--out {str(out)!r} holds {' and '.join(held)} but no "
                              f"checkpoint.npz to resume: a new run would replace "
                              f"{'them' if len(held) > 1 else 'it'}; give another --out, "
                              f"or move {'them' if len(held) > 1 else 'it'} away")


def data_digest(data: PositionSet) -> str:
    """SHA-256 of a labelled set's positions and targets: what a checkpoint was
    trained on, so that it resumes only on the same data."""
    h = hashlib.sha256()
    for a in (data.states, data.targets):
        h.update(np.ascontiguousarray(a).tobytes())
    if data.decision is not None:       # (sets without decisions keep their digests)
        h.update(np.ascontiguousarray(data.decision).tobytes())
    return h.hexdigest()


def _export(model: _Model, arrays, data: PositionSet, encoder: str, settings: Settings,
            history: list, out: Path, command: str = "") -> None:
    """Write the best network ``arrays`` to ``out/model.npz`` with its card: the
    settings (the encoder the network has: an initial network's, where ``--encoder``
    went unused), the data's provenance, the history and ``command``."""
    w1, b1, w2, b2 = arrays
    info = {"method": "supervised (training.supervised): binary cross-entropy of the "
                      "five outputs against the engine's own search labels"
                      + (f", plus {settings.rank} x the ranking term over each decision's "
                         f"candidates" + (f" (listwise, softmax of equity / "
                                          f"{settings.rank_temp})" if settings.rank_temp > 0
                                          else "") if settings.rank > 0 else ""),
            "settings": {**asdict(settings), "encoder": encoder}, "data": data.info,
            "positions": len(data), "history": history,
            "saved": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if command:
        info["command"] = command
    with writing(out / "model.npz"):
        Network(data.variant, get_encoder(encoder), np.ascontiguousarray(w1.T), b1, w2, b2,
                info).save(out / "model.npz", card_file=True)


_CK = ("run", "w1", "b1", "w2", "b2", "m", "v", "step", "best_w1", "best_b1", "best_w2",
       "best_b2")


def _save(path: Path, model: _Model, opt, settings: Settings, epoch: int, best: float,
          stale: int, history: list, elapsed: float, best_arrays, digest: str) -> None:
    params = list(model.module.parameters())
    st = [opt.state.get(p, {}) for p in params]
    def flat(key):
        return np.concatenate([s[key].detach().numpy().ravel() if key in s
                               else np.zeros(p.numel(), np.float32)
                               for s, p in zip(st, params)])
    run = {"version": 1, "settings": asdict(settings), "epoch": epoch, "best": best,
           "stale": stale, "history": history, "elapsed": elapsed, "data": digest}
    w1, b1, w2, b2 = model.arrays()
    bw1, bb1, bw2, bb2 = best_arrays
    step = float(st[0]["step"]) if "step" in st[0] else 0.0
    with writing(path):
        atomic_savez(path, {"run": np.frombuffer(json.dumps(run).encode(), np.uint8),
                            "w1": w1, "b1": b1, "w2": w2, "b2": b2, "m": flat("exp_avg"),
                            "v": flat("exp_avg_sq"), "step": np.array([step]),
                            "best_w1": bw1, "best_b1": bb1, "best_w2": bw2,
                            "best_b2": bb2})


def _load(path: Path, model: _Model, opt, settings: Settings, digest: str,
          steps_per_epoch: int):
    """The run saved in the checkpoint ``path``, put into ``model`` and ``opt``:
    (epoch, best, stale, history, elapsed, best weights). Everything read is checked
    before anything is set (:func:`_check_record`, :func:`_check_arrays`): a damaged
    file is refused naming the field, not resumed into a traceback or a run that can
    no longer save its best network (a NaN best loss, that no epoch beats), and it is
    left as it is."""
    got = read_npz(path, _CK)
    missing = [k for k in _CK if k not in got]
    record = None
    if "run" in got:
        try:
            record = json.loads(got["run"].tobytes())
        except (ValueError, RecursionError):
            missing.append("run")
    if missing:
        raise SupervisedError(f"{path}: not a supervised checkpoint (missing or unreadable "
                              f"{missing}); give a new --out to start afresh")
    run = _check_record(path, record)
    if run.get("data", digest) != digest:    # (checkpoints before the digest: no check)
        raise SupervisedError(f"{path}: trained on other data (sha256 {run['data'][:12]}..., "
                              f"these positions {digest[:12]}...); start a new folder")
    def fixed(d):                       # a run may be resumed with more epochs
        return {"rank": 0.0, "rank_temp": 0.0, "split": "random",
                **{k: v for k, v in d.items() if k != "epochs"}}
    old, new = fixed(run["settings"]), fixed(asdict(settings))
    if old != new:
        diff = ", ".join(f"{k} {quote(old.get(k))} (now {quote(new.get(k))})"
                         for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))
        raise SupervisedError(f"{path}: made with other settings: {diff}; start a new "
                              f"folder or pass the same settings")
    steps = _check_arrays(path, got, model, run["epoch"], steps_per_epoch)
    model.set_arrays(got["w1"], got["b1"], got["w2"], got["b2"])
    torch = model.torch
    params = list(model.module.parameters())
    if steps > 0:
        k = 0
        for p in params:
            n = p.numel()
            def part(a):
                return torch.from_numpy(a[k:k + n].reshape(p.shape).copy())
            opt.state[p] = {"step": torch.tensor(float(steps)),
                            "exp_avg": part(got["m"]), "exp_avg_sq": part(got["v"])}
            k += n
    best = (got["best_w1"], got["best_b1"], got["best_w2"], got["best_b2"])
    return (run["epoch"], float(run["best"]), run["stale"], list(run["history"]),
            float(run["elapsed"]), best)


def _damaged(path: Path, field: str, value: str, expected: str) -> SupervisedError:
    """The error for a checkpoint's field that is not what this program writes."""
    return SupervisedError(f"{path}: {field} = {value}: expected {expected} (a damaged "
                           f"checkpoint, left as it is; give a new --out to start afresh)")


def _finite(value) -> float | None:
    """``value`` as a float where it is a finite JSON number (not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:                   # an integer of hundreds of digits
        return None
    return f if math.isfinite(f) else None


def _check_record(path: Path, run) -> dict:
    """A checkpoint's run record as :func:`_save` writes it: its version, the settings,
    ``epoch`` >= 0 with one history entry per epoch from 0 (each its epoch and a finite
    validation loss), ``best`` the least of those losses, ``stale`` at most ``epoch``,
    ``elapsed`` >= 0 and the data's digest a string; returns it."""
    if not isinstance(run, dict):
        raise _damaged(path, "run", quote(run), "a JSON object (the run's record)")

    def field(name):
        return quote(run[name]) if name in run else "(missing)"

    if run.get("version") != 1 or isinstance(run.get("version"), bool):
        raise _damaged(path, "run.version", field("version"), "1")
    if not isinstance(run.get("settings"), dict):
        raise _damaged(path, "run.settings", field("settings"), "an object of the settings")
    if "data" in run and not isinstance(run["data"], str):
        raise _damaged(path, "run.data", field("data"), "the data's SHA-256 (a string)")
    epoch = run.get("epoch")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise _damaged(path, "run.epoch", field("epoch"), "an integer >= 0")
    history = run.get("history")
    losses = []
    if isinstance(history, list) and len(history) == epoch + 1:
        for i, h in enumerate(history):
            if not (isinstance(h, dict) and h.get("epoch") == i
                    and not isinstance(h.get("epoch"), bool)
                    and _finite(h.get("valid_loss")) is not None
                    and h["valid_loss"] >= 0):
                break
            losses.append(float(h["valid_loss"]))
    if len(losses) != epoch + 1:
        raise _damaged(path, "run.history", field("history"),
                       f"a list of {epoch + 1} records, one per epoch 0 .. {epoch} (run.epoch), "
                       f"each with its epoch and a finite validation loss >= 0")
    best = _finite(run.get("best"))
    if best is None or abs(best - min(losses)) > 1e-5:
        raise _damaged(path, "run.best", field("best"),
                       f"the least validation loss of run.history ({min(losses)})")
    stale = run.get("stale")
    if isinstance(stale, bool) or not isinstance(stale, int) or not 0 <= stale <= epoch:
        raise _damaged(path, "run.stale", field("stale"),
                       f"an integer 0 .. {epoch} (epochs since the best, at most run.epoch)")
    elapsed = _finite(run.get("elapsed"))
    if elapsed is None or elapsed < 0:
        raise _damaged(path, "run.elapsed", field("elapsed"), "seconds, a number >= 0")
    return run


def _check_arrays(path: Path, got: dict, model: _Model, epoch: int,
                  steps_per_epoch: int) -> int:
    """A checkpoint's arrays as :func:`_save` writes them for this run's network: the
    weights and best weights of its shapes, Adam's moments of its size, float32 and
    finite (the second moments >= 0), and Adam's step ``epoch`` times the batches of an
    epoch (a NaN step dropped Adam's state without a word); returns that step."""
    shapes = [a.shape for a in model.arrays()]
    n = sum(math.prod(s) for s in shapes)
    expect = {}
    for prefix in ("", "best_"):
        for k, shape in zip(("w1", "b1", "w2", "b2"), shapes):
            expect[prefix + k] = (shape, "this run's network")
    expect["m"] = ((n,), "Adam's first moments of this run's network")
    expect["v"] = ((n,), "Adam's second moments of this run's network")
    for k, (shape, what) in expect.items():
        a = got[k]
        if a.shape != shape or a.dtype != np.float32:
            raise _damaged(path, k, f"{a.dtype} array of shape {a.shape}",
                           f"float32 of shape {shape} ({what})")
        bad = ~np.isfinite(a)
        if k == "v":
            bad |= a < 0
        if bad.any():
            raise _damaged(path, k, f"{int(bad.sum()):,} values "
                           f"{'not finite' if k != 'v' else 'not finite or negative'} "
                           f"(the first {a.ravel()[np.flatnonzero(bad.ravel())[0]]})",
                           f"{'numbers >= 0' if k == 'v' else 'finite numbers'} ({what})")
    steps = epoch * steps_per_epoch
    step = got["step"]
    if (step.shape != (1,) or step.dtype.kind not in "fiu"
            or not float(step[0]) == steps):
        raise _damaged(path, "step", f"{step.dtype} array {clip(str(step.tolist()), 80)}",
                       f"[{steps}] (Adam's steps: run.epoch {epoch} x {steps_per_epoch} "
                       f"batches an epoch)")
    return steps


def load_labelled(paths: list) -> PositionSet:
    """The labelled position sets ``paths`` as one set: each must have targets (an
    unlabelled one is named, not left to a "no targets" about the joined set), and no
    set may come twice, by name or as a copy (its positions would count twice, and the
    validation rows would share positions with the training rows)."""
    seen: dict = {}
    for i, p in enumerate(paths):
        try:
            st = os.stat(p)
        except OSError:
            continue                    # PositionSet.load says what is wrong
        first = seen.setdefault((st.st_dev, st.st_ino), i)
        if first != i:
            again = ("is given twice" if str(p) == str(paths[first]) else
                     f"names the same file as {str(paths[first])!r}")
            raise SupervisedError(f"--data {str(p)!r} {again}: its positions would count "
                                  f"twice and validation would share positions with "
                                  f"training; give each set once")
    parts: list = []
    digests: dict = {}
    for i, p in enumerate(paths):
        part = PositionSet.load(p)
        if part.targets is None:
            raise SupervisedError(f"--data {str(p)!r}: the position set has no targets; "
                                  f"label it first (python -m training.label)")
        first = digests.setdefault(data_digest(part), i)
        if first != i:
            raise SupervisedError(f"--data {str(p)!r} holds the same labelled positions as "
                                  f"{str(paths[first])!r} (a copy): its positions would "
                                  f"count twice and validation would share positions with "
                                  f"training; give each set once")
        parts.append(part)
    return PositionSet.join(parts)


def errors(net: Network, data: PositionSet) -> dict:
    """The mean absolute equity error of ``net`` at 0-ply against ``data``'s targets,
    overall, by class and by source (:func:`_report`): the held-out measure; and where
    ``data`` holds decisions, ``choice``: how the network chooses among their candidates
    (:func:`choices`)."""
    if data.targets is None:
        raise SupervisedError("the position set has no targets: label it first")
    if net.variant != data.variant:
        raise SupervisedError(f"the network plays {net.variant}, the data {data.variant}")
    if len(data) == 0:
        raise SupervisedError("the position set is empty: no error to measure")
    probs = net.probabilities_of_arrays(data.states)
    out = _report(probs, data, np.arange(len(data)))
    lines = decision_rows(data.decision, np.arange(len(data)))
    if len(lines):
        out["choice"] = choices(equities(probs), equities(data.targets), lines)
    return out


_SETTING_HELP = {
    "hidden": "hidden units: 0 keeps --init's (128 without it); more widens --init's",
    "encoder": "input encoding (ignored with --init)",
    "init": "model file to start from ('': small random weights)",
    "reencode": "with --init: an encoder extending its inputs, new weights at zero",
    "epochs": "most epochs",
    "batch": "positions per step",
    "lr": "Adam's learning rate",
    "weight_decay": "L2 penalty on the weights",
    "valid": "share of the positions held out for validation",
    "patience": "epochs without a better validation loss before stopping",
    "seed": "seeds the split, the initial weights and the shuffles",
    "rank": "weight of the ranking term over each decision's candidates (0: off)",
    "rank_temp": "0: mean square ranking term; > 0: listwise, softmax at this temperature",
    "split": "validation rows: random (a seeded permutation) or hash (by position, the "
             "same whatever the sets are joined with: needed to fine-tune on sets "
             "trained on)",
}
"""``--help`` of each :class:`Settings` field (its docstring says more)."""


def main(argv=None) -> int:
    """``python -m training.supervised``: train a network on labelled position sets."""
    ap = argparse.ArgumentParser(prog="python -m training.supervised",
                                 description="Train a value network on labelled positions.")
    ap.add_argument("--data", nargs="+", required=True, help="labelled position sets")
    ap.add_argument("--out", help="run folder (required unless --errors)")
    ap.add_argument("--errors", nargs="+", metavar="MODEL",
                    help="print each model's equity error on --data instead of training")
    ap.add_argument("--classes", default="",
                    help="train (or with --errors measure) on these classes of the sets "
                         "only, comma-separated (" + ", ".join(CLASSES) + "; a race "
                         "network: race,bearoff); default: all")
    ap.add_argument("--no-resume", action="store_true",
                    help="start afresh: refused where --out already holds a run")
    d = Settings()
    for name, value in asdict(d).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(value), default=value,
                        help=f"{_SETTING_HELP[name]} (default: {value!r})")
    args = ap.parse_args(argv)
    try:
        if not args.errors:
            if not args.out:
                raise SupervisedError("--out (the run folder) is required to train")
            _check_folder(Path(args.out), not args.no_resume)    # before any work
        names = class_option(args.classes)          # before the sets are read
        data = load_labelled(args.data)
        if names:
            data = data.of_classes(names)
            if len(data) == 0:
                raise SupervisedError(f"--classes {args.classes}: no positions of those "
                                      f"classes in --data")
        if args.errors:
            for m in args.errors:
                print(f"{m}: {json.dumps(errors(Network.load(m), data))}")
            return 0
        settings = Settings(**{k: getattr(args, k) for k in asdict(d)})
        with folder_lock(args.out):      # one run at a time in a folder
            net = train(data, args.out, settings, resume=not args.no_resume,
                        log=lambda s: print(s, file=sys.stderr, flush=True),
                        command=shlex.join(["python", "-m", "training.supervised",
                                            *(sys.argv[1:] if argv is None else argv)]))
    except (NardyError, PositionSetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"model -> {Path(args.out) / 'model.npz'} ({net.sizes})")
    return 0


if __name__ == "__main__":
    run_cli(main)
