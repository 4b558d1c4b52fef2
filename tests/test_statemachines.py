"""The lifecycle declarations and the firing machinery."""

from __future__ import annotations

from pathlib import Path

import pytest

import statemachines
from statemachines import LIFECYCLES, InvalidTransition, UnknownTrigger
from statemachines.diagrams import embed, to_markdown, to_mermaid, write_diagrams

CONTRACT_STATES = {
    "application": {"New", "Accepted", "Running", "Completing", "Completed", "Failing",
                    "Failed", "Rejected", "Resuming", "Expired"},
    "ask": {"Pending", "Allocated", "Rejected"},
    "allocation": {"Allocated", "Releasing", "Completed", "Preempted", "Expired", "Replaced"},
    "node": {"Schedulable", "Draining", "Removed"},
    "rm": {"Init", "Running", "Paused", "Stopped"},
    "object": {"Active", "Draining", "Stopped"},
}
DOCS = Path(__file__).resolve().parent.parent / "docs"


class Thing:
    __slots__ = ("state",)

    def __init__(self, state: str) -> None:
        self.state = state


def test_lifecycles_have_the_contract_keys_and_states() -> None:
    assert list(LIFECYCLES) == ["application", "ask", "allocation", "node", "rm", "object"]
    for name, states in CONTRACT_STATES.items():
        declared = set(LIFECYCLES[name].states)
        assert states <= declared, name
    assert set(LIFECYCLES["ask"].states) - CONTRACT_STATES["ask"] == {"Initial"}
    for name, states in CONTRACT_STATES.items():
        if name != "ask":
            assert set(LIFECYCLES[name].states) == states, name


@pytest.mark.parametrize("name", list(LIFECYCLES))
def test_every_state_reachable_and_documented(name: str) -> None:
    lc = LIFECYCLES[name]
    assert lc.reachable() == lc.states
    assert lc.initial in lc.states
    for spec in lc.state_specs.values():
        assert spec.doc.strip()
    for t in lc.transitions:
        assert t.doc.strip() and t.source in lc.states and t.dest in lc.states
        assert (t.trigger, t.source, t.dest) == (t.trigger, t.source, lc.dest(t.source, t.trigger))


@pytest.mark.parametrize("name", list(LIFECYCLES))
def test_one_shared_machine_per_lifecycle(name: str) -> None:
    lc = LIFECYCLES[name]
    assert lc.machine.models == []
    a, b = Thing(lc.initial), Thing(lc.initial)
    trigger = lc.allowed(lc.initial)[0]
    lc.fire(a, trigger)
    assert a.state == lc.dest(lc.initial, trigger)
    assert b.state == lc.initial
    assert lc.machine.models == []


@pytest.mark.parametrize("name", list(LIFECYCLES))
def test_every_declared_edge_fires_and_every_other_raises(name: str) -> None:
    lc = LIFECYCLES[name]
    for state in lc.states:
        for trigger in lc.triggers:
            obj = Thing(state)
            dest = lc.dest(state, trigger)
            if dest is None:
                with pytest.raises(InvalidTransition) as info:
                    lc.fire(obj, trigger)
                assert obj.state == state, "an illegal trigger must change nothing"
                assert info.value.state == state and info.value.trigger == trigger
                assert trigger in str(info.value) and state in str(info.value)
            else:
                assert lc.fire(obj, trigger) == dest == obj.state


@pytest.mark.parametrize("name", list(LIFECYCLES))
def test_the_machine_itself_refuses_an_undeclared_edge_with_invalid_transition(name: str) -> None:
    """Firing through ``Lifecycle.machine`` directly, bypassing ``fire``, is held the same."""
    lc = LIFECYCLES[name]
    for state in lc.states:
        for trigger in lc.triggers:
            obj = Thing(state)
            if lc.dest(state, trigger) is None:
                with pytest.raises(InvalidTransition) as info:
                    lc.machine.events[trigger].trigger(obj)
                assert obj.state == state
                assert (info.value.lifecycle, info.value.state, info.value.trigger) == \
                    (lc.name, state, trigger)
            else:
                lc.machine.events[trigger].trigger(obj)
                assert obj.state == lc.dest(state, trigger)


@pytest.mark.parametrize("name", list(LIFECYCLES))
def test_the_machine_declares_no_callbacks_so_fire_may_set_the_state_directly(name: str) -> None:
    """``Lifecycle.fire`` looks the edge up and sets the state as ``Machine.set_state``
    does; that equals ``Event.trigger`` only while no condition, callback or enter/exit
    hook is declared."""
    m = LIFECYCLES[name].machine
    for hook in ("before_state_change", "after_state_change", "prepare_event",
                 "finalize_event", "on_exception"):
        assert not getattr(m, hook), hook
    for state in m.states.values():
        assert not state.on_enter and not state.on_exit, state.name
    for event in m.events.values():
        for transitions in event.transitions.values():
            for t in transitions:
                assert not (t.prepare or t.conditions or t.before or t.after), event.name


def test_unknown_trigger_raises_subclass() -> None:
    obj = Thing("New")
    with pytest.raises(UnknownTrigger):
        statemachines.APPLICATION.fire(obj, "teleport")
    assert obj.state == "New"


def test_observers_see_each_transition_once() -> None:
    seen: list[tuple[str, str, str, str]] = []
    local: list[str] = []
    remove = statemachines.add_observer(
        lambda r: seen.append((r.lifecycle, r.trigger, r.source, r.dest)))
    try:
        obj = Thing("Schedulable")
        statemachines.NODE.fire(obj, "drain", observer=lambda r: local.append(r.dest))
        with pytest.raises(InvalidTransition):
            statemachines.NODE.fire(obj, "drain")
    finally:
        remove()
    statemachines.NODE.fire(obj, "restore")
    assert seen == [("node", "drain", "Schedulable", "Draining")]
    assert local == ["Draining"]


def test_seed_edges_present() -> None:
    app = statemachines.APPLICATION
    assert app.dest("New", "accept") == "Accepted"
    assert app.dest("Completing", "run") == "Running"
    assert app.dest("Completing", "complete") == "Completed"
    assert app.dest("Accepted", "fail") == "Failing"
    assert app.dest("Failing", "kill") == "Failed"
    assert app.dest("Accepted", "resume") == "Resuming"
    assert app.dest("Resuming", "accept") == "Accepted"
    ask = statemachines.ASK
    assert ask.dest("Initial", "ask") == "Pending"
    assert ask.dest("Initial", "reject") == "Rejected"
    alloc = statemachines.ALLOCATION
    assert alloc.dest("Allocated", "release") == "Releasing"
    assert alloc.dest("Releasing", "replace") == "Replaced"
    assert alloc.dest("Allocated", "replace") is None
    rm = statemachines.RM
    assert [rm.dest("Init", "register"), rm.dest("Running", "disconnect"),
            rm.dest("Paused", "time_out"), rm.dest("Running", "shutdown")] == [
        "Running", "Paused", "Stopped", "Stopped"]
    node = statemachines.NODE
    assert node.dest("Schedulable", "restore") is None


def test_invalid_declaration_is_refused() -> None:
    from statemachines import Lifecycle, StateSpec, TransitionSpec

    with pytest.raises(ValueError, match="undeclared"):
        Lifecycle("bad", "", "A", [StateSpec("A", "a")], [TransitionSpec("go", "A", "B", "x")])
    with pytest.raises(ValueError, match="final"):
        Lifecycle("bad", "", "A", [StateSpec("A", "a"), StateSpec("B", "b", final=True)],
                  [TransitionSpec("go", "A", "B", "x"), TransitionSpec("back", "B", "A", "y")])


def test_a_lifecycle_declaring_one_source_and_trigger_twice_is_refused() -> None:
    from statemachines import Lifecycle, StateSpec, TransitionSpec

    states = [StateSpec("A", "a"), StateSpec("B", "b"), StateSpec("C", "c")]
    with pytest.raises(ValueError, match="go from A declared twice"):
        Lifecycle("bad", "", "A", states,
                  [TransitionSpec("go", "A", "B", "x"), TransitionSpec("go", "A", "C", "y")])
    with pytest.raises(ValueError, match="go from A declared twice"):
        Lifecycle("bad", "", "A", states,
                  [TransitionSpec("go", "A", "B", "x"), TransitionSpec("go", "A", "B", "x")])
    same_trigger_elsewhere = Lifecycle(
        "ok", "", "A", states,
        [TransitionSpec("go", "A", "B", "x"), TransitionSpec("go", "B", "C", "y")])
    assert same_trigger_elsewhere.dest("B", "go") == "C"


def test_the_remover_add_observer_returns_stops_only_that_observer() -> None:
    first: list[str] = []
    second: list[str] = []
    remove_first = statemachines.add_observer(lambda r: first.append(r.dest))
    remove_second = statemachines.add_observer(lambda r: second.append(r.dest))
    try:
        obj = Thing("Schedulable")
        statemachines.NODE.fire(obj, "drain")
        remove_first()
        remove_first()                                   # a second call does nothing
        statemachines.NODE.fire(obj, "restore")
    finally:
        remove_second()
    statemachines.NODE.fire(obj, "drain")
    assert first == ["Draining"]
    assert second == ["Draining", "Schedulable"]


def test_mermaid_is_a_state_diagram_with_every_edge() -> None:
    for lc in LIFECYCLES.values():
        text = to_mermaid(lc)
        assert text.startswith("stateDiagram-v2\n")
        assert f"[*] --> {lc.initial}" in text
        for t in lc.transitions:
            assert any(line.strip().startswith(f"{t.source} --> {t.dest}:") and
                       t.trigger in line for line in text.splitlines())


def test_committed_diagrams_match_the_declarations(tmp_path: Path) -> None:
    """docs/diagrams is generated; regenerate with `yunikorn-fsm diagrams --out docs/diagrams`."""
    write_diagrams(LIFECYCLES.values(), tmp_path, svg=False)
    for lc in LIFECYCLES.values():
        committed = DOCS / "diagrams" / f"{lc.name}.md"
        assert committed.read_text(encoding="utf-8") == to_markdown(lc), (
            f"{committed} is stale: run `yunikorn-fsm diagrams --out docs/diagrams "
            "--embed docs/lifecycles.md`")
        assert (tmp_path / f"{lc.name}.md").read_text(encoding="utf-8") == to_markdown(lc)


def test_lifecycles_page_embeds_current_diagrams() -> None:
    page = (DOCS / "lifecycles.md").read_text(encoding="utf-8")
    assert embed(page, LIFECYCLES.values()) == page, (
        "docs/lifecycles.md is stale: run `yunikorn-fsm diagrams --out docs/diagrams "
        "--embed docs/lifecycles.md`")
    for lc in LIFECYCLES.values():
        assert f"BEGIN generated diagram: {lc.name}" in page


def test_invariants_page_is_generated_from_the_registry() -> None:
    from invariants.commands.docs import render

    assert (DOCS / "invariants.md").read_text(encoding="utf-8") == render(), (
        "docs/invariants.md is stale: run `yunikorn-fsm invariants --markdown > "
        "docs/invariants.md`")


def test_gang_page_is_generated_from_the_flows() -> None:
    from invariants.commands.flows import render

    assert (DOCS / "gang.md").read_text(encoding="utf-8") == render(), (
        "docs/gang.md is stale: run `yunikorn-fsm flows --markdown > docs/gang.md`")


def test_gang_flows_end_in_the_states_the_seed_describes() -> None:
    from invariants.commands.flows import cleanup_flow, generic_flow, timeout_flow

    assert generic_flow().states[-1] == "Running"
    assert timeout_flow("Hard").states[-2:] == ["Failing", "Failed"]
    soft = timeout_flow("Soft").states
    assert soft[soft.index("Resuming") + 1] == "Accepted"
    assert cleanup_flow().states[-2:] == ["Completing", "Completed"]


def test_svg_written_through_dot_when_installed(tmp_path: Path, monkeypatch: object) -> None:
    """The SVG path runs the ``dot`` program on the generated graph (a stand-in here)."""
    import os
    import stat

    from statemachines.diagrams import to_dot

    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "dot"
    fake.write_text('#!/bin/sh\n# args: -Tsvg -o OUT\ncat > "$3"\n', encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")  # type: ignore[attr-defined]
    out = tmp_path / "out"
    written = write_diagrams(LIFECYCLES.values(), out)
    assert sorted(p.name for p in written if p.suffix == ".svg") == sorted(
        f"{name}.svg" for name in LIFECYCLES)
    node = LIFECYCLES["node"]
    assert (out / "node.svg").read_text(encoding="utf-8") == to_dot(node)
    assert '"Draining" -> "Removed" [label="remove"]' in to_dot(node)


def test_svg_required_without_dot_is_a_clear_error(tmp_path: Path, monkeypatch: object) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # type: ignore[attr-defined]
    with pytest.raises(FileNotFoundError, match="dot"):
        write_diagrams(LIFECYCLES.values(), tmp_path / "out", svg=True)
    assert [p.suffix for p in write_diagrams(LIFECYCLES.values(), tmp_path / "o2")] == [".md"] * 6
