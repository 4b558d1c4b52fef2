"""A replayed trace reads without the JSON: deciding fields, configurations, refusals.

``yunikorn-fsm replay`` prints each step in the SI's terms. An auditor must see
every field a rule reads (priority, preemption policy, originator, tags such as
a required node, attributes), the configuration in force (a reload as a diff to
the one before), and a call the core refused as a refusal, not as a step that
held.
"""

from __future__ import annotations

import io
import json

from invariants.random_search import replay
from scheduler import si
from scheduler.trace import Step, Trace, header

RM = "rm-1"
CONFIG = json.dumps({"partitions": [{"name": "default", "queues": [
    {"name": "root", "submitacl": "*", "queues": [{"name": "a"}]}]}]})
RELOAD = json.dumps({"partitions": [{"name": "default", "queues": [
    {"name": "root", "submitacl": "*", "queues": [
        {"name": "a", "resources": {"max": {"memory": 50}}}]}]}]})


def _printed(steps: list[Step]) -> tuple[str, replay.Replayed]:
    out = io.StringIO()
    result = replay.run(Trace(header(CONFIG, 0.0), steps), out)
    return out.getvalue(), result


def _register(config: str = CONFIG) -> Step:
    return Step("register_resource_manager", si.RegisterResourceManagerRequest(
        rm_id=RM, policy_group="queues", config=config))


def _reload(config: str) -> Step:
    return Step("update_configuration", si.UpdateConfigurationRequest(rm_id=RM, config=config))


def test_the_configuration_is_printed_and_a_reload_as_a_diff() -> None:
    text, result = _printed([_register(), _reload(RELOAD), _reload(RELOAD)])
    assert result.violation is None
    lines = text.splitlines()
    assert "        |     - name: a" in lines
    assert "        | +      resources:" in lines
    assert "        | +          memory: 50" in lines
    assert "        | (configuration unchanged)" in lines


def test_a_refused_call_is_reported_as_a_refusal() -> None:
    app = si.AddApplicationRequest(application_id="app-1", queue_name="root.a",
                                   partition_name="default", ugi=si.UserGroupInformation(
                                       user="bob"))
    text, result = _printed([
        _register(),
        _reload("partitions: [unclosed"),
        Step("update_application", si.ApplicationRequest(new=[app], rm_id="nobody")),
        _reload(RELOAD),
    ])
    assert result.violation is None
    refusals = [line for line in text.splitlines() if "<- refused:" in line]
    assert len(refusals) == 2, text
    assert "YAML" in refusals[0] and "nobody" in refusals[1]
    # the refused reload never was the configuration in force: the next diff is to the first
    last = text[text.rindex("UpdateConfiguration"):]
    assert "        | +      resources:" in last.splitlines()
    assert "unclosed" not in last


def test_the_fields_that_decide_a_rule_are_printed() -> None:
    ask = si.AllocationAsk(
        allocation_key="ask-1", application_id="app-1", partition_name="default",
        resource_ask=si.Resource.of(memory=10), max_allocations=1, priority=7,
        originator=True, preemption_policy=si.PreemptionPolicy(allow_preempt_other=True),
        tags={"yunikorn.apache.org/requiredNode": "node-1"})
    app = si.AddApplicationRequest(
        application_id="app-1", queue_name="root.a", partition_name="default",
        ugi=si.UserGroupInformation(user="bob"), tags={"namespace": "ns1"})
    node = si.NodeInfo(node_id="node-1", action=si.NodeAction.CREATE,
                       attributes={"si/node-partition": "default"},
                       schedulable_resource=si.Resource.of(memory=100))
    text, _ = _printed([
        _register(),
        Step("update_node", si.NodeRequest(nodes=[node], rm_id=RM)),
        Step("update_application", si.ApplicationRequest(new=[app], rm_id=RM)),
        Step("update_allocation", si.AllocationRequest(asks=[ask], rm_id=RM)),
    ])
    assert "attributes[si/node-partition=default]" in text
    assert "tags[namespace=ns1]" in text
    assert ("AllocationAsk app-1/ask-1 x1 {memory:10} priority=7 originator "
            "preempt(self=no other=yes) tags[requiredNode=node-1]") in text
