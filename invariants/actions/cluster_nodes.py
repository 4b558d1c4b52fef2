"""Rules of the cluster: nodes come, change, drain, come back and go."""

from __future__ import annotations

from collections.abc import Iterator

from invariants.actions.draw import NA, Gen, rule
from scheduler import si
from scheduler.trace import Step


def _node(g: Gen, node_id: str, action: si.NodeAction, **fields: object) -> Step:
    return g.request("update_node", si.NodeRequest(rm_id=g.rm_id, nodes=[
        si.NodeInfo(node_id=node_id, action=action, **fields)]))


def joining(g: Gen, node_id: str, partition: str, resource: si.Resource,
            **fields: object) -> Step:
    """A node of ``resource`` joining ``partition`` (named by the node attribute unless it
    is the default)."""
    return _node(g, node_id, NA.CREATE, schedulable_resource=resource,
                 attributes={"si/node-partition": partition} if partition != "default" else {},
                 **fields)


def new_node(g: Gen, partition: str, memory: int, vcore: int, **fields: object) -> Step:
    """A node of ``memory`` and ``vcore`` joining ``partition``."""
    return joining(g, g.new_id("node-"), partition, si.Resource.of(memory=memory, vcore=vcore),
                   **fields)


@rule(4, core=True)
def add_node(g: Gen) -> Iterator[Step]:
    """A node joins, in one of the configured partitions, sometimes partly occupied."""
    memory, vcore = g.pick(list(g.scenario.node_sizes))
    partition = g.pick(g.partitions())
    occupied = g.rng.choice((0, 0, 0, 10))
    yield new_node(g, partition, memory, vcore,
                   occupied_resource=si.Resource.of(memory=occupied) if occupied else None)


@rule(1)
def update_node(g: Gen) -> Iterator[Step]:
    """The RM reports a node's new size or occupied resources (it may shrink below use)."""
    rv = g.rv
    node = g.pick(sorted(rv.nodes)) if rv is not None else None
    if node is None:
        return
    memory, vcore = g.pick(list(g.scenario.node_sizes))
    memory = g.rng.choice((memory, memory // 2 or 1, memory * 2))
    yield _node(g, node, NA.UPDATE,
                schedulable_resource=si.Resource.of(memory=memory, vcore=vcore),
                occupied_resource=si.Resource.of(memory=g.rng.choice((0, 5, 20))))


def _move(g: Gen, state: str, action: si.NodeAction) -> Iterator[Step]:
    rv = g.rv
    node = g.pick(sorted(n for n, v in rv.nodes.items() if v.state == state) if rv else [])
    if node is not None:
        yield _node(g, node, action)


@rule(1)
def drain_node(g: Gen) -> Iterator[Step]:
    """DRAIN_NODE: no new allocations on it."""
    yield from _move(g, "Schedulable", NA.DRAIN_NODE)


@rule(1)
def restore_node(g: Gen) -> Iterator[Step]:
    """DRAIN_TO_SCHEDULABLE: a draining node takes work again."""
    yield from _move(g, "Draining", NA.DRAIN_TO_SCHEDULABLE)


@rule(0.7, undo=True)
def decommission_node(g: Gen) -> Iterator[Step]:
    """DECOMISSION: the node and every allocation on it go."""
    rv = g.rv
    node = g.pick(sorted(rv.nodes)) if rv is not None else None
    if node is not None:
        yield _node(g, node, NA.DECOMISSION)
