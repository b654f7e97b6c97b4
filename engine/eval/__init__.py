"""Rating positions: network inputs (:mod:`.encoding`, :mod:`.features`), the value
network and its file format (:mod:`.network`), exact bear-off tables (:mod:`.bearoff`),
the static evaluator the search calls (:mod:`.evaluator`), Tesauro's PubEval
(:mod:`.pubeval`), the hand-written heuristic (:mod:`.heuristic`) and the race
formulas players count at the table (:mod:`.race`).

A new network input goes in :mod:`.features` or :mod:`.encoding`. Imports:
:mod:`engine.rules`, :mod:`engine.movegen`.
"""
