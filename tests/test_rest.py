"""``serve --rest-port``: YuniKorn's ws/v1 routes from a running server, against the state
the test caused (allocations, a gang with placeholders, a release, a rejection)."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("grpc")
pytest.importorskip("prometheus_client", reason="the rest extra is not installed")

from rpc_helpers import app, ask, nodes, register, release, wait_until

from scheduler import si
from scheduler.rpc import Client
from scheduler.testing import RecordingShim

SERVE = [sys.executable, "-m", "scheduler", "serve", "--port", "0", "--rest-port", "0"]
RM = "rm-1"


class Served:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(SERVE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None
        grpc_line = self.proc.stdout.readline()
        rest_line = self.proc.stdout.readline()
        assert grpc_line.startswith("listening on 127.0.0.1:"), grpc_line
        assert rest_line.startswith("rest on 127.0.0.1:"), rest_line
        self.port = int(grpc_line.rsplit(":", 1)[1])
        self.rest = int(rest_line.rsplit(":", 1)[1])
        self.shim = RecordingShim()
        self.client = Client(f"127.0.0.1:{self.port}")

    def get(self, path: str, method: str = "GET",
            headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.rest, timeout=10)
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        body = r.read()
        conn.close()
        return r.status, r.getheader("Content-Type") or "", body

    def json(self, path: str) -> Any:
        status, kind, body = self.get(path)
        assert status == 200, (path, body)
        assert kind.startswith("application/json")
        return json.loads(body)

    def close(self) -> None:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    s = Served()
    shim, client = s.shim, s.client
    client.register_resource_manager(register(RM), shim)
    client.update_node(nodes(RM, "node-1", "node-2", memory=100))
    client.update_application(app(RM, "app-1"))
    client.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id="gang", queue_name="root.apps", ugi=si.UserGroupInformation(user="bob"),
        placeholder_ask=si.Resource.of(memory=20))]))
    client.update_application(si.ApplicationRequest(rm_id=RM, new=[si.AddApplicationRequest(
        application_id="lost", queue_name="root.nowhere",
        ugi=si.UserGroupInformation(user="alice"))]))
    wait_until(lambda: len(shim.accepted_apps) == 2 and shim.rejected_apps
               and len(shim.accepted_nodes) == 2, what="set-up")
    client.update_allocation(ask(RM, "app-1", "a", memory=10, repeat=3))
    client.update_allocation(ask(RM, "app-1", "too-big", memory=1000))
    client.update_allocation(ask(RM, "gang", "ph", repeat=2, task_group_name="tg",
                                 placeholder=True))
    wait_until(lambda: len(shim.allocations) == 5, what="three allocations, two placeholders")
    client.update_allocation(ask(RM, "gang", "real", task_group_name="tg"))
    wait_until(lambda: shim.released, what="the placeholder release")
    [replaced] = shim.released
    client.update_allocation(release(RM, si.Allocation(
        allocation_key="ph", uuid=replaced.uuid, application_id="gang", node_id="node-1"),
        kind=si.TerminationType.PLACEHOLDER_REPLACED))
    wait_until(lambda: any(a.allocation_key == "real" for a in shim.allocations),
               what="the real allocation")
    first = next(a for a in shim.allocations if a.allocation_key == "a")
    client.update_allocation(release(RM, first))
    client.update_allocation(si.AllocationRequest(rm_id=RM, asks=[si.AllocationAsk(
        allocation_key="orphan", application_id="nobody",
        resource_ask=si.Resource.of(memory=1), max_allocations=1)]))
    wait_until(lambda: shim.rejected_asks, what="the rejected ask")
    wait_until(lambda: _settled(client), what="the release counted")
    yield s
    s.close()


def _settled(client: Client) -> bool:
    dump = client.state_dump()
    apps = {a["application_id"]: a for p in dump["partitions"] for a in p["applications"]}
    live = [x for x in apps["app-1"]["allocations"] if x["state"] == "Allocated"]
    return len(live) == 2


def _dump(s: Served) -> dict[str, Any]:
    dump = s.client.state_dump()
    [p] = dump["partitions"]
    return p  # type: ignore[no-any-return]


def test_rest_line_and_clusters(served: Served) -> None:
    [cluster] = served.json("/ws/v1/clusters")
    assert cluster["partition"] == "default" and cluster["clusterName"] == "kubernetes"
    assert cluster["startTime"] > 0


def test_partitions_match_the_state_dump(served: Served) -> None:
    p = _dump(served)
    [info] = served.json("/ws/v1/partitions")
    assert info["clusterId"] == RM and info["name"] == "default"
    root = next(q for q in p["queues"] if q["path"] == "root")
    assert info["capacity"]["usedCapacity"] == root["allocated"]
    assert info["capacity"]["capacity"] == {"memory": 200}
    assert info["totalNodes"] == 2
    assert info["applications"]["total"] == len(p["applications"])
    assert info["totalContainers"] == sum(len(a["allocations"]) for a in p["applications"])


def test_queue_tree_with_headroom_and_absolute_capacity(served: Served) -> None:
    p = _dump(served)
    tree = served.json("/ws/v1/partition/default/queues")
    assert tree["queuename"] == "root" and tree["isLeaf"] is False
    [apps] = [c for c in tree["children"] if c["queuename"] == "root.apps"]
    dumped = next(q for q in p["queues"] if q["path"] == "root.apps")
    assert apps["allocatedResource"] == dumped["allocated"]
    assert apps["isLeaf"] is True and apps["parent"] == "root"
    used = tree["allocatedResource"]["memory"]
    assert tree["headroom"] == {"memory": 200 - used}
    assert tree["absUsedCapacity"] == {"memory": int(used / 200 * 100)}
    one = served.json("/ws/v1/partition/default/queue/root.apps")
    assert one["queuename"] == "root.apps" and "children" not in one


def test_queue_applications_and_one_application(served: Served) -> None:
    p = _dump(served)
    listed = served.json("/ws/v1/partition/default/queue/root.apps/applications")
    assert sorted(a["applicationID"] for a in listed) == ["app-1", "gang"]
    app1 = served.json("/ws/v1/partition/default/application/app-1")
    dumped = next(a for a in p["applications"] if a["application_id"] == "app-1")
    assert app1["usedResource"] == dumped["allocated"]
    assert app1["applicationState"] == dumped["state"] == "Running"
    assert sorted(x["allocationKey"] for x in app1["allocations"]) == ["a", "a"]
    assert [r["allocationKey"] for r in app1["requests"]] == ["too-big"]
    assert [e["applicationState"] for e in app1["stateLog"]] == ["Accepted", "Running"]
    assert all(e["time"] > 0 for e in app1["stateLog"])
    assert app1["submissionTime"] > 0 and app1["user"] == "alice"
    same = served.json("/ws/v1/partition/default/queue/root.apps/application/app-1")
    assert same["applicationID"] == "app-1"


def test_gang_placeholders_apart_with_their_task_group(served: Served) -> None:
    gang = served.json("/ws/v1/partition/default/application/gang")
    [group] = gang["placeholderData"]
    assert group["taskGroupName"] == "tg"
    assert group["count"] == 2 and group["replaced"] == 1 and group["minResource"] == {
        "memory": 10}
    held = [x for x in gang["allocations"] if x.get("placeholder")]
    assert len(held) == 1 and held[0]["taskGroupName"] == "tg"
    assert any(x["allocationKey"] == "real" for x in gang["allocations"])


def test_nodes_and_one_node(served: Served) -> None:
    p = _dump(served)
    listed = served.json("/ws/v1/partition/default/nodes")
    by_id = {n["node_id"]: n for n in p["nodes"]}
    assert sorted(n["nodeID"] for n in listed) == sorted(by_id)
    for n in listed:
        assert n.get("allocated", {}) == by_id[n["nodeID"]]["allocated"]
        assert n["schedulable"] is True
    one = served.json("/ws/v1/partition/default/node/node-1")
    assert one["capacity"] == {"memory": 100}


def test_node_utilisation_buckets(served: Served) -> None:
    [util] = served.json("/ws/v1/scheduler/node-utilizations")
    [memory] = util["utilizations"]
    assert memory["type"] == "memory" and len(memory["utilization"]) == 10
    assert sum(b.get("numOfNodes", 0) for b in memory["utilization"]) == 2


def test_health_history_config_and_dump(served: Served) -> None:
    health = served.json("/ws/v1/scheduler/healthcheck")
    assert health["Healthy"] is True
    [apps] = served.json("/ws/v1/history/apps")
    assert apps["timestamp"] > 0
    assert served.json("/ws/v1/history/containers")[0]["timestamp"] == apps["timestamp"]
    status, kind, body = served.get("/ws/v1/config")
    assert status == 200 and kind.startswith("application/x-yaml") and b"root" in body
    status, kind, body = served.get("/ws/v1/config", headers={"Accept": "application/json"})
    assert kind.startswith("application/json") and "partitions" in json.loads(body)
    for path in ("/ws/v1/fullstatedump", "/debug/fullstatedump"):
        dump = served.json(path)
        assert dump["stateDump"]["partitions"][0]["name"] == "default"
        assert {a["applicationID"] for a in dump["applications"]} >= {"app-1", "gang"}


@pytest.mark.parametrize(("path", "status", "message"), [
    ("/ws/v1/partition/nope/queues", 404, "Partition not found"),
    ("/ws/v1/partition/default/queue/root.none", 404, "Queue not found"),
    ("/ws/v1/partition/default/queue/root.b%21d/applications", 400, "invalid queue name"),
    ("/ws/v1/partition/default/application/none", 404, "Application not found"),
    ("/ws/v1/partition/default/node/none", 404, "Node not found"),
    ("/ws/v1/" + "x" * 5000, 400, ""),
    ("/ws/v1/partition/%ff%fe/queues", 400, ""),
    ("/ws/v1/partition/default/../../etc/passwd", 400, ""),
    ("/ws/v1/partition/default/node/%2e%2e", 400, ""),
    ("/nothing", 404, ""),
])
def test_errors_are_yunikorns(served: Served, path: str, status: int, message: str) -> None:
    got, kind, body = served.get(path)
    assert got == status and kind.startswith("application/json")
    error = json.loads(body)
    assert error["status_code"] == status and message in error["message"]


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_write_methods_are_405(served: Served, method: str) -> None:
    status, _kind, body = served.get("/ws/v1/partitions", method=method)
    assert status == 405 and json.loads(body)["status_code"] == 405


def test_a_huge_request_line_is_a_4xx(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.rest), timeout=10) as sock:
        sock.sendall(b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = sock.recv(100)
    assert reply.startswith(b"HTTP/1.") and reply.split()[1].startswith(b"4")


def test_a_half_open_client_does_not_delay_others(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", served.rest), timeout=10) as idle:
        idle.sendall(b"GET /ws/v1/partitions HTTP/1.1\r\n")     # never finishes
        begun = time.monotonic()
        assert served.json("/ws/v1/partitions")
        assert time.monotonic() - begun < 2.0


def test_sigterm_stops_rest_and_grpc_together() -> None:
    s = Served()
    try:
        assert s.get("/ws/v1/partitions")[0] == 200
        s.proc.send_signal(signal.SIGTERM)
        _out, err = s.proc.communicate(timeout=20)
        assert s.proc.returncode == 0 and "Traceback" not in err
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", s.rest), timeout=2).close()
    finally:
        s.close()


def test_rest_port_in_use_is_refused() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([*SERVE[:-1], str(port)], capture_output=True, text=True,
                              timeout=30)
    assert proc.returncode == 2 and str(port) in proc.stderr and "Traceback" not in proc.stderr


def test_without_the_extra_serve_names_it() -> None:
    code = ("import sys; sys.modules['prometheus_client'] = None; "
            "from scheduler.cli import main; sys.exit(main(['serve', '--rest-port', '0']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2 and "yunikorn-fsm[rest]" in proc.stderr
