"""Damaged model and checkpoint files, written for the tests of their loaders: one file
for each way a file has broken a loader, named by what it used to raise."""

import io
import json
import zipfile
from pathlib import Path

import numpy as np

from engine.eval.network import Network


def npy(array) -> bytes:
    """``array`` as the bytes of a ``.npy`` file."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def claiming(descr: str, shape) -> bytes:
    """A ``.npy`` file whose header claims ``descr`` and ``shape``, over 64 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + bytes(64)


def text_array(text: bytes) -> np.ndarray:
    """JSON text as a card or run record stores it."""
    return np.frombuffer(text, np.uint8)


def card(**changes) -> bytes:
    """The ``card.npy`` of an 8-unit backgammon model with ``changes`` to the card."""
    c = Network.create("backgammon", 8).card()
    c.update(changes)
    return npy(text_array(json.dumps(c).encode()))


def write_model(path: Path, compression=zipfile.ZIP_DEFLATED, **members) -> Path:
    """An 8-unit backgammon model file; ``members`` (name: ``.npy`` bytes) replace or
    join its own."""
    good = {k: npy(v) for k, v in Network.create("backgammon", 8).file_arrays().items()}
    good.update(members)
    with zipfile.ZipFile(path, "w", compression) as z:
        for name, data in good.items():
            z.writestr(f"{name}.npy", data)
    return path


def recompress(path: Path, dest: Path, compression=zipfile.ZIP_DEFLATED) -> Path:
    """``path``'s members written again to ``dest`` with ``compression``."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    with zipfile.ZipFile(dest, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return dest


def _patch(path: Path, offset: int, data: bytes) -> Path:
    raw = bytearray(path.read_bytes())
    raw[offset:offset + len(data)] = data
    path.write_bytes(bytes(raw))
    return path


def corrupt_deflate(path: Path, member: str = "W1.npy") -> Path:
    """``path`` (deflated) with the start of ``member``'s deflate stream overwritten."""
    with zipfile.ZipFile(path) as z:
        at = z.getinfo(member).header_offset
    raw = path.read_bytes()
    names, extra = (int.from_bytes(raw[at + i:at + i + 2], "little") for i in (26, 28))
    return _patch(path, at + 30 + names + extra, b"\xff" * 16)


def set_method(path: Path, member: str, method: int) -> Path:
    """``path`` with ``member``'s compression method set to ``method`` in the central
    directory, where readers look it up."""
    raw = path.read_bytes()
    at = raw.index(b"PK\x01\x02")
    while raw[at:at + 4] == b"PK\x01\x02":
        n, m, k = (int.from_bytes(raw[at + i:at + i + 2], "little") for i in (28, 30, 32))
        if raw[at + 46:at + 46 + n] == member.encode():
            return _patch(path, at + 10, method.to_bytes(2, "little"))
        at += 46 + n + m + k
    raise AssertionError(f"{member} not in {path}")


def truncate(path: Path) -> Path:
    """``path`` cut to its first half."""
    path.write_bytes(path.read_bytes()[:path.stat().st_size // 2])
    return path


def bad_models(folder: Path) -> dict:
    """Damaged model files in ``folder``, by name."""
    folder.mkdir(parents=True, exist_ok=True)
    good = json.dumps(Network.create("backgammon", 8).card())
    deep_info = good[:-1] + ', "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
    return {
        "info a list (TypeError)": write_model(folder / "a.npz", card=card(info=[1, 2])),
        "info a string (ValueError)": write_model(folder / "b.npz", card=card(info="ab")),
        "card nested deep (RecursionError)": write_model(
            folder / "c.npz", card=npy(text_array(b"[" * 100_000))),
        "card info nested deep (RecursionError)": write_model(
            folder / "d.npz", card=npy(text_array(deep_info.encode()))),
        "a 10^12 shape (MemoryError)": write_model(folder / "e.npz",
                                                   W1=claiming("<f4", (10**6, 10**6))),
        "card not bytes": write_model(folder / "f.npz", card=npy(np.zeros(3))),
        "variant a list (TypeError)": write_model(folder / "g.npz", card=card(variant=[1])),
        "an object array (a pickle)": write_model(folder / "h.npz", b1=claiming("|O", (8,))),
        "corrupt deflate (zlib.error)": corrupt_deflate(write_model(folder / "i.npz")),
        "compression method 99 (NotImplementedError)": set_method(
            write_model(folder / "j.npz", zipfile.ZIP_STORED), "W1.npy", 99),
        "truncated": truncate(write_model(folder / "k.npz")),
    }


def rewrite(good: Path, dest: Path, run=None, card=None, **arrays) -> Path:
    """The trusted checkpoint ``good`` written again to ``dest`` with its run record and
    card changed (a dict: fields updated into it; bytes: its whole text) and ``arrays``
    put in place of its own."""
    with np.load(good) as z:
        out = {k: z[k] for k in z.files}
    for key, change in (("run", run), ("card", card)):
        if isinstance(change, dict):
            record = json.loads(bytes(out[key]))
            record.update(change)
            change = json.dumps(record).encode()
        if change is not None:
            out[key] = text_array(change)
    out.update(arrays)
    np.savez(dest, **out)
    return dest


def bad_checkpoints(good: Path, folder: Path) -> dict:
    """Damaged copies of the checkpoint ``good`` in ``folder``, by name: a bad card, and
    every field of the run record out of range or of the wrong type."""
    folder.mkdir(parents=True, exist_ok=True)
    fields = {
        "games -5": {"games": -5}, "games 1e300": {"games": 1e300},
        "games 2.5": {"games": 2.5}, "games true": {"games": True}, "games '7'": {"games": "7"},
        "games 2**70": {"games": 2**70}, "elapsed NaN": {"elapsed": float("nan")},
        "elapsed -1": {"elapsed": -1}, "elapsed '3'": {"elapsed": "3"},
        "version true": {"version": True},
        "history a string": {"history": "abc"},
        "history ppg a string": {"history": [[10, "x", "pubeval", 20]]},
        "history games -1": {"history": [[-1, 0.5, "pubeval", 20]]},
        "history games played 0.5": {"history": [[10, 0.5, "pubeval", 0.5]]},
        "resumes a short row": {"resumes": [[5]]},
        "resumes games 1e300": {"resumes": [[1e300, {}]]},
        "config ill-typed": {"config": {"alpha": "fast"}},
        "config 10**30 hidden": {"config": {"size": "tiny", "hidden": 10**30}},
        "config of another game": {"config": {"variant": "portes"}},
    }
    files = {name: rewrite(good, folder / f"f{i}.npz", run=change)
             for i, (name, change) in enumerate(fields.items())}
    files.update({
        "card info a list": rewrite(good, folder / "a.npz", card={"info": [1, 2]}),
        "card nested deep": rewrite(good, folder / "b.npz", card=b"[" * 100_000),
        "run a list": rewrite(good, folder / "c.npz", run=b"[1]"),
        "run without games": rewrite(good, folder / "d.npz", run=b'{"version": 1}'),
        "run nested deep": rewrite(good, folder / "e.npz", run=b"[" * 100_000),
        "rng of floats": rewrite(good, folder / "g.npz", rng=np.zeros(1)),
        "stats of two axes": rewrite(good, folder / "h.npz", stats=np.zeros((2, 2), int)),
        "corrupt deflate": corrupt_deflate(recompress(good, folder / "i.npz")),
        "compression method 99": set_method(recompress(good, folder / "j.npz"),
                                            "run.npy", 99),
        "truncated": truncate(recompress(good, folder / "k.npz")),
    })
    return files
