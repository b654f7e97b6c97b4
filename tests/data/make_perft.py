"""Write the move-generation truth the tests read, ``tests/data/perft/``, from the
golden move lists (one ``<variant>_movegen.jsonl`` per game, each record with every legal
successor of a position and roll).

Each golden record becomes one line of ``perft/<variant>.jsonl``: the record without
its list of successors, keeping what identifies the truth (``position``, ``dice``,
``count``, ``successors_sha256``: the SHA-256 of the sorted canonical successor keys,
docs/rules.md) and what the tests filter on (``id``, ``tags``, ``dice_used``, ``source``,
and for backgammon ``gnubg_id`` and ``category``). ``backgammon_opening_counts.json`` is
copied as it is. Run it when the golden files change::

    python tests/data/make_perft.py PATH/TO/golden
"""

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VARIANTS = ("backgammon", "portes", "plakoto", "fevga", "long_nardy", "gul_bara")


def _digest(successors: list) -> str:
    keys = sorted(json.dumps(s, sort_keys=True, separators=(",", ":")) for s in successors)
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


def main(golden: Path) -> None:
    out = HERE / "perft"
    out.mkdir(exist_ok=True)
    for variant in VARIANTS:
        lines = []
        for line in open(golden / f"{variant}_movegen.jsonl"):
            rec = json.loads(line)
            succ = rec.pop("successors", None)
            if succ is not None:        # the digest is the list's, as the golden README says
                assert len(succ) == rec["count"] and _digest(succ) == rec["successors_sha256"], \
                    rec["id"]
            lines.append(json.dumps(rec, separators=(",", ":")))
        (out / f"{variant}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{variant}: {len(lines)} records")
    shutil.copy(golden / "backgammon_opening_counts.json", HERE / "backgammon_opening_counts.json")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/data/make_perft.py PATH/TO/golden")
    main(Path(sys.argv[1]))
