"""The checker's own reading of YuniKorn's preemption rules
(``invariants/properties/preemptions.py``).

Each case restates a rule of YuniKorn's preemption design or one of its Go
tests, against the checker's functions, not the core's: the checker must be
right on its own for a broken core to be caught.
"""

from __future__ import annotations

import json
import random

import pytest

from invariants.actions import (
    Gen,
    Scenario,
    configs,
    preemption_endings,
    preemption_stories,
    register,
)
from invariants.modelshim.world import World
from invariants.properties import preemptions as preemption
from invariants.readings import model
from invariants.selftest.mutants import applied, by_name
from scheduler import si
from scheduler.trace import Step


def _part(tree: dict[str, object], **partition: object) -> model.PartitionModel:
    text = json.dumps({"partitions": [{"name": "default", "queues": [tree], **partition}]})
    part = model.read(text).partition("default")
    assert part is not None
    return part


def _q(name: str, *children: dict[str, object], props: dict[str, str] | None = None,
       guaranteed: int | None = None, max_: int | None = None) -> dict[str, object]:
    q: dict[str, object] = {"name": name}
    if children:
        q["queues"] = list(children)
    if props:
        q["properties"] = props
    resources: dict[str, object] = {}
    if guaranteed is not None:
        resources["guaranteed"] = {"memory": guaranteed}
    if max_ is not None:
        resources["max"] = {"memory": max_}
    if resources:
        q["resources"] = resources
    return q


@pytest.mark.parametrize(("text", "seconds"), [
    ("1ms", 0.001), ("5s", 5.0), ("1m30s", 90.0), ("2h", 7200.0), (".5s", 0.5),
    ("0s", 30.0), ("-2s", 30.0), ("x", 30.0), ("5", 30.0), ("", 30.0), ("1s x", 30.0),
])
def test_delay_is_a_go_duration_with_30s_for_bad_or_non_positive(text: str,
                                                                   seconds: float) -> None:
    props = {"preemption.delay": text} if text else None
    part = _part(_q("root", _q("leaf", props=props)))
    assert preemption.delay(part.queues["root.leaf"]) == pytest.approx(seconds)


def test_delay_on_a_parent_is_its_leaves_default() -> None:
    part = _part(_q("root", _q("p", _q("leaf"), props={"preemption.delay": "1ms"})))
    assert preemption.delay(part.queues["root.p.leaf"]) == pytest.approx(0.001)


@pytest.mark.parametrize(("parent", "child", "disabled"), [
    ("disabled", None, True), ("Disabled", None, True), ("disabled", "default", False),
    ("disabled", "fence", False), ("disabled", "none", False), ("fence", None, False),
    (None, "disabled", True), (None, None, False),
])
def test_only_disabled_is_inherited(parent: str | None, child: str | None,
                                    disabled: bool) -> None:
    part = _part(_q("root", _q(
        "p", _q("leaf", props={"preemption.policy": child} if child else None),
        props={"preemption.policy": parent} if parent else None)))
    chain = part.chain("root.p.leaf")
    assert preemption.disabled(chain) is disabled


def test_guarantee_and_cap_take_the_smallest_on_the_path() -> None:
    part = _part(_q("root", _q("p", _q("leaf", max_=4), guaranteed=5, max_=10)))
    chain = part.chain("root.p.leaf")
    assert preemption.guaranteed(chain) == {"memory": 5}
    assert preemption.cap(chain, {"memory": 100, "vcore": 500}) == {"memory": 4, "vcore": 500}


def test_at_or_above_guarantee() -> None:
    """YuniKorn TestPreemption: leaf1 guaranteed 5 holding exactly 5 stays at its guarantee."""
    part = _part(_q("root", _q("parent", _q("leaf1", guaranteed=5), _q("leaf2", guaranteed=5),
                               max_=10)))
    chain = part.chain("root.parent.leaf1")
    cluster = {"memory": 20}
    assert preemption.at_or_above({"memory": 5}, chain, cluster)
    assert not preemption.at_or_above({"memory": 4}, chain, cluster)
    assert preemption.above_cap({"memory": 10}, preemption.cap(chain, cluster))
    assert not preemption.above_cap({"memory": 5}, preemption.cap(chain, cluster))


def _victims_tree(parent1: dict[str, str] | None = None, parent2: dict[str, str] | None = None,
                  leaf1: dict[str, str] | None = None) -> model.PartitionModel:
    return _part(_q("root",
                    _q("parent1", _q("leaf1", props=leaf1), props=parent1, guaranteed=100,
                       max_=200),
                    _q("parent2", _q("leaf2"), props=parent2, guaranteed=100, max_=200)))


@pytest.mark.parametrize(("parent1", "parent2", "eligible"), [
    (None, None, True),
    (None, {"priority.offset": "1001"}, False),
    (None, {"priority.policy": "fence", "priority.offset": "1"}, False),
    ({"priority.policy": "fence", "priority.offset": "-1001"}, None, False),
    (None, {"priority.policy": "fence", "priority.offset": "0"}, True),
])
def test_victim_priority_follows_offsets_and_fences(parent1: dict[str, str] | None,
                                                     parent2: dict[str, str] | None,
                                                     eligible: bool) -> None:
    """YuniKorn TestFindEligiblePreemptionVictims: an ask of priority 0 in parent1.leaf1
    against allocations of priority -1000 in parent2.leaf2."""
    part = _victims_tree(parent1, parent2)
    bound = preemption.victim_priority_bound(part, "root.parent1.leaf1", 0, "root",
                                             "root.parent2.leaf2")
    assert (bound is not None and bound >= -1000) is eligible


def _created(part: model.PartitionModel, parent: str) -> dict[str, model.Created]:
    """The shim's record of a leaf created below ``parent`` now."""
    path = f"{parent}.made"
    return {path: model.created_record(part, path, True)}


@pytest.mark.parametrize(("template", "disabled"), [
    (None, False),
    ({"preemption.policy": "default"}, False),
    ({"preemption.policy": "Disabled"}, True),
    ({"application.sort.policy": "fair"}, False),
])
def test_a_created_leaf_takes_its_preemption_policy_from_its_template_alone(
        template: dict[str, str] | None, disabled: bool) -> None:
    """YUNIKORN-809: a created leaf has its parent's childtemplate's properties and nothing
    of its parent's own, so a disabled parent does not disable it."""
    parent = _q("p", _q("leaf"), props={"preemption.policy": "disabled",
                                       "preemption.delay": "1ms"})
    if template is not None:
        parent["childtemplate"] = {"properties": template,
                                   "resources": {"guaranteed": {"memory": 10}}}
    part = _part(_q("root", parent))
    made = _created(part, "root.p")
    chain = [model.queue_at(part, made, p) for p in model.path_prefixes("root.p.made")]
    assert all(q is not None for q in chain)
    leaf = chain[0]
    assert leaf is not None and leaf.created and leaf.leaf
    assert preemption.disabled([q for q in chain if q is not None]) is disabled
    assert preemption.disabled(part.chain("root.p.leaf"))
    assert preemption.delay(leaf) == pytest.approx(30.0)
    assert dict(leaf.guaranteed or {}) == ({"memory": 10} if template is not None else {})


def test_a_created_leaf_has_its_template_delay_and_fence() -> None:
    parent = _q("p", _q("leaf"), props={"preemption.policy": "fence"})
    parent["childtemplate"] = {"properties": {"preemption.delay": "5s",
                                              "preemption.policy": "fence"}}
    part = _part(_q("root", parent))
    made = _created(part, "root.p")
    leaf = model.queue_at(part, made, "root.p.made")
    assert leaf is not None
    assert preemption.delay(leaf) == pytest.approx(5.0)
    chain = [q for p in model.path_prefixes("root.p.made")
             if (q := model.queue_at(part, made, p)) is not None]
    assert preemption.fence_root(chain) == "root.p.made"
    assert model.queue_at(part, {}, "root.p.made") is None


def test_preemption_fence_is_the_first_fenced_queue_from_the_leaf_up() -> None:
    part = _victims_tree(parent1={"preemption.policy": "fence"})
    assert preemption.fence_root(part.chain("root.parent1.leaf1")) == "root.parent1"
    part = _victims_tree(leaf1={"preemption.policy": "fence"})
    assert preemption.fence_root(part.chain("root.parent1.leaf1")) == "root.parent1.leaf1"
    part = _victims_tree(parent2={"preemption.policy": "fence"})
    assert preemption.fence_root(part.chain("root.parent1.leaf1")) == "root"


def test_partition_switch_is_on_unless_false() -> None:
    assert _part(_q("root", _q("a"))).preemption
    assert not _part(_q("root", _q("a")), preemption={"enabled": False}).preemption


LIMITED = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: hog
            resources: {guaranteed: {memory: 10}}
          - name: late
            resources: {guaranteed: {memory: 40}}
            properties: {preemption.delay: 1s}
            limits:
              - users: ["*"]
                maxresources: {memory: 10}
"""


def _limited_story() -> list[Step]:
    """bob holds 10 in ``late`` (his user limit), alice fills the rest of the node from
    ``hog`` (over its guarantee); then bob asks 10 more with allowPreemptOther. His leaf
    would stay within its guarantee, the hog is above its own: only bob's limit stands in
    the way, and a limit is never a reason to preempt."""

    def submit(app: str, queue: str, user: str) -> Step:
        return Step("update_application", request=si.ApplicationRequest(rm_id="rm", new=[
            si.AddApplicationRequest(application_id=app, queue_name=queue,
                                     ugi=si.UserGroupInformation(user=user))]))

    def ask(app: str, key: str, repeats: int, preempt: bool = False) -> Step:
        return Step("update_allocation", request=si.AllocationRequest(rm_id="rm", asks=[
            si.AllocationAsk(allocation_key=key, application_id=app,
                             resource_ask=si.Resource.of(memory=10), max_allocations=repeats,
                             preemption_policy=si.PreemptionPolicy(
                                 allow_preempt_self=True, allow_preempt_other=preempt))]))

    return [
        Step("register_resource_manager", request=si.RegisterResourceManagerRequest(
            rm_id="rm", policy_group="queues", config=LIMITED)),
        Step("update_node", request=si.NodeRequest(rm_id="rm", nodes=[si.NodeInfo(
            node_id="n1", action=si.NodeAction.CREATE,
            schedulable_resource=si.Resource.of(memory=40))])),
        submit("bob-app", "root.late", "bob"), ask("bob-app", "first", 1), Step.schedule(),
        submit("hog-app", "root.hog", "alice"), ask("hog-app", "fill", 3), Step.schedule(),
        ask("bob-app", "second", 1, preempt=True), Step.schedule(),
        Step.advance(5.0), Step.schedule(),
    ]


def _run(steps: list[Step]) -> list[str]:
    world = World()
    found: list[str] = []
    for step in steps:
        found += [f"{v.invariant}: {v.explanation}" for v in world.run(step)]
    return found


def test_an_ask_its_user_limit_holds_back_never_preempts() -> None:
    assert _run(_limited_story()) == []


def test_a_core_that_preempts_for_a_limit_held_ask_is_caught() -> None:
    """A directed test of ``preemption.limit_held_preempts``: the random search with the
    self-test's seed needs ~345 test cases to build this state."""
    with applied(by_name("preemption.limit_held_preempts")):
        found = _run(_limited_story())
    assert found and found[0].startswith("preemption.trigger: ")
    assert "never a reason to preempt" in found[0] and "user bob" in found[0]


def _ending(config: str, kind: str, ask_leaf: str, victim: str) -> list[str]:
    """One directed ending of the preemption story (``actions/preemption_endings.py``), played
    alone on a fresh core after the registration; the violations it caused."""
    pool = "second" if kind in ("room", "required") else kind
    homes = preemption_stories._ending_homes(config)[pool]
    home = next(h for h in homes if h[1:3] == (ask_leaf, victim))
    endings = preemption_endings
    play = {"fence": endings._fence_ending, "limit": endings._limit_ending,
            "parent": endings._parent_ending, "second": endings._second_ending,
            "room": endings._room_ending, "required": endings._required_ending}[kind]
    world = World(1_000.0)
    gen = Gen(world, Scenario.draw(1, config), random.Random(1))
    found: list[str] = []
    for step in (*register(gen),):
        found += [f"{v.invariant}: {v.explanation}" for v in world.run(step)]
    for step in play(gen, *home):
        found += [f"{v.invariant}: {v.explanation}" for v in world.run(step)]
    return found


@pytest.mark.parametrize(("config", "kind", "ask_leaf", "victim", "mutant", "rule"), [
    ("PREEMPTION", "fence", "root.fenced.f1", "root.a", "preemption.fence_ignored",
     "preemption.victims"),
    ("DEFAULT", "limit", "root.a", "root.b.b1", "preemption.limit_held_preempts",
     "preemption.trigger"),
    ("PREEMPTION", "parent", "root.fenced.f1", "root.fenced.f2", "preemption.ask_not_within",
     "preemption.outcome"),
    ("PREEMPTION", "second", "root.a", "root.b", "preemption.victim_already_released",
     "protocol.no_exception"),
    ("PREEMPTION", "room", "root.a", "root.b", "preemption.while_it_fits",
     "preemption.trigger"),
    ("PREEMPTION", "required", "root.a", "root.b", "preemption.required_oldest_first",
     "preemption.order"),
    ("PREEMPTION", "required", "root.a", "root.b", "preemption.required_takes_more",
     "preemption.enough"),
])
def test_each_directed_ending_passes_on_the_core_and_catches_its_broken_core(
        config: str, kind: str, ask_leaf: str, victim: str, mutant: str, rule: str) -> None:
    text = getattr(configs, config)
    assert _ending(text, kind, ask_leaf, victim) == []
    with applied(by_name(mutant)):
        found = _ending(text, kind, ask_leaf, victim)
    assert found and found[0].startswith(rule + ": ")
