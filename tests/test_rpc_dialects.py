"""Reading a request in the seed's or today's SI from its bytes (``scheduler.rpc.dialects``).

Every request is built with one of the two generated modules, as a shim of
that dialect builds it, and read as the server reads it: for an RM with no
dialect yet, for one that speaks the seed's SI, and for one that speaks today's.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

pytest.importorskip("grpc")

import grpc

from scheduler import si
from scheduler.rpc._generated import si_pb2 as S
from scheduler.rpc._generated import si_today_pb2 as T
from scheduler.rpc.dialects import Dialect, Reading, read
from scheduler.rpc.status import Abort
from scheduler.si import today

SEED, TODAY = Dialect.SEED, Dialect.TODAY
MEMORY = {"memory": S.Quantity(value=10)}


def _read(kind: str, message: Any, speaks: Dialect | None) -> Reading:
    return read(kind, message.SerializeToString(), "rm-1", speaks)


def _refused(kind: str, message: Any, speaks: Dialect | None) -> str:
    with pytest.raises(Abort) as caught:
        _read(kind, message, speaks)
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    return caught.value.details


SEED_ASKS = S.AllocationRequest(rmID="rm-1", asks=[S.AllocationAsk(
    allocationKey="k", applicationID="app-1", resourceAsk=S.Resource(resources=MEMORY))])
TODAY_PODS = T.AllocationRequest(rmID="rm-1", allocations=[T.Allocation(
    allocationKey="k", applicationID="app-1",
    resourcePerAlloc=T.Resource(resources={"memory": T.Quantity(value=10)}))])
SEED_RELEASE = S.AllocationRequest(rmID="rm-1", releases=S.AllocationReleasesRequest(
    allocationsToRelease=[S.AllocationRelease(applicationID="app-1", UUID="u-1")]))
RELEASE_BY_KEY = T.AllocationRequest(rmID="rm-1", releases=T.AllocationReleasesRequest(
    allocationsToRelease=[T.AllocationRelease(applicationID="app-1", allocationKey="k",
                                              terminationType=T.STOPPED_BY_RM)]))
PLAIN_NODE = T.NodeRequest(rmID="rm-1", nodes=[T.NodeInfo(
    nodeID="n-1", action=T.NodeInfo.CREATE,
    schedulableResource=T.Resource(resources={"memory": T.Quantity(value=100)}))])
DRAINED_NODE = T.NodeRequest(rmID="rm-1", nodes=[
    T.NodeInfo(nodeID="n-1", action=T.NodeInfo.CREATE),
    T.NodeInfo(nodeID="n-2", action=T.NodeInfo.CREATE_DRAIN)])
OCCUPIED_NODE = S.NodeRequest(rmID="rm-1", nodes=[S.NodeInfo(
    nodeID="n-1", action=S.NodeInfo.CREATE, occupiedResource=S.Resource(resources=MEMORY))])
RECOVERED_NODE = S.NodeRequest(rmID="rm-1", nodes=[
    S.NodeInfo(nodeID="n-1", action=S.NodeInfo.CREATE),
    S.NodeInfo(nodeID="n-2", action=S.NodeInfo.CREATE, existingAllocations=[
        S.Allocation(allocationKey="k", UUID="u-1", applicationID="app-1", nodeID="n-2")])])


@pytest.mark.parametrize(("kind", "message", "shows", "model"), [
    ("allocation", SEED_ASKS, SEED, si.AllocationRequest),
    ("allocation", SEED_RELEASE, SEED, si.AllocationRequest),
    ("node", OCCUPIED_NODE, SEED, si.NodeRequest),
    ("node", RECOVERED_NODE, SEED, si.NodeRequest),
    ("allocation", TODAY_PODS, TODAY, today.AllocationRequest),
    ("node", DRAINED_NODE, TODAY, today.NodeRequest),
], ids=["asks", "release-by-uuid", "occupied", "existing", "allocations", "create-drain"])
def test_a_field_of_one_dialect_shows_it(kind: str, message: Any, shows: Dialect,
                                         model: type) -> None:
    reading = _read(kind, message, None)
    assert (type(reading.request), reading.shown) == (model, shows)
    assert _read(kind, message, shows).request == reading.request


@pytest.mark.parametrize(("kind", "message"), [
    ("allocation", RELEASE_BY_KEY),
    ("node", PLAIN_NODE),
    ("application", S.ApplicationRequest(rmID="rm-1", new=[S.AddApplicationRequest(
        applicationID="app-1", queueName="root.apps")])),
    ("allocation", S.AllocationRequest(rmID="rm-1")),
], ids=["release-by-key", "plain-node", "application", "bare-rm-id"])
def test_shared_fields_decide_nothing_and_read_in_the_rms_dialect(kind: str,
                                                                 message: Any) -> None:
    undecided = _read(kind, message, None)
    seed = _read(kind, message, SEED)
    now = _read(kind, message, TODAY)
    assert undecided.shown is seed.shown is now.shown is None
    assert undecided.request == seed.request
    assert type(seed.request).__module__ == "scheduler.si.messages"
    assert type(now.request).__name__ == type(seed.request).__name__
    if kind == "application":                    # a shared message: one model
        assert now.request == seed.request
    else:
        assert type(now.request).__module__ == "scheduler.si.today"
        assert now.request.rm_id == seed.request.rm_id == "rm-1"


def _mixed() -> bytes:
    # a shim that merged both SIs: seed asks and today's allocations in one message
    return SEED_ASKS.SerializeToString() + TODAY_PODS.SerializeToString()


@pytest.mark.parametrize("speaks", [None, SEED, TODAY])
def test_both_dialects_in_one_request_are_refused_naming_the_fields(
        speaks: Dialect | None) -> None:
    with pytest.raises(Abort) as caught:
        read("allocation", _mixed(), "rm-1", speaks)
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details == (
        "asks of the seed's SI (f59a9f4) and allocations of today's SI (2858f4d) in one "
        "request: send the fields of one SI")


def test_nested_fields_of_both_dialects_are_named_with_their_paths() -> None:
    node = S.NodeRequest(rmID="rm-1", nodes=[
        S.NodeInfo(nodeID="n-1", action=S.NodeInfo.CREATE,
                   occupiedResource=S.Resource(resources=MEMORY)),
        S.NodeInfo(nodeID="n-2", action=cast(Any, 6))])  # CREATE_DRAIN, unknown to the seed
    assert _refused("node", node, None) == (
        "nodes[0].occupiedResource of the seed's SI (f59a9f4) and nodes[1].action=CREATE_DRAIN "
        "of today's SI (2858f4d) in one request: send the fields of one SI")


def test_a_field_of_the_other_dialect_is_refused_with_the_rms_dialect() -> None:
    assert _refused("allocation", TODAY_PODS, SEED) == (
        "resource manager rm-1 speaks the seed's SI (f59a9f4), and this request uses today's "
        "SI (2858f4d) (allocations): one registration speaks one dialect; register again to "
        "change")
    assert "speaks today's SI (2858f4d), and this request uses the seed's SI (f59a9f4) " \
        "(asks)" in _refused("allocation", SEED_ASKS, TODAY)
    assert "(releases.allocationsToRelease[0].UUID)" in _refused("allocation", SEED_RELEASE,
                                                                 TODAY)
    assert "(nodes[1].action=CREATE_DRAIN)" in _refused("node", DRAINED_NODE, SEED)
    assert "(nodes[1].existingAllocations)" in _refused("node", RECOVERED_NODE, TODAY)


def test_many_fields_are_counted_after_the_first_four() -> None:
    nodes = S.NodeRequest(rmID="rm-1", nodes=[
        S.NodeInfo(nodeID=f"n-{i}", occupiedResource=S.Resource(resources=MEMORY))
        for i in range(7)])
    assert "(nodes[0].occupiedResource, nodes[1].occupiedResource, nodes[2].occupiedResource, " \
        "nodes[3].occupiedResource and 3 more)" in _refused("node", nodes, TODAY)


def test_fields_neither_dialect_knows_are_ignored() -> None:
    unknown = b"\xf8\x06\x01"                       # field 111, varint 1
    for speaks in (None, SEED, TODAY):
        reading = read("allocation", RELEASE_BY_KEY.SerializeToString() + unknown, "rm-1",
                       speaks)
        assert reading.shown is None
        assert reading.request.releases.allocations_to_release[0].allocation_key == "k"


def test_invalid_values_are_still_named_in_either_dialect() -> None:
    bad = T.AllocationRequest(rmID="rm-1", allocations=[T.Allocation(allocationKey="")])
    assert _refused("allocation", bad, None).startswith("allocations[0].allocationKey")
    assert _refused("allocation", bad, TODAY).startswith("allocations[0].allocationKey")
    assert _refused("node", T.NodeRequest(rmID="rm-1", nodes=[T.NodeInfo(
        nodeID="n", action=cast(Any, 9))]), TODAY).startswith("nodes[0].action")
    assert _refused("allocation", S.AllocationRequest(rmID=""), SEED).startswith("rmID")


def test_bytes_that_do_not_parse_are_malformed() -> None:
    with pytest.raises(Abort) as caught:
        read("allocation", b"\x0a\x05ab", "rm-1", TODAY)
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details.startswith("malformed AllocationRequest")
