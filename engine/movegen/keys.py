"""Canonical keys of many positions at once: their order and their SHA-256.

``docs/protocol.md`` names a position by its canonical key, its Position JSON with
every field written out, serialised with sorted keys and no spaces
(:meth:`engine.rules.position.Position.key`), and the protocol's ``moves`` sorts successors by
that key and digests the sorted keys (``successors_sha256``). A gul bara cascade has up
to about a million successors, and building each key as a Python string took 24 s for
869,145 of them. Here both the order and the digest come from the successor rows of
:func:`engine.movegen.generate.successor_arrays` directly.

The order without strings: a key is fixed punctuation around *tokens*, each a number
followed by its delimiter (``"12,"``, ``"3]"``) or, for an empty list, a lone ``"]"``.
No token is a prefix of another, so two keys compare as their first differing tokens
do, and each token can be replaced by its rank among all token strings (a list that is
shorter than another ends on a different token before the other ends, so a list's
slots after its end can be padded with anything). The columns of ranks that differ
between the rows are packed into 64-bit words, most significant first, and radix-sorted.
The digest writes the key bytes in that order, joined by newlines, a block at a time
for :mod:`hashlib`.
"""

from __future__ import annotations

import hashlib
import queue
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np

from engine._jit import njit
from engine.rules import _layout as L

# The token slots of a key, in key order: each is (kind, index, last). _FIXED reads the
# state slot ``index``, ``last`` telling whether its token closes its list (delimiter
# "]"); _PENDING is the index-th pending die, _PIN_ME / _PIN_THEM the index-th pinned
# point of mine / the opponent's (a list's last item closes it).
_FIXED, _PENDING, _PIN_ME, _PIN_THEM = 0, 1, 2, 3


def _slots() -> np.ndarray:
    rows = [(_FIXED, L.ME + L.BAR, 0), (_FIXED, L.THEM + L.BAR, 1)]
    rows += [(_FIXED, L.ME + p, int(p == 24)) for p in range(1, 25)]
    rows += [(_FIXED, L.ME + L.OFF, 0), (_FIXED, L.THEM + L.OFF, 1)]
    rows += [(_PENDING, j, 0) for j in range(L.MAXPEND)]
    rows += [(_PIN_ME, j, 0) for j in range(24)]
    rows += [(_PIN_THEM, j, 0) for j in range(24)]
    rows += [(_FIXED, L.THEM + p, int(p == 24)) for p in range(1, 25)]
    rows += [(_FIXED, L.TURNS_ME, 0), (_FIXED, L.TURNS_THEM, 1)]
    return np.array(rows, np.int64)


SLOTS = _slots()
"""The token slots of a key, in key order (see the module docstring)."""


@lru_cache(maxsize=8)
def _rank_tables(vmax: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Ranks of the token strings ``str(v) + ","`` and ``str(v) + "]"`` for
    ``v <= vmax``, and of the empty list's ``"]"``, in code-point order."""
    tokens = [(str(v) + ",", 0, v) for v in range(vmax + 1)]
    tokens += [(str(v) + "]", 1, v) for v in range(vmax + 1)]
    tokens.append(("]", 2, 0))
    tokens.sort()
    comma = np.zeros(vmax + 1, np.int64)
    close = np.zeros(vmax + 1, np.int64)
    empty = 0
    for rank, (_, kind, v) in enumerate(tokens):
        if kind == 0:
            comma[v] = rank
        elif kind == 1:
            close[v] = rank
        else:
            empty = rank
    return comma, close, empty


@njit(cache=True, inline="always")
def _read_list(row, kind, items):
    """The items of one of ``row``'s lists (pending dice, or my / the opponent's pinned
    points) into ``items``; returns how many."""
    n = 0
    if kind == _PENDING:
        n = row[L.NPEND]
        for i in range(n):
            items[i] = row[L.PEND + i]
    else:
        base = L.PIN_ME if kind == _PIN_ME else L.PIN_THEM
        for p in range(1, 25):
            if row[base + p] != 0:
                items[n] = p
                n += 1
    return n


@njit(cache=True, inline="always")
def _ranks(row, slots, use, comma, close, empty, items, out):
    """The rank of each token slot ``use[j]`` of ``row`` into ``out[j]`` (slots after a
    list's end: 0); ``items`` is work space. A list is read at its first slot used."""
    loaded = -1
    n = 0
    for j in range(use.shape[0]):
        k = use[j]
        kind = slots[k, 0]
        index = slots[k, 1]
        if kind == _FIXED:
            v = row[index]
            out[j] = close[v] if slots[k, 2] else comma[v]
            continue
        if kind != loaded:
            loaded = kind
            n = _read_list(row, kind, items)
        if index == 0 and n == 0:
            out[j] = empty
        elif index >= n:
            out[j] = 0
        else:
            v = items[index]
            out[j] = close[v] if index == n - 1 else comma[v]


@njit(cache=True)
def _varying(rows, width):
    """Which of the first ``width`` columns of ``rows`` take more than one value."""
    first = rows[0]
    out = np.zeros(width, np.bool_)
    for i in range(1, rows.shape[0]):
        row = rows[i]
        for c in range(width):
            if row[c] != first[c]:
                out[c] = True
    return out


@njit(cache=True, nogil=True)
def _rank_ranges(rows, slots, use, comma, close, empty):
    """The lowest and highest rank of each token slot ``use[j]`` over ``rows``."""
    s = use.shape[0]
    lo = np.full(s, np.int64(1) << 62)
    hi = np.full(s, np.int64(-1))
    items = np.zeros(32, np.int64)
    r = np.zeros(s, np.int64)
    for i in range(rows.shape[0]):
        _ranks(rows[i], slots, use, comma, close, empty, items, r)
        for j in range(s):
            lo[j] = min(lo[j], r[j])
            hi[j] = max(hi[j], r[j])
    return lo, hi


@njit(cache=True, nogil=True)
def _pack(rows, slots, use, comma, close, empty, lo, word, shift, out):
    """``out[i, w]``: the ranks (less ``lo``) of row ``i``'s slots ``use`` packed,
    the j-th into word ``word[j]`` at bit ``shift[j]``."""
    items = np.zeros(32, np.int64)
    r = np.zeros(use.shape[0], np.int64)
    for i in range(rows.shape[0]):
        _ranks(rows[i], slots, use, comma, close, empty, items, r)
        for w in range(out.shape[1]):
            out[i, w] = 0
        for j in range(use.shape[0]):
            out[i, word[j]] |= np.uint64(r[j] - lo[j]) << np.uint64(shift[j])


@njit(cache=True)
def _radix_order(words):
    """The stable order that sorts the rows of ``words`` (uint64, first column most
    significant): an LSD radix sort of 16-bit digits, skipping digits all rows share."""
    n = words.shape[0]
    order = np.arange(n)
    other = np.empty(n, np.int64)
    count = np.zeros(1 << 16, np.int64)
    for c in range(words.shape[1] - 1, -1, -1):
        for shift in range(0, 64, 16):
            count[:] = 0
            for i in range(n):
                count[(words[i, c] >> np.uint64(shift)) & np.uint64(0xFFFF)] += 1
            if count.max() == n:                  # one digit for all: nothing to do
                continue
            total = 0
            for d in range(1 << 16):
                m = count[d]
                count[d] = total
                total += m
            for i in range(n):
                j = order[i]
                d = (words[j, c] >> np.uint64(shift)) & np.uint64(0xFFFF)
                other[count[d]] = j
                count[d] += 1
            order, other = other, order
    return order


def _candidate_slots(rows: np.ndarray) -> np.ndarray:
    """The token slots that can differ between ``rows``: those of a column that
    varies, and every slot of a list any of whose columns varies."""
    vary = _varying(rows, L.KEY_LEN)
    lists = np.array([False,
                      vary[L.NPEND] or vary[L.PEND:L.PEND + L.MAXPEND].any(),
                      vary[L.PIN_ME + 1:L.PIN_ME + 25].any(),
                      vary[L.PIN_THEM + 1:L.PIN_THEM + 25].any()])
    kind, index = SLOTS[:, 0], SLOTS[:, 1]
    return np.flatnonzero(np.where(kind == _FIXED, vary[index], lists[kind]))


PARALLEL_ROWS = 65_536
"""Sets of at least this many rows have their ranks and key bytes made on threads."""


def _row_ranges(n: int, threads: int) -> list:
    """``threads`` slices of ``range(n)`` (one when ``n`` is below
    :data:`PARALLEL_ROWS`)."""
    parts = threads if n >= PARALLEL_ROWS and threads > 1 else 1
    cuts = np.linspace(0, n, parts + 1).astype(np.int64)
    return [slice(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def _each(fn, parts: list) -> list:
    """``[fn(p) for p in parts]``, on a thread each when there are several (the
    kernels they call run without the GIL)."""
    if len(parts) == 1:
        return [fn(parts[0])]
    with ThreadPoolExecutor(max_workers=len(parts)) as pool:
        return list(pool.map(fn, parts))


def key_order(rows: np.ndarray, threads: int = 1) -> np.ndarray:
    """The indices that sort the states ``rows`` (as :func:`engine.movegen.generate.
    successor_arrays` returns them, all of one game) by canonical key: ``sorted(range(n),
    key=lambda i: Position.from_array(rows[i], variant).key())``, without the strings.
    ``threads``: how many threads may rank a large set's rows."""
    n = rows.shape[0]
    if n < 2:
        return np.arange(n)
    use = _candidate_slots(rows)
    if use.size == 0:
        return np.arange(n)
    # every number of a key: a slot's value, or a pinned point (up to 24)
    comma, close, empty = _rank_tables(max(int(rows[:, :L.KEY_LEN].max()), 24))
    parts = _row_ranges(n, threads)
    ranges = _each(lambda p: _rank_ranges(rows[p], SLOTS, use, comma, close, empty), parts)
    lo = np.min([r[0] for r in ranges], axis=0)
    hi = np.max([r[1] for r in ranges], axis=0)
    keep = hi > lo
    use, lo, hi = use[keep], lo[keep], hi[keep]
    if use.size == 0:
        return np.arange(n)
    word, shift, w, free = [], [], 0, 64
    for k in range(use.size):                     # most significant first
        b = int(hi[k] - lo[k]).bit_length()
        if b > free:
            w, free = w + 1, 64
        free -= b
        word.append(w)
        shift.append(free)
    packed = np.empty((n, w + 1), np.uint64)
    word, shift = np.array(word, np.int64), np.array(shift, np.int64)
    _each(lambda p: _pack(rows[p], SLOTS, use, comma, close, empty, lo, word, shift,
                          packed[p]), parts)
    if n < 4096:                                  # the radix sort's fixed cost
        return np.lexsort([packed[:, c] for c in range(packed.shape[1] - 1, -1, -1)])
    return _radix_order(packed)


@njit(cache=True, inline="always")
def _put(buf, m, text):
    for j in range(text.shape[0]):
        buf[m + j] = text[j]
    return m + text.shape[0]


def _digit_table(n: int) -> np.ndarray:
    """``table[v]``: the decimal digits of ``v < n`` (``table[v, 0]`` of them) in
    ``table[v, 1:]``."""
    table = np.zeros((n, 4), np.uint8)
    for v in range(n):
        text = str(v).encode()
        table[v, 0] = len(text)
        table[v, 1:1 + len(text)] = np.frombuffer(text, np.uint8)
    return table


_DIGITS = _digit_table(1000)


@njit(cache=True, inline="always")
def _put_int(buf, m, v):
    if 0 <= v < 1000:
        d = _DIGITS[v]
        buf[m] = d[1]
        buf[m + 1] = d[2]
        buf[m + 2] = d[3]
        return m + d[0]
    if v < 0:
        buf[m] = 45                   # "-"
        m += 1
        v = -v
    digits = 1
    x = v
    while x >= 10:
        x //= 10
        digits += 1
    for j in range(digits - 1, -1, -1):
        buf[m + j] = 48 + v % 10
        v //= 10
    return m + digits


@njit(cache=True)
def _put_list(buf, m, row, kind, items):
    n = _read_list(row, kind, items)
    for j in range(n):
        if j:
            buf[m] = 44               # ","
            m += 1
        m = _put_int(buf, m, np.int64(items[j]))
    return m


@njit(cache=True)
def _put_fixed(buf, m, row, first, count):
    for j in range(count):
        if j:
            buf[m] = 44
            m += 1
        m = _put_int(buf, m, np.int64(row[first + j]))
    return m


@njit(cache=True, nogil=True)
def _write_keys(rows, order, parts, starts, buf):
    """The keys of ``rows[order]``, each followed by a newline, into ``buf`` (large
    enough: :data:`_KEY_MAX` bytes a key); returns the number of bytes.
    ``parts[starts[j]:starts[j + 1]]`` is the j-th piece of punctuation (:func:`_pieces`)."""
    m = 0
    items = np.zeros(32, np.int64)
    for i in order:
        row = rows[i]
        m = _put(buf, m, parts[starts[0]:starts[1]])
        m = _put_int(buf, m, np.int64(row[L.ME + L.BAR]))
        buf[m] = 44
        m = _put_int(buf, m + 1, np.int64(row[L.THEM + L.BAR]))
        m = _put(buf, m, parts[starts[1]:starts[2]])
        m = _put_fixed(buf, m, row, L.ME + 1, 24)
        m = _put(buf, m, parts[starts[2]:starts[3]])
        m = _put_int(buf, m, np.int64(row[L.ME + L.OFF]))
        buf[m] = 44
        m = _put_int(buf, m + 1, np.int64(row[L.THEM + L.OFF]))
        m = _put(buf, m, parts[starts[3]:starts[4]])
        m = _put_list(buf, m, row, _PENDING, items)
        m = _put(buf, m, parts[starts[4]:starts[5]])
        m = _put_list(buf, m, row, _PIN_ME, items)
        m = _put(buf, m, parts[starts[5]:starts[6]])
        m = _put_list(buf, m, row, _PIN_THEM, items)
        m = _put(buf, m, parts[starts[6]:starts[7]])
        m = _put_fixed(buf, m, row, L.THEM + 1, 24)
        m = _put(buf, m, parts[starts[7]:starts[8]])
        m = _put_int(buf, m, np.int64(row[L.TURNS_ME]))
        buf[m] = 44
        m = _put_int(buf, m + 1, np.int64(row[L.TURNS_THEM]))
        m = _put(buf, m, parts[starts[8]:starts[9]])
    return m


def _pieces(variant: str) -> tuple[np.ndarray, np.ndarray]:
    """The fixed punctuation of a key of ``variant``, in the order :func:`_write_keys`
    writes it (the last piece ends with the newline that joins the keys)."""
    pieces = ['{"bar":[', '],"me":[', '],"off":[', '],"pending":[', '],"pinned":[[',
              '],[', ']],"them":[', '],"turns":[', '],"variant":' + f'"{variant}"' + '}\n']
    data = [np.frombuffer(p.encode(), np.uint8) for p in pieces]
    starts = np.cumsum([0] + [len(d) for d in data]).astype(np.int64)
    return np.concatenate(data), starts


_KEY_MAX = 200 + 7 * (L.KEY_LEN + L.MAXPEND)
"""Bytes a key can take at most: the punctuation and variant name, and every slot as
a number of up to six digits with its delimiter."""

_BLOCK = 8192
"""Keys written into the buffer at a time."""


def _key_blocks(rows: np.ndarray, variant: str, order: np.ndarray, threads: int = 1):
    """The keys of ``rows[order]``, each followed by a newline, as byte blocks, in
    order. With ``threads`` > 1 and many rows, the blocks are written on that many
    threads, a work buffer each, a few blocks ahead of the one the caller is reading
    (so that hashing them overlaps the writing)."""
    parts, starts = _pieces(variant)
    n = order.shape[0]
    if len(_row_ranges(n, threads)) == 1:
        buf = np.empty(min(_BLOCK, max(1, n)) * _KEY_MAX, np.uint8)
        for lo in range(0, n, _BLOCK):
            m = _write_keys(rows, order[lo:lo + _BLOCK], parts, starts, buf)
            yield buf[:m].tobytes()
        return
    free: queue.SimpleQueue = queue.SimpleQueue()
    for _ in range(threads):
        free.put(np.empty(_BLOCK * _KEY_MAX, np.uint8))

    def write(lo: int) -> bytes:
        buf = free.get()
        try:
            return buf[:_write_keys(rows, order[lo:lo + _BLOCK], parts, starts, buf)].tobytes()
        finally:
            free.put(buf)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        ahead: list = []
        for lo in range(0, n, _BLOCK):
            ahead.append(pool.submit(write, lo))
            if len(ahead) > 2 * threads:
                yield ahead.pop(0).result()
        for f in ahead:
            yield f.result()


def key_bytes(rows: np.ndarray, variant: str, order: np.ndarray | None = None,
              threads: int = 1) -> bytes:
    """The canonical keys of ``rows[order]`` (default: in row order), each followed by a
    newline, as one UTF-8 byte string; ``threads`` as :func:`keys_sha256`."""
    order = np.arange(rows.shape[0]) if order is None else np.asarray(order, np.int64)
    return b"".join(_key_blocks(rows, variant, order, threads))


def keys_sha256(rows: np.ndarray, variant: str, order: np.ndarray | None = None,
                threads: int = 1) -> str:
    """``successors_sha256`` of docs/protocol.md for the states ``rows`` (all of one game):
    the SHA-256 of their canonical keys, sorted, joined by newlines. ``order``:
    :func:`key_order` of ``rows`` when the caller has it already. ``threads``: how many
    threads may write a large set's keys (the digest itself runs beside them)."""
    order = key_order(rows, threads) if order is None else np.asarray(order, np.int64)
    digest = hashlib.sha256()
    last = b""
    for block in _key_blocks(rows, variant, order, threads):
        digest.update(last)
        last = block
    digest.update(last[:-1])                      # no newline after the last key
    return digest.hexdigest()
