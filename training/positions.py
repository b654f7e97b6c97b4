"""Position sets for supervised training: where the positions come from, what class each
is in, and the file that holds them with their provenance (and, once labelled, their
targets).

Sources, each a code in :data:`SOURCES`:

* ``selfplay`` -- positions before a roll met in self-play of a network (the engine's
  game loop, :func:`engine.play.loop.play_games`), with exploration: a mover plays a
  random legal play with probability ``epsilon``, so positions after poor plays, and
  what follows them, appear;
* ``setup`` -- random legal set-ups (:mod:`engine.rules.setups`: spreads, runs, races,
  bear-offs, six-blocks), the positions far from a network's own play (back games,
  crashed boards, containment, bear-offs against contact) on which a network trained
  only on its own games goes wrong;
* ``candidate`` -- the plays a network chooses between: for a self-play position and
  the roll thrown there, the positions after the network's best few plays at 0-ply
  (seen by the opponent, before his roll). Self-play visits only the play chosen; the
  ones passed over are what a network must rank below it, and TD never trains them.

Classes (:data:`CLASSES`), after GNU Backgammon's: ``race`` (no checker of either side
can meet one of the other's again: in backgammon, portes and plakoto the sides have
passed each other; in fevga, long nardy and gul bara, whose sides run the same way
round the board, every checker of each side is in its own last twelve points, which
the other side has left for good), ``bearoff`` (a race with every checker of both sides
home), ``crashed`` (in the games that hit, backgammon and portes: contact, and a side
has at most :data:`CRASHED_MAX` checkers in play besides the spares buried on its 1-
and 2-points), ``contact`` (the rest).

A :class:`PositionSet` is one ``.npz`` file of plain arrays, read without unpickling:
``states`` (``int16``, one kernel state per row, side to move's view), ``klass``,
``source``, optionally ``targets`` (the five outputs per position, from
:mod:`training.label`) and ``decision`` (``int64``: for a candidate, the number of the
decision -- a position and its roll -- whose play it is, so that the candidates of one
roll can be ranked together; -1 for the other rows), and ``card`` (JSON: the game, how
each part was made, the labelling settings).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.cli._common import non_negative_int, output_file, run as run_cli, writing
from engine.errors import NardyError, PositionError, VariantError, quote
from engine.eval.network import MAX_ARRAY_BYTES, Network, NetworkFileError, atomic_savez, read_npz
from engine.movegen.generate import successor_arrays
from engine.play import loop
from engine.rules import _layout as L
from engine.rules._rng import rng_state
from engine.rules.position import Position
from engine.rules.scoring import N_OUTPUTS, equities, result, result_k, score_table
from engine.rules.setups import setup_position
from engine.rules.states import check_states
from engine.rules.variants import OPPOSITE, VARIANTS, get_rules, race_geometry

SOURCES = ("selfplay", "setup", "candidate")
"""Where a position came from (the ``source`` code is the index)."""
CLASSES = ("contact", "crashed", "race", "bearoff")
"""Position classes (the ``klass`` code is the index)."""
CONTACT, CRASHED, RACE, BEAROFF = range(4)
CRASHED_MAX = 6
"""A side with at most this many live checkers in play (see the module text) has crashed."""
GAMES = VARIANTS
"""The games position sets serve (every one: :func:`classify` knows both geometries)."""
ARRAYS = ("states", "klass", "source", "targets", "decision", "card")
"""The arrays of a position-set file."""
MAX_POSITIONS = MAX_ARRAY_BYTES // (2 * L.STATE_LEN)
"""The most positions one file holds: its ``states`` array (``int16`` rows, the largest
of its arrays) may take at most :data:`~engine.eval.network.MAX_ARRAY_BYTES`."""


_MAX_DECISION = np.iinfo(np.int64).max
"""The highest decision number a joined set can hold."""


class PositionSetError(NardyError):
    """A position-set file or request that cannot be used as asked."""

    code = "invalid_positions"


# --------------------------------------------------------------------- classes
def class_codes(names) -> list[int]:
    """The codes (:data:`CLASSES`) of the class names ``names``; an unknown name raises
    :class:`PositionSetError` naming it and the classes there are."""
    codes = []
    for name in names:
        if name not in CLASSES:
            raise PositionSetError(f"class {quote(name)}: expected one of "
                                   f"{', '.join(CLASSES)}")
        codes.append(CLASSES.index(name))
    return codes


def class_option(text: str) -> list[str]:
    """The class names of a ``--classes`` option (comma-separated; '' for all: an empty
    list); a blank list or an unknown name raises :class:`PositionSetError` naming the
    option and the classes there are."""
    if not text:
        return []
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise PositionSetError(f"--classes {quote(text)}: expected some of "
                               f"{', '.join(CLASSES)}")
    try:
        class_codes(names)
    except PositionSetError as exc:
        raise PositionSetError(f"--classes: {exc}") from None
    return names


def classify(states: np.ndarray, variant: str = "backgammon") -> np.ndarray:
    """The class code (:data:`CLASSES`) of each state row of ``variant`` (see the module
    text). Opposite directions (backgammon, portes, plakoto): contact while the two
    rearmost checkers, each in its side's numbering (the bar is 25), add up to more than
    25. The same direction (fevga, long nardy, gul bara; a side's point p is the other's
    p + 12 or p - 12): contact while a side with checkers on the board has one on its
    points 13..24, where the other side's checkers still have to pass or have yet to
    start (each side's last twelve points are the other's first twelve)."""
    rules = get_rules(variant)
    s = np.asarray(states).reshape(-1, L.STATE_LEN).astype(np.int64)
    me = s[:, L.ME:L.ME + L.SIDE]
    them = s[:, L.THEM:L.THEM + L.SIDE]
    points = np.arange(L.SIDE)
    on = points[None, 1:]                                     # points 1..25 (25: bar)
    my_back = np.where(me[:, 1:] > 0, on, 0).max(axis=1)       # my rearmost checker
    their_back = np.where(them[:, 1:] > 0, on, 0).max(axis=1)  # theirs, their numbering
    if rules.geometry == OPPOSITE:
        contact = my_back + their_back > 25
    else:
        contact = ((my_back > 12) & (their_back > 0)) | ((their_back > 12) & (my_back > 0))
    home = (my_back <= 6) & (their_back <= 6)

    def crashed(side):
        in_play = side[:, 1:].sum(axis=1)
        buried = np.maximum(side[:, 1] - 1, 0) + np.maximum(side[:, 2] - 1, 0)
        return (in_play > 0) & (in_play - buried <= CRASHED_MAX)

    out = np.full(len(s), CONTACT, np.int8)
    if race_geometry(rules):
        out[contact & (crashed(me) | crashed(them))] = CRASHED
    out[~contact] = RACE
    out[~contact & home] = BEAROFF
    return out


# --------------------------------------------------------------------- the file
@dataclass
class PositionSet:
    """Positions of one game, their classes and sources, maybe their targets."""

    variant: str
    """The game."""
    states: np.ndarray
    """``int16`` kernel states, one per row, each from its side to move (before a roll)."""
    klass: np.ndarray
    """Class code of each (:data:`CLASSES`)."""
    source: np.ndarray
    """Source code of each (:data:`SOURCES`)."""
    targets: np.ndarray | None = None
    """The five outputs of each for its side to move (:mod:`training.label`), or None."""
    info: dict = field(default_factory=dict)
    """Provenance: ``parts`` (how each batch was made) and ``labels`` (the settings)."""
    decision: np.ndarray | None = None
    """``int64``: for each candidate row the number of its decision (the candidates of
    one position's roll share it), -1 for rows that are no candidate; or None."""

    def __len__(self) -> int:
        return int(self.states.shape[0])

    def counts(self) -> dict:
        """Positions per class name."""
        return {name: int((self.klass == k).sum()) for k, name in enumerate(CLASSES)}

    def of_classes(self, names) -> "PositionSet":
        """The positions of the classes ``names`` (:data:`CLASSES`); an unknown name
        raises :class:`PositionSetError` naming it and the classes there are."""
        out = self.subset(np.isin(self.klass, class_codes(names)))
        out.info["classes"] = list(names)
        return out

    def subset(self, rows: np.ndarray) -> "PositionSet":
        """The positions ``rows`` (indices or a mask), provenance kept."""
        return PositionSet(self.variant, self.states[rows], self.klass[rows],
                           self.source[rows],
                           None if self.targets is None else self.targets[rows],
                           dict(self.info),
                           None if self.decision is None else self.decision[rows])

    def save(self, path: str | Path) -> Path:
        """Write atomically to ``path`` (``.npz``). What :meth:`load` would refuse
        (arrays of the wrong type or shape, bad codes or targets, an unknown game,
        illegal states, an array over the file format's
        :data:`~engine.eval.network.MAX_ARRAY_BYTES`) raises :class:`PositionSetError`
        before anything is written; an ``OSError`` while writing (a full disk) raises
        :class:`engine.cli._common.WriteError` naming ``path``."""
        path = Path(path)
        where = f"saving to {path}"
        try:
            states = np.asarray(self.states)
            klass = np.asarray(self.klass)
            source = np.asarray(self.source)
            targets = (None if self.targets is None
                       else np.asarray(self.targets).astype(np.float32))
            decision = None if self.decision is None else np.asarray(self.decision)
        except (TypeError, ValueError) as exc:
            raise PositionSetError(f"{where}: arrays that are not numbers ({exc})") from None
        _check_arrays(where, self.variant, states, klass, source, targets, decision)
        card = dict(self.info, variant=self.variant, format="nardy-positions", version=1,
                    counts=self.counts(), size=len(self))
        try:
            text = json.dumps(card, sort_keys=True).encode()
        except (TypeError, ValueError, RecursionError) as exc:
            raise PositionSetError(f"{where}: info is not plain JSON data "
                                   f"({type(exc).__name__}: {exc})") from None
        arrays = {"states": states, "klass": klass, "source": source,
                  "card": np.frombuffer(text, np.uint8)}
        if targets is not None:
            arrays["targets"] = targets
        if decision is not None:
            arrays["decision"] = decision
        for name, a in arrays.items():
            if a.nbytes > MAX_ARRAY_BYTES:
                raise PositionSetError(f"{where}: {too_big(name, a.nbytes)}")
        with writing(path):
            atomic_savez(path, arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "PositionSet":
        """Read a file written by :meth:`save`, checking its arrays; anything wrong
        raises :class:`PositionSetError` naming the file and the problem."""
        try:
            got = read_npz(path, ARRAYS)
        except NetworkFileError as exc:
            raise PositionSetError(str(exc)) from None
        missing = [k for k in ("states", "klass", "source", "card") if k not in got]
        if missing:
            raise PositionSetError(f"{path}: missing array(s) {missing}; not a position set")
        try:
            card = json.loads(got["card"].tobytes())
        except (ValueError, RecursionError) as exc:
            raise PositionSetError(f"{path}: card is not JSON ({type(exc).__name__})"
                                   ) from None
        fmt = card.get("format") if isinstance(card, dict) else card
        if not isinstance(card, dict) or fmt != "nardy-positions":
            raise PositionSetError(f"{path}: card format {quote(fmt)}; expected an object "
                                   f"with format 'nardy-positions'")
        if not isinstance(card.get("parts", []), list):
            raise PositionSetError(f"{path}: card field 'parts' = {quote(card['parts'])}: "
                                   f"expected a list (how each part was made)")
        variant = card.get("variant")
        _check_arrays(str(path), variant, got["states"], got["klass"], got["source"],
                      got.get("targets"), got.get("decision"))
        states = got["states"]
        info = {k: v for k, v in card.items()
                if k not in ("variant", "format", "version", "counts", "size")}
        return cls(variant, states, got["klass"], got["source"], got.get("targets"), info,
                   got.get("decision"))

    @classmethod
    def join(cls, parts: list["PositionSet"]) -> "PositionSet":
        """One set of ``parts`` (one game; targets kept only when every part has them;
        each part's decisions numbered after the previous parts', so they stay apart;
        where that would pass :data:`_MAX_DECISION`, each part's numbered afresh from 0,
        in their order)."""
        if isinstance(parts, PositionSet) or not isinstance(parts, (list, tuple)):
            raise PositionSetError(f"parts = {quote(parts)}: expected a list of "
                                   f"PositionSets")
        if not parts:
            raise PositionSetError("no position sets to join")
        for i, p in enumerate(parts):
            if not isinstance(p, PositionSet):
                raise PositionSetError(f"parts[{i}] = {quote(p)}: expected a PositionSet")
        variants = {p.variant for p in parts}
        if len(variants) != 1:
            raise PositionSetError(f"position sets of several games: {sorted(variants)}")
        if len(parts) == 1:
            return parts[0]
        labelled = all(p.targets is not None for p in parts)
        info: dict = {"parts": [x for p in parts for x in p.info.get("parts", [])]}
        if labelled:
            info["labels"] = [p.info.get("labels") for p in parts]
        decision = None
        if any(p.decision is not None for p in parts):
            numbers = [np.full(len(p), -1, np.int64) if p.decision is None
                       else np.asarray(p.decision, np.int64) for p in parts]
            tops = [int(d.max()) if len(d) else -1 for d in numbers]
            if sum(t + 1 for t in tops) - 1 > _MAX_DECISION:
                # numbers near 2**63 would wrap past the next part's (read as "no
                # decision"): each part numbered afresh from 0, in its order (sets as
                # they are made keep their numbers, and the digests of runs on them)
                for i, d in enumerate(numbers):
                    some = d >= 0
                    dense = np.full(len(d), -1, np.int64)
                    _, dense[some] = np.unique(d[some], return_inverse=True)
                    numbers[i] = dense
                    tops[i] = int(dense.max()) if len(d) else -1
            chunks, base = [], 0
            for d, top in zip(numbers, tops):
                chunks.append(np.where(d >= 0, d + base, -1))
                base += top + 1
            decision = np.concatenate(chunks)
        return cls(parts[0].variant, np.concatenate([p.states for p in parts]),
                   np.concatenate([p.klass for p in parts]),
                   np.concatenate([p.source for p in parts]),
                   np.concatenate([p.targets for p in parts]) if labelled else None, info,
                   decision)


def too_big(name: str, nbytes: int) -> str:
    """Why an array ``name`` of ``nbytes`` bytes cannot be in a position-set file, and
    what to do: the words of :meth:`PositionSet.save` and of the commands that know
    beforehand that their set would not fit."""
    return (f"{name} would take {nbytes:,} bytes; a position-set file's array may take "
            f"at most {MAX_ARRAY_BYTES:,} (64 MiB: {MAX_POSITIONS:,} positions), and load "
            f"would refuse it: split the set into several files")


def _check_arrays(path: str, variant, states: np.ndarray, klass: np.ndarray,
                  source: np.ndarray, targets: np.ndarray | None,
                  decision: np.ndarray | None = None) -> None:
    """What a position-set file must hold, for :meth:`PositionSet.load` and, before it
    writes one, :meth:`PositionSet.save`: :class:`PositionSetError` naming ``path``
    and the first problem."""
    n = states.shape[0] if states.ndim == 2 else -1
    if states.dtype != np.int16 or states.ndim != 2 or states.shape[1] != L.STATE_LEN:
        raise PositionSetError(f"{path}: states are {states.dtype} {states.shape}; "
                               f"expected int16 (n, {L.STATE_LEN})")
    got = {"klass": klass, "source": source, "targets": targets, "decision": decision}
    for name, dtype, shape in (("klass", np.int8, (n,)), ("source", np.int8, (n,)),
                               ("targets", np.float32, (n, N_OUTPUTS)),
                               ("decision", np.int64, (n,))):
        a = got.get(name)
        if a is not None and (a.dtype != dtype or a.shape != shape):
            raise PositionSetError(f"{path}: {name} is {a.dtype} {a.shape}; expected "
                                   f"{np.dtype(dtype)} {shape}")
    if targets is not None:
        ok = np.isfinite(targets) & (targets >= 0) & (targets <= 1)
        if not ok.all():
            bad = int(np.flatnonzero(~ok.all(axis=1))[0])
            raise PositionSetError(f"{path}: targets of position {bad} are "
                                   f"{targets[bad].tolist()}; expected five "
                                   f"probabilities 0..1")
    if decision is not None and len(decision) and decision.min() < -1:
        bad = int(np.flatnonzero(decision < -1)[0])
        raise PositionSetError(f"{path}: decision of position {bad} is "
                               f"{int(decision[bad])}; expected -1 (no candidate) or a "
                               f"decision number >= 0")
    for name, names in (("klass", CLASSES), ("source", SOURCES)):
        codes = got[name]
        wrong = (codes < 0) | (codes >= len(names))
        if wrong.any():
            bad = int(np.flatnonzero(wrong)[0])
            raise PositionSetError(f"{path}: {name} of position {bad} is "
                                   f"{int(codes[bad])}; expected 0..{len(names) - 1} "
                                   f"({', '.join(names)})")
    try:
        get_rules(variant)
        check_states(states, variant, f"{path}: states")
    except VariantError as exc:
        raise PositionSetError(f"{path}: card: {exc}") from None
    except PositionError as exc:
        raise PositionSetError(str(exc)) from None


# --------------------------------------------------------------------- sources
def _check_game(variant: str) -> None:
    if variant not in GAMES:
        raise PositionSetError(f"variant = {quote(variant)}: position sets serve "
                               f"{', '.join(GAMES)}")


def selfplay_positions(network: Network, games: int, seed: int, *, epsilon: float = 0.1,
                       keep: float = 0.25, max_turns: int = 2000,
                       model: str = "", candidates: int = 0,
                       max_positions: int | None = None) -> PositionSet:
    """Positions before a roll from ``games`` self-play games of ``network`` (both
    sides greedy at 0-ply, each choice random with probability ``epsilon``), each met
    position kept with probability ``keep`` (neighbours of one game are alike);
    ``model`` names the network in the provenance. ``candidates`` > 0: instead of each
    kept position, the positions after the ``candidates`` plays of the roll thrown
    there that the network rates best (source ``candidate``; plays that end the game
    left out, their value being exact). ``max_positions``: more than that many raise
    :class:`PositionSetError` as soon as they are met (a set that could not be saved
    fails after the games that show it, not after all of them)."""
    variant = network.variant
    _check_game(variant)
    if not 0.0 <= epsilon <= 1.0 or not 0.0 < keep <= 1.0:
        raise PositionSetError(f"epsilon = {quote(epsilon)}, keep = {quote(keep)}: "
                               f"expected 0 <= epsilon <= 1 and 0 < keep <= 1")
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 0:
        raise PositionSetError(f"candidates = {quote(candidates)}: expected an integer "
                               f">= 0 (0: the positions themselves)")
    rules = get_rules(variant)
    rng = np.random.default_rng([seed, 7])
    st = rng_state(rng)
    chunks, decided = [], []
    met = 0
    batch = 250
    for lo in range(0, games, batch):
        n = min(batch, games - lo)
        out = loop.new_games(n)
        rows = n * 120
        rec = np.zeros((rows, L.STATE_LEN), np.int16)
        meta = np.zeros((rows, loop.N_META), np.int64)
        got = loop.play_games(*loop.game_args(
            Position.start(variant).to_array(), rules.table(), score_table(rules),
            rules.opening_rolls_both, (loop.KIND_NETWORK, loop.KIND_NETWORK), network,
            network, games=out, st=st, epsilon=epsilon, max_turns=max_turns, rec=rec,
            rec_meta=meta, rec_games=n))
        rolled = meta[:got, 1] > 0                   # played from, with a roll
        kept = rng.random(int(rolled.sum())) < keep
        states = rec[:got][rolled][kept]
        if candidates > 0:
            dice = meta[:got][rolled][kept][:, 1:3]
            states, sizes = _candidates(network, rules, states, dice, candidates)
            decided.append(sizes)
        chunks.append(states)
        met += len(states)
        if max_positions is not None and met > max_positions:
            raise PositionSetError(
                f"self-play of {games:,} games: {met:,} positions after {lo + n:,} games, "
                f"more than the {max_positions:,} the set has room for (a position-set "
                f"file holds at most {MAX_POSITIONS:,} positions: its states array may "
                f"take at most {MAX_ARRAY_BYTES:,} bytes, 64 MiB): split the set into "
                f"several files (fewer --games, each with another --seed)")
    states = np.concatenate(chunks) if chunks else np.zeros((0, L.STATE_LEN), np.int16)
    decision = None
    if candidates > 0:
        sizes = np.concatenate(decided) if decided else np.zeros(0, np.int64)
        decision = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    source = "candidate" if candidates > 0 else "selfplay"
    part = {"source": source, "model": model or repr(network),
            "games": games, "seed": seed, "epsilon": epsilon, "keep": keep,
            **({"candidates": candidates} if candidates > 0 else {}),
            "positions": int(len(states)), "made": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                   time.gmtime())}
    return PositionSet(variant, states, classify(states, variant),
                       np.full(len(states), SOURCES.index(source), np.int8), None,
                       {"parts": [part]}, decision)


def _candidates(network: Network, rules, states: np.ndarray, dice: np.ndarray,
                k: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions after the ``k`` plays of each state's roll (``dice`` rows) that
    ``network`` rates best for the mover at 0-ply, plays that end the game left out,
    best first, one decision after another; and how many each decision gave."""
    out, sizes = [], []
    sc = score_table(rules)
    for s, (d1, d2) in zip(states, dice):
        kids = successor_arrays(Position.from_array(s, rules.variant), (int(d1), int(d2)),
                                rules, play=True)
        live = kids[[result_k(k, sc)[0] < 0 for k in kids]]
        if len(live) == 0:
            continue
        mover = -equities(network.probabilities_of_arrays(live))   # kids are flipped
        out.append(live[np.argsort(-mover, kind="stable")[:k]])
        sizes.append(len(out[-1]))
    return (np.concatenate(out) if out else np.zeros((0, L.STATE_LEN), np.int16),
            np.array(sizes, np.int64))


def setup_positions_set(variant: str, count: int, seed: int) -> PositionSet:
    """``count`` random legal set-ups of ``variant`` whose game is not over."""
    _check_game(variant)
    rules = get_rules(variant)
    rng = np.random.default_rng([seed, 11])
    rows = []
    while len(rows) < count:
        p = setup_position(variant, rng, rules)
        if result(p, rules) is None:
            rows.append(p.to_array())
    states = np.array(rows, np.int16).reshape(-1, L.STATE_LEN)
    part = {"source": "setup", "count": count, "seed": seed,
            "made": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    return PositionSet(variant, states, classify(states, variant),
                       np.full(len(states), SOURCES.index("setup"), np.int8), None,
                       {"parts": [part]})


# --------------------------------------------------------------------- CLI
def set_output(path, what: str = "--out", labelled: bool = False) -> Path:
    """``path`` as a position-set file to write (its folder made): a folder there, a
    file in the way of its folder, or an existing file that is not a position set (a
    model, say) raises :class:`~engine.errors.NardyError` before any work, so a set
    never overwrites anything but an older set; and a set to be written without
    targets (``labelled`` False) never overwrites a labelled one (hours of labels)."""
    p = output_file(path, what)
    if p.exists():
        try:
            old = PositionSet.load(p)
        except PositionSetError as exc:
            raise PositionSetError(f"{what} {quote(str(p))} exists and is not a position "
                                   f"set ({exc}); refusing to overwrite it: remove it or "
                                   f"choose another {what}") from None
        if old.targets is not None and not labelled:
            raise PositionSetError(f"{what} {quote(str(p))} holds a labelled set "
                                   f"({len(old):,} positions with targets); refusing to "
                                   f"overwrite it with an unlabelled one: choose another "
                                   f"{what} (say {quote(str(p.with_stem(p.stem + '-new')))})")
    return p


def main(argv=None) -> int:
    """``python -m training.positions``: write a position set."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m training.positions",
                                 description="Sample positions for supervised training.")
    ap.add_argument("--model", default="models/backgammon.npz",
                    help="network whose self-play gives the positions; its game is the "
                         "set's (default: models/backgammon.npz)")
    ap.add_argument("--games", type=non_negative_int, default=2000,
                    help="self-play games (default: 2000)")
    ap.add_argument("--epsilon", type=float, default=0.1,
                    help="exploration rate (default: 0.1)")
    ap.add_argument("--keep", type=float, default=0.25,
                    help="share of the met positions kept (default: 0.25)")
    ap.add_argument("--setups", type=non_negative_int, default=0,
                    help="random set-ups added (default: 0)")
    ap.add_argument("--candidates", type=non_negative_int, default=0, metavar="K",
                    help="instead of each kept self-play position, the positions after "
                         "the K plays of its roll the network rates best, numbered by "
                         "decision for training.supervised --rank (default 0: off)")
    ap.add_argument("--classes", default="",
                    help="keep only these classes, comma-separated (" + ", ".join(CLASSES)
                    + "); default: all")
    ap.add_argument("--seed", type=non_negative_int, default=1, help="(default: 1)")
    ap.add_argument("--out", required=True, help="position-set file (.npz)")
    args = ap.parse_args(argv)
    if args.games == 0 and args.setups == 0:
        ap.error("--games 0 and --setups 0: no positions to sample")
    try:
        set_output(args.out)
        names = class_option(args.classes)   # checked before the games are sampled
        # a set that cannot be saved is refused before the work, not after it: the
        # set-ups alone (when no --classes filter may thin them out), and the games
        # as soon as their positions pass the room the set-ups leave
        room = None if names else MAX_POSITIONS - args.setups
        if room is not None and room < 0:
            raise PositionSetError(f"--setups {args.setups:,}: "
                                   f"{too_big('states', args.setups * 2 * L.STATE_LEN)} "
                                   f"(at most {MAX_POSITIONS:,} --setups a file, each "
                                   f"file with another --seed)")
        net = Network.load(args.model)
        t = time.time()
        parts = [selfplay_positions(net, args.games, args.seed, epsilon=args.epsilon,
                                    keep=args.keep, model=args.model,
                                    candidates=args.candidates, max_positions=room)
                 ] if args.games > 0 else []
        if args.setups > 0:
            parts.append(setup_positions_set(net.variant, args.setups, args.seed))
        ps = PositionSet.join(parts)
        if names:
            ps = ps.of_classes(names)
        if len(ps) == 0:
            kind = f" of the classes {args.classes}" if args.classes else ""
            raise PositionSetError(f"no positions{kind} met; nothing written (more "
                                   f"--games or --setups?)")
        ps.save(args.out)
    except NardyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(ps):,} positions of {ps.variant} in {time.time() - t:.1f} s -> {args.out}: "
          + ", ".join(f"{k} {v:,}" for k, v in ps.counts().items()))
    return 0


if __name__ == "__main__":
    run_cli(main)
