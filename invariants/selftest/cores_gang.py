"""Broken cores of the gang design: placeholders, their replacement, timeout and cleanup,
gang admission, completion."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler.partition import (
    allocate,
    apps,
    asks,
    cycle,
    eligibility,
    gang,
    ledger,
)

CORES: tuple[Mutant, ...] = (
    M("gang.real_asks_do_not_wait", "gang",
      "001: real asks wait until every placeholder ask is allocated",
      eligibility, "gang_waiting",
      "return bool(app.placeholder_ask) and any(", "return False and any("),
    M("gang.released_placeholder_reused", "gang",
      "001 step 2: a placeholder being released may not be released or replaced again",
      gang, "try_replace",
      'if not ph.placeholder or ph.state != "Allocated" or ph.task_group != ask.task_group:',
      "if not ph.placeholder or ph.task_group != ask.task_group:"),
    M("gang.real_ask_not_parked", "gang",
      "001 step 3: the real ask is parked until the shim confirms the placeholder release",
      gang, "try_replace", "        ledger.park(app, ask, ph.uuid)\n", ""),
    M("gang.swap_ask_still_pending", "gang",
      "YuniKorn Application.tryPlaceholderAllocate: the real ask of a started swap is "
      "allocated at the match and no longer counts as pending",
      ledger, "park", "    _shift_pending(app, ask.resource, -1)\n", ""),
    M("gang.placeholder_timeout_never_fires", "gang",
      "001 'Cleanup': pending placeholder asks time out", gang, "placeholder_timeout",
      "    pending_ph = [k for k", "    return\n    pending_ph = [k for k"),
    M("gang.hard_failure_keeps_real_allocations", "gang",
      "001 'Cleanup': a killed application holds nothing", gang, "placeholder_timeout",
      '            if alloc.state == "Allocated":', "            if False:"),
    M("gang.completion_keeps_placeholders", "completion",
      "001 'Allocated placeholders': leftover placeholders are released on completion",
      cycle, "on_timer",
      '        gang.release_placeholders(p, app, "application completing: placeholder not used")\n',
      ""),
    M("gang.completing_ignores_placeholder_timeout", "gang",
      "001 'Placeholder timeout': no placeholder outlives the timeout (YuniKorn releases a "
      "Completing application's leftovers too)", gang, "placeholder_timeout",
      'if app.state in ("Running", "Completing") and not pending_ph:',
      'if app.state == "Running" and not pending_ph:'),
    M("gang.admission_ignores_parent_max", "gang",
      "001 'Total placeholder size': reject a gang larger than the quota of any queue on "
      "the path", apps, "check_submission",
      "for q in queue.ancestry() if q.max is not None]", "for q in [queue] if q.max is not None]"),
    M("gang.admitted_into_fair_queue", "gang",
      "001 'Handling queue with a FAIR sort policy': reject gangs in fair queues",
      apps, "check_submission", 'if policy == "fair":', 'if policy == "no-such-policy":'),
    # -- the seed audit (docs/seed-audit.md): rules no broken core tested before ----------
    M("gang.soft_fails_like_hard", "gang",
      "002 gangSchedulingStyle: a Soft gang is scheduled as a normal application after the "
      "placeholder timeout, it does not fail", gang, "placeholder_timeout",
      '    hard = app.gang_style == "Hard"', "    hard = True"),
    M("gang.hard_resumes_like_soft", "gang",
      "002 gangSchedulingStyle: a Hard gang fails after the placeholder timeout",
      gang, "placeholder_timeout", '    hard = app.gang_style == "Hard"', "    hard = False"),
    M("gang.timeout_from_last_placeholder", "gang",
      "001 'Cleanup': the placeholder timeout starts when the first placeholder is allocated",
      allocate, "allocate", "    if ask.placeholder and not app.placeholder_timer_started:",
      "    if ask.placeholder:\n        app.placeholder_token += 1"),
    M("gang.placeholder_starts_app", "gang",
      "001 'Scheduler logic changes': a placeholder allocation leaves the application "
      "Accepted", allocate, "allocate",
      '    if not ask.placeholder and app.LIFECYCLE.can(app.state, "run"):',
      '    if app.LIFECYCLE.can(app.state, "run"):'),
    M("gang.timeout_ask_release_missing", "gang",
      "001 'Cleanup': a gang's timeout releases its pending placeholder asks (TIMEOUT) in the "
      "response that carries its state change", gang, "placeholder_timeout",
      "        box.ask_released(p.name, app.id, ask.key, TT.TIMEOUT,",
      "        (p.name, app.id, ask.key, TT.TIMEOUT,"),
    M("gang.replacement_on_drained_node", "gang",
      "002 DRAIN_NODE with 001 step 5: a replacement whose placeholder's node was drained "
      "goes to another node", gang, "complete_replacement",
      "if node is None or not node.schedulable or", "if node is None or"),
    M("gang.replacement_ignores_placeholder_node", "gang",
      "001 step 5: the real ask goes to the node of the placeholder it replaces whenever that "
      "node can take it", gang, "complete_replacement",
      "    node: Node | None = p.nodes.get(placeholder.node.id)\n",
      "    node: Node | None = None\n"),
    M("gang.other_task_group_replaced", "gang",
      "001 'Scheduler logic changes' step 1: a real ask replaces a placeholder of its own "
      "task group", gang, "try_replace",
      ' or ph.task_group != ask.task_group:', ':'),
    M("gang.larger_real_ask_swapped", "gang",
      "YuniKorn (001 step 1): a placeholder smaller than its real ask is never swapped; it "
      "is released with TIMEOUT", gang, "try_replace",
      "        if not res.fits(ask.resource, ph.resource):", "        if False:"),
    M("gang.extra_real_asks_wait", "gang",
      "001 'Scheduler logic changes' with yunikorn-behaviour 2.7: a real ask of a task group "
      "with no placeholder left to replace is scheduled as a normal ask (YUNIKORN-1242)",
      cycle, "try_leaf",
      "                if gang.wait_for_preempted(p, app, ask):\n                    continue\n",
      "                continue\n"),
    M("gang.timeout_releases_replaced_placeholder", "gang",
      "001 'Cleanup' with step 2: the placeholder timeout leaves a placeholder already being "
      "replaced alone (YUNIKORN-586)", gang, "release_placeholders",
      '        if alloc.placeholder and alloc.state == "Allocated":',
      '        if alloc.placeholder and alloc.state == "Releasing":\n'
      "            ledger.report_release(p, alloc, TT.TIMEOUT, message)\n"
      '        if alloc.placeholder and alloc.state == "Allocated":'),
    M("gang.placeholder_room_ignores_running", "gang",
      "001 'Total placeholder size': the placeholders already running count against the "
      "application's placeholderAsk", asks, "check_placeholder_room",
      "    wanted = dict(app.placeholder_allocated)\n", "    wanted = {}\n"),
    M("gang.parked_ask_placed_again", "gang",
      "001 step 2: a real ask waiting for its placeholder's release is not placed again "
      "meanwhile", cycle, "try_leaf",
      "if ask.parked_on or (app.id, ask.key) in failed:", "if (app.id, ask.key) in failed:"),
)
