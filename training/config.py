"""Training settings: one frozen dataclass, a docstring per field, unknown keys rejected.

A run's :class:`TrainConfig` is stored in every checkpoint, so ``--resume`` rebuilds the
run from the file, never from flags the user must repeat. Build one from defaults, a
JSON file and ``key=value`` overrides with :func:`load_config`;
``python -m training.selfplay --config-help`` prints every field with its doc.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from engine.errors import quote
from engine.eval.encoding import ENCODERS, default_encoder, encoder_problem, get_encoder
from engine.eval.network import NetworkFileError, check_hidden
from engine.play.duel import MAX_GAMES as DUEL_MAX_GAMES
from engine.play.game import MAX_TURNS as GAME_MAX_TURNS
from engine.rules.variants import VARIANTS

SIZES = {"tiny": 40, "standard": 80, "large": 128}
"""Named hidden-layer sizes (198 Tesauro inputs: tiny 198-40, standard 198-80,
large 198-128)."""


MAX_TURNS = GAME_MAX_TURNS
"""Most rolls a game may last before it is abandoned (``max_turns``): the game loop's
own bound (:data:`engine.play.game.MAX_TURNS`)."""
MAX_EVAL_GAMES = DUEL_MAX_GAMES
"""Most games of one strength figure (``eval_games``): a duel's own bound
(:data:`engine.play.duel.MAX_GAMES`; their rows are held at once)."""


class ConfigError(ValueError):
    """A bad config file, unknown key or ill-typed value."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything that defines a self-play TD training run."""

    variant: str = "backgammon"
    """Game to learn (one of engine.rules.variants.VARIANTS)."""
    size: str = "standard"
    """Named network size: tiny (40 hidden), standard (80) or large (128)."""
    hidden: int = 0
    """Hidden units; 0 takes them from ``size``."""
    encoder: str = ""
    """Input encoding (engine.eval.encoding.ENCODERS); empty: the game's default
    (tesauro198 for backgammon and portes, nardy255 for the others)."""
    init_scale: float = 0.1
    """Standard deviation of the initial random weights."""
    seed: int = 1
    """Seed of the initial weights and of every worker's dice."""
    alpha: float = 0.1
    """Learning rate at the start (per position, on the output log-loss gradient)."""
    alpha_final: float = 0.01
    """Learning rate the schedule decays towards."""
    alpha_half_life: int = 300_000
    """Games after which alpha has moved half way from ``alpha`` to ``alpha_final``."""
    lam: float = 0.7
    """TD(lambda)'s lambda: 0 learns from the next position only, 1 from the result."""
    epsilon: float = 0.0
    """Chance of playing a random successor instead of the best (exploration); the
    random move is still learned from, as in TD-Gammon."""
    max_turns: int = 3000
    """A game longer than this is abandoned without learning from it (at most
    :data:`MAX_TURNS`)."""
    checkpoint_minutes: float = 5.0
    """Minutes between checkpoints (a kill loses at most this much work)."""
    keep_checkpoints: int = 3
    """Newest checkpoint files kept in the run folder."""
    eval_games: int = 1000
    """Games against PubEval (backgammon, portes) or the hand-written heuristic (other
    games) per strength figure, at most :data:`MAX_EVAL_GAMES`; 0 turns the figure off."""
    eval_minutes: float = 2.0
    """Minutes between strength figures."""

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ConfigError(f"variant = {quote(self.variant)}; expected one of {list(VARIANTS)}")
        if self.size not in SIZES:
            raise ConfigError(f"size = {quote(self.size)}; expected one of {list(SIZES)}")
        if self.encoder and self.encoder not in ENCODERS:
            raise ConfigError(f"encoder = {quote(self.encoder)}; expected one of {list(ENCODERS)}")
        checks = {      # each with the range it says when it fails
            "hidden": (self.hidden >= 0, "0 (the size's) or more"),
            "init_scale": (self.init_scale > 0, "above 0"),
            "alpha": (self.alpha > 0, "above 0"),
            "alpha_final": (0 < self.alpha_final, "above 0"),
            "alpha_half_life": (self.alpha_half_life > 0, "above 0"),
            "lam": (0 <= self.lam <= 1, "0 .. 1"),
            "epsilon": (0 <= self.epsilon <= 1, "0 .. 1"),
            "max_turns": (0 < self.max_turns <= MAX_TURNS, f"1 .. {MAX_TURNS:,}"),
            "checkpoint_minutes": (self.checkpoint_minutes > 0, "above 0"),
            "keep_checkpoints": (self.keep_checkpoints >= 1, "1 or more"),
            "eval_games": (0 <= self.eval_games <= MAX_EVAL_GAMES,
                           f"0 .. {MAX_EVAL_GAMES:,}"),
            "eval_minutes": (self.eval_minutes > 0, "above 0"),
            "seed": (self.seed >= 0, "0 or more"),
        }
        for f in fields(self):        # the int fields reach int64 kernels and counters
            if f.type == "int" and getattr(self, f.name) >= 2**63:
                checks[f.name] = (False, "below 2**63")
        for key, (ok, want) in checks.items():
            if not ok:
                raise ConfigError(f"{key} = {quote(getattr(self, key))} is out of range: "
                                  f"expected {want}")
        if self.hidden:
            try:
                check_hidden(self.hidden, get_encoder(self.encoder_name))
            except NetworkFileError as exc:
                raise ConfigError(str(exc)) from None
        problem = encoder_problem(self.variant, self.encoder_name)
        if problem:
            raise ConfigError(problem)

    @property
    def encoder_name(self) -> str:
        """Encoder actually used."""
        return self.encoder or default_encoder(self.variant)

    @property
    def hidden_units(self) -> int:
        """Hidden units actually used."""
        return self.hidden or SIZES[self.size]

    def alpha_at(self, games: int) -> float:
        """The learning rate after ``games`` games."""
        return self.alpha_final + (self.alpha - self.alpha_final) * 0.5 ** (
            games / self.alpha_half_life)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict, base: "TrainConfig | None" = None) -> "TrainConfig":
        """``base`` (defaults if None) with the keys of ``data``; unknown keys and values
        of the wrong type raise :class:`ConfigError`."""
        return replace(base or cls(), **cls.typed(data))

    @classmethod
    def typed(cls, data: dict) -> dict:
        """``data``'s keys checked (known) and their values' types (an integer is a
        float where one is wanted), without the checks across fields: a config file
        may set the encoder, and the command line the game it fits."""
        if not isinstance(data, dict):
            raise ConfigError(f"config {quote(data)}: expected a JSON object")
        types = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(data) - set(types))
        if unknown:
            raise ConfigError(f"unknown config key(s) {quote(unknown)}; expected some of "
                              f"{sorted(types)}")
        clean = {}
        for key, value in data.items():
            want = {"int": int, "float": float, "str": str}[types[key]]
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if isinstance(value, bool) or not isinstance(value, want) or (
                    want is float and not math.isfinite(value)):
                raise ConfigError(f"config {key} = {quote(value)}: expected {want.__name__}")
            clean[key] = value
        return clean


def parse_set(items: list[str]) -> dict:
    """``["key=value", ...]`` into a dict; values are read as JSON when they parse
    (numbers), else kept as text."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {quote(item)}: expected key=value")
        try:
            out[key.strip()] = json.loads(text)
        except ValueError:
            out[key.strip()] = text
    return out


def read_config_file(path: str | Path) -> dict:
    """The fields a JSON config file sets, as written (checked: known keys, right types)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"config file {str(path)!r}: {exc}") from None
    try:
        TrainConfig.typed(data)
    except ConfigError as exc:
        raise ConfigError(f"config file {str(path)!r}: {exc}") from None
    return data


def load_config(path: str | Path | None = None, overrides: list[str] = (),
                extra: dict | None = None) -> TrainConfig:
    """Defaults, then the JSON file ``path``, then ``key=value`` overrides, then
    ``extra`` (the command line's own options), checked together once (the file's
    encoder may fit only the game the command line names)."""
    data: dict = {}
    if path is not None:
        data.update(read_config_file(path))
    if overrides:
        data.update(parse_set(list(overrides)))
    data.update(extra or {})
    return TrainConfig.from_dict(data)


def describe() -> str:
    """Every field with its default and docstring, for ``--config-help``."""
    tree = ast.parse(inspect.getsource(TrainConfig))
    docs = {}
    body = tree.body[0].body
    for a, b in zip(body, body[1:]):
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(
                b.value, ast.Constant):
            docs[a.target.id] = " ".join(b.value.value.split())
    defaults = TrainConfig()
    return "\n".join(f"{f.name} = {getattr(defaults, f.name)!r}\n    {docs.get(f.name, '')}"
                     for f in fields(TrainConfig))
