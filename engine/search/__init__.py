"""The n-ply search (:mod:`.nply`): 0-3 ply with GNU Backgammon's move filters,
breadth first over one numba kernel, on the static evaluator of :mod:`engine.eval`.

Imports: :mod:`engine.rules`, :mod:`engine.movegen`, :mod:`engine.notation`,
:mod:`engine.eval`.
"""
