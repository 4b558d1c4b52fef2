"""Broken cores of lifecycles: transitions, releases and their confirmations, recovery,
timeouts."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler import (
    Scheduler,
    context,
)
from scheduler.partition import (
    allocate,
    apps,
    appstate,
    asks,
    cycle,
    nodes,
    releases,
)

CORES: tuple[Mutant, ...] = (
    M("recovery.placeholder_recovered_as_real", "recovery",
      "001 'Application recovery': recovered allocations keep their placeholder flag",
      nodes, "recover", "placeholder = msg.placeholder and bool(msg.task_group_name)",
      "placeholder = False"),
    M("recovery.over_quota_not_flagged", "recovery",
      "recovered allocations over a max are flagged and the queue takes nothing new",
      nodes, "recover", "    if over_quota:\n", "    if False:\n"),
    M("lifecycle.state_assigned", "lifecycle",
      "every state change goes through a declared trigger", appstate, "maybe_wait",
      '        fire_app(p, app, "wait")', '        app.state = "Completing"'),
    M("release.rm_release_not_confirmed", "releases",
      "001/002: the RM's release is confirmed with the same type", releases,
      "release_allocations",
      '            ledger.report_release(p, alloc, TT.STOPPED_BY_RM, rel.message or "released '
      'by the RM")', "            pass"),
    M("release.unsolicited_confirmation_taken", "releases",
      "001: a release the core never started confirms nothing: the RM ends the allocation "
      "as stopped, whatever its type (nothing is swapped in)", releases,
      "release_allocations",
      '        confirms = ttype in CONFIRM_TRIGGERS and alloc.state == "Releasing" \\\n'
      "            and alloc.release_type == ttype.value\n",
      '        confirms = ttype in CONFIRM_TRIGGERS \\\n'
      "            and alloc.release_type in (None, ttype.value)\n"),
    M("timer.execution_timeout_early", "timeouts",
      "002 executionTimeoutMilliSeconds: released when the timeout is reached, not before",
      allocate, "allocate", "core.schedule_timer(ask.execution_timeout_ms / 1000.0,",
      "core.schedule_timer(ask.execution_timeout_ms / 2000.0,"),
    M("timer.expiry_never_fires", "timeouts",
      "terminated applications expire after the retention", cycle, "on_timer",
      '    elif kind == "expire" and', '    elif False and'),
    M("apps.removal_keeps_allocations", "lifecycle",
      "002 RemoveApplicationRequest: its allocations are removed", apps, "remove_application",
      '        ledger.remove_allocation(p, alloc, "stop", "its application was removed")\n', ""),
    M("lifecycle.placeholders_keep_running", "lifecycle",
      "001 'Definition': placeholders are not active allocations; an application with only "
      "placeholders and nothing pending waits", appstate, "maybe_wait",
      "not any(\n        not a.placeholder for a in app.allocations.values()\n    )",
      "not app.allocations"),
    M("lifecycle.no_wait_after_ask_release", "lifecycle",
      "001 'Definition': an application whose last ask the RM removed waits",
      asks, "release_asks", "    appstate.maybe_wait(p, app)", "    pass"),
    M("lifecycle.completed_before_timeout", "lifecycle",
      "001 'Definition': an application completes only after waiting the completing timeout",
      apps, "after_release",
      "        if app.completing_timed_out and not app.allocations:",
      "        if not app.allocations:"),
    M("recovery.pending_ask_not_consumed", "recovery",
      "001 'Application recovery': a recovered allocation of a pending ask takes one of its "
      "repeats (not counted twice)", nodes, "recover",
      '    elif ask.state == "Pending":\n        ledger.consume_repeat(p, app, ask)\n',
      '    elif ask.state == "Pending":\n        pass\n'),
    M("release.ask_release_not_confirmed", "releases",
      "001/002 AllocationAskRelease: the RM's ask release is confirmed with the same type",
      asks, "release_asks",
      "        box.ask_released(p.name, app.id, ask.key, TT.STOPPED_BY_RM,",
      "        (p.name, app.id, ask.key, TT.STOPPED_BY_RM,"),
    M("release.unknown_ask_key_releases_all", "releases",
      "002 AllocationAskRelease.allocationKey: a release naming an ask the application does "
      "not have is ignored (only an empty key means every ask)", asks, "release_asks",
      "        asks = [ask] if ask is not None else []\n",
      "        asks = [ask] if ask is not None else list(app.asks.values())\n"),
    M("release.core_type_ask_release_taken", "releases",
      "001/002 AllocationAskRelease: the RM removes an ask with STOPPED_BY_RM; a release of "
      "a type only the core starts is acknowledged and changes nothing", asks, "release_asks",
      "    if rel.termination_type != TT.STOPPED_BY_RM:\n",
      "    if rel.termination_type == TT.UNKNOWN_TERMINATION_TYPE:\n"),
    M("release.uuid_outside_named_application", "releases",
      "002 AllocationRelease: a release names its application; the uuid of another "
      "application's allocation is not released", releases, "release_allocations",
      "            alloc = app.allocations.get(rel.uuid)\n",
      "            alloc = p.allocations.get(rel.uuid)\n"),
    M("release.unknown_application_by_uuid", "releases",
      "002 AllocationRelease: a release naming an application the core does not know is "
      "ignored, even when its uuid exists", releases, "release_allocations",
      "            alloc = None\n", "            alloc = p.allocations.get(rel.uuid)\n"),
    M("release.app_wide_core_type_ignored", "releases",
      "002 AllocationRelease UUID: without a uuid every allocation of the application is "
      "released, whatever the termination type (YuniKorn's processAllocationRelease)",
      releases, "release_allocations",
      "    elif app is not None:\n",
      "    elif app is not None and ttype in RM_TYPES:\n"),
    M("release.untyped_release_ignored", "releases",
      "YuniKorn's removeAllocation: a release without a termination type is the RM's own, "
      "removed and confirmed STOPPED_BY_RM", releases, "release_allocations",
      "    ttype = rel.termination_type\n",
      "    ttype = rel.termination_type\n    if ttype == TT.UNKNOWN_TERMINATION_TYPE:\n"
      "        return\n"),
    M("release.rm_core_type_release_ignored", "releases",
      "001 TIMEOUT releases from the shim are processed 'as normal': the RM's release of an "
      "allocation the core never released removes it whatever its type (YuniKorn's "
      "removeAllocation)", releases, "release_allocations",
      '            ledger.remove_allocation(p, alloc, "stop", f"released by the RM with '
      'termination "\n'
      '                                     f"type {ttype.name}: nothing sent back")\n',
      "            continue\n"),
    M("release.core_type_release_answered", "releases",
      "001 'For releases initiated by the core no such confirmation message can or must be "
      "sent': the RM's release with a type only the core starts is not answered",
      releases, "release_allocations",
      "        elif ttype in RM_TYPES:\n", "        elif True:\n"),
    M("timer.zero_timeout_expires", "timeouts",
      "002 executionTimeoutMilliSeconds: 0 or negative means never expire",
      allocate, "allocate", "    if ask.execution_timeout_ms > 0:",
      "    if ask.execution_timeout_ms >= 0:"),
    M("rm.paused_rm_scheduled", "lifecycle",
      "002 RM lifecycle: a paused RM gets no new allocation", Scheduler, "_schedule",
      '            if rm.state != "Running":\n                continue\n', ""),
    M("recovery.repeated_uuid_accepted", "recovery",
      "002 'Allocation of resources': an allocation has one UUID; a registration that "
      "recovers one twice is rejected (all or nothing)", nodes, "_unattachable",
      "    if p.core.uuid_taken(a.uuid) or a.uuid in seen:", "    if False:"),
    # -- YuniKorn's history: lifecycles, releases, recovery and node actions ---------------
    M("recovery.app_left_accepted", "recovery",
      "001 'Application recovery' with the application lifecycle: a recovered real "
      "allocation moves its application to Running like any real allocation (YUNIKORN-513)",
      nodes, "recover", '    if not placeholder and app.LIFECYCLE.can(app.state, "run"):',
      '    if False and app.LIFECYCLE.can(app.state, "run"):'),
    M("lifecycle.completing_ignores_new_ask", "lifecycle",
      "001 'Cleanup': a new ask moves a waiting (Completing) application back to Running "
      "(YUNIKORN-484)", asks, "add_ask",
      '    elif app.state == "Completing":\n        appstate.fire_app(p, app, "run")\n', ""),
    M("lifecycle.completing_timer_missing", "timeouts",
      "001 'Application completion': a waiting application completes when the waiting "
      "timeout passes (YUNIKORN-484)", appstate, "maybe_wait",
      '        start_app_timer(p, app, COMPLETING_TIMEOUT, "complete")', "        pass"),
    M("lifecycle.no_wait_after_release", "lifecycle",
      "001 'Definition': an application whose last allocation is released with nothing "
      "pending waits, placeholders or not (YUNIKORN-1337)", apps, "after_release",
      "    else:\n        appstate.maybe_wait(p, app)", "    else:\n        pass"),
    M("lifecycle.state_change_unreported", "lifecycle",
      "002 UpdatedApplication: every application state change is reported to the RM "
      "(YUNIKORN-204)", appstate, "fire_app",
      "    p.core.outbox(p.rm_id).app_updated(app.id, app.state, app.state_since, message)",
      '    if trigger != "complete":\n'
      "        p.core.outbox(p.rm_id).app_updated(app.id, app.state, app.state_since, "
      "message)"),
    M("apps.finished_keeps_asks", "lifecycle",
      "001 'Cleanup': a finished (Completed or Failed) application holds no asks "
      "(YUNIKORN-1453)", apps, "finish",
      '        asks.drop_ask(p, ask, f"application {app.state.lower()}")', "        pass"),
    M("lifecycle.resuming_stuck", "lifecycle",
      "002 gangSchedulingStyle Soft: a resuming application is Accepted again once its "
      "placeholders are released (YUNIKORN-582)", apps, "after_release",
      '    elif app.state == "Resuming":\n        if not app.has_placeholders():',
      '    elif app.state == "Resuming":\n        if False:'),
    M("lifecycle.failed_before_released", "lifecycle",
      "001 'Cleanup': a killed application is Failed only once the RM confirmed the release "
      "of everything it held, real allocations too (YUNIKORN-574)", apps, "after_release",
      '    if app.state == "Failing":\n        if not app.allocations:',
      '    if app.state == "Failing":\n        if not app.has_placeholders():'),
    M("recovery.placeholder_timeout_default", "recovery",
      "001 'Application recovery' with 002 executionTimeoutMilliSeconds: a recovered gang "
      "times out after its own placeholder timeout, not the default (YUNIKORN-1155)",
      nodes, "recover",
      "    if placeholder and not app.placeholder_timer_started:\n"
      "        appstate.start_placeholder_timer(p, app)\n",
      "    if placeholder and not app.placeholder_timer_started:\n"
      "        app.placeholder_timer_started = True\n"
      '        p.core.schedule_timer(appstate.PLACEHOLDER_TIMEOUT, "placeholder", app,\n'
      "                              app.placeholder_token, p.timer_owner)\n"),
    M("routing.ask_release_anywhere", "releases",
      "002 AllocationAskRelease.partitionName: an ask release naming a partition that does "
      "not hold the application is ignored, not confirmed", Scheduler, "_seed_allocation",
      "            p = rm.partition(ask_rel.partition_name)\n",
      "            p = next((x for x in rm.partitions.values()\n"
      "                      if ask_rel.application_id in x.apps), None) \\\n"
      "                or rm.partition(ask_rel.partition_name)\n"),
    M("routing.release_anywhere", "releases",
      "002 AllocationRelease.partitionName: a release or a confirmation naming a partition "
      "that does not hold the allocation is ignored", Scheduler, "_seed_allocation",
      "            p = rm.partition(rel.partition_name)\n",
      "            p = next((x for x in rm.partitions.values()\n"
      "                      if rel.uuid in x.allocations), None) \\\n"
      "                or rm.partition(rel.partition_name)\n"),
    M("routing.removal_anywhere", "lifecycle",
      "002 RemoveApplicationRequest.partitionName: a removal naming a partition that does "
      "not hold the application is ignored", Scheduler, "update_application",
      "            partition = rm.partition(remove.partition_name)\n",
      "            partition = next((x for x in rm.partitions.values()\n"
      "                              if remove.application_id in x.apps), None) \\\n"
      "                or rm.partition(remove.partition_name)\n"),
    M("recovery.other_node_attached", "recovery",
      "001 'Application recovery': a node registers with its own allocations; one the RM "
      "reports on another node is refused with the node", nodes, "_unattachable",
      "    if a.node_id and a.node_id != node_id:\n", "    if False:\n"),
    M("recovery.ended_application_recovered", "recovery",
      "001 'Application recovery': allocations are recovered for the applications the RM "
      "added again, not for one that has ended", nodes, "_unattachable",
      "if app is None or app.state not in RECOVERABLE or app.queue is None:",
      "if app is None or app.queue is None:"),
    M("timer.fired_in_creation_order", "timeouts",
      "002 and 001 timeouts: timers due in one cycle fire in the order they fall due",
      context.Timer, "__lt__", "return (self.due, self.seq) < (other.due, other.seq)",
      "return self.seq < other.seq"),
    M("rm.paused_rm_timers_fire", "lifecycle",
      "002 RM lifecycle (docs/design-notes.md, 'The RM lifecycle's timeout has no length'): "
      "a paused RM's timers do not fire", Scheduler, "_fire_timers",
      'if rm is None or rm.state != "Running" or partition is None:',
      "if rm is None or partition is None:"),
    M("release.application_removal_unconfirmed", "releases",
      "002 RemoveApplicationRequest / AllocationRelease: removing an application releases "
      "its allocations, each confirmed back STOPPED_BY_RM", apps, "remove_application",
      '        ledger.report_release(p, alloc, TT.STOPPED_BY_RM, "application removed by the '
      'RM")\n', ""),
    M("lifecycle.decommission_leaves_application", "lifecycle",
      "001 'Application completion': an application whose last allocations went with a "
      "decommissioned node starts waiting like any other", nodes, "remove_node",
      "    for app in touched:\n        apps.after_release(p, app)",
      "    for app in touched:\n        pass"),
)
