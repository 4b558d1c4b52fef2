"""Scenarios: namespace quota tags set the limits of the leaf a placement rule created.

The seeds are silent; YuniKorn (apache/yunikorn-core be3bb48 pkg/scheduler/partition.go
``AddApplication``) reads ``namespace.resourcequota``, ``namespace.resourceguaranteed``
(``si.Resource`` JSON) and ``namespace.resourcemaxapps`` from the application's tags and
sets them on the unmanaged leaf it enters, before its gang check. A value it can not
read sets nothing and never rejects the application.
"""

from __future__ import annotations

from scenario_helpers import Env

from scheduler import si

PLACED = """
partitions:
  - name: default
    placementrules:
      - name: tag
        value: taskqueue
        create: true
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: limited
            resources:
              max: {vcore: 1000}
            maxapplications: 2
"""


def json_of(**quantities: int) -> str:
    inner = ",".join(f'"{k}":{{"value":{v}}}' for k, v in quantities.items())
    return f'{{"resources":{{{inner}}}}}'


def tags(queue: str, **extra: str) -> dict[str, str]:
    return {"taskqueue": queue, **extra}


def test_tags_set_max_and_maxapps_of_a_created_leaf_and_gang_check_sees_them() -> None:
    """YuniKorn ``TestAddTGAppDynamic``: the tags' max and max applications land on the
    created leaf (its guarantee stays unset); a gang whose placeholders exceed the tags'
    max is rejected, and here the rejection creates nothing."""
    env = Env(PLACED)
    tg = si.Resource.of(vcore=10000)
    env.add_app("app-1", "unknown", placeholder_ask=tg, tags=tags("unlimited"))
    env.add_app("app-2", "unknown", placeholder_ask=tg, tags=tags(
        "same", **{"namespace.resourcequota": json_of(vcore=10000),
                   "namespace.resourcemaxapps": "1"}))
    assert env.shim.accepted_apps == ["app-1", "app-2"]
    same = env.queue("root.same")
    assert same is not None
    assert same["max"] == {"vcore": 10000} and same["guaranteed"] is None
    env.add_app("app-3", "unknown", placeholder_ask=tg, tags=tags(
        "smaller", **{"namespace.resourcequota": json_of(vcore=1000),
                      "namespace.resourceguaranteed": json_of(vcore=111)}))
    assert [r.application_id for r in env.shim.rejected_apps] == ["app-3"]
    assert env.queue("root.smaller") is None


def test_tags_leave_a_configured_leaf_alone() -> None:
    """YuniKorn ``TestAddTGApplication``: a managed queue keeps its configured limits
    whatever the application's tags say."""
    env = Env(PLACED)
    env.add_app("app-1", "unknown", tags=tags("root.limited", **{
        "namespace.resourcequota": json_of(vcore=2222),
        "namespace.resourceguaranteed": json_of(vcore=111),
        "namespace.resourcemaxapps": "1"}))
    assert env.shim.accepted_apps == ["app-1"]
    limited = env.queue("root.limited")
    assert limited is not None
    assert limited["max"] == {"vcore": 1000000} and limited["guaranteed"] is None


def test_tag_quota_is_enforced_and_the_latest_application_sets_it() -> None:
    """YuniKorn ``AddApplication`` sets the tags on every application entering an
    unmanaged leaf: the quota holds allocations back, and the next application's tags
    replace it (a quota without a guarantee clears the guarantee)."""
    env = Env(PLACED)
    env.add_node("node-1", 1000)
    env.add_app("app-1", "unknown", tags=tags("ns", **{
        "namespace.resourcequota": json_of(memory=30),
        "namespace.resourceguaranteed": json_of(memory=10)}))
    env.ask("app-1", "k", 10, repeats=5)
    assert env.schedule() == 3
    ns = env.queue("root.ns")
    assert ns is not None and ns["max"] == {"memory": 30} and ns["guaranteed"] == {"memory": 10}
    env.add_app("app-2", "unknown", tags=tags("ns", **{
        "namespace.resourcequota": json_of(memory=50)}))
    ns = env.queue("root.ns")
    assert ns is not None and ns["max"] == {"memory": 50} and ns["guaranteed"] is None
    assert env.schedule() == 2


def test_tag_maxapps_holds_the_second_application() -> None:
    """``namespace.resourcemaxapps`` is the created leaf's maxapplications: the second
    application waits until the first is gone (YuniKorn ``SetMaxRunningApps``)."""
    env = Env(PLACED)
    env.add_node("node-1", 1000)
    limit = {"namespace.resourcemaxapps": "1"}
    env.add_app("app-1", "unknown", tags=tags("ns", **limit))
    env.add_app("app-2", "unknown", tags=tags("ns", **limit))
    env.ask("app-1", "k", 10)
    env.ask("app-2", "k", 10)
    assert env.schedule() == 1
    assert [a.application_id for a in env.shim.allocations] == ["app-1"]


def test_unreadable_tags_set_nothing_and_reject_nothing() -> None:
    """YuniKorn ``TestGetResourceFromTags`` and the tag tests of ``TestNewApplication``:
    malformed JSON, negative or zero quantities, the legacy ``{"memory": 10}`` form, a
    float, a sign or text in the count: the tag reads as unset, the application is
    accepted and the leaf keeps what it had."""
    env = Env(PLACED)
    bad = [
        {"namespace.resourcequota": "{xxxxxx}", "namespace.resourceguaranteed": "{yy}",
         "namespace.resourcemaxapps": "zzzzz"},
        {"namespace.resourcequota": json_of(memory=-11), "namespace.resourcemaxapps": "-33"},
        {"namespace.resourcequota": '{"memory": 10}', "namespace.resourcemaxapps": "+3"},
        {"namespace.resourcequota": '{"resources":{"memory":{"value":1.5}}}'},
        {"namespace.resourcequota": '{"resources":{"memory":null}}'},
        {"namespace.resourcequota": json_of(memory=0)},
    ]
    for i, extra in enumerate(bad):
        env.add_app(f"app-{i}", "unknown", tags=tags(f"q{i}", **extra))
        leaf = env.queue(f"root.q{i}")
        assert leaf is not None and leaf["max"] is None and leaf["guaranteed"] is None
    assert len(env.shim.accepted_apps) == len(bad) and env.shim.rejected_apps == []


def test_tag_names_are_read_in_any_case() -> None:
    """YuniKorn ``GetTag`` compares tag names with ``strings.EqualFold``."""
    env = Env(PLACED)
    env.add_app("app-1", "unknown", tags=tags("ns", **{
        "Namespace.ResourceQuota": '{"Resources":{"memory":{"Value":40}}}'}))
    ns = env.queue("root.ns")
    assert ns is not None and ns["max"] == {"memory": 40}
