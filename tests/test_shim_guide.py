"""Every ``python`` block of docs/shim-guide.md runs as written (a guide that can not rot).

Each block is self-contained: it is executed on its own, in a fresh namespace,
and asserts the claims of the text around it. A block that fails names its
section and its first line in the test id.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "shim-guide.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks() -> list[tuple[str, int, str]]:
    """(section heading, first line number, code) of every python block, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    out = []
    for match in BLOCK.finditer(text):
        before = text[: match.start()]
        headings = re.findall(r"^## (.+)$", before, re.MULTILINE)
        line = before.count("\n") + 2  # the block's first code line
        out.append((headings[-1] if headings else "(top)", line, match.group(1)))
    return out


BLOCKS = _blocks()


def test_guide_has_its_examples() -> None:
    sections = {section for section, _line, _code in BLOCKS}
    assert len(BLOCKS) >= 10
    for expected in ("1. The callback", "4. Releases", "5. Gang scheduling from the shim's side",
                     "7. Threads", "8. Determinism", "10. Errors"):
        assert expected in sections, f"the guide lost the example of section {expected!r}"


@pytest.mark.parametrize(
    ("section", "line", "code"),
    BLOCKS,
    ids=[f"L{line}-{section.split('.')[0]}" for section, line, _code in BLOCKS],
)
def test_guide_block_runs(section: str, line: int, code: str) -> None:
    # Pad with blank lines so tracebacks point at the guide's own line numbers.
    source = "\n" * (line - 1) + code
    namespace: dict[str, object] = {"__name__": f"shim_guide_L{line}"}
    exec(compile(source, str(GUIDE), "exec"), namespace)
