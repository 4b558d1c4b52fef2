"""Scenarios: a configuration reload that adds a partition, and one that removes one.

``003`` "Update and Remove partition": a partition new in the configuration is
created Active and takes work at once; one no longer configured is marked for
deletion (``Draining``), refuses new applications and nodes, and is removed
once it holds nothing.
"""

from __future__ import annotations

from scenario_helpers import NA, RM, Env

from scheduler import si

ONE = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
"""
TWO = ONE + """
  - name: gpu
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: train
"""
IN_GPU = {"si/node-partition": "gpu"}


def partition_states(env: Env) -> dict[str, str]:
    return {p["name"]: p["state"] for p in env.api.state_dump()["partitions"]}


def add_gpu_node(env: Env, node_id: str, memory: int = 100) -> None:
    env.api.update_node(si.NodeRequest(rm_id=RM, nodes=[si.NodeInfo(
        node_id=node_id, action=NA.CREATE, attributes=IN_GPU,
        schedulable_resource=si.Resource.of(memory=memory))]))


def gpu_app(env: Env, app_id: str) -> None:
    env.add_app(app_id, "root.train", partition="gpu")


def gpu_ask(env: Env, app_id: str, key: str, memory: int = 10) -> None:
    env.api.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key=key, application_id=app_id, partition_name="gpu",
        resource_ask=si.Resource.of(memory=memory))]))


def test_a_partition_added_by_a_reload_is_active_and_takes_nodes_and_applications() -> None:
    asked: list[tuple[str, str]] = []

    def predicates(args: si.PredicatesArgs) -> bool:
        asked.append((args.allocation_key, args.node_id))
        return args.node_id != "gpu-1"          # gpu-1 is tainted

    env = Env(ONE, predicates=predicates)
    env.update_config(TWO)
    assert partition_states(env) == {"default": "Active", "gpu": "Active"}
    assert {q["path"] for q in env.partition("gpu")["queues"]} == {"root", "root.train"}

    add_gpu_node(env, "gpu-1")
    add_gpu_node(env, "gpu-2")
    assert env.shim.accepted_nodes == ["gpu-1", "gpu-2"]
    gpu_app(env, "train-1")
    assert env.shim.accepted_apps == ["train-1"]
    gpu_ask(env, "train-1", "pod-1")

    assert env.schedule() == 1
    [alloc] = env.shim.allocations
    assert (alloc.node_id, alloc.partition_name) == ("gpu-2", "gpu")
    assert ("pod-1", "gpu-1") in asked           # the new partition asks the shim
    [app] = env.partition("gpu")["applications"]
    assert (app["application_id"], app["state"]) == ("train-1", "Running")
    assert env.partition("default")["applications"] == []


def test_a_partition_removed_by_a_reload_drains_refuses_new_work_and_goes_once_empty() -> None:
    env = Env(TWO)
    add_gpu_node(env, "gpu-1")
    gpu_app(env, "train-1")
    gpu_ask(env, "train-1", "pod-1")
    assert env.schedule() == 1
    env.shim.clear()

    env.update_config(ONE)
    assert partition_states(env) == {"default": "Active", "gpu": "Draining"}
    assert {q["state"] for q in env.partition("gpu")["queues"]} == {"Draining"}
    [app] = env.partition("gpu")["applications"]
    assert app["state"] == "Running" and len(app["allocations"]) == 1   # what runs stays

    gpu_app(env, "train-2")
    add_gpu_node(env, "gpu-2")
    assert [(r.application_id, r.reason) for r in env.shim.rejected_apps] == [
        ("train-2", "partition gpu is draining")]
    assert [(r.node_id, r.reason) for r in env.shim.rejected_nodes] == [
        ("gpu-2", "partition gpu is draining")]
    assert [a["application_id"] for a in env.partition("gpu")["applications"]] == [
        "train-1", "train-2"]                              # train-2 only as Rejected
    assert env.partition("gpu")["applications"][1]["state"] == "Rejected"

    env.api.update_application(si.ApplicationRequest(rm_id=RM, remove=[
        si.RemoveApplicationRequest(application_id="train-1", partition_name="gpu")]))
    assert partition_states(env)["gpu"] == "Draining"      # its node is still there
    env.node_action("gpu-1", NA.DECOMISSION)
    assert partition_states(env) == {"default": "Active"}


def test_an_empty_partition_removed_by_a_reload_goes_at_once() -> None:
    env = Env(TWO)
    env.update_config(ONE)
    assert partition_states(env) == {"default": "Active"}


def test_a_draining_partition_configured_again_is_active_again() -> None:
    env = Env(TWO)
    gpu_app(env, "train-1")
    env.update_config(ONE)
    assert partition_states(env)["gpu"] == "Draining"
    env.update_config(TWO)
    assert partition_states(env) == {"default": "Active", "gpu": "Active"}
    gpu_app(env, "train-2")
    assert env.shim.accepted_apps == ["train-1", "train-2"]
