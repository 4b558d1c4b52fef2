"""Broken cores of quotas: queue maxima, user and group limits, the queue tree and its reloads."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler import (
    resources,
    ugm,
)
from scheduler.partition import (
    apps,
    cycle,
    eligibility,
    ledger,
    queues,
)

CORES: tuple[Mutant, ...] = (
    M("quota.leaf_max_only", "quota",
      "004 max-capacity: a parent's max limits the whole subtree", eligibility, "queue_headroom",
      "for q in app.queue.ancestry() if app.queue else ():",
      "for q in [app.queue] if app.queue else ():"),
    M("quota.maxapplications_ignored", "quota",
      "maxapplications on every queue of the path", eligibility, "queue_slot",
      "if app.counted_running or app.queue is None:", "if True:"),
    M("accounting.placeholder_release_leaks_queue", "quota",
      "001 'Queue & Node': placeholders count on the queue like real allocations, and stop "
      "counting when they go", ledger, "unbind",
      "            res.sub_from(q.allocated, r)",
      "            res.sub_from(q.allocated, {} if alloc.placeholder else r)"),
    M("limits.leaf_only", "limits",
      "YuniKorn ugm: a user's or group's limit on any queue of the path holds an ask back",
      eligibility, "user_headroom",
      "app.queue.ancestry(), ask.resource)", "[app.queue], ask.resource)"),
    M("limits.group_room_ignored", "limits",
      "YuniKorn ugm: the tracked group's maxresources applies as well as the user's",
      ugm, "over_limit", "        for key in who:", "        for key in who[:1]:"),
    M("limits.wildcard_over_named", "limits",
      "YuniKorn ugm: a named user limit overrides the '*' limit of its queue",
      ugm.QueueLimits, "for_user",
      "return self.users.get(user) or self.users.get(WILDCARD)",
      "return self.users.get(WILDCARD) or self.users.get(user)"),
    M("limits.maxapplications_ignored", "limits",
      "YuniKorn ugm: an application starts only within its user's and group's "
      "maxapplications", eligibility, "user_slot",
      "if not p.limited or app.counted_running or app.queue is None:", "if True:"),
    M("limits.release_not_subtracted", "limits",
      "YuniKorn ugm: every removal subtracts from the user's and group's usage",
      ledger, "unbind",
      "            p.users.add(app.limited_by, app.queue.chain, r, -1)\n",
      "            pass\n"),
    M("limits.group_resolved_from_root", "limits",
      "YuniKorn ugm: the tracked group is resolved from the leaf towards root",
      ugm, "resolve_group", "    for queue in path:", "    for queue in reversed(path):"),
    M("queues.draining_queue_accepts_apps", "queues",
      "003 'Update and Remove partition': a queue removed from the configuration takes no "
      "new application", apps, "placement_refusal",
      "    if inactive is not None:", "    if False:"),
    M("queues.removed_while_holding_apps", "queues",
      "003 'Update and Remove partition': a removed queue goes only once empty",
      queues, "clean_drained", "and _empty(queue) \\\n", "and not queue.children \\\n"),
    M("queues.configured_again_stays_draining", "queues",
      "003 'Update and Remove partition': a queue configured again is active again",
      queues, "_apply_queue", '        p.core.fire(queue, "start", p.rm_id)', "        pass"),
    M("quota.headroom_before_adding", "quota",
      "004 max-capacity: the ask itself must fit under the max (an off-by-one check of usage "
      "before the ask)", eligibility, "queue_headroom",
      "if q.max is not None and not res.fits_with(r, q.allocated, q.max):",
      "if q.max is not None and not res.fits(q.allocated, q.max):"),
    M("quota.maxapplications_off_by_one", "quota",
      "maxapplications: at most that many applications run on the queue",
      eligibility, "queue_slot", "q.running_apps < q.max_applications",
      "q.running_apps <= q.max_applications"),
    M("quota.lowered_max_not_flagged", "quota",
      "004 max-capacity: a reload that lowers a max below the usage flags the queue, which "
      "takes nothing new", queues, "_apply_queue",
      '    ledger.refresh_quota_flag(queue, "max lowered by a configuration update")\n', ""),
    # From YuniKorn's history (resources and policy): each a fixed bug of that kind.
    M("limits.wildcard_not_on_root", "limits",
      "YuniKorn ugm rule 4: a queue's '*' user limit applies to every user without a named "
      "one, root included (YUNIKORN-2441)", ugm, "over_limit",
      "            limit = limits.for_user(key[1]) if key[0] == USER else",
      "            limit = (limits.users.get(key[1]) if queue.parent is None\n"
      "                     else limits.for_user(key[1])) if key[0] == USER else"),
    M("limits.parent_against_leaf_usage", "limits",
      "YuniKorn ugm rule 6: the headroom on each queue of the path is that queue's limit less "
      "the usage on that queue, not the leaf's (YUNIKORN-1920)", ugm, "over_limit",
      "            used = per_path.get(queue.path, _NO_USE) if",
      "            used = per_path.get(path[0].path, _NO_USE) if"),
    M("limits.group_not_subtracted", "limits",
      "YuniKorn ugm rule 1: a removal subtracts from the tracked group's usage as well as "
      "the user's (YUNIKORN-1893)", ledger, "unbind",
      "            p.users.add(app.limited_by, app.queue.chain, r, -1)\n",
      "            p.users.add(app.limited_by[:1], app.queue.chain, r, -1)\n"),
    M("limits.reserved_skips_headroom", "limits",
      "YuniKorn ugm rule 7: the reserved path checks the user's and group's headroom too "
      "(YUNIKORN-2030)", cycle, "allocate_reserved",
      "                and not eligibility.user_headroom(p, app, ask)\n", ""),
    M("limits.wildcard_group_ignored", "limits",
      "YuniKorn ugm rule 3: a user in no named group of a queue's limits is tracked against "
      "that queue's shared '*' group (YUNIKORN-1864)", ugm, "resolve_group",
      "        if WILDCARD in limits.groups:\n            return WILDCARD\n", ""),
    M("quota.undefined_type_zero", "quota",
      "004 max-capacity (YuniKorn): a type a max does not name is unlimited, not zero "
      "(YUNIKORN-813)", eligibility, "queue_headroom",
      "        if q.max is not None and not res.fits_with(r, q.allocated, q.max):",
      "        if q.max is not None and (not res.fits_with(r, q.allocated, q.max)\n"
      "                                  or any(v > 0 and k not in q.max for k, v in r.items())):"),
    M("queues.created_leaf_no_template_quota", "quota",
      "004 max-capacity with YuniKorn's childtemplate: a leaf a placement rule creates takes "
      "the template's max and maxapplications (YUNIKORN-193, YUNIKORN-2033)", queues, "create",
      "            queue.max = dict(template.resources.max) or None\n", ""),
    M("queues.created_parent_drops_template", "quota",
      "YuniKorn childtemplate inheritance: a parent a placement rule creates inherits its "
      "parent's template, which the leaves created below it then take (YUNIKORN-193, "
      "YUNIKORN-814)", queues, "create",
      "            queue.child_template = template\n", "            pass\n"),
    M("queues.configured_parent_drops_template", "quota",
      "YuniKorn childtemplate inheritance: a configured parent without a template of its own "
      "takes its parent's, and an empty template is none (YUNIKORN-193, YUNIKORN-814)",
      queues, "_apply_queue",
      "    queue.child_template = effective_template(cfg.childtemplate, parent)\n",
      "    queue.child_template = cfg.childtemplate\n"),
    M("limits.reserved_skips_maxapplications", "limits",
      "YuniKorn ugm rule 7: the reserved path holds an application that has not started while "
      "its user's or group's maxapplications is reached (YUNIKORN-1986)", cycle,
      "allocate_reserved",
      "                and not eligibility.user_slot(p, app)\n"
      "                and not eligibility.user_headroom(p, app, ask)\n",
      "                and not eligibility.user_headroom(p, app, ask)\n"),
    # Queues a placement rule creates, and queues a reload removes (protocol.config_applied
    # reads the shim's record of each creation, and what the configuration no longer has).
    M("queues.created_leaf_no_template_guarantee", "queues",
      "YuniKorn childtemplate (004 'Configurations & Semantics'): a leaf created below a "
      "parent takes the template's guaranteed", queues, "create",
      "            queue.guaranteed = dict(template.resources.guaranteed) or None\n", ""),
    M("queues.created_leaf_no_template_maxapps", "queues",
      "YuniKorn childtemplate: a leaf created below a parent takes the template's "
      "maxapplications", queues, "create",
      "            queue.max_applications = template.maxapplications\n", ""),
    M("queues.created_inherits_parent_properties", "queues",
      "YuniKorn YUNIKORN-809 (the seeds are silent, docs/design-notes.md 'Queue properties "
      "are inherited'): a queue a placement rule creates takes no properties from its "
      "parent; a created leaf takes its parent's childtemplate's only (fifo without one)",
      queues, "create", "            else {}\n", "            else dict(parent.properties)\n"),
    M("queues.removed_leaf_with_apps_stays_active", "queues",
      "004 'Configurations & Semantics', 003: a queue a reload removes drains (it takes no "
      "new application) even while applications still run in it",
      queues, "_drain_unconfigured", "        if queue.state == \"Active\" and queue.managed:\n",
      "        if queue.state == \"Active\" and queue.managed and not queue.apps:\n"),
    M("queues.created_never_removed", "queues",
      "YuniKorn: a queue a placement rule created is removed once it holds nothing",
      queues, "cleanup",
      "if not queue.managed and _empty(queue) and queue.parent is not None:", "if False:"),
    M("queues.finished_application_kept_in_queue", "queues",
      "003 'Operations to add/remove app' (3.2, remove app from scheduler): a finished "
      "application leaves its queue, which may then go", apps, "finish",
      "        app.queue.apps.pop(app.id, None)\n", "        pass\n"),
    M("limits.kept_on_removed_queue", "limits",
      "YuniKorn ugm: a reload clears the limits of a queue it no longer configures",
      queues, "_drain_unconfigured",
      "            queue.limits = None  # YuniKorn: a reload clears the limits it no longer sets\n",
      "            pass\n"),
    M("quota.exact_fill_refused", "quota",
      "004 max-capacity: usage may reach the max; an ask that fills it exactly fits",
      resources, "fits_with", "used.get(k, 0) + v > limit[k]", "used.get(k, 0) + v >= limit[k]"),
    M("quota.reserved_path_past_max", "quota",
      "004 max-capacity with 004 reservations: an ask placed on its reserved node still "
      "stays within every max of its path", cycle, "allocate_reserved",
      "                and not eligibility.queue_headroom(app, ask)\n"
      "                and allocate.predicates(p, ask, node, True)):",
      "                and allocate.predicates(p, ask, node, True)):"),
    M("quota.maxapplications_leaf_only", "quota",
      "YuniKorn maxapplications: a parent's maxapplications counts every application below it",
      eligibility, "queue_slot", "for q in app.queue.ancestry()", "for q in (app.queue,)"),
    M("accounting.parent_pending_kept", "quota",
      "003 'Queue' (pending resources on every level): an allocated repeat leaves the pending "
      "of every queue on the path", ledger, "consume_repeat",
      "for q in app.queue.ancestry() if app.queue else ():",
      "for q in (app.queue,) if app.queue else ():"),
    M("quota.removed_application_still_running", "quota",
      "YuniKorn maxapplications: an application the RM removed no longer counts as running",
      apps, "remove_application", "    ledger.update_running_count(p, app)\n", ""),
    M("queues.draining_parent_accepts_apps", "queues",
      "003 'Update and Remove partition' (removed queues drain): no new application below a "
      "draining queue, in a leaf a placement rule created there either", apps,
      "placement_refusal", "    inactive = next((q for q in queue.ancestry() if",
      "    inactive = next((q for q in (queue,) if"),
    M("queues.created_below_draining_queue", "queues",
      "003 'Update and Remove partition' (removed queues drain) and YuniKorn addChildQueue: "
      "no queue is created below a draining queue", apps, "check_submission",
      "        for q in queue.ancestry():\n            if q.state",
      "        for q in ():\n            if q.state"),
    M("queues.created_kept_after_app_removal", "queues",
      "YuniKorn: a queue a placement rule created goes once the RM removes its last "
      "application", apps, "remove_application", "    queues.cleanup(p)\n", ""),
)
