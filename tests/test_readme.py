"""The README's Python examples run as they stand: each ```pycon (or ```python) block of
``README.md`` is a doctest, run in order in one namespace, its output compared with the
output shown. The analysis example searches at 2-ply with the shipped backgammon model,
so this test shares the search tests' worker (the kernels compile once)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("search")

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```(?:pycon|python)\n(.*?)^```", re.M | re.S)


def test_readme_python_examples_are_doctests():
    text = README.read_text()
    blocks = list(BLOCK.finditer(text))
    assert blocks, "README.md has no Python examples"
    globs: dict = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for m in blocks:
        line = text.count("\n", 0, m.start(1))
        test = parser.get_doctest(m.group(1), globs, f"README.md:{line + 1}", str(README), line)
        assert test.examples, f"README.md line {line + 1}: a Python block without >>> examples"
        runner.run(test, out=report.append, clear_globs=False)
        globs = test.globs              # the next block sees what this one defined
    assert runner.failures == 0, "".join(report)
