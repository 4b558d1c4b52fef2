"""``queues.yaml`` refused as Apache YuniKorn refuses it: its validator and rule building.

YuniKorn (apache/yunikorn-core ``be3bb48``) refuses a configuration in
``configs/configvalidator.go`` and, for placement rules, when it builds them
(``placement/rule.go`` newRule and each rule's ``initialise``). Each test names
the YuniKorn test it mirrors. The checks go through the public surface:
``parse_config``, ``yunikorn-fsm validate-config``, and a ``Scheduler``
registered or reloaded with the text (one validator serves all three).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scheduler import ManualClock, Scheduler, si
from scheduler.cli import main
from scheduler.config import parse_config
from scheduler.errors import ConfigError
from scheduler.testing import RecordingShim

QUEUES = """\
partitions:
  - name: default
    placementrules:
{rules}
    queues:
      - name: root
        submitacl: "*"
        queues:
          - {name: leaf}
          - {name: parent, parent: true}
          - {name: team, queues: [{name: dev}]}
"""


def with_rules(rules: str) -> str:
    return QUEUES.replace("{rules}", textwrap.indent(textwrap.dedent(rules).strip("\n"), " " * 6))


def refused(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    return info.value


MAGIC = with_rules("- name: provided\n- name: magic\n  create: true")


# ---------------------------------------------------------------------------
# rule names (rule_test.go TestNewRule, placement_test.go TestManagerInit/Update)
# ---------------------------------------------------------------------------


def test_an_unknown_rule_name_is_refused() -> None:
    # TestNewRule "bogus"; TestManagerUpdate {Name: "unknown"} fails the reload
    error = refused(MAGIC)
    assert error.path == "partitions[0].placementrules[1].name"
    assert "unknown placement rule 'magic'" in error.reason
    assert "provided, user, fixed, tag" in error.reason


def test_an_unknown_parent_rule_name_is_refused() -> None:
    error = refused(with_rules("- name: user\n  parent: {name: magic}"))
    assert error.path == "partitions[0].placementrules[0].parent.name"
    assert "unknown placement rule" in error.reason


def test_the_recovery_rule_is_refused() -> None:
    # TestNewRule "test deny recovery rule name"
    error = refused(with_rules("- name: Recovery"))
    assert error.path == "partitions[0].placementrules[0].name"
    assert "recovery rule cannot be configured" in error.reason


@pytest.mark.parametrize("name", ["test", "TeSt"])
def test_the_test_rule_is_built_in_any_case(name: str) -> None:
    # TestNewRule: "test" and "TeSt" build; TestManagerBuildRule: test below test
    config = parse_config(with_rules(f"- name: {name}\n  parent: {{name: test}}"))
    rule = config.partitions[0].placementrules[0]
    assert rule.name == "test" and rule.parent is not None and rule.parent.name == "test"


def test_rule_names_and_values_are_read_in_lower_case() -> None:
    # newRule normalises the name; the fixed and tag rules their value
    config = parse_config(with_rules(
        "- name: Tag\n  value: NameSpace\n  parent: {name: FIXED, value: Parent}\n"
        "- name: PROVIDED\n- {name: User, value: Kept}"))
    tag, provided, user = config.partitions[0].placementrules
    assert (tag.name, tag.value) == ("tag", "namespace")
    assert tag.parent is not None and (tag.parent.name, tag.parent.value) == ("fixed", "parent")
    assert provided.name == "provided"
    assert (user.name, user.value) == ("user", "Kept")


# ---------------------------------------------------------------------------
# fixed and tag values (fixed_rule_test.go TestFixedRule, tag_rule_test.go TestTagRule)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "path", "fragment"),
    [
        # TestFixedRule: no queue name
        ("- {name: fixed, create: true}", "[0].value", "needs a queue name"),
        ("- name: user\n  parent: {name: fixed}", "[0].parent.value", "needs a queue name"),
        # TestFixedRule: a qualified child below a parent rule
        ("- name: fixed\n  value: root.testchild\n  create: true\n"
         "  parent: {name: fixed, value: parent}", "[0].value", "full queue path"),
        # qualified is "starts with root", in any case
        ("- name: fixed\n  value: Rootish\n  create: true\n  parent: {name: user}",
         "[0].value", "full queue path"),
        # fixed_rule.go initialise: every name in the value is a valid queue name
        ("- {name: fixed, value: 'root..leaf'}", "[0].value", "invalid queue name ''"),
        ("- {name: fixed, value: 'root.a b', create: true}", "[0].value", "'a b'"),
        ("- {name: fixed, value: 'leaf.', create: true}", "[0].value", "invalid queue name"),
        # TestTagRule: no tag name
        ("- {name: tag, create: true}", "[0].value", "needs the tag"),
        ("- name: user\n  parent: {name: Tag}", "[0].parent.value", "needs the tag"),
    ],
)
def test_rule_values_refused_at_build(rules: str, path: str, fragment: str) -> None:
    error = refused(with_rules(rules))
    assert error.path == "partitions[0].placementrules" + path
    assert fragment in error.reason


@pytest.mark.parametrize(
    "rules",
    [
        "- {name: fixed, value: leaf}",                    # TestFixedRule: a queue name
        "- {name: tag, value: label1, parent: {name: tag, value: label2}}",  # TestTagRule
        "- {name: fixed, value: ROOT.LEAF}",
        "- {name: user, create: true, parent: {name: fixed, value: root}}",
    ],
)
def test_rule_values_built(rules: str) -> None:
    assert parse_config(with_rules(rules)).partitions[0].placementrules


# ---------------------------------------------------------------------------
# the fixed path against the queues (configvalidator_test.go TestCheckPlacementRules)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "fragment"),
    [
        # "references a queue (root.users) which is not a leaf": a parent written so
        ("- {name: fixed, value: root.parent}", "parent queue 'parent'"),
        # "references non-existing queues ... and create is 'false'"
        ("- {name: fixed, value: dev, parent: {name: fixed, value: team}}\n"
         "- {name: fixed, value: nope, parent: {name: fixed, value: parent}}",
         "missing queue 'root.parent.nope'"),
        # "which cannot be created because the last queue (default) ... is a leaf"
        ("- {name: fixed, value: root.leaf.below, create: true}", "leaf queue 'leaf'"),
    ],
)
def test_fixed_paths_refused(rules: str, fragment: str) -> None:
    error = refused(with_rules(rules))
    last = rules.count("\n- ")
    assert error.path == f"partitions[0].placementrules[{last}]"
    assert fragment in error.reason


@pytest.mark.parametrize(
    "rules",
    [
        # YuniKorn's validator takes a queue for a parent only when written so, and
        # only a rule named exactly "fixed" for a fixed one (getLongestStaticPath):
        # these rules give a parent queue, which fails them at run time
        "- {name: fixed, value: root.team}",
        "- {name: Fixed, value: root.parent}",
        # it matches the names as written against the lower-case path: a queue
        # written Dev is "missing", and may be created
        "- {name: fixed, value: root.team.dev.x, create: true}",
    ],
)
def test_fixed_paths_yunikorn_accepts(rules: str) -> None:
    text = with_rules(rules).replace("{name: dev}", "{name: Dev}")
    assert parse_config(text).partitions[0].placementrules


# ---------------------------------------------------------------------------
# wildcard limits above a named one (configvalidator_test.go TestCheckLimitResource,
# TestCheckLimitMaxApplications)
# ---------------------------------------------------------------------------


def limits(parent: str, child: str) -> str:
    return f"""\
partitions:
  - queues:
      - name: root
        queues:
          - name: parent
            limits: {parent}
            queues:
              - name: mid
                queues:
                  - name: leaf
                    limits: {child}
"""


@pytest.mark.parametrize(
    ("parent", "child", "where", "fragment"),
    [
        # "leaf queue user maxresources exceed grandparent queue wildcard maxresources"
        ("[{users: ['*'], maxresources: {memory: 10}}]",
         "[{users: [alice], maxresources: {memory: 20}}]",
         "maxresources.memory", "wildcard user limit"),
        # "leaf queue group maxresources exceed grandparent queue wildcard maxresources"
        ("[{groups: [devs], maxresources: {memory: 50}},"
         " {groups: ['*'], maxresources: {memory: 10}}]",
         "[{groups: [ops], maxresources: {memory: 20}}]",
         "maxresources.memory", "wildcard group limit"),
        # "leaf queue user maxapplications exceed grandparent queue wildcard maxapplications"
        ("[{users: ['*'], maxapplications: 2}]", "[{users: [alice], maxapplications: 3}]",
         "maxapplications", "between 1 and 2 set by the wildcard user limit"),
        # a wildcard that sets maxapplications needs one below it too
        ("[{users: ['*'], maxapplications: 2}]",
         "[{users: [alice], maxresources: {memory: 5}}]",
         "maxapplications", "maxapplications 0"),
        # "leaf queue group maxapplications exceed grandparent queue wildcard maxapplications"
        ("[{groups: [devs], maxapplications: 5}, {groups: ['*'], maxapplications: 2}]",
         "[{groups: [ops], maxapplications: 3}]",
         "maxapplications", "wildcard group limit"),
    ],
)
def test_a_named_limit_exceeding_a_wildcard_above_is_refused(
        parent: str, child: str, where: str, fragment: str) -> None:
    error = refused(limits(parent, child))
    assert error.path == ("partitions[0].queues[0].queues[0].queues[0].queues[0]"
                          f".limits[0].{where}")
    assert fragment in error.reason


@pytest.mark.parametrize(
    ("parent", "child"),
    [
        # a name limited above is held to its own limit, not the wildcard's
        ("[{users: [alice], maxresources: {memory: 50}}, {users: ['*'], maxresources: "
         "{memory: 10}}]", "[{users: [alice], maxresources: {memory: 40}}]"),
        # "leaf queue user wildcard maxresources are within grandparent queue wildcard"
        ("[{users: ['*'], maxresources: {memory: 10}}]",
         "[{users: ['*'], maxresources: {memory: 10}}, {groups: [devs], maxapplications: 9}]"),
        # users and groups are apart
        ("[{users: ['*'], maxapplications: 1}]", "[{groups: [devs], maxapplications: 9}]"),
    ],
)
def test_limits_within_the_wildcard_above_load(parent: str, child: str) -> None:
    assert parse_config(limits(parent, child)).partitions


def test_a_named_limit_binds_below_it_not_the_wildcard() -> None:
    # the name's own value is what its children are held to (checkLimitResource)
    text = limits("[{users: ['*'], maxresources: {memory: 10}}]",
                  "[{users: [alice], maxresources: {memory: 8}}]")
    text = text.replace("                    limits:", "                    queues:\n"
                        "                      - name: deep\n"
                        "                        limits: [{users: [alice], maxresources: "
                        "{memory: 9}}]\n                    limits:")
    error = refused(text)
    assert error.path.endswith(".queues[0].limits[0].maxresources.memory")
    assert "larger than 8 set on a parent queue" in error.reason


# ---------------------------------------------------------------------------
# the same refusal everywhere: validate-config, registration, reload
# ---------------------------------------------------------------------------


def test_validate_config_prints_the_path_and_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "queues.yaml"
    path.write_text(MAGIC, encoding="utf-8")
    assert main(["validate-config", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"{path}: invalid: partitions[0].placementrules[1].name: unknown placement "
                   "rule 'magic' (known, in any case: provided, user, fixed, tag)\n")


def test_registration_and_reload_refuse_what_validate_config_refuses() -> None:
    expected = str(refused(MAGIC))
    api = Scheduler(clock=ManualClock())
    shim = RecordingShim()
    with pytest.raises(ConfigError) as at_registration:
        api.register_resource_manager(
            si.RegisterResourceManagerRequest(rm_id="rm", config=MAGIC), shim)
    assert str(at_registration.value) == expected
    good = with_rules("- name: provided")
    api.register_resource_manager(si.RegisterResourceManagerRequest(rm_id="rm", config=good),
                                  shim)
    with pytest.raises(ConfigError) as at_reload:
        api.update_configuration(si.UpdateConfigurationRequest(rm_id="rm", config=MAGIC))
    assert str(at_reload.value) == expected
    rules = api.state_dump()["partitions"][0]
    assert "root.leaf" in [q["path"] for q in rules["queues"]]
