"""Placement rules through the public API (YuniKorn's ``placementrules``)."""

from __future__ import annotations

import pydantic
import pytest

from invariants import CheckContext, LifecycleRecorder, check_all
from scheduler import ManualClock, Scheduler, si
from scheduler.testing import RecordingShim

RM = "rm-1"


def make(config: str) -> tuple[Scheduler, RecordingShim, LifecycleRecorder, ManualClock]:
    clock = ManualClock()
    api = Scheduler(clock=clock)
    rec = LifecycleRecorder(api)
    shim = RecordingShim()
    api.register_resource_manager(si.RegisterResourceManagerRequest(rm_id=RM, config=config),
                                  shim)
    return api, shim, rec, clock


def submit(api: Scheduler, app_id: str, queue: str = "", user: str = "alice",
           groups: list[str] | None = None, tags: dict[str, str] | None = None) -> None:
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id=app_id, queue_name=queue, tags=tags or {},
        ugi=si.UserGroupInformation(user=user, groups=groups or []))]))


def queues(api: Scheduler) -> list[str]:
    return [q["path"] for q in api.state_dump()["partitions"][0]["queues"]]


def app_queue(api: Scheduler, app_id: str) -> str:
    apps = api.state_dump()["partitions"][0]["applications"]
    return next(a["queue"] for a in apps if a["application_id"] == app_id)


def rules(text: str, root_extra: str = 'submitacl: "*"') -> str:
    return (f"partitions:\n  - name: default\n    placementrules:\n{text}"
            f"    queues:\n      - name: root\n        {root_extra}\n"
            "        queues:\n          - name: fixedq\n          - name: tenants\n"
            "            parent: true\n")


def test_empty_config_places_into_a_created_queue() -> None:
    """YuniKorn's default config: the namespace tag rule with create, only root configured."""
    api, shim, rec, _clock = make("")
    submit(api, "app-1", "root.elsewhere", tags={"namespace": "default"})
    assert shim.accepted_apps == ["app-1"]
    assert "root.default" in queues(api)
    assert app_queue(api, "app-1") == "root.default"
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_created_queue_is_removed_when_its_application_leaves() -> None:
    api, _shim, rec, _clock = make("")
    submit(api, "app-1", tags={"namespace": "team-x"})
    assert "root.team-x" in queues(api)
    api.update_application(si.ApplicationRequest(rm_id=RM, remove=[
        si.RemoveApplicationRequest(application_id="app-1")]))
    assert "root.team-x" not in queues(api)
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_tag_rule_uses_the_namespace_tag() -> None:
    api, shim, _rec, _clock = make(rules("      - name: tag\n        value: namespace\n"
                                         "        create: true\n"))
    submit(api, "app-1", tags={"namespace": "dev"})
    submit(api, "app-2", tags={"namespace": "my.ns"})
    assert shim.accepted_apps == ["app-1", "app-2"]
    assert app_queue(api, "app-1") == "root.dev"
    assert app_queue(api, "app-2") == "root.my_dot_ns"


def test_rule_without_create_falls_through_to_the_next() -> None:
    config = rules("      - name: user\n      - name: fixed\n        value: root.fixedq\n")
    api, shim, _rec, _clock = make(config)
    submit(api, "app-1", user="bob")
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.fixedq"
    assert "root.bob" not in queues(api)


def test_no_rule_matches_is_a_rejection_that_changes_nothing() -> None:
    api, shim, _rec, _clock = make(rules("      - name: tag\n        value: namespace\n"))
    before = queues(api)
    submit(api, "app-1", "root.elsewhere")
    assert [r.application_id for r in shim.rejected_apps] == ["app-1"]
    assert "no placement rule" in shim.rejected_apps[0].reason
    assert queues(api) == before


def test_parent_rule_and_user_names() -> None:
    config = rules("      - name: user\n        create: true\n        parent:\n"
                   "          name: fixed\n          value: root.tenants\n")
    api, shim, _rec, _clock = make(config)
    submit(api, "app-1", user="john.doe")
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.tenants.john_dot_doe"


def test_filter_deny_skips_the_rule() -> None:
    config = rules("      - name: user\n        create: true\n        filter:\n"
                   "          type: deny\n          users: [mallory]\n"
                   "      - name: fixed\n        value: root.fixedq\n")
    api, _shim, _rec, _clock = make(config)
    submit(api, "app-1", user="mallory")
    submit(api, "app-2", user="alice")
    assert app_queue(api, "app-1") == "root.fixedq"
    assert app_queue(api, "app-2") == "root.alice"


def test_acl_of_the_ancestor_applies_to_a_created_queue() -> None:
    config = rules("      - name: provided\n        create: true\n",
                   root_extra='submitacl: "alice"')
    api, shim, _rec, _clock = make(config)
    before = queues(api)
    submit(api, "app-1", "root.newq", user="eve")
    assert [r.application_id for r in shim.rejected_apps] == ["app-1"]
    assert queues(api) == before, "a rejected submission must not create a queue"
    submit(api, "app-2", "root.newq", user="alice")
    assert shim.accepted_apps == ["app-2"]


def test_created_queue_survives_configuration_updates() -> None:
    config = rules("      - name: provided\n        create: true\n")
    api, _shim, rec, _clock = make(config)
    submit(api, "app-1", "root.dyn")
    api.update_configuration(si.UpdateConfigurationRequest(rm_id=RM, config=config))
    assert "root.dyn" in queues(api)
    state = next(q["state"] for q in api.state_dump()["partitions"][0]["queues"]
                 if q["path"] == "root.dyn")
    assert state == "Active"
    assert check_all(CheckContext(api, recorder=rec)) == []


@pytest.mark.parametrize("queue", ["root.fixedq", "fixedq"])
def test_existing_leaf_is_taken_as_provided(queue: str) -> None:
    api, shim, _rec, _clock = make(rules("      - name: provided\n"))
    submit(api, "app-1", queue)
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.fixedq"


def test_a_parent_queue_fails_the_rule() -> None:
    api, shim, _rec, _clock = make(rules("      - name: provided\n        create: true\n"))
    submit(api, "app-1", "root.tenants")
    assert [r.application_id for r in shim.rejected_apps] == ["app-1"]


def test_gang_in_created_queue_is_checked_against_ancestor_max() -> None:
    config = ("partitions:\n  - name: default\n    placementrules:\n      - name: provided\n"
              "        create: true\n    queues:\n      - name: root\n        submitacl: '*'\n"
              "        queues:\n          - name: capped\n            parent: true\n"
              "            resources:\n              max: {memory: 50}\n")
    api, shim, _rec, _clock = make(config)
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id="gang-1", queue_name="root.capped.team",
        ugi=si.UserGroupInformation(user="alice"),
        placeholder_ask=si.Resource.of(memory=80))]))
    assert [r.application_id for r in shim.rejected_apps] == ["gang-1"]
    assert "root.capped.team" not in queues(api)


NS_CONFIG = ("partitions:\n  - name: default\n    placementrules:\n      - name: tag\n"
             "        value: namespace\n        create: true\n        parent:\n"
             "          name: fixed\n          value: root.ns\n"
             "    queues:\n      - name: root\n        submitacl: '*'\n        queues:\n"
             "          - name: ns\n            parent: true\n")
"""Leaves created below ``root.ns`` by the namespace tag (append ``ns``'s settings)."""


def _node_and_asks(api: Scheduler, repeats: dict[str, int]) -> int:
    """A node of 100 memory, one ask of 10 per application (``repeats`` of it), a cycle."""
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
        node_id="n1", action=si.NodeAction.CREATE,
        schedulable_resource=si.Resource.of(memory=100, vcore=10))]))
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key="k", application_id=app_id, max_allocations=n,
        resource_ask=si.Resource.of(memory=10, vcore=1)) for app_id, n in repeats.items()]))
    return api.schedule()


def test_child_template_configures_created_leaves() -> None:
    api, shim, rec, _clock = make(NS_CONFIG + (
        "            childtemplate:\n              maxapplications: 1\n"
        "              resources:\n                max: {memory: 30}\n"))
    submit(api, "app-1", tags={"namespace": "dev"})
    dev = dumped(api, "root.ns.dev")
    assert dev["max"] == {"memory": 30} and not dev["parent"]
    assert _node_and_asks(api, {"app-1": 5}) == 3, "the template's max caps the created queue"
    assert shim.accepted_apps == ["app-1"]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_created_leaf_takes_its_templates_guarantee_and_maxapplications() -> None:
    """The template's guaranteed and maxapplications reach the leaf, and nothing of the
    parent's properties (YUNIKORN-809): its stateaware stays with it, the leaf sorts fifo.
    The second application waits."""
    api, shim, rec, _clock = make(NS_CONFIG + (
        "            properties:\n              application.sort.policy: stateaware\n"
        "            childtemplate:\n              maxapplications: 1\n"
        "              resources:\n                guaranteed: {memory: 20}\n"))
    submit(api, "app-1", tags={"namespace": "dev"})
    submit(api, "app-2", tags={"namespace": "dev"})
    dev = dumped(api, "root.ns.dev")
    assert dev["guaranteed"] == {"memory": 20} and dev["sort_policy"] == "fifo"
    assert dumped(api, "root.ns")["sort_policy"] == "stateaware"
    assert _node_and_asks(api, {"app-1": 1, "app-2": 1}) == 1
    assert [a.application_id for a in shim.allocations] == ["app-1"]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_created_queue_goes_when_its_last_application_completes() -> None:
    api, shim, rec, clock = make("")
    submit(api, "app-1", tags={"namespace": "team-x"})
    assert _node_and_asks(api, {"app-1": 1}) == 1
    api.update_allocation(si.AllocationRequest(rm_id=RM, releases=si.AllocationReleasesRequest(
        allocations_to_release=[si.AllocationRelease(
            application_id="app-1", uuid=shim.allocations[0].uuid,
            termination_type=si.TerminationType.STOPPED_BY_RM)])))
    clock.advance(31)
    api.schedule()
    assert [u.state for u in shim.app_updates][-1] == "Completed"
    assert "root.team-x" not in queues(api)
    assert check_all(CheckContext(api, recorder=rec)) == []


@pytest.mark.parametrize("text, reason", [
    # the provided path runs through the leaf root.fixedq: placed, then not created
    ("      - name: provided\n        create: true\n",
     "queue root.fixedq.sub can not be created: root.fixedq is a leaf queue"),
    # the parent rule (provided) names the leaf root.fixedq.sub's parent path... through a leaf
    ("      - name: user\n        create: true\n        parent:\n          name: provided\n"
     "          create: true\n",
     "queue root.fixedq.sub.alice can not be created: root.fixedq is a leaf queue"),
    # the parent rule names the leaf itself (the application asks for root.fixedq): it errs
    ("      - name: user\n        create: true\n        parent:\n          name: provided\n",
     "placement rule user failed: parent rule provided named the leaf queue root.fixedq"),
])
def test_a_create_rule_whose_path_crosses_a_leaf_rejects_the_application(
        text: str, reason: str) -> None:
    """YuniKorn: a rule that would create a queue below a leaf places the application there
    and the creation fails (``createQueue``), and a parent rule that names a leaf is an
    error (``parent rule returned a leaf queue``); either rejects the application, and the
    rules after it are not tried."""
    config = rules(text + "      - name: fixed\n        value: root.tenants.fallback\n"
                   "        create: true\n")
    api, shim, rec, _clock = make(config)
    before = queues(api)
    submit(api, "app-1", "root.fixedq" if "parent rule" in reason else "root.fixedq.sub")
    assert [(r.application_id, r.reason) for r in shim.rejected_apps] == [("app-1", reason)]
    assert queues(api) == before
    leaf = next(q for q in api.state_dump()["partitions"][0]["queues"]
                if q["path"] == "root.fixedq")
    assert not leaf["parent"]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_an_invalid_queue_name_rejects_the_application_before_root_default() -> None:
    """YuniKorn's rules err on a name that is not valid: the application is rejected, and
    neither a later rule nor ``root.default`` takes it."""
    config = ("partitions:\n  - name: default\n    placementrules:\n"
              "      - name: tag\n        value: namespace\n        create: true\n"
              "      - name: fixed\n        value: root.default\n"
              "    queues:\n      - name: root\n        submitacl: '*'\n        queues:\n"
              "          - name: default\n")
    api, shim, rec, _clock = make(config)
    submit(api, "app-1", tags={"namespace": "bad name"})
    submit(api, "app-2", tags={"namespace": "good"})
    assert [(r.application_id, r.reason) for r in shim.rejected_apps] == [
        ("app-1", "placement rule tag failed: queue name 'bad name' in 'root.bad name' is "
                  "not valid")]
    assert shim.accepted_apps == ["app-2"]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_no_queue_name_and_no_placement_rules_is_rejected_with_its_own_reason() -> None:
    api, shim, _rec, _clock = make(
        "partitions:\n  - name: default\n    queues:\n      - name: root\n"
        "        submitacl: '*'\n        queues:\n          - name: a\n")
    before = queues(api)
    submit(api, "app-1", "")
    # A blank name does not validate as a message; one built without validation
    # (model_construct) reaches the core and gets the same reason.
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[
        si.AddApplicationRequest.model_construct(
            application_id="app-2", queue_name="   ", partition_name="", tags={},
            ugi=si.UserGroupInformation(user="alice"), placeholder_ask=None,
            execution_timeout_milli_seconds=0, gang_scheduling_style="")]))
    assert [(r.application_id, r.reason) for r in shim.rejected_apps] == [
        ("app-1", "no queue name given and no placement rules configured"),
        ("app-2", "no queue name given and no placement rules configured")]
    assert queues(api) == before
    with pytest.raises(pydantic.ValidationError, match="must not be blank"):
        si.AddApplicationRequest(application_id="app-3", queue_name="   ",
                                 ugi=si.UserGroupInformation(user="alice"))


# -- childtemplate inheritance (YUNIKORN-193, YUNIKORN-814) ----------------------------

def _inherit_config(root_queues: str, rule_parent: str) -> str:
    """A user rule creating its leaf below the parent the fixed parent rule names (created
    when missing)."""
    return ("partitions:\n  - name: default\n    placementrules:\n      - name: user\n"
            "        create: true\n        parent:\n          name: fixed\n"
            f"          value: {rule_parent}\n          create: true\n"
            "    queues:\n      - name: root\n        submitacl: '*'\n        queues:\n"
            + root_queues)


TEMPLATED = ("          - name: org\n            parent: true\n            childtemplate:\n"
             "              maxapplications: 1\n              properties:\n"
             "                application.sort.policy: stateaware\n"
             "                priority.offset: '7'\n              resources:\n"
             "                max: {memory: 30}\n                guaranteed: {memory: 10}\n")


def dumped(api: Scheduler, path: str) -> dict[str, object]:
    return next(q for q in api.state_dump()["partitions"][0]["queues"] if q["path"] == path)


def test_a_leaf_created_two_levels_below_a_template_gets_it() -> None:
    """YuniKorn ``addChildQueue``: a created parent inherits its parent's template, and the
    leaf created below it takes it (max, guaranteed, maxapplications, properties)."""
    api, shim, rec, _clock = make(_inherit_config(TEMPLATED, "root.org.team"))
    submit(api, "app-1")
    submit(api, "app-2")
    assert shim.accepted_apps == ["app-1", "app-2"]
    assert app_queue(api, "app-1") == "root.org.team.alice"
    leaf = dumped(api, "root.org.team.alice")
    assert leaf["max"] == {"memory": 30} and leaf["guaranteed"] == {"memory": 10}
    assert leaf["sort_policy"] == "stateaware" and not leaf["parent"]
    team = dumped(api, "root.org.team")
    assert team["max"] is None and team["parent"]
    api.update_node(si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
        node_id="n1", action=si.NodeAction.CREATE,
        schedulable_resource=si.Resource.of(memory=100, vcore=10))]))
    api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key=f"k{i}", application_id=app, max_allocations=5,
        resource_ask=si.Resource.of(memory=10, vcore=1))
        for i, app in enumerate(("app-1", "app-2"))]))
    assert api.schedule() == 3, "the inherited template's max caps the leaf"
    apps = {a["application_id"]: a for a in api.state_dump()["partitions"][0]["applications"]}
    assert not apps["app-2"]["allocated"], "maxapplications 1 from the inherited template"
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_configured_parent_without_a_template_hands_its_parents_down() -> None:
    """A configured parent with no childtemplate of its own inherits its parent's."""
    api, _shim, rec, _clock = make(_inherit_config(
        TEMPLATED + "            queues:\n              - name: dept\n"
        "                parent: true\n", "root.org.dept"))
    submit(api, "app-1")
    assert app_queue(api, "app-1") == "root.org.dept.alice"
    assert dumped(api, "root.org.dept.alice")["max"] == {"memory": 30}
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_parents_own_template_overrides_the_inherited_one() -> None:
    """YuniKorn ``TestTemplateIsNotOverrideByParent``: a parent's own template wins."""
    api, _shim, rec, _clock = make(_inherit_config(
        TEMPLATED + "            queues:\n              - name: dept\n"
        "                parent: true\n                childtemplate:\n"
        "                  resources:\n                    max: {memory: 20}\n",
        "root.org.dept.team"))
    submit(api, "app-1")
    assert app_queue(api, "app-1") == "root.org.dept.team.alice"
    leaf = dumped(api, "root.org.dept.team.alice")
    assert leaf["max"] == {"memory": 20} and leaf["guaranteed"] is None
    assert leaf["sort_policy"] == "fifo"
    assert check_all(CheckContext(api, recorder=rec)) == []


@pytest.mark.parametrize("empty", [
    "                childtemplate: {}\n",
    "                childtemplate:\n                  maxapplications: 0\n"
    "                  properties: {}\n                  resources: {max: {}}\n",
], ids=["bare", "zeroes"])
def test_an_empty_template_counts_as_none(empty: str) -> None:
    """YuniKorn ``TestSetTemplate``: a template setting nothing is no template, so the
    parent's is inherited instead."""
    api, _shim, rec, _clock = make(_inherit_config(
        TEMPLATED + "            queues:\n              - name: dept\n"
        "                parent: true\n" + empty, "root.org.dept"))
    submit(api, "app-1")
    assert dumped(api, "root.org.dept.alice")["max"] == {"memory": 30}
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_gang_admission_honours_an_inherited_template_max() -> None:
    api, shim, rec, _clock = make(_inherit_config(TEMPLATED, "root.org.team"))
    for app_id, memory in (("gang-big", 40), ("gang-ok", 20)):
        api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
            application_id=app_id, queue_name="", ugi=si.UserGroupInformation(user="alice"),
            placeholder_ask=si.Resource.of(memory=memory))]))
    assert [r.application_id for r in shim.rejected_apps] == ["gang-big"]
    assert shim.accepted_apps == ["gang-ok"]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_reload_keeps_a_created_parents_template_and_recomputes_configured_ones() -> None:
    """Design notes: a created parent keeps the template it inherited (a reload leaves
    created queues alone); a configured parent's inherited template follows the reload."""
    api, shim, rec, _clock = make(_inherit_config(
        TEMPLATED + "            queues:\n              - name: dept\n"
        "                parent: true\n", "root.org.team"))
    submit(api, "app-1")
    reloaded = _inherit_config(TEMPLATED.replace("{memory: 30}", "{memory: 50}")
                               + "            queues:\n              - name: dept\n"
                               "                parent: true\n", "root.org.team")
    api.update_configuration(si.UpdateConfigurationRequest(rm_id=RM, config=reloaded))
    submit(api, "app-2", user="bob")
    assert dumped(api, "root.org.team.bob")["max"] == {"memory": 30}
    reloaded = reloaded.replace("value: root.org.team", "value: root.org.dept")
    api.update_configuration(si.UpdateConfigurationRequest(rm_id=RM, config=reloaded))
    submit(api, "app-3", user="carol")
    assert dumped(api, "root.org.dept.carol")["max"] == {"memory": 50}
    assert shim.accepted_apps == ["app-1", "app-2", "app-3"]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_parent_rules_filter_fails_the_whole_rule() -> None:
    """The user rule's parent (a fixed parent with a deny filter for bob) fails for bob: the
    rule fails and the next one places him; alice gets her created queue."""
    api, shim, rec, _clock = make(rules(
        "      - name: user\n        create: true\n        parent:\n          name: fixed\n"
        "          value: root.tenants\n          filter: {type: deny, users: [bob]}\n"
        "      - name: fixed\n        value: root.fixedq\n"))
    submit(api, "app-a", user="alice")
    submit(api, "app-b", user="bob")
    assert shim.accepted_apps == ["app-a", "app-b"]
    assert app_queue(api, "app-a") == "root.tenants.alice"
    assert app_queue(api, "app-b") == "root.fixedq"
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_rule_naming_a_parent_queue_fails_and_the_next_rule_places() -> None:
    """Applications go to leaves: provided names the parent root.tenants and fails."""
    api, shim, _rec, _clock = make(rules(
        "      - name: provided\n      - name: fixed\n        value: root.fixedq\n"))
    submit(api, "app-1", "root.tenants")
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.fixedq"


def test_queue_names_from_the_shim_fold_to_lower_case() -> None:
    """``root.FixedQ`` finds the queue configured as ``fixedq`` (YuniKorn stores and looks up
    queue names in lower case)."""
    api, shim, _rec, _clock = make(rules("      - name: provided\n"))
    submit(api, "app-1", "root.FixedQ")
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.fixedq"


# YuniKorn's ``PlaceApplication``: a refusal fails the rule, and root.default takes what no
# rule places (``pkg/scheduler/placement/placement.go``).

_REFUSING = """partitions:
  - name: default
    placementrules:
      - name: provided
      - name: fixed
        value: root.open
    queues:
      - name: root
        queues:
          - name: closed
            submitacl: "bob"
          - name: open
            submitacl: "*"
%s"""
_DEFAULT_LEAF = """          - name: default
            submitacl: "alice"
"""


def test_a_queue_the_user_may_not_submit_to_passes_the_application_to_the_next_rule() -> None:
    """``provided`` names ``root.closed``, whose ACL refuses alice: the rule fails like one
    naming a parent, and ``fixed`` places her application; bob stays where he asked."""
    api, shim, rec, _clock = make(_REFUSING % "")
    submit(api, "app-1", "root.closed", user="alice")
    submit(api, "app-2", "root.closed", user="bob")
    assert shim.accepted_apps == ["app-1", "app-2"]
    assert app_queue(api, "app-1") == "root.open"
    assert app_queue(api, "app-2") == "root.closed"
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_draining_leaf_passes_the_application_to_the_next_rule() -> None:
    """A reload removes ``root.closed`` while bob's application runs there: it drains, and a
    new application asking for it goes where the next rule says."""
    api, shim, rec, _clock = make(_REFUSING % "")
    submit(api, "app-1", "root.closed", user="bob")
    without_closed = (_REFUSING % "").replace(
        '          - name: closed\n            submitacl: "bob"\n', "")
    api.update_configuration(si.UpdateConfigurationRequest(rm_id=RM, config=without_closed))
    submit(api, "app-2", "root.closed", user="bob")
    assert shim.accepted_apps == ["app-1", "app-2"]
    assert app_queue(api, "app-2") == "root.open"
    states = {q["path"]: q["state"] for q in api.state_dump()["partitions"][0]["queues"]}
    assert states["root.closed"] == "Draining"
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_root_default_takes_what_no_rule_places_if_the_user_may_submit_there() -> None:
    """Only ``tag`` is configured and the application has no namespace: ``root.default``
    takes alice's; its ACL refuses carol, whose rejection says why each queue refused."""
    config = ("partitions:\n  - name: default\n    placementrules:\n"
              "      - name: tag\n        value: namespace\n"
              "    queues:\n      - name: root\n        queues:\n" + _DEFAULT_LEAF)
    api, shim, rec, _clock = make(config)
    submit(api, "app-1", user="alice")
    submit(api, "app-2", user="carol")
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.default"
    assert [(r.application_id, r.reason) for r in shim.rejected_apps] == [(
        "app-2", "no placement rule (tag) found a queue for the application: user 'carol' is "
                 "not allowed to submit to queue root.default")]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_without_rules_a_missing_or_unnamed_queue_goes_to_root_default() -> None:
    """No rules: the implicit ``provided`` rule, then ``root.default``."""
    config = ("partitions:\n  - name: default\n    queues:\n      - name: root\n"
              "        queues:\n          - name: a\n            submitacl: \"*\"\n"
              + _DEFAULT_LEAF)
    api, shim, rec, _clock = make(config)
    submit(api, "app-1", "root.a")
    submit(api, "app-2", "root.nope")
    submit(api, "app-3", "")
    submit(api, "app-4", "root.nope", user="carol")
    assert shim.accepted_apps == ["app-1", "app-2", "app-3"]
    assert [app_queue(api, a) for a in ("app-1", "app-2", "app-3")] == [
        "root.a", "root.default", "root.default"]
    submit(api, "app-5", "root.default", user="carol")
    assert [(r.application_id, r.reason) for r in shim.rejected_apps] == [
        ("app-4", "queue root.nope does not exist; user 'carol' is not allowed to submit to "
                  "queue root.default"),
        ("app-5", "user 'carol' is not allowed to submit to queue root.default")]
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_leaf_created_below_a_fair_parent_without_a_template_is_fifo_and_takes_gangs() -> None:
    """YUNIKORN-809: a created queue takes its parent's childtemplate, never its parent's
    properties, so a gang is admitted below a fair parent that has no template."""
    api, shim, rec, _clock = make(NS_CONFIG + (
        "            properties:\n              application.sort.policy: fair\n"))
    api.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id="gang-1", tags={"namespace": "dev"},
        ugi=si.UserGroupInformation(user="alice"),
        placeholder_ask=si.Resource.of(memory=10))]))
    assert shim.accepted_apps == ["gang-1"]
    assert dumped(api, "root.ns.dev")["sort_policy"] == "fifo"
    assert dumped(api, "root.ns")["sort_policy"] == "fair"
    assert check_all(CheckContext(api, recorder=rec)) == []


# -- YuniKorn's own readings where the seeds are silent (apache/yunikorn-core be3bb48,
#    pkg/scheduler/placement): each test names the YuniKorn test it mirrors.

def test_a_parent_rule_giving_root_places_below_root_root() -> None:
    """``user_rule_test.go`` TestUserRuleParent / ``fixed_rule_test.go``: a parent rule that
    gives ``root`` is qualified again, so the user's queue is ``root.root.<user>``."""
    api, shim, rec, _clock = make(rules(
        "      - name: user\n        create: true\n"
        "        parent: {name: fixed, value: root}\n"))
    submit(api, "app-1", user="testchild")
    assert shim.accepted_apps == ["app-1"]
    assert app_queue(api, "app-1") == "root.root.testchild"
    assert check_all(CheckContext(api, recorder=rec)) == []


def test_a_user_named_root_gets_root_root() -> None:
    """``user_rule.go`` placeApplication: the user's name is one queue below root."""
    api, _shim, _rec, _clock = make(rules("      - name: user\n        create: true\n"))
    submit(api, "app-1", user="root")
    assert app_queue(api, "app-1") == "root.root"


def test_a_deny_filter_without_lists_denies_everyone() -> None:
    """``filter_test.go`` TestAllowNoLists: an empty filter gives its type to everyone."""
    api, _shim, _rec, _clock = make(rules(
        "      - name: fixed\n        value: root.tenants.x\n        create: true\n"
        "        filter: {type: deny}\n"
        "      - name: fixed\n        value: root.fixedq\n"))
    submit(api, "app-1", user="alice")
    assert app_queue(api, "app-1") == "root.fixedq"


def test_a_lone_expression_filter_matches_anywhere_in_the_name() -> None:
    """``filter_test.go`` TestFilterUser / TestComplexExpression: one entry with expression
    characters is an expression matched with Go's MatchString (anywhere in the name);
    entries of a longer list are names."""
    api, _shim, _rec, _clock = make(rules(
        "      - name: fixed\n        value: root.fixedq\n"
        "        filter: {type: allow, users: ['li']}\n"
        "      - name: user\n        create: true\n"
        "        parent: {name: fixed, value: root.tenants}\n"))
    submit(api, "app-1", user="alice")          # 'li' has no expression character: a name
    assert app_queue(api, "app-1") == "root.tenants.alice"
    api2, _s, _r, _c = make(rules(
        "      - name: fixed\n        value: root.fixedq\n"
        "        filter: {type: allow, users: ['l(i)']}\n"
        "      - name: user\n        create: true\n"
        "        parent: {name: fixed, value: root.tenants}\n"))
    submit(api2, "app-1", user="alice")         # an expression found inside 'alice'
    assert app_queue(api2, "app-1") == "root.fixedq"
    api3, _s, _r, _c = make(rules(
        "      - name: fixed\n        value: root.fixedq\n"
        "        filter: {type: allow, users: ['^a.*', 'bob']}\n"
        "      - name: user\n        create: true\n"
        "        parent: {name: fixed, value: root.tenants}\n"))
    submit(api3, "app-1", user="alice")         # in a list of two, '^a.*' is only a name
    assert app_queue(api3, "app-1") == "root.tenants.alice"


def test_a_tag_value_that_is_a_path_is_the_queue() -> None:
    """``tag_rule_test.go`` TestTagRulePlace: a value starting ``root.`` is a full path."""
    api, _shim, _rec, _clock = make(rules(
        "      - name: tag\n        value: namespace\n        create: true\n"))
    submit(api, "app-1", tags={"namespace": "root.tenants.team"})
    assert app_queue(api, "app-1") == "root.tenants.team"
    submit(api, "app-2", tags={"namespace": "team.b"})
    assert app_queue(api, "app-2") == "root.team_dot_b"


def test_a_provided_name_that_is_not_a_path_is_one_name() -> None:
    """``provided_rule_test.go`` TestProvidedRulePlace: a name without ``root.`` is one
    queue name below root, its dots replaced."""
    api, _shim, _rec, _clock = make(rules("      - name: provided\n        create: true\n"))
    submit(api, "app-1", queue="tenants.x")
    assert app_queue(api, "app-1") == "root.tenants_dot_x"
    submit(api, "app-2", queue="root.tenants.x")
    assert app_queue(api, "app-2") == "root.tenants.x"


def test_root_default_takes_what_a_refusing_rule_left() -> None:
    """``placement.go`` buildRules / PlaceApplication: the recovery rule is always last, so
    ``root.default`` stands in whenever the configured rules placed nothing, also when
    their queue refused the user."""
    config = ("partitions:\n  - name: default\n    placementrules:\n"
              "      - name: fixed\n        value: root.closed\n"
              "    queues:\n      - name: root\n        queues:\n"
              "          - name: default\n            submitacl: '*'\n"
              "          - name: closed\n            submitacl: bob\n")
    api, _shim, _rec, _clock = make(config)
    submit(api, "app-1", user="alice")
    assert app_queue(api, "app-1") == "root.default"
    submit(api, "app-2", user="bob")
    assert app_queue(api, "app-2") == "root.closed"


def test_a_forced_application_no_rule_places_goes_to_the_recovery_queue() -> None:
    """``recovery_rule.go`` placeApplication (``placement_test.go`` TestForcePlaceApp): an
    application the shim forces in (its pods run already) that no rule places goes to
    ``root.@recovery@``, created for it, whatever the ACLs; a rule that places it wins."""
    config = ("partitions:\n  - name: default\n    placementrules:\n"
              "      - name: provided\n"
              "    queues:\n      - name: root\n        submitacl: bob\n        queues:\n"
              "          - name: default\n          - name: a\n")
    api, shim, rec, _clock = make(config)
    forced = {"yunikorn.apache.org/force-create": "true"}
    submit(api, "app-1", queue="root.gone", user="alice", tags=forced)
    assert app_queue(api, "app-1") == "root.@recovery@"
    assert "root.@recovery@" in queues(api)
    submit(api, "app-2", queue="root.a", user="alice", tags=forced)
    assert [r.application_id for r in shim.rejected_apps] == []
    assert app_queue(api, "app-2") == "root.@recovery@"      # alice may not submit to root.a
    submit(api, "app-3", queue="root.a", user="bob", tags=forced)
    assert app_queue(api, "app-3") == "root.a"
    submit(api, "app-4", queue="root.gone", user="alice")
    assert [r.application_id for r in shim.rejected_apps] == ["app-4"]
    assert check_all(CheckContext(api, recorder=rec)) == []
