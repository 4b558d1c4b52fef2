"""Broken cores of placement: ACLs, placement rules, routing by partition."""

from __future__ import annotations

from invariants.selftest.edits import M, Mutant
from scheduler import (
    placement,
)
from scheduler.partition import (
    apps,
)

CORES: tuple[Mutant, ...] = (
    M("acl.ancestors_ignored", "ACL/placement",
      "004 acls: the submit ACL of an ancestor grants access", apps, "acl_allows",
      "for q in queue.ancestry():", "for q in [queue]:"),
    M("placement.creates_without_create", "ACL/placement",
      "placement rules create queues only with create: true", placement, "_rule_path",
      "    if not rule.create and lookup(path) is None:\n        return None\n", ""),
    M("apps.empty_user_accepted", "ACL/placement",
      "an application with an empty user is rejected (YuniKorn)", apps, "refused_outright",
      "    if not req.ugi.user.strip():", "    if False:"),
    M("apps.completed_id_blocks_resubmission", "ACL/placement",
      "001 'Allocated placeholders': a completed application does not stop a new one with "
      "its id", apps, "add_application",
      "if existing is not None and existing.state in LIVE:", "if existing is not None:"),
    M("acl.adminacl_ignored", "ACL/placement",
      "004 acls (YuniKorn): the admin ACL of the queue or an ancestor also grants submission",
      apps, "acl_allows", "for acl in (q.submitacl, q.adminacl):", "for acl in (q.submitacl,):"),
    # Placement rules (YuniKorn's placement rules; 002 AddApplicationRequest.queueName only
    # says "according to policy"), each read independently by ``acl_placement.place``.
    M("placement.later_rules_ignored", "ACL/placement",
      "YuniKorn placement: rules are tried in order until one places the application",
      apps, "place", "    for rule in rules or (_IMPLICIT,):\n",
      "    for rule in (rules or (_IMPLICIT,))[:1]:\n"),
    M("placement.rule_error_falls_through", "ACL/placement",
      "YuniKorn PlaceApplication: a rule that errs (an invalid queue name, a parent rule "
      "naming a leaf) rejects the application; no later rule or root.default is tried",
      apps, "place", "        if isinstance(path, _Error):\n            return ",
      "        if isinstance(path, _Error):\n            continue\n            return "),
    M("placement.created_below_leaf", "ACL/placement",
      "YuniKorn createQueue: no queue is created below a leaf queue; the application "
      "placed there is rejected", apps, "check_submission",
      "        if queue.is_leaf:\n", "        if False:\n"),
    M("placement.refusal_rejects", "ACL/placement",
      "YuniKorn PlaceApplication: a rule whose leaf is draining or whose queue the user may "
      "not submit to fails like a rule naming a parent, and the next rule is tried",
      apps, "place", "            return taken\n        refused.append(taken)\n    if forced:",
      "            return taken\n        return taken\n    if forced:"),
    M("placement.default_queue_ignored", "ACL/placement",
      "YuniKorn PlaceApplication: an application no rule places goes to root.default when "
      "that leaf exists and takes it", apps, "place",
      "    if lookup(DEFAULT_QUEUE) is not None:\n", "    if False:\n"),
    M("placement.default_queue_unchecked", "ACL/placement",
      "YuniKorn PlaceApplication: root.default takes what no rule placed only if the user "
      "may submit there and it is not draining", apps, "place",
      "        taken = _taken(DEFAULT_QUEUE, lookup, refusal)\n",
      "        taken = Placement(DEFAULT_QUEUE)\n"),
    M("placement.forced_not_recovered", "ACL/placement",
      "YuniKorn placement.go buildRules and recovery_rule.go: the recovery rule, always "
      "last, sends a force-created application no rule places to root.@recovery@",
      apps, "place", "    if forced:\n", "    if False:\n"),
    M("placement.deny_filter_allows", "ACL/placement",
      "YuniKorn placement: a deny filter skips the rule for the users it matches",
      placement, "_filter_allows", 'allow = f.type != "deny"', "allow = True"),
    M("placement.empty_deny_filter_allows", "ACL/placement",
      "YuniKorn placement/filter.go allowUser: a filter without users or groups gives its "
      "type to everyone; an empty deny filter denies all (TestAllowNoLists)",
      placement, "_filter_allows", "    if not f.users and not f.groups:\n        return allow\n",
      "    if not f.users and not f.groups:\n        return True\n"),
    M("placement.filter_expression_whole_name", "ACL/placement",
      "YuniKorn placement/filter.go filterUser: a lone expression entry matches anywhere in "
      "the name (Go MatchString), not only the whole name",
      placement, "_listed", "return re.search(entries[0], name) is not None",
      "return re.fullmatch(entries[0], name) is not None"),
    M("placement.root_parent_unqualified", "ACL/placement",
      "YuniKorn placement/*_rule.go placeApplication: a parent rule giving 'root' is "
      "qualified again, so the queue is root.root.<name> (TestUserRuleParent)",
      placement, "_rule_path",
      'parent = given if given.startswith(ROOT_QUEUE + ".") else',
      "parent = given if given.startswith(ROOT_QUEUE) else"),
    M("placement.tag_path_one_name", "ACL/placement",
      "YuniKorn placement/tag_rule.go: a tag value starting root. is a full queue path "
      "(TestTagRulePlace)", placement, "_rule_path",
      'name in ("provided", "tag") and raw.startswith', 'name == "provided" and raw.startswith'),
    M("placement.parent_filter_ignored", "ACL/placement",
      "YuniKorn placement: a parent rule's own filter can fail the rule",
      placement, "_rule_path",
      "given = _rule_path(rule.parent, queue_name,",
      'given = _rule_path(rule.parent.model_copy(update={"filter": type(rule.filter)()}), '
      "queue_name,"),
    M("placement.dot_kept", "ACL/placement",
      "YuniKorn placement: a dot in a user name or tag value becomes _dot_ in the queue name",
      placement, "_clean", 'return part.replace(".", "_dot_")', "return part"),
    M("placement.parent_queue_taken", "ACL/placement",
      "YuniKorn placement: an application goes to a leaf; a rule naming a parent fails",
      placement, "_taken", "    if found is not None and not found.is_leaf:\n",
      "    if False:\n"),
    M("apps.unknown_gang_style_accepted", "ACL/placement",
      "002 AddApplicationRequest.gangSchedulingStyle is Hard or Soft: another value is "
      "refused (docs/design-notes.md, 'Gang scheduling')", apps, "check_submission",
      '    if style not in ("Hard", "Soft"):', "    if False:"),
    M("placement.case_sensitive", "ACL/placement",
      "YuniKorn: queue names are case-insensitive (stored and looked up in lower case)",
      placement, "fold", "return name.translate(_ASCII_LOWER)", "return name"),
)
