"""Rating positions: network inputs (:mod:`.encoding`, :mod:`.features`), the value
network and its file format (:mod:`.network`), exact bear-off tables (:mod:`.bearoff`),
the static evaluator the search calls (:mod:`.evaluator`), Tesauro's PubEval
(:mod:`.pubeval`) and the hand-written heuristic (:mod:`.heuristic`).

A new network input goes in :mod:`.features` or :mod:`.encoding`. Imports:
:mod:`engine.rules`, :mod:`engine.movegen`.
"""
