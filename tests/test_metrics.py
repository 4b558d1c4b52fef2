"""``/ws/v1/metrics`` of a running ``serve``: YuniKorn's metric names, types and labels, with
the values the test caused (allocations, a gang's placeholders, a release, rejections)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("grpc")
pytest.importorskip("prometheus_client", reason="the rest extra is not installed")

from prometheus_client.parser import text_string_to_metric_families
from test_rest import Served
from test_rest import served as _served  # noqa: F401  (the module's scenario)


@pytest.fixture(scope="module")
def families(_served: Served) -> Iterator[dict[str, tuple[str, dict[tuple[str, ...], float]]]]:  # noqa: F811
    status, kind, body = _served.get("/ws/v1/metrics")
    assert status == 200 and kind.startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        out[family.name] = (family.type, {
            (*tuple(f"{k}={v}" for k, v in sorted(s.labels.items())), s.name): s.value
            for s in family.samples})
    yield out


def _value(families: dict, name: str, *labels: str, sample: str = "") -> float:  # type: ignore[type-arg]
    _kind, samples = families[name]
    return samples[(*labels, sample or name)]  # type: ignore[no-any-return]


def test_allocation_attempts_by_state(families: dict) -> None:  # type: ignore[type-arg]
    name = "yunikorn_scheduler_container_allocation_attempt"
    assert families[name][0] == "counter"
    total = f"{name}_total"
    # three of app-1's ask, two placeholders, the real one of the gang
    assert _value(families, name, "state=allocated", sample=total) == 6
    # app-1's release and the replaced placeholder
    assert _value(families, name, "state=released", sample=total) == 2
    assert _value(families, name, "state=rejected", sample=total) >= 0


def test_application_submissions_by_result(families: dict) -> None:  # type: ignore[type-arg]
    name = "yunikorn_scheduler_application_submission"
    total = f"{name}_total"
    assert families[name][0] == "counter"
    assert _value(families, name, "result=accepted", sample=total) == 2
    assert _value(families, name, "result=new", sample=total) >= 2


def test_applications_and_nodes_by_state(families: dict) -> None:  # type: ignore[type-arg]
    apps = "yunikorn_scheduler_application_total"
    assert families[apps][0] == "gauge"
    assert _value(families, apps, "state=running") == 2
    assert _value(families, "yunikorn_scheduler_node", "state=active") == 2


def test_queue_applications_and_resources(families: dict) -> None:  # type: ignore[type-arg]
    assert _value(families, "yunikorn_queue_app", "queue=root.apps", "state=running") == 2
    resource = "yunikorn_queue_resource"
    allocated = _value(families, resource, "queue=root.apps", "resource=memory",
                       "state=allocated")
    assert allocated == 10 * 2 + 10 + 10      # app-1's two, one placeholder, the real one


def test_scheduling_latency_histogram(families: dict) -> None:  # type: ignore[type-arg]
    name = "yunikorn_scheduler_scheduling_latency_milliseconds"
    assert families[name][0] == "histogram"
    assert _value(families, name, sample=f"{name}_count") == 6
