"""The RM's predicates over gRPC: the extension service's ``Predicates`` stream, its timeout,
its absence; and the removal of an application, answered as in-process, in both dialects."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("grpc")

import grpc
from rpc_helpers import (
    CONFIG,
    app,
    ask,
    channel,
    frame,
    nodes,
    raw_unary,
    register,
    serve,
    status_of,
    wait_until,
)
from scenario_helpers import config

from scheduler import si
from scheduler.rpc import Client, Server
from scheduler.rpc._generated import yunikorn_fsm_ext_pb2 as ext_pb2
from scheduler.rpc.wire import EXT_SERVICE, PREDICATES_KEY, SCHEDULER_SERVICE, method
from scheduler.si import today as t
from scheduler.testing import RecordingShim


@pytest.fixture
def server() -> Iterator[Server]:
    srv = serve(predicate_timeout=0.5)
    yield srv
    srv.stop(grace=0)


def connect(server: Server, **kwargs: Any) -> Client:
    return Client(f"127.0.0.1:{server.port}", **kwargs)


def start_rm(client: Client, rm_id: str, shim: RecordingShim, *node_ids: str,
             conf: str = CONFIG, queue_name: str = "root.apps", memory: int = 100) -> None:
    client.register_resource_manager(
        si.RegisterResourceManagerRequest(rm_id=rm_id, config=conf), shim)
    client.update_node(nodes(rm_id, *node_ids, memory=memory))
    client.update_application(si.ApplicationRequest(rm_id=rm_id, new=[
        si.AddApplicationRequest(application_id="app-1", queue_name=queue_name,
                                 ugi=si.UserGroupInformation(user="alice"))]))
    wait_until(lambda: shim.accepted_apps == ["app-1"]
               and sorted(shim.accepted_nodes) == sorted(node_ids), what="set-up")


def pod_request(rm_id: str, key: str, dialect: str, memory: int = 10) -> Any:
    if dialect == "today":
        return t.AllocationRequest(rm_id=rm_id, allocations=[t.Allocation(
            allocation_key=key, application_id="app-1",
            resource_per_alloc=si.Resource.of(memory=memory))])
    return ask(rm_id, "app-1", key, memory=memory)


def allocations(server: Server, rm_id: str) -> dict[str, str]:
    """Allocation key -> node of what ``rm_id`` holds, from the core's state dump."""
    held: dict[str, str] = {}
    for partition in server.api.state_dump()["partitions"]:
        if partition["rm_id"] == rm_id:
            for application in partition["applications"]:
                for alloc in application["allocations"]:
                    held[alloc["allocation_key"]] = alloc["node_id"]
    return held


# ------------------------------------------------------------------ through the Python client

@pytest.mark.parametrize("dialect", ["seed", "today"])
def test_predicates_refusing_a_node_steer_the_allocation(server: Server, dialect: str) -> None:
    asked: list[si.PredicatesArgs] = []

    def not_node_1(args: si.PredicatesArgs) -> bool:
        asked.append(args)
        return args.node_id != "node-1"

    shim = RecordingShim(predicates=not_node_1)
    with connect(server, dialect=dialect) as client:
        start_rm(client, "rm-1", shim, "node-1", "node-2")
        client.update_allocation(pod_request("rm-1", "pod", dialect))
        wait_until(lambda: shim.allocations, what="the allocation")
        assert [a.node_id for a in shim.allocations] == ["node-2"]
        assert ("pod", "node-1", True) in {(a.allocation_key, a.node_id, a.allocate)
                                           for a in asked}


def test_a_predicate_that_raises_says_no_and_is_reported(server: Server) -> None:
    def broken_on_node_1(args: si.PredicatesArgs) -> bool:
        if args.node_id == "node-1":
            raise ValueError("volume not attachable")
        return True

    shim = RecordingShim(predicates=broken_on_node_1)
    with connect(server, events=True) as client:
        start_rm(client, "rm-1", shim, "node-1", "node-2")
        client.update_allocation(ask("rm-1", "app-1", "pod"))
        wait_until(lambda: shim.allocations, what="the allocation")
        assert shim.allocations[0].node_id == "node-2"
        wait_until(lambda: any("ValueError: volume not attachable" in e.message
                               for e in shim.events), what="the event")
        [event] = [e for e in shim.events if "volume not attachable" in e.message]
        assert event.message.startswith("node node-1: the predicates for ask pod raised ")


TWO_QUEUES = config("""
- name: low
  resources: {guaranteed: {memory: 1}}
  properties: {preemption.delay: 1ms}
- name: high
  resources: {guaranteed: {memory: 5}}
  properties: {preemption.delay: 1ms}
""")


@pytest.mark.parametrize("dialect", ["seed", "today"])
def test_preemption_predicates_choose_the_index(server: Server, dialect: str) -> None:
    """The RM's index decides how many of the offered victims go (positions 0..index)."""
    seen: list[si.PreemptionPredicatesArgs] = []

    def two(args: si.PreemptionPredicatesArgs) -> si.PreemptionPredicatesResponse:
        seen.append(args)
        return si.PreemptionPredicatesResponse(success=True, index=1)

    shim = RecordingShim(preemption_predicates=two)
    with connect(server, dialect=dialect) as client:
        start_rm(client, "rm-1", shim, "node-1", conf=TWO_QUEUES, queue_name="root.low",
                 memory=10)
        policy = si.PreemptionPolicy(allow_preempt_self=True, allow_preempt_other=False)
        for key in ("a", "b", "c", "d", "e"):
            if dialect == "today":
                client.update_allocation(t.AllocationRequest(rm_id="rm-1", allocations=[
                    t.Allocation(allocation_key=key, application_id="app-1",
                                 resource_per_alloc=si.Resource.of(memory=2),
                                 preemption_policy=policy)]))
            else:
                client.update_allocation(ask("rm-1", "app-1", key, memory=2,
                                             preemption_policy=policy))
            wait_until(lambda k=key: k in allocations(server, "rm-1"), what=key)  # type: ignore[misc]
        client.update_application(si.ApplicationRequest(rm_id="rm-1", new=[
            si.AddApplicationRequest(application_id="app-2", queue_name="root.high",
                                     ugi=si.UserGroupInformation(user="alice"))]))
        wait_until(lambda: "app-2" in shim.accepted_apps, what="app-2")
        preempts = si.PreemptionPolicy(allow_preempt_self=True, allow_preempt_other=True)
        if dialect == "today":
            client.update_allocation(t.AllocationRequest(rm_id="rm-1", allocations=[
                t.Allocation(allocation_key="ask", application_id="app-2",
                             resource_per_alloc=si.Resource.of(memory=2),
                             preemption_policy=preempts)]))
        else:
            client.update_allocation(ask("rm-1", "app-2", "ask", memory=2,
                                         preemption_policy=preempts))
        wait_until(lambda: len([r for r in shim.released
                                if r.termination_type.name == "PREEMPTED_BY_SCHEDULER"]) == 2,
                   what="two victims")
        victims = [r.allocation_key for r in shim.released
                   if r.termination_type.name == "PREEMPTED_BY_SCHEDULER"]
        assert victims == ["e", "d"]
        assert (seen[0].allocation_key, seen[0].node_id, seen[0].start_index) == (
            "ask", "node-1", 0)


def test_two_rms_one_with_predicates_one_without(server: Server) -> None:
    refusing = RecordingShim(predicates=lambda args: args.node_id == "node-2")
    plain = RecordingShim()
    with connect(server) as one, connect(server) as other:
        start_rm(one, "rm-a", refusing, "node-1", "node-2")
        start_rm(other, "rm-b", plain, "node-1", "node-2")
        one.update_allocation(ask("rm-a", "app-1", "pod"))
        other.update_allocation(ask("rm-b", "app-1", "pod"))
        wait_until(lambda: refusing.allocations and plain.allocations, what="both allocations")
        assert refusing.allocations[0].node_id == "node-2"
        assert plain.allocations[0].node_id == "node-1"
        # the RM without predicates offered none: its callback in the core has none
        chan = channel(server)
        try:
            call = chan.stream_stream(method(EXT_SERVICE, "Predicates"))(
                iter([ext_pb2.PredicateAnswer(rmID="rm-b").SerializeToString()]))
            code, details = status_of(call)
            assert code == grpc.StatusCode.FAILED_PRECONDITION
            assert "rm-b offered no predicates at registration" in details
        finally:
            chan.close()


# ------------------------------------------------------------------ a raw shim

class RawShim:
    """An RM on raw streams: registration with metadata, its update streams and its
    ``Predicates`` stream, answered by ``answer`` (None: never answered)."""

    def __init__(self, server: Server, rm_id: str, offers: str = "predicates") -> None:
        self.rm_id = rm_id
        self.chan = channel(server)
        raw_unary(self.chan, SCHEDULER_SERVICE, "RegisterResourceManager",
                  frame(register(rm_id)), metadata=((PREDICATES_KEY, offers),))
        self.outgoing: dict[str, queue.SimpleQueue[bytes | None]] = {}
        self.calls: list[Any] = []
        for name, hello in (("UpdateNode", si.NodeRequest(rm_id=rm_id)),
                            ("UpdateApplication", si.ApplicationRequest(rm_id=rm_id)),
                            ("UpdateAllocation", si.AllocationRequest(rm_id=rm_id))):
            self.outgoing[name] = queue.SimpleQueue()
            self.outgoing[name].put(frame(hello))
            call = self.chan.stream_stream(method(SCHEDULER_SERVICE, name))(
                self._frames(self.outgoing[name]))
            self.calls.append(call)
            threading.Thread(target=self._read, args=(call,), daemon=True).start()
        self.questions: list[ext_pb2.PredicateQuestion] = []
        self.answer: Callable[[ext_pb2.PredicateQuestion], bool | None] = lambda q: True
        self.answers: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.answers.put(ext_pb2.PredicateAnswer(rmID=rm_id).SerializeToString())
        self.predicates = self.chan.stream_stream(method(EXT_SERVICE, "Predicates"))(
            self._frames(self.answers))
        self.predicates.initial_metadata()
        threading.Thread(target=self._questions, daemon=True).start()

    def send(self, name: str, message: Any) -> None:
        self.outgoing[name].put(frame(message))

    def close_predicates(self) -> None:
        self.answers.put(None)            # half-close: the RM answers no more

    def late_answer(self, question: ext_pb2.PredicateQuestion, fits: bool) -> None:
        self.answers.put(ext_pb2.PredicateAnswer(id=question.id, fits=fits).SerializeToString())

    def close(self) -> None:
        for q in (*self.outgoing.values(), self.answers):
            q.put(None)
        for call in (*self.calls, self.predicates):
            call.cancel()
        self.chan.close()

    @staticmethod
    def _frames(outgoing: queue.SimpleQueue[bytes | None]) -> Iterator[bytes]:
        while (item := outgoing.get()) is not None:
            yield item

    @staticmethod
    def _read(call: Any) -> None:
        try:
            for _ in call:
                pass
        except grpc.RpcError:
            pass

    def _questions(self) -> None:
        try:
            for raw in self.predicates:
                question = ext_pb2.PredicateQuestion.FromString(raw)
                self.questions.append(question)
                fits = self.answer(question)
                if fits is not None:
                    self.answers.put(ext_pb2.PredicateAnswer(
                        id=question.id, fits=fits).SerializeToString())
        except grpc.RpcError:
            pass


def _raw_set_up(server: Server, rm_id: str, *node_ids: str) -> RawShim:
    shim = RawShim(server, rm_id)
    shim.send("UpdateNode", nodes(rm_id, *node_ids))
    shim.send("UpdateApplication", app(rm_id, "app-1"))
    wait_until(lambda: any(a["application_id"] == "app-1"
                           for p in server.api.state_dump()["partitions"]
                           if p["rm_id"] == rm_id for a in p["applications"])
               and len(server.api.state_dump()["partitions"][0]["nodes"]) >= len(node_ids),
               what="set-up")
    return shim


def test_the_stream_closed_mid_run_falls_back_to_every_node_passing(server: Server) -> None:
    shim = _raw_set_up(server, "rm-1", "node-1", "node-2")
    try:
        shim.answer = lambda q: False                 # no node fits
        shim.send("UpdateAllocation", ask("rm-1", "app-1", "pod"))
        wait_until(lambda: {q.predicates.nodeID for q in shim.questions} >= {"node-1", "node-2"},
                   what="questions for both nodes")
        time.sleep(0.2)
        assert allocations(server, "rm-1") == {}
        shim.close_predicates()
        assert status_of(shim.predicates)[0] == grpc.StatusCode.OK
        wait_until(lambda: allocations(server, "rm-1"), what="the allocation")
        assert server.sessions() == {"rm-1": "running"}    # the RM carries on
    finally:
        shim.close()


def test_a_silent_rm_costs_one_timeout_then_its_nodes_do_not_fit(server: Server) -> None:
    """Stream open, never answered: the first question waits the timeout (0.5 s); later ones
    are answered "does not fit" at once, so another RM's ask is not held up for long."""
    node_ids = [f"node-{i}" for i in range(8)]
    silent = _raw_set_up(server, "rm-silent", *node_ids)
    plain = RecordingShim()
    try:
        silent.answer = lambda q: None                # never answers
        with connect(server) as other:
            start_rm(other, "rm-b", plain, "node-1")
            silent.send("UpdateAllocation", ask("rm-silent", "app-1", "pod"))
            wait_until(lambda: silent.questions, what="the first question")
            started = time.monotonic()
            other.update_allocation(ask("rm-b", "app-1", "pod"))
            wait_until(lambda: plain.allocations, what="the other RM's allocation")
            # a question per node would hold the core 8 x 0.5 s; one timeout is the bound
            assert time.monotonic() - started < 0.5 + 1.0
            time.sleep(0.3)
            assert len(silent.questions) == 1         # silent: nothing more is sent
            assert allocations(server, "rm-silent") == {}
            # a late answer ends the silence: questions flow again and are answered now
            silent.answer = lambda q: True
            silent.late_answer(silent.questions[0], True)
            wait_until(lambda: allocations(server, "rm-silent"), what="the allocation")
    finally:
        silent.close()


def test_registration_names_only_known_predicates(server: Server) -> None:
    chan = channel(server)
    try:
        with pytest.raises(grpc.RpcError) as info:
            raw_unary(chan, SCHEDULER_SERVICE, "RegisterResourceManager",
                      frame(register("rm-1")), metadata=((PREDICATES_KEY, "predicates,taints"),))
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "taints is not one of predicates, preemption_predicates" in str(
            info.value.details())
    finally:
        chan.close()


# ------------------------------------------------------------------ removing an application

@pytest.mark.parametrize("dialect", ["seed", "today"])
def test_removing_an_application_releases_its_allocations(server: Server, dialect: str) -> None:
    shim = RecordingShim()
    with connect(server, dialect=dialect) as client:
        start_rm(client, "rm-1", shim, "node-1")
        client.update_allocation(pod_request("rm-1", "pod", dialect))
        wait_until(lambda: shim.allocations, what="the allocation")
        client.update_application(si.ApplicationRequest(rm_id="rm-1", remove=[
            si.RemoveApplicationRequest(application_id="app-1")]))
        wait_until(lambda: shim.released, what="the release")
        [released] = shim.released
        assert type(released) is (t.AllocationRelease if dialect == "today"
                                  else si.AllocationRelease)
        assert (released.application_id, released.allocation_key, released.termination_type.name,
                released.message) == ("app-1", "pod", "STOPPED_BY_RM",
                                      "application removed by the RM")
        if dialect == "seed":
            assert released.uuid == shim.allocations[0].uuid
