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
from scheduler.partition import apps, asks, cycle, gang, releases

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
    Variant(
        "A4", "a placeholder pod withdrawn while pending blocks its task group's real pods",
        "pkg/scheduler/objects/application.go: addPlaceholderData counts every placeholder "
        "ask of a task group, removeAsksInternal never takes a withdrawn one off that count, "
        "and canReplace keeps the group's real asks out of tryAllocate while the count "
        "exceeds the placeholders replaced and timed out",
        "docs/findings/A4-withdrawn-placeholder-blocks-task-group.md",
        # This core keeps no per-group counts; the variant keeps the one YuniKorn never
        # lowers (placeholders withdrawn while pending) in the application's tags.
        (M("yunikorn.withdrawn_placeholder_counted", "gang",
           "the RM's withdrawal of a pending placeholder ask stays counted in its task group",
           asks, "release_asks", '        drop_ask(p, ask, "released by the RM")\n',
           '        if ask.placeholder and ask.state == "Pending":\n'
           '            counted = "yunikorn-fsm.variant/withdrawn/" + ask.task_group\n'
           '            app.tags[counted] = str(int(app.tags.get(counted, "0"))\n'
           '                                    + ask.pending_repeats)\n'
           '        drop_ask(p, ask, "released by the RM")\n'),
         M("yunikorn.can_replace_counts_withdrawn", "gang",
           "a real ask of a task group whose count exceeds its replaced and timed-out "
           "placeholders is left to placeholder replacement (canReplace), never allocated",
           cycle, "try_leaf",
           "            over = eligibility.user_headroom(p, app, ask)\n",
           "            if ask.task_group and not ask.placeholder and int(app.tags.get(\n"
           '                    "yunikorn-fsm.variant/withdrawn/" + ask.task_group, "0")):\n'
           "                allocate.set_scheduling_state(p, ask, SS.SKIPPED,\n"
           "                                              gang.WAITING_FOR_GANG)\n"
           "                continue\n"
           "            over = eligibility.user_headroom(p, app, ask)\n")),
    ),
    Variant(
        "A5", "the placeholder timeout crashes on a pending real ask without a task group",
        "pkg/scheduler/objects/application.go timeoutPlaceholderProcessing, case 2: "
        "placeholderData[taskGroupName].TimedOut++ for every pending request, real ones "
        "included, with no check that the entry exists (a nil dereference: the goroutine "
        "panics and the scheduler process ends)",
        "docs/findings/A5-placeholder-timeout-crashes-on-real-ask.md",
        (M("yunikorn.timeout_dereferences_missing_group", "gang",
           "the placeholder timeout's case 2 reads the task group entry of every pending "
           "request; a real one without a task group has none",
           gang, "placeholder_timeout",
           "    pending_ph = [k for k in app.pending_asks.values() if k.placeholder]\n",
           '    if not (app.state in ("Running", "Completing")\n'
           "            and any(a.placeholder for a in app.allocations.values())) \\\n"
           "            and any(not k.placeholder and not k.task_group\n"
           "                    for k in app.pending_asks.values()):\n"
           "        raise RuntimeError(\"invalid memory address or nil pointer dereference: \"\n"
           "                           \"placeholderData[\\\"\\\"].TimedOut++\")\n"
           "    pending_ph = [k for k in app.pending_asks.values() if k.placeholder]\n"),),
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
