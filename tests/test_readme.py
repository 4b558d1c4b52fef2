"""The README's example runs as written (documentation that can not rot)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_example_runs(capsys: object) -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks, "the README lost its example"
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    shim = namespace["shim"]
    assert [a.uuid for a in shim.allocations] == ["app-1-pod-1-1", "app-1-pod-1-2"]  # type: ignore[attr-defined]
    dump = namespace["api"].state_dump()  # type: ignore[attr-defined]
    batch = dump["partitions"][0]["queues"][1]
    assert batch["allocated"] == {"memory": 2**30, "vcore": 1500}
    assert batch["max"] == {"memory": 4 * 2**30, "vcore": 10_000}     # 4Gi, 10 cores


def test_readme_has_exactly_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("## Example", 1)[0]
    commands = re.findall(r"```sh\n(.*?)```", setup, re.DOTALL)
    assert len(commands) == 2
    assert "yunikorn-fsm check" in commands[0] and "pytest" in commands[1]
