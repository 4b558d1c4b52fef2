"""The design documents the project implements, by the short names every citation uses.

Docstrings, lifecycle declarations, the invariant registries and the docs cite
a document as ``001`` ... ``004`` plus a section heading ("``001`` 'Cleanup'").
This table is what those names mean, so that a citation resolves with only
the repository or the installed package: each is a public Apache YuniKorn
document, with a commit where the text changed since (the interface spec and
the core design are cited as they stood at that commit; their later revisions
renamed messages and sections). ``docs/lifecycles.md`` and
``docs/invariants.md`` print the same table, and a test keeps them equal.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """One cited document: its title, where to read it, and the revision we implement."""

    title: str
    url: str
    commit: str = ""
    """The upstream commit the text corresponds to, when the URL is not already pinned."""
    note: str = ""


SOURCES: dict[str, Source] = {
    "001": Source(
        "Gang scheduling design (Apache YuniKorn)",
        "https://yunikorn.apache.org/docs/design/gang_scheduling",
        note="source: apache/yunikorn-site docs/design/gang_scheduling.md; its "
             "\"waiting\" state is today's Completing, its \"killed\" is Failing/Failed",
    ),
    "002": Source(
        "Scheduler Interface Spec (apache/yunikorn-scheduler-interface)",
        "https://github.com/apache/yunikorn-scheduler-interface/blob/"
        "f59a9f4827f63ac6214e3210d724369eef2273ed/scheduler-interface-spec.md",
        commit="f59a9f4827f63ac6214e3210d724369eef2273ed",
        note="the spec as of YUNIKORN-1656 (2023-04-05), the SI the core implements",
    ),
    "003": Source(
        "Scheduler cache removal design (Apache YuniKorn)",
        "https://yunikorn.apache.org/docs/design/cache_removal",
        note="source: apache/yunikorn-site docs/design/cache_removal.md",
    ),
    "004": Source(
        "Design of YuniKorn scheduler (the scheduler core design, apache/yunikorn-core)",
        "https://github.com/apache/yunikorn-core/blob/"
        "a531c7c7b0ac43cee3acc855f9a6a019796e481c/docs/design/design.md",
        commit="a531c7c7b0ac43cee3acc855f9a6a019796e481c",
        note="a later revision is the site's "
             "https://yunikorn.apache.org/docs/archived_design/scheduler_core_design",
    ),
}


def markdown_table() -> list[str]:
    """The table as Markdown lines: short name, title, URL, the pinned commit, notes."""
    out = ["| short name | document | where | commit | notes |",
           "| --- | --- | --- | --- | --- |"]
    for key, src in SOURCES.items():
        commit = f"`{src.commit}`" if src.commit else "(the page as published)"
        out.append(f"| `{key}` | {src.title} | <{src.url}> | {commit} | {src.note} |")
    return out
