"""The command lines and the engine protocol: analysis (:mod:`.analyse`), cube advice
(:mod:`.cube`), a terminal game (:mod:`.play`), the JSON-lines protocol
(:mod:`.protocol`), UBGI (:mod:`.ubgi`), GNU Backgammon's external player
(:mod:`.external`), the decisions those two ask for (:mod:`._decide`) and what they all
share (:mod:`._common`). Each runs as ``python -m engine.analyse``, ``engine.cube_cli``,
``engine.play``, ``engine.protocol``, ``engine.ubgi``, ``engine.external``.

A new command goes here. Imports: any package of :mod:`engine`.
"""
