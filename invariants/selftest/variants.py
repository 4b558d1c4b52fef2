"""YuniKorn's own code paths where this core departs from them: variant cores.

A variant is a reading of one flow as Apache YuniKorn's core does it, where that reading
is a defect of YuniKorn (``docs/findings/``). Each is built like a broken core of
``invariants/selftest/mutants.py``, textual edits of the real core's functions applied only inside
:func:`applied`, but it is not part of the self-test: it is not a bug planted to test the
checker, it is YuniKorn, and the checker finding it from scratch is the evidence that the
defect holds. ``yunikorn-fsm check --variant NAME`` and ``replay --variant NAME`` run one.
This module reaches into the core's internals on purpose (an import-linter exception,
``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from invariants.selftest.mutants import Mutant
from invariants.selftest.mutants import applied as one_edit
from scheduler.partition import apps, asks, releases

M = Mutant


@dataclass(frozen=True)
class Variant:
    """A YuniKorn code path: what it does, where it is upstream, and the edits that make
    this core follow it."""

    name: str
    title: str
    upstream: str
    """Where YuniKorn does it (apache/yunikorn-core ``be3bb48``)."""
    page: str
    """The report, under ``docs/findings/``."""
    edits: tuple[Mutant, ...]


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "A1", "a force-created gang is rejected when its placeholderAsk no longer fits",
        "pkg/scheduler/partition.go AddApplication: the gang checks (sort policy, "
        "placeholderAsk within the queue's max) run whatever IsCreateForced() says",
        "docs/findings/A1-force-created-gang-rejected.md",
        (M("yunikorn.gang_checks_ignore_force_create", "gang",
           "AddApplication applies the gang checks to a force-created application",
           apps, "check_submission",
           "if res.any_positive(app.placeholder_ask) and not force_created(req.tags):",
           "if res.any_positive(app.placeholder_ask):"),),
    ),
    Variant(
        "A2", "an ask the RM removes during a placeholder swap becomes an allocation",
        "pkg/scheduler/objects/application.go removeAsksInternal deletes the request but not "
        "the placeholder's link to it; ReplaceAllocation then allocates the linked request",
        "docs/findings/A2-removed-ask-allocated-on-swap.md",
        (M("yunikorn.removed_ask_stays_linked", "gang",
           "the RM's removal of an ask (by its key) linked to a placeholder leaves the "
           "link; the placeholder's confirmation allocates it (a removal of every ask "
           "comes with the removal of every allocation upstream: RemoveAllAllocations)",
           asks, "release_asks", '        drop_ask(p, ask, "released by the RM")\n',
           '        if not rel.allocation_key or not ask.parked_on:\n'
           '            drop_ask(p, ask, "released by the RM")\n'),),
    ),
    Variant(
        "A3", "a real ask stays linked to a placeholder the RM released during the swap",
        "pkg/scheduler/objects/application.go removeAllocationInternal (via RemoveAllocation) "
        "ignores the placeholder's link to the real ask it is being replaced by",
        "docs/findings/A3-real-ask-stranded-by-placeholder-release.md",
        (M("yunikorn.placeholder_release_keeps_link", "gang",
           "the RM's release of a placeholder being replaced leaves its real ask linked",
           releases, "release_allocations",
           '            ledger.remove_allocation(p, alloc, "stop")\n',
           '            alloc.replacing_key = ""\n'
           '            ledger.remove_allocation(p, alloc, "stop")\n'),),
    ),
)


@contextmanager
def applied(variant: Variant) -> Iterator[None]:
    """The core following ``variant``'s YuniKorn code path, for the duration of the block."""
    with ExitStack() as stack:
        for edit in variant.edits:
            stack.enter_context(one_edit(edit))
        yield


def by_name(name: str) -> Variant:
    for variant in VARIANTS:
        if variant.name == name:
            return variant
    raise KeyError(name)
