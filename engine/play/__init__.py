"""Playing games: the one numba game loop of every batch of games (:mod:`.loop`), the
Python game loop, opening roll and checked playouts (:mod:`.game`), players
(:mod:`.players`), duplicate-dice duels between kernel players (:mod:`.duel`),
games with the cube and matches (:mod:`.match`), resignations (:mod:`.resign`) and a
turn played die by die for a board (:mod:`.turn`).

``python -m engine.play`` runs the terminal game of :mod:`engine.cli.play`. Imports:
:mod:`engine.rules`, :mod:`engine.movegen`, :mod:`engine.notation`, :mod:`engine.eval`,
:mod:`engine.search`, :mod:`engine.cube`.
"""
