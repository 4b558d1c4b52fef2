"""The public surface is pinned: names, signatures and state names.

The project's public contract (messages, the core, state names, lifecycle
definitions, the CLI) fixes these names and this file is its record in the
repository; extending the surface means adding to the sets below on purpose,
never renaming.
"""

from __future__ import annotations

import inspect

import invariants
import scheduler
import scheduler.rpc
import statemachines
from scheduler import si
from scheduler.cli import build_parser

SCHEDULER_EXPORTS = {
    "Clock", "ConfigError", "ManualClock", "ResourceManagerCallback", "Scheduler",
    "SchedulerError", "SystemClock", "UnknownResourceManager", "si",
}
STATEMACHINES_EXPORTS = {
    "ALLOCATION", "APPLICATION", "ASK", "LIFECYCLES", "NODE", "OBJECT", "RM",
    "InvalidTransition", "Lifecycle", "Observer", "StateSpec", "TransitionRecord",
    "TransitionSpec", "UnknownTrigger", "add_observer",
}
INVARIANTS_EXPORTS = {
    "REGISTRY", "CheckContext", "Invariant", "LifecycleRecorder", "Violation", "accounting",
    "backoff", "check_all", "gang", "lifecycle", "order", "preemption", "priority", "results",
    "scheduling",
}
RPC_EXPORTS = {
    "EXTRA_HINT", "PROTO_DIR", "Client", "Disconnected", "Server", "ServerOptions",
    "missing_extra",
}
API_METHODS = {
    # extension: the optional dialect ("seed" or "today"; scheduler.dialect)
    "register_resource_manager": ["request", "callback", "dialect"],
    "update_application": ["request"],
    "update_node": ["request"],
    "update_allocation": ["request"],
    "update_configuration": ["request"],
    "schedule": [],
    "connection_lost": ["rm_id"],
    "unregister_resource_manager": ["rm_id"],
    "state_dump": [],
    "start": ["interval"],
    "stop": [],
}
STATES = {
    "application": {"New", "Accepted", "Running", "Completing", "Completed", "Failing",
                    "Failed", "Rejected", "Resuming", "Expired"},
    "ask": {"Initial", "Pending", "Allocated", "Rejected"},
    "allocation": {"Allocated", "Releasing", "Completed", "Preempted", "Expired", "Replaced"},
    "node": {"Schedulable", "Draining", "Removed"},
    "rm": {"Init", "Running", "Paused", "Stopped"},
    "object": {"Active", "Draining", "Stopped"},
}
ENUMS = {
    si.TerminationType: {"STOPPED_BY_RM", "TIMEOUT", "PREEMPTED_BY_SCHEDULER",
                         "PLACEHOLDER_REPLACED"},
    si.NodeAction: {"CREATE", "UPDATE", "DRAIN_NODE", "DECOMISSION", "DRAIN_TO_SCHEDULABLE"},
    si.SchedulingState: {"SKIPPED", "SCHEDULED", "RESERVED", "FAILED"},
}
CLI_COMMANDS = {"check", "diagrams", "validate-config", "schema", "bench", "invariants", "flows",
                "serve", "replay", "explore"}


def test_package_exports_are_pinned() -> None:
    assert set(scheduler.__all__) == SCHEDULER_EXPORTS
    assert set(statemachines.__all__) == STATEMACHINES_EXPORTS
    assert set(invariants.__all__) == INVARIANTS_EXPORTS
    assert set(scheduler.rpc.__all__) == RPC_EXPORTS     # its classes load with the extra
    for package in (scheduler, statemachines, invariants):
        for name in package.__all__:
            assert hasattr(package, name), f"{package.__name__}.{name} is exported but missing"


def test_scheduler_methods_keep_their_signatures() -> None:
    for name, params in API_METHODS.items():
        method = getattr(scheduler.Scheduler, name)
        got = [p for p in inspect.signature(method).parameters if p != "self"]
        assert got == params, f"Scheduler.{name}{got}"
    clock = scheduler.ManualClock(start=0.0)
    assert scheduler.Scheduler(clock=clock).clock is clock


def test_state_names_and_lifecycle_keys() -> None:
    assert set(statemachines.LIFECYCLES) == set(STATES)
    for name, states in STATES.items():
        lc = statemachines.LIFECYCLES[name]
        assert set(lc.states) == states, name
        assert lc.initial in states
        for t in lc.transitions:
            assert {t.source, t.dest} <= states and t.trigger


def test_si_enums_and_resource_helpers() -> None:
    for enum_class, members in ENUMS.items():
        assert members <= set(enum_class.__members__), enum_class.__name__
    assert {"REQUEST", "APP", "NODE", "QUEUE"} <= set(si.EventRecordType.__members__)
    assert si.Resource.of(memory=10, vcore=1).as_dict() == {"memory": 10, "vcore": 1}
    ask = si.AllocationAsk.model_validate({"allocationKey": "k", "applicationID": "a"})
    assert ask.model_dump(by_alias=True)["allocationKey"] == "k"


def test_cli_commands_exist() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) >= CLI_COMMANDS  # type: ignore[arg-type]
