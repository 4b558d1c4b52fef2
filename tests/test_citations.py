"""Every citation resolves for a reader who has only the repository or the installed package.

The design documents are cited by short name and section (``001`` "Cleanup");
the short names are defined once, with the public URL (and the commit for the
interface spec and the core design), in ``statemachines/sources.py`` and in
the table of ``docs/lifecycles.md``. Nothing may point at a file outside the
repository (the seeds' working copies a clone does not have).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from invariants.commands.docs import render
from statemachines.sources import SOURCES, markdown_table

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".ini", ".proto"}
SKIP_PARTS = {".git", ".venv", "__pycache__", "build", "dist", "_generated"}

# Built from pieces so this file does not match itself.
OUTSIDE = [
    re.compile("shared" + "/seeds"),
    re.compile(r"\b00\d_[0-9a-f]{16}" + r"\.txt"),
    re.compile("CONTRACT" + r"\.md"),
]
# A short name used as a citation (the documents are numbered 001, 002, ...): `001`,
# ``002``, or 003 followed by a section in quotes, a section sign or a nickname.
CITED = re.compile(
    r"(?<![\w.\\/-])(?:``?(00\d)``?|(00\d)(?=,? (?:['\"§]|Gang design|Spec|spec|recovery)))"
)


def tracked_files() -> list[Path]:
    """The repository's files (``git ls-files``; a walk where there is no git checkout)."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
        paths = [ROOT / p for p in out]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if p.is_file()]
    return [p for p in paths
            if p.suffix in TEXT_SUFFIXES and p.exists()
            and not SKIP_PARTS.intersection(p.relative_to(ROOT).parts)]


def test_nothing_cites_a_file_outside_the_repository() -> None:
    me = Path(__file__).resolve()
    bad = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
           for p in tracked_files() if p != me
           for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
           if any(rx.search(line) for rx in OUTSIDE)]
    assert not bad, "cite the public document by short name (docs/lifecycles.md):\n" + \
        "\n".join(bad)


def test_relative_links_and_paths_stay_inside_the_repository() -> None:
    bad = []
    for p in tracked_files():
        text = p.read_text(encoding="utf-8")
        targets = re.findall(r"`(\.\./[^`\s]*)`", text)
        if p.suffix == ".md":
            targets += [t for t in re.findall(r"\]\(([^)\s#]+)", text)
                        if "://" not in t and not t.startswith("mailto:")]
        for target in targets:
            resolved = (p.parent / target).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                bad.append(f"{p.relative_to(ROOT)}: {target}")
    assert not bad, bad


def test_every_short_name_used_is_defined() -> None:
    used: dict[str, str] = {}
    for p in tracked_files():
        for m in CITED.finditer(p.read_text(encoding="utf-8")):
            used.setdefault(m.group(1) or m.group(2), str(p.relative_to(ROOT)))
    assert {"001", "002", "003", "004"} <= used.keys()
    undefined = {name: where for name, where in used.items() if name not in SOURCES}
    assert not undefined, f"short names cited but not in statemachines/sources.py: {undefined}"


def test_the_table_is_published_where_the_docs_say() -> None:
    lifecycles = (ROOT / "docs" / "lifecycles.md").read_text(encoding="utf-8")
    table = lifecycles.split("<!-- BEGIN sources table -->\n", 1)[1].split(
        "<!-- END sources table -->", 1)[0]
    assert table.rstrip("\n").splitlines() == markdown_table(), \
        "docs/lifecycles.md's sources table differs from statemachines/sources.py"
    assert "\n".join(markdown_table()) in render()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, src in SOURCES.items():
        assert src.url.startswith("https://")
        assert f"`{name}`" in readme and src.url in readme, name


def test_pinned_sources_name_their_commit() -> None:
    for src in SOURCES.values():
        if "github.com" in src.url:
            assert src.commit and src.commit in src.url and re.fullmatch(r"[0-9a-f]{40}",
                                                                         src.commit)
