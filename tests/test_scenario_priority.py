"""Priority scheduling, through the public API.

The scenarios are Apache YuniKorn's own tests (``pkg/scheduler/objects/`` of
``apache/yunikorn-core`` and the k8shim's priority e2e test), named on each
test; the rules are restated in ``docs/design-notes.md`` ("Priority"). The
core does not report priorities, so each test reads them as a shim would: from
the order in which contested asks are allocated. Every contest has a node with
room for one ask at a time; the allocation is released before the next cycle,
and the shim's predicates refuse reservations, so that the order is decided
afresh in every cycle instead of by the node the next ask reserved.
"""

from __future__ import annotations

from scenario_helpers import NA, Env, config

from scheduler import si

MIN_INT32 = -(2**31)


def drain_order(env: Env, rounds: int) -> list[str]:
    """Schedule ``rounds`` times on a node that takes one ask at a time: the applications
    in the order they were served (each allocation released before the next cycle)."""
    served: list[str] = []
    for _ in range(rounds):
        before = len(env.shim.allocations)
        env.schedule()
        new = env.shim.allocations[before:]
        assert len(new) == 1, f"expected one allocation, got {len(new)}"
        served.append(new[0].application_id)
        env.release(new[0].application_id, new[0].uuid)
    return served


def no_reservations(args: si.PredicatesArgs) -> bool:
    return args.allocate


def one_slot_env(queues_yaml: str) -> Env:
    env = Env(config(queues_yaml), predicates=no_reservations)
    env.add_node("node-1", 10)
    return env


# ---------------------------------------------------------------- applications in a leaf


def test_fifo_apps_sort_by_priority_first() -> None:
    """``TestSortAppsPriorityFifo`` (sorters_test.go): fifo applications 0..3, app-1 at
    priority 5 and app-3 at 4: served 1, 3, 0, 2."""
    env = one_slot_env("- name: a\n")
    for i, prio in enumerate((0, 5, 0, 4)):
        env.add_app(f"app-{i}", "root.a")
        env.ask(f"app-{i}", "ask", 10, priority=prio)
    assert drain_order(env, 4) == ["app-1", "app-3", "app-0", "app-2"]


def _fair_usages(big: bool) -> Env:
    env = Env(config("- name: a\n  properties: {application.sort.policy: fair}\n"),
              predicates=no_reservations)
    env.add_node("node-big", 200)
    for i in range(4):
        env.add_app(f"app-{i}", "root.a")
        used = 100 if big and i == 2 else (i + 1) * 10
        env.ask(f"app-{i}", "base", used)
    assert env.schedule() == 4
    env.add_node("node-1", 10)
    env.node_action("node-big", NA.DRAIN_NODE)
    for i in range(4):
        env.ask(f"app-{i}", "next", 10, priority=5 if i == 1 else 0)
    return env


def test_fair_apps_sort_by_priority_then_usage() -> None:
    """``TestSortAppsPriorityFair``: usages 1x..4x, app-1 at priority 5: served 1, 0, 2, 3;
    after app-2 grew to 10x: 1, 0, 3, 2."""
    assert drain_order(_fair_usages(big=False), 4) == ["app-1", "app-0", "app-2", "app-3"]
    assert drain_order(_fair_usages(big=True), 4) == ["app-1", "app-0", "app-3", "app-2"]


def test_priority_disabled_only_breaks_ties() -> None:
    """``application.sort.priority: disabled`` (YuniKorn's
    ``sortApplicationsByFairnessAndPriority``): usage first, priority only breaks its
    ties. Usages 10, 20, 10 with priorities 0, 5, 3: served 2, 0, 1."""
    env = Env(config("- name: a\n  properties: {application.sort.policy: fair, "
                     "application.sort.priority: disabled}\n"))
    env.add_node("node-big", 100)
    for i, used in enumerate((10, 20, 10)):
        env.add_app(f"app-{i}", "root.a")
        env.ask(f"app-{i}", "base", used)
    assert env.schedule() == 3
    env.node_action("node-big", NA.DRAIN_NODE)
    env.add_node("node-1", 10)
    for i, prio in enumerate((0, 5, 3)):
        env.ask(f"app-{i}", "next", 10, priority=prio)
    assert drain_order(env, 3) == ["app-2", "app-0", "app-1"]


# ---------------------------------------------------------------- queues under a parent

SORT_QUEUES = """\
- name: parent
{props}  queues:
    - name: q0
      resources: {{guaranteed: {{memory: 100}}}}
    - name: q1
      resources: {{guaranteed: {{memory: 100}}}}
    - name: q2
      resources: {{guaranteed: {{memory: 100}}}}
    - name: q3
      resources: {{guaranteed: {{memory: 100}}}}
"""


def _sort_queues(enabled: bool) -> list[str]:
    props = "" if enabled else "  properties: {application.sort.priority: disabled}\n"
    env = Env(config(SORT_QUEUES.format(props=props)), predicates=no_reservations)
    env.add_node("node-big", 300)
    for i, used in enumerate((40, 100, 50, 50)):
        env.add_app(f"app-{i}", f"root.parent.q{i}")
        env.ask(f"app-{i}", "base", used)
    assert env.schedule() == 4
    env.node_action("node-big", NA.DRAIN_NODE)
    env.add_node("node-1", 10)
    for i in range(4):
        env.ask(f"app-{i}", "next", 10, priority=3 if i == 3 else 1)
    return drain_order(env, 4)


def test_queues_sort_by_priority_then_usage_ratio() -> None:
    """``TestSortQueues``: ratios q0 0.4, q1 1.0, q2 0.5, q3 0.5; q3 at priority 3, the
    others at 1. Enabled: q3, q0, q2, q1. Disabled: q0, q3, q2, q1 (priority only breaks
    the q2/q3 tie)."""
    assert _sort_queues(enabled=True) == ["app-3", "app-0", "app-2", "app-1"]
    assert _sort_queues(enabled=False) == ["app-0", "app-3", "app-2", "app-1"]


# ---------------------------------------------------------------- queue priority values

CALC = """\
- name: parent
  properties: {{priority.offset: "5"{fence_parent}}}
  queues:
    - name: leaf
      properties: {{priority.offset: "3"{fence_leaf}}}
    - name: sibling
- name: probe
"""


def _winner(asks: dict[str, list[int]], probe: tuple[str, int], fence: bool = False) -> str:
    """Who takes the one slot: the applications of ``root.parent.leaf`` with their asks'
    priorities (in order), against a probe ask in ``probe`` queue at a priority."""
    text = CALC.format(fence_parent="", fence_leaf=", priority.policy: fence" if fence else "")
    env = one_slot_env(text)
    for app_id, prios in asks.items():
        env.add_app(app_id, "root.parent.leaf")
        for n, prio in enumerate(prios):
            env.ask(app_id, f"ask-{n}", 10, priority=prio)
    env.add_app("probe", probe[0])
    env.ask("probe", "ask", 10, priority=probe[1])
    return drain_order(env, 1)[0]


def test_priority_calc_adds_offsets_up_the_tree() -> None:
    """``TestPriorityCalc`` (queue_test.go): parent offset 5, leaf offset 3. An ask at 0
    makes the leaf 3 and the parent 8; adding one at 5 makes them 8 and 13."""
    # The parent against a queue under root at 7, then 9 (equal goes by usage, then path).
    assert _winner({"app-1": [0]}, ("root.probe", 7)) == "app-1"
    assert _winner({"app-1": [0]}, ("root.probe", 9)) == "probe"
    # The leaf against its sibling (no offset) at 2, then 4.
    assert _winner({"app-1": [0]}, ("root.parent.sibling", 2)) == "app-1"
    assert _winner({"app-1": [0]}, ("root.parent.sibling", 4)) == "probe"
    # With a second application at 5: leaf 8, parent 13.
    assert _winner({"app-1": [0], "app-2": [5]}, ("root.probe", 12)) == "app-2"
    assert _winner({"app-1": [0], "app-2": [5]}, ("root.probe", 14)) == "probe"
    assert _winner({"app-1": [0], "app-2": [5]}, ("root.parent.sibling", 7)) == "app-2"
    assert _winner({"app-1": [0], "app-2": [5]}, ("root.parent.sibling", 9)) == "probe"


def test_priority_calc_after_applications_leave() -> None:
    """``TestPriorityCalc``: removing the priority-5 application brings the parent back to
    8; removing the last leaves nothing pending, and a probe at the lowest priority goes."""
    env = one_slot_env(CALC.format(fence_parent="", fence_leaf=""))
    env.add_app("app-1", "root.parent.leaf")
    env.ask("app-1", "ask", 10, priority=0)
    env.add_app("app-2", "root.parent.leaf")
    env.ask("app-2", "ask", 10, priority=5)
    env.add_app("probe", "root.probe")
    env.ask("probe", "ask", 10, repeats=3, priority=9)
    env.remove_app("app-2")
    assert drain_order(env, 1) == ["probe"]  # parent 8 < 9
    env.remove_app("app-1")
    env.ask("probe", "ask", 10, repeats=3, priority=MIN_INT32)
    assert drain_order(env, 1) == ["probe"]


def test_priority_calc_with_fenced_leaf() -> None:
    """``TestPriorityCalcWithFencedQueue``: the leaf fenced at offset 3 shows 3 and the
    parent 8, whatever its asks' priorities."""
    for prios in ([0], [5], [100], [-100]):
        assert _winner({"app-1": prios}, ("root.probe", 7), fence=True) == "app-1"
        assert _winner({"app-1": prios}, ("root.probe", 9), fence=True) == "probe"
        assert _winner({"app-1": prios}, ("root.parent.sibling", 2), fence=True) == "app-1"
        assert _winner({"app-1": prios}, ("root.parent.sibling", 4), fence=True) == "probe"


def test_offset_is_clamped_to_int32() -> None:
    """``priorityValueByPolicy``: raw + offset saturates at the int32 bounds, where it ties
    with a queue at the bound (ties go by usage, then path)."""
    text = ("- name: a\n"
            "- name: high\n  properties: {priority.offset: \"2147483647\"}\n"
            "- name: low\n  properties: {priority.offset: \"-2147483648\"}\n"
            "- name: z\n")
    env = one_slot_env(text)
    for name, prio in (("a", 2**31 - 1), ("high", 100), ("low", -100), ("z", MIN_INT32)):
        env.add_app(name, f"root.{name}")
        env.ask(name, "ask", 10, priority=prio)
    assert drain_order(env, 4) == ["a", "high", "low", "z"]


# ---------------------------------------------------------------- an application's priority


def _app_vs_probe(probe_priority: int, released: tuple[str, ...] = (), served: bool = False,
                  again: bool = False) -> str:
    """``app-1`` in root.a with asks at 10, 5 and 15 (some released, the first served, the
    15 given one more repeat) against a probe in root.b: who takes the slot."""
    env = one_slot_env("- name: a\n- name: b\n")
    env.add_app("app-1", "root.a")
    for key, prio in (("p10", 10), ("p5", 5), ("p15", 15)):
        env.ask("app-1", key, 10, priority=prio)
    for key in released:
        env.release_ask("app-1", key)
    if served:
        assert drain_order(env, 1) == ["app-1"]
    if again:
        env.ask("app-1", "p15", 10, repeats=2, priority=15)
    env.add_app("probe", "root.b")
    env.ask("probe", "ask", 10, priority=probe_priority)
    return drain_order(env, 1)[0]


def test_max_ask_priority() -> None:
    """``TestMaxAskPriority`` (application_test.go): asks at 10, 5, 15 make 15; removing the
    10 keeps 15; removing the 15 too leaves 5; the 15's repeats all taken (YuniKorn sets
    its repeat to 0) leave 10, and one more repeat brings 15 back."""
    assert [_app_vs_probe(p) for p in (14, 16)] == ["app-1", "probe"]
    assert [_app_vs_probe(p, ("p10",)) for p in (14, 16)] == ["app-1", "probe"]
    assert [_app_vs_probe(p, ("p10", "p15")) for p in (4, 6)] == ["app-1", "probe"]
    assert [_app_vs_probe(p, served=True) for p in (9, 11)] == ["app-1", "probe"]
    assert [_app_vs_probe(p, served=True, again=True) for p in (14, 16)] == ["app-1", "probe"]


# ---------------------------------------------------------------- the k8shim's e2e tests


def test_static_queue_app_scheduling_order() -> None:
    """``Verify_Static_Queue_App_Scheduling_Order`` (k8shim
    test/e2e/priority_scheduling): root.fence, fenced, has room for one pod, filled by a
    sleep pod; pending low (-100) and high (100) in child1, normal (0) in child2. As pods
    are freed: high, normal, low."""
    env = Env(config("- name: fence\n  properties: {priority.policy: fence}\n"
                     "  resources: {max: {memory: 10}}\n  queues:\n"
                     "    - name: child1\n    - name: child2\n"))
    env.add_node("node-1", 100)
    env.add_app("sleep", "root.fence.child1")
    env.ask("sleep", "ask", 10)
    assert env.schedule() == 1
    for app_id, queue, prio in (("low", "child1", -100), ("high", "child1", 100),
                                ("normal", "child2", 0)):
        env.add_app(app_id, f"root.fence.{queue}")
        env.ask(app_id, "ask", 10, priority=prio)
    assert env.schedule() == 0
    served = []
    for _ in range(3):
        last = env.shim.allocations[-1]
        env.release(last.application_id, last.uuid)
        assert env.schedule() == 1
        served.append(env.shim.allocations[-1].application_id)
    assert served == ["high", "normal", "low"]


def test_priority_offset_queue_app_scheduling_order() -> None:
    """``Verify_Priority_Offset_Queue_App_Scheduling_Order`` (same file): children with
    offsets +100, 0 and -100, every pod at priority 0: served +100, 0, -100."""
    env = one_slot_env("- name: parent\n  queues:\n"
                       "    - name: low\n      properties: {priority.offset: \"-100\"}\n"
                       "    - name: normal\n"
                       "    - name: high\n      properties: {priority.offset: \"100\"}\n")
    for name in ("low", "normal", "high"):
        env.add_app(name, f"root.parent.{name}")
        env.ask(name, "ask", 10)
    assert drain_order(env, 3) == ["high", "normal", "low"]


def test_offset_is_not_inherited_but_sorting_is() -> None:
    """YuniKorn's ``filterParentProperty``: a parent's offset does not pass to its children
    (offsets add up instead); ``application.sort.priority`` does."""
    env = one_slot_env("- name: parent\n  properties: {priority.offset: \"10\", "
                       "application.sort.priority: disabled}\n  queues:\n"
                       "    - name: x\n    - name: y\n- name: probe\n")
    env.add_app("x-1", "root.parent.x")
    env.ask("x-1", "ask", 10, repeats=2, priority=1)
    env.add_app("y-1", "root.parent.y")
    env.ask("y-1", "ask", 10, priority=0)
    env.clock.advance(1.0)  # submitted later: fifo's own order, not its priority tie-break
    env.add_app("y-2", "root.parent.y")
    env.ask("y-2", "ask", 10, priority=50)
    env.add_app("probe", "root.probe")
    env.ask("probe", "ask", 10, priority=65)
    # The parent shows 50 + 10 (not 50 + 10 + 10): the probe at 65 goes first. Then y ties
    # x on usage and its 50 beats x's 1; inside y, fifo ignores priority (disabled there).
    assert drain_order(env, 2) == ["probe", "y-1"]


def test_a_real_ask_matched_to_a_placeholder_leaves_its_applications_priority() -> None:
    """YuniKorn allocates a real ask at the match with its placeholder and recomputes the
    application's priority without it (application.go ``tryPlaceholderAllocate``,
    ``allocateAsk``, ``updateAskMaxPriority``; ``TestMaxAskPriority`` for the rest). A
    gang's real ask at 15 has started its swap, unconfirmed; the gang's other ask is at 5.
    A probe at 10 in a sibling leaf takes the one free slot: the gang's priority is 5."""
    env = Env(config("- name: a\n- name: b\n"), predicates=no_reservations)
    env.add_node("node-1", 20)
    env.add_app("gang", "root.a", placeholder_ask=si.Resource.of(memory=10))
    env.ask("gang", "ph", 10, placeholder=True, task_group="tg")
    env.schedule()
    env.ask("gang", "real", 10, priority=15, task_group="tg")
    env.schedule()
    released = [r for r in env.shim.released
                if r.termination_type == si.TerminationType.PLACEHOLDER_REPLACED]
    assert len(released) == 1
    env.ask("gang", "p5", 10, priority=5)
    env.add_app("probe", "root.b")
    env.ask("probe", "ask", 10, priority=10)
    before = len(env.shim.allocations)
    env.schedule()
    assert [a.application_id for a in env.shim.allocations[before:]] == ["probe"]
