"""``queues.yaml`` as Apache YuniKorn reads it, where a reading of our own would differ.

Each test goes through the public surface: ``scheduler.config.parse_config``,
``yunikorn-fsm validate-config``, or a ``Scheduler`` registered with the text.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from invariants.modelshim.world import World
from scheduler import ManualClock, Scheduler, si
from scheduler.cli import main
from scheduler.config import MAX_ALIAS_NODES, MAX_CONFIG_CHARS, MAX_CONFIG_DEPTH, parse_config
from scheduler.errors import ConfigError
from scheduler.testing import RecordingShim
from scheduler.trace import Step


def register(text: str) -> tuple[Scheduler, RecordingShim]:
    api = Scheduler(clock=ManualClock())
    shim = RecordingShim()
    api.register_resource_manager(si.RegisterResourceManagerRequest(rm_id="rm", config=text), shim)
    return api, shim


def submit(api: Scheduler, app_id: str, queue: str, user: str = "alice",
           tags: dict[str, str] | None = None) -> None:
    api.update_application(si.ApplicationRequest(rm_id="rm", new=[si.AddApplicationRequest(
        application_id=app_id, queue_name=queue, ugi=si.UserGroupInformation(user=user),
        tags=tags or {})]))


def checked(config: str, *requests: si.ApplicationRequest) -> World:
    """The checker's model shim and every invariant, over a registration and ``requests``."""
    world = World()
    steps = [Step("register_resource_manager",
                  si.RegisterResourceManagerRequest(rm_id="rm", config=config))]
    steps += [Step("update_application", request) for request in requests]
    for step in steps:
        assert world.run(step) == [], step.call
    return world


def queue_paths(api: Scheduler) -> list[str]:
    return [q["path"] for q in api.state_dump()["partitions"][0]["queues"]]


def validate(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
             ) -> tuple[int, str, str]:
    path = tmp_path / "queues.yaml"
    path.write_text(text, encoding="utf-8")
    code = main(["validate-config", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# 16: YAML 1.2 booleans
# ---------------------------------------------------------------------------

WORDS = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: no
        queues:
          - name: no
            parent: true
            queues: [{name: on}]
          - name: off
            adminacl: on
            limits: [{users: [no, on, off], maxapplications: 2}]
          - name: 'yes'
            properties: {on: off}
"""


def test_yaml_11_boolean_words_keep_their_text_in_names() -> None:
    root = parse_config(WORDS).partitions[0].root
    assert root.submitacl == "no"
    assert [q.name for q in root.queues] == ["no", "off", "yes"]
    assert root.queues[0].queues[0].name == "on"
    assert root.queues[1].adminacl == "on"
    assert root.queues[1].limits[0].users == ["no", "on", "off"]
    assert root.queues[2].properties == {"on": "off"}


def test_queues_and_users_called_on_off_and_no_keep_their_names() -> None:
    api, shim = register(WORDS)
    submit(api, "app-1", "root.off", user="on")
    submit(api, "app-2", "root.no.on", user="no")
    assert shim.accepted_apps == ["app-1", "app-2"]
    assert {"root.no", "root.no.on", "root.off", "root.yes"} <= set(queue_paths(api))


@pytest.mark.parametrize(("value", "expected"), [
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("FALSE", False),
    ("yes", True), ("on", True), ("Y", True), ("no", False), ("off", False), ("n", False),
])
def test_boolean_fields_read_true_false_and_yuniKorns_yaml_11_words(
        value: str, expected: bool) -> None:
    text = ("partitions:\n  - name: default\n"
            f"    placementrules: [{{name: provided, create: {value}}}]\n"
            f"    queues: [{{name: root, queues: [{{name: p, parent: {value}}}]}}]\n")
    partition = parse_config(text).partitions[0]
    assert partition.placementrules[0].create is expected
    assert partition.root.queues[0].parent is expected


@pytest.mark.parametrize("value", ["'true'", "1", "maybe"])
def test_boolean_fields_refuse_anything_else(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(f"partitions:\n  - queues: [{{name: root, queues: [{{name: p, "
                     f"parent: {value}}}]}}]\n")
    assert info.value.path == "partitions[0].queues[0].queues[0].parent"


# ---------------------------------------------------------------------------
# 18: an unknown application sort policy is fifo, with a warning
# ---------------------------------------------------------------------------

CASED_POLICY = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: cased
            properties: {application.sort.policy: Fair}
          - name: fair
            properties: {application.sort.policy: fair}
"""


def test_validate_config_warns_about_an_unknown_sort_policy_and_accepts_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = validate(tmp_path, CASED_POLICY, capsys)
    assert code == 0
    assert "valid (1 partition(s), 3 queue(s))" in out
    assert ('warning: partitions[0].queues[0].queues[0].properties["application.sort.policy"]: '
            "unknown application sort policy 'Fair', using fifo") in err


def test_a_sort_policy_spelled_with_capitals_is_fifo_in_the_core(
        caplog: pytest.LogCaptureFixture) -> None:
    """The match is exact, as YuniKorn's: ``Fair`` is fifo, so a gang is admitted there."""
    with caplog.at_level("WARNING", logger="yunikorn_fsm"):
        api, shim = register(CASED_POLICY)
    assert "unknown application sort policy 'Fair'" in caplog.text
    queues = {q["path"]: q["sort_policy"] for q in api.state_dump()["partitions"][0]["queues"]}
    assert queues["root.cased"] == "fifo" and queues["root.fair"] == "fair"
    for app_id, queue in (("gang-1", "root.cased"), ("gang-2", "root.fair")):
        api.update_application(si.ApplicationRequest(rm_id="rm", new=[si.AddApplicationRequest(
            application_id=app_id, queue_name=queue, ugi=si.UserGroupInformation(user="a"),
            placeholder_ask=si.Resource.of(memory=10))]))
    assert shim.accepted_apps == ["gang-1"]
    assert [r.application_id for r in shim.rejected_apps] == ["gang-2"]


def test_the_checker_reads_a_capitalised_sort_policy_as_fifo_too() -> None:
    world = checked(CASED_POLICY, si.ApplicationRequest(rm_id="rm", new=[
        si.AddApplicationRequest(application_id=app_id, queue_name=queue,
                                 ugi=si.UserGroupInformation(user="a"),
                                 placeholder_ask=si.Resource.of(memory=10))
        for app_id, queue in (("gang-1", "root.cased"), ("gang-2", "root.fair"))]))
    apps = world.shim.rms["rm"].apps
    assert {app_id: app.state for app_id, app in apps.items()} == {
        "gang-1": "New", "gang-2": "Rejected"}


def test_a_checker_run_does_not_repeat_the_warning_for_every_registration(
        tmp_path: Path) -> None:
    """The checker registers such a configuration once per case and judges it itself."""
    path = tmp_path / "queues.yaml"
    path.write_text(CASED_POLICY, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "scheduler.cli", "check", "--config", str(path), "--seed", "1",
         "--examples", "3", "--quiet", "--no-replay", "--out", str(tmp_path / "failures")],
        capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "unknown application sort policy" not in run.stdout + run.stderr
    assert "result: every invariant held" in run.stdout

# ---------------------------------------------------------------------------
# 17: an empty file; partition limits are root's
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "\n", "# queues come later\n"])
def test_validate_config_accepts_an_empty_file(
        text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = validate(tmp_path, text, capsys)
    assert (code, err) == (0, "")
    assert out.endswith("valid (0 partition(s), 0 queue(s)); no partitions: the core loads "
                        "its default configuration\n")


NS1 = si.ApplicationRequest(rm_id="rm", new=[si.AddApplicationRequest(
    application_id="app-1", queue_name="root.ns1", tags={"namespace": "ns1"},
    ugi=si.UserGroupInformation(user="alice"))])


@pytest.mark.parametrize("text", ["# queues come later\n", "partitions: []\n", "checksum: X\n"])
def test_a_configuration_without_partitions_registers_the_default(text: str) -> None:
    api, shim = register(text)
    api.update_application(NS1)
    assert shim.accepted_apps == ["app-1"]
    assert queue_paths(api) == ["root", "root.ns1"]
    world = checked(text, NS1)                      # and the checker reads it the same way
    assert world.shim.rms["rm"].apps["app-1"].path == "root.ns1"


# 19: the default configuration is YuniKorn's: the namespace tag names the queue


@pytest.mark.parametrize("text", ["", "partitions: []\n"])
def test_the_default_configuration_places_by_namespace_as_yuniKorns_does(text: str) -> None:
    api, shim = register(text)
    submit(api, "app-1", "root.sandbox", tags={"namespace": "team-a"})
    submit(api, "app-2", "", tags={"namespace": "Team-A"})
    submit(api, "app-3", "root.sandbox")
    assert shim.accepted_apps == ["app-1", "app-2"]
    assert [r.application_id for r in shim.rejected_apps] == ["app-3"]
    assert queue_paths(api) == ["root", "root.team-a"]
    no_namespace = si.ApplicationRequest(rm_id="rm", new=[si.AddApplicationRequest(
        application_id="app-3", queue_name="root.sandbox",
        ugi=si.UserGroupInformation(user="alice"))])
    world = checked(text, NS1, no_namespace)       # the checker expects the same
    assert world.shim.rms["rm"].apps["app-1"].path == "root.ns1"
    assert world.shim.rms["rm"].apps["app-3"].state == "Rejected"

def limits_config(partition_limits: str, root_limits: str = "", child_limits: str = "") -> str:
    return ("partitions:\n  - name: default\n"
            + (f"    limits: {partition_limits}\n" if partition_limits else "")
            + "    queues:\n      - name: root\n"
            + (f"        limits: {root_limits}\n" if root_limits else "")
            + "        queues:\n          - name: a\n"
            + (f"            limits: {child_limits}\n" if child_limits else ""))


ALICE_2 = "[{users: [alice], maxapplications: 2}]"


def test_partition_limits_that_differ_from_roots_are_refused() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(limits_config(ALICE_2, "[{users: [alice], maxapplications: 3}]"))
    assert info.value.path == "partitions[0].limits"
    assert "differ from the root queue's" in info.value.reason
    equal = parse_config(limits_config(ALICE_2, ALICE_2)).partitions[0]
    assert equal.root.limits == equal.limits


def test_partition_limits_are_roots_and_bound_the_childrens() -> None:
    partition = parse_config(limits_config(ALICE_2)).partitions[0]
    assert partition.root.limits == partition.limits
    with pytest.raises(ConfigError) as info:
        parse_config(limits_config(ALICE_2, child_limits="[{users: [alice], maxapplications: 5}]"))
    assert info.value.path == "partitions[0].queues[0].queues[0].limits[0].maxapplications"
    assert "between 1 and 2 set on a parent queue" in info.value.reason
    with pytest.raises(ConfigError) as info:
        parse_config(limits_config("[{users: [alice], maxresources: {memory: 0}}]"))
    assert info.value.path == "partitions[0].limits[0].maxresources"


# ---------------------------------------------------------------------------
# 15: queue names are case-insensitive
# ---------------------------------------------------------------------------

CASED_QUEUES = """\
partitions:
  - name: default
    placementrules:
      - {name: provided}
      - {name: tag, value: namespace, create: true, parent: {name: fixed, value: root.Teams}}
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: ProdUction
            resources: {max: {memory: 100}}
          - name: Teams
            parent: true
"""


def test_an_application_for_root_production_lands_in_the_queue_configured_as_ProdUction(
) -> None:
    api, shim = register(CASED_QUEUES)
    assert queue_paths(api) == ["root", "root.production", "root.teams"]
    submit(api, "app-1", "root.production")
    submit(api, "app-2", "ROOT.PRODUCTION")
    submit(api, "app-3", "Production")
    submit(api, "app-4", "root.nowhere", tags={"namespace": "Dev"})
    submit(api, "app-5", "root.nowhere", tags={"namespace": "dev"})
    assert shim.accepted_apps == ["app-1", "app-2", "app-3", "app-4", "app-5"]
    apps = {a["application_id"]: a["queue"]
            for a in api.state_dump()["partitions"][0]["applications"]}
    assert apps == {"app-1": "root.production", "app-2": "root.production",
                    "app-3": "root.production", "app-4": "root.teams.dev",
                    "app-5": "root.teams.dev"}
    assert queue_paths(api) == ["root", "root.production", "root.teams", "root.teams.dev"]


def test_a_reload_that_changes_only_the_case_of_a_name_keeps_the_queue() -> None:
    api, shim = register(CASED_QUEUES)
    submit(api, "app-1", "root.production")
    api.update_configuration(si.UpdateConfigurationRequest(
        rm_id="rm", config=CASED_QUEUES.replace("ProdUction", "PRODUCTION")))
    queues = {q["path"]: q for q in api.state_dump()["partitions"][0]["queues"]}
    assert queues["root.production"]["state"] == "Active"
    assert queues["root.production"]["max"] == {"memory": 100}
    submit(api, "app-2", "root.Production")
    assert shim.accepted_apps == ["app-1", "app-2"]


def test_the_checker_reads_queue_names_without_case_too() -> None:
    world = checked(CASED_QUEUES, si.ApplicationRequest(rm_id="rm", new=[
        si.AddApplicationRequest(application_id=app_id, queue_name=queue, tags=tags,
                                 ugi=si.UserGroupInformation(user="alice"))
        for app_id, queue, tags in (("app-1", "ROOT.PRODUCTION", {}),
                                    ("app-2", "root.x", {"namespace": "Dev"}))]))
    apps = world.shim.rms["rm"].apps
    assert {app_id: app.path for app_id, app in apps.items()} == {
        "app-1": "root.production", "app-2": "root.teams.dev"}


# ---------------------------------------------------------------------------
# 11: alias bombs, deep nesting and oversized texts are refused before expansion
# ---------------------------------------------------------------------------


def alias_bomb(levels: int = 9) -> str:
    """``levels`` anchors, each holding ten aliases of the one before: 10**levels strings
    once expanded. At 9 levels, reporting the bad property value alone (its repr) would
    take minutes and gigabytes; 7 levels already take a second without the bound."""
    text = "lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for i in range(1, levels):
        text += f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 10)}]\n"
    return text + ("partitions: [{name: default, queues: [{name: root, "
                   f"properties: {{x: *lol{levels - 1}}}}}]}}]\n")


def test_an_alias_bomb_is_refused_before_it_is_expanded() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(alias_bomb())
    assert info.value.path == ""
    assert info.value.reason.startswith(
        f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} repeated nodes (line 5; "
        "an alias bomb?)")


def test_registering_an_alias_bomb_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    api = Scheduler(clock=ManualClock())
    with pytest.raises(ConfigError, match="alias bomb"):
        api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id="rm", config=alias_bomb()), RecordingShim())
    assert api.state_dump() == {"rms": [], "partitions": []}
    code, _out, err = validate(tmp_path, alias_bomb(), capsys)
    assert code != 0 and "alias bomb" in err


@pytest.mark.parametrize(("text", "reason"), [
    ("x: &x [*x]\n", "a YAML alias refers to a collection that contains it (line 1)"),
    ("x: &x {y: *x}\n", "a YAML alias refers to a collection that contains it (line 1)"),
    ("[" * 5000 + "]" * 5000, f"the YAML nests deeper than {MAX_CONFIG_DEPTH} levels (line 1)"),
    ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 150)),
     f"the YAML nests deeper than {MAX_CONFIG_DEPTH} levels (line 101)"),
    ("#" * (MAX_CONFIG_CHARS + 1),
     f"the configuration has {MAX_CONFIG_CHARS + 1:,} characters; at most "
     f"{MAX_CONFIG_CHARS:,} are read"),
])
def test_recursive_aliases_deep_nesting_and_oversized_texts_are_refused(
        text: str, reason: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert (info.value.path, info.value.reason) == ("", reason)


def test_validate_config_refuses_an_oversized_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = validate(tmp_path, "#" * (MAX_CONFIG_CHARS + 10), capsys)
    assert code != 0 and f"at most {MAX_CONFIG_CHARS:,} are read" in err


def test_aliases_and_merge_keys_within_the_bounds_still_load() -> None:
    text = ("partitions:\n  - name: default\n    queues:\n      - name: root\n"
            "        queues:\n"
            "          - {name: a, resources: {max: &quota {memory: 10, vcore: 1}}}\n"
            "          - {name: b, resources: {max: {<<: *quota, memory: 20}}}\n"
            + "".join(f"          - {{name: q{i}, resources: {{max: *quota}}}}\n"
                      for i in range(2000)))
    queues = parse_config(text).partitions[0].root.queues
    assert dict(queues[1].resources.max) == {"memory": 20, "vcore": 1000}
    assert all(dict(q.resources.max) == {"memory": 10, "vcore": 1000} for q in queues[2:])


def _typed(value: object) -> object:
    """A value with its types and kept YAML text spelled out, to compare two readings."""
    if isinstance(value, dict):
        return ("map", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [_typed(v) for v in value])
    return (type(value).__name__, repr(value), getattr(value, "yaml_text", None))


TRICKY = [
    "a: 010\nb: 0x1F\nc: 1_000\nd: +5\ne: -0\nf: 1e3\ng: .5\nh: .inf\ni: .NaN\n",
    "a: yes\nb: no\nc: on\nd: off\ne: true\nf: False\ng: TRUE\nh: ~\ni: null\nj:\n",
    "a: 2024-01-01\nb: 2024-01-01 10:00:00\nc: '7'\nd: \"x\\ty\"\ne: !!str 5\n",
    "base: &b {memory: 10, vcore: 1}\nq: {<<: *b, memory: 20}\nr: [*b, *b]\n",
    "a: |\n  two\n  lines\nb: >\n  folded\n  text\nc: 'it''s'\nd: \"\\u00e9\"\n",
    "- {name: a}\n- [1, 2, [3, [4]]]\n- ? complex\n  : key\n",
    "a:\n\tb: 1\n", "a: [1, 2\n", "a: 1\na: 2\n", "--- 1\n--- 2\n", "a: *nowhere\n",
    "x: &x [*x]\n", "%YAML 1.1\n---\na: 1\n", "a: 'unterminated\n", "\ufeffa: 1\n",
    "", "# only a comment\n", "a: b: c\n", "{a: 1, a: 2}\n", "a: !!binary aGk=\n",
]


def _readings(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    from scheduler.config import loader

    def read() -> object:
        try:
            return ("ok", _typed(loader._load(text)))
        except (ConfigError, yaml.YAMLError) as exc:
            return ("error", type(exc).__name__, str(exc))

    fast = read()
    with monkeypatch.context() as patch:
        patch.setattr(loader, "_CLoader", None)
        pure = read()
    return fast, pure


@pytest.mark.parametrize("text", TRICKY)
def test_libyaml_and_the_pure_python_reader_agree_on_tricky_yaml(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml composes when it is installed and the pure-Python reader is the reference:
    values, types, kept texts and every error message are the same."""
    fast, pure = _readings(text, monkeypatch)
    assert fast == pure


def test_libyaml_and_the_pure_python_reader_agree_on_every_kind_of_configuration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from invariants.actions import configs
    texts = [p.read_text() for p in sorted(Path(__file__).parent.joinpath(
        "data", "configs").glob("*.yaml"))]
    rng = random.Random(20261126)
    texts += [configs.draw(rng).text for _ in range(150)]
    texts += [alias_bomb(), alias_bomb(4), "[" * 5000 + "]" * 5000,
              "a:\n" + "".join(" " * i + "- \n" for i in range(1, 150))]
    for text in texts:
        fast, pure = _readings(text, monkeypatch)
        assert fast == pure, text[:200]
