"""Tests of ``scheduler.config``: YuniKorn ``queues.yaml`` parsing and validation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from scheduler.config import (
    ACL,
    DEFAULT_CONFIG_YAML,
    QueueConfig,
    ResourcesConfig,
    SchedulerConfig,
    load_config_file,
    parse_acl,
    parse_config,
    parse_quantity,
    parse_resources,
    parse_vcore,
)
from scheduler.errors import ConfigError

DATA = Path(__file__).parent / "data" / "configs"


def under_root(queues: str, *, root_extra: str = "", partition_extra: str = "") -> str:
    """A one-partition config whose root queue has the ``queues`` block (YAML list)."""
    block = textwrap.indent(textwrap.dedent(queues).strip("\n"), " " * 10)
    root_lines = textwrap.indent(textwrap.dedent(root_extra).strip("\n"), " " * 8)
    part_lines = textwrap.indent(textwrap.dedent(partition_extra).strip("\n"), " " * 4)
    text = "partitions:\n  - name: default\n"
    if part_lines:
        text += part_lines + "\n"
    text += "    queues:\n      - name: root\n"
    if root_lines:
        text += root_lines + "\n"
    if block:
        text += "        queues:\n" + block + "\n"
    return text


def config_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    return info.value


def root_of(text: str) -> QueueConfig:
    return parse_config(text).partitions[0].root


# ---------------------------------------------------------------------------
# quantities
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("1", 1),
        (1024, 1024),
        ("1k", 1000),
        ("2k", 2000),
        ("3M", 3 * 10**6),
        ("1G", 10**9),
        ("16G", 16 * 10**9),
        ("5T", 5 * 10**12),
        ("6P", 6 * 10**15),
        ("7E", 7 * 10**18),
        ("1Ki", 1024),
        ("2Mi", 2 * 2**20),
        ("4Gi", 4 * 2**30),
        ("5Ti", 5 * 2**40),
        ("6Pi", 6 * 2**50),
        ("7Ei", 7 * 2**60),
        (" 25k ", 25_000),
        ("25 k", 25_000),
        ("9223372036854775807", 2**63 - 1),
    ],
)
def test_parse_quantity_valid(text: str | int, expected: int) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("9223372036854775808", "overflow"),
        ("1000E", "overflow"),
        ("16Ei", "overflow"),
        ("5X", "suffix"),
        ("1K", "suffix"),  # YuniKorn knows lower-case k only
        ("1mi", "suffix"),
        ("500m", "only valid for vcore"),
        ("-1", "negative"),
        (-1, "negative"),
        ("+1", "invalid quantity"),
        ("1.5", "fractional"),
        ("1.5Gi", "fractional"),
        (1.5, "fractional"),
        ("", "invalid quantity"),
        ("Gi", "invalid quantity"),
        ("1 0", "invalid quantity"),
        ("1e3", "invalid quantity"),
        (True, "boolean"),
    ],
)
def test_parse_quantity_invalid(text: object, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_quantity(text)  # type: ignore[arg-type]
    assert fragment in info.value.reason
    assert info.value.path == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", 0),
        ("1", 1000),
        ("2", 2000),
        (2, 2000),
        ("250m", 250),
        ("500m", 500),
        ("1500m", 1500),
        ("1k", 10**6),
        ("2Ki", 2 * 1024 * 1000),
        ("9223372036854775", 9_223_372_036_854_775_000),
    ],
)
def test_parse_vcore_valid(text: str | int, expected: int) -> None:
    assert parse_vcore(text) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("9223372036854776", "overflow"),
        ("7E", "overflow"),
        ("0.5", "fractional"),  # YuniKorn never takes fractions: write 500m
        ("1.5m", "fractional"),
        ("-1", "negative"),
        ("-500m", "negative"),
        ("5X", "suffix"),
    ],
)
def test_parse_vcore_invalid(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_vcore(text)
    assert fragment in info.value.reason


def test_parse_resources_dispatches_on_vcore_and_locates_bad_key() -> None:
    assert parse_resources({"memory": "4Gi", "vcore": "500m", "pods": 10}) == {
        "memory": 4 * 2**30,
        "vcore": 500,
        "pods": 10,
    }
    with pytest.raises(ConfigError) as info:
        parse_resources({"memory": "1", "nvidia.com/gpu": "x"})
    assert info.value.path == '["nvidia.com/gpu"]'


@pytest.mark.parametrize(
    ("yaml_value", "resource", "expected"),
    [
        ("4Gi", "memory", 4 * 2**30),
        ("16G", "memory", 16 * 10**9),
        ("1Ki", "memory", 1024),
        ("1k", "memory", 1000),
        ("1G", "memory", 10**9),
        ("1024", "memory", 1024),
        ('"2048"', "memory", 2048),
        ("010", "memory", 10),  # YuniKorn reads the text: not YAML 1.1 octal
        ("4", "vcore", 4000),
        ('"2"', "vcore", 2000),
        ("250m", "vcore", 250),
        ("500m", "vcore", 500),
        ("3", "nvidia.com/gpu", 3),
    ],
)
def test_quantities_in_yaml(yaml_value: str, resource: str, expected: int) -> None:
    key = f'"{resource}"' if "." in resource else resource
    root = root_of(under_root(f"- name: a\n  resources:\n    max:\n      {key}: {yaml_value}"))
    assert root.queues[0].resources.max == {resource: expected}


@pytest.mark.parametrize(
    ("yaml_value", "resource", "fragment"),
    [
        ("-1", "memory", "negative"),
        ("1.5", "memory", "fractional"),
        ("0.5", "vcore", "fractional"),
        ("1.5Gi", "memory", "fractional"),
        ("500m", "memory", "only valid for vcore"),
        ("4GB", "memory", "suffix"),
        ("lots", "memory", "invalid quantity"),
        ("1_000", "memory", "invalid quantity"),
        ("0x10", "memory", "invalid quantity"),
        ("true", "memory", "boolean"),
        ("[1]", "memory", "expected an integer or a string"),
    ],
)
def test_bad_quantity_in_yaml_raises_with_full_path(
    yaml_value: str, resource: str, fragment: str
) -> None:
    text = under_root(
        f"""
        - name: a
        - name: b
          resources:
            max:
              {resource}: {yaml_value}
        """
    )
    error = config_error(text)
    assert error.path == f"partitions[0].queues[0].queues[1].resources.max.{resource}"
    assert fragment in error.reason


def test_bad_quantity_paths_in_limits_and_child_template() -> None:
    limit = under_root(
        """
        - name: a
          limits:
            - users: [bob]
              maxresources: {vcore: 1.5}
        """
    )
    assert config_error(limit).path == (
        "partitions[0].queues[0].queues[0].limits[0].maxresources.vcore"
    )
    template = under_root(
        """
        - name: a
          parent: true
          childtemplate:
            resources:
              guaranteed: {memory: 2X}
        """
    )
    assert config_error(template).path == (
        "partitions[0].queues[0].queues[0].childtemplate.resources.guaranteed.memory"
    )


def test_resource_map_must_be_a_mapping() -> None:
    error = config_error(under_root("- name: a\n  resources:\n    max: [1, 2]"))
    assert error.path == "partitions[0].queues[0].queues[0].resources.max"


def test_round_trip_does_not_convert_vcore_twice() -> None:
    config = load_config_file(DATA / "realistic_multi_queue.yaml")
    again = SchedulerConfig.model_validate(config.model_dump())
    assert again == config
    sandbox = again.partitions[0].root.queues[2]
    assert sandbox.resources.guaranteed["vcore"] == 500


def test_models_built_in_python_take_plain_ints_only() -> None:
    assert ResourcesConfig(max={"vcore": 2000}).max == {"vcore": 2000}
    with pytest.raises(ValueError, match="non-negative integer"):
        ResourcesConfig.model_validate({"max": {"memory": "4Gi"}})
    with pytest.raises(ValueError, match="non-negative integer"):
        ResourcesConfig.model_validate({"max": {"memory": -1}})


# ---------------------------------------------------------------------------
# sample files
# ---------------------------------------------------------------------------


def test_realistic_multi_queue_file() -> None:
    config = load_config_file(DATA / "realistic_multi_queue.yaml")
    (partition,) = config.partitions
    assert partition.name == "default"
    assert partition.nodesortpolicy.type == "binpacking"
    assert partition.nodesortpolicy.resourceweights == {"vcore": 2.0, "memory": 1.0}
    root = partition.root
    assert [q.name for q in root.queues] == ["production", "tenants", "sandbox", "default"]
    production, tenants, sandbox, default = root.queues
    web, batch = production.queues
    assert production.resources.guaranteed == {"memory": 64 * 2**30, "vcore": 32_000}
    assert web.resources.guaranteed == {"memory": 16 * 10**9, "vcore": 8000}
    assert web.resources.max == {"memory": 32 * 2**30, "vcore": 16_000}
    assert web.properties == {"application.sort.policy": "fair", "priority.offset": "10"}
    assert web.sort_policy == "fair"
    assert batch.sort_policy == "fifo"
    assert default.sort_policy == "fifo"
    assert sandbox.resources.guaranteed == {"memory": 4 * 2**30, "vcore": 500}
    assert sandbox.resources.max == {"memory": 16 * 10**9, "vcore": 4000}
    assert sandbox.limits[0].maxresources == {"memory": 4 * 2**30, "vcore": 2000}
    assert tenants.resources.max["nvidia.com/gpu"] == 8
    assert tenants.childtemplate is not None
    assert tenants.childtemplate.resources.max == {"memory": 16 * 10**9, "vcore": 8000}
    assert tenants.childtemplate.sort_policy == "fair"
    assert [q.is_parent for q in root.queues] == [True, True, True, False]
    assert web.submit_acl.allows("deploy-bot", [])
    assert web.submit_acl.allows("someone", ["sre"])
    assert not web.submit_acl.allows("someone", ["qa"])
    assert batch.submit_acl.allows("anyone", ["data-eng"])
    assert not batch.submit_acl.allows("data-eng", [])
    assert [r.name for r in partition.placementrules] == ["provided", "tag", "user", "fixed"]
    tag_rule = partition.placementrules[1]
    assert tag_rule.parent is not None and tag_rule.parent.value == "root.tenants"


def test_yunikorn_example_shape_file() -> None:
    config = load_config_file(DATA / "yunikorn_example_shape.yaml")
    default, gpu = config.partitions
    assert [q.name for q in default.root.queues] == ["marketing", "research", "analysts"]
    assert default.root.queues[0].resources.max == {"memory": 600_000, "vcore": 60_000_000}
    assert default.root.queues[2].submit_acl.allows("x", ["analysts"])
    assert default.limits[0].maxresources == {"memory": 20_000, "vcore": 20_000}
    rule = default.placementrules[0]
    # rule names are read in lower case, as YuniKorn's newRule reads them
    assert rule.name == "user" and rule.parent is not None and rule.parent.name == "provided"
    assert rule.filter.type == "allow" and rule.filter.groups == ["analysts"]
    # the second partition lists its queues without a root: one is inserted
    assert len(gpu.queues) == 1
    assert gpu.root.name == "root" and gpu.root.parent
    assert [q.name for q in gpu.root.queues] == ["training", "inference"]
    assert gpu.root.queues[0].admin_acl.allows("mlops", [])
    assert gpu.root.queues[0].maxapplications == 20
    assert gpu.root.queues[1].limits[0].maxresources == {
        "memory": 20_000,
        "vcore": 20_000,
        "gpu": 4,
    }


def test_kubernetes_default_and_limits_files() -> None:
    k8s = load_config_file(DATA / "yunikorn_k8s_default.yaml")
    assert k8s.partitions[0].placementrules[0].value == "namespace"
    assert k8s.partitions[0].root.submit_acl.allow_all
    limits = load_config_file(str(DATA / "limits_hierarchy.yaml"))
    level1 = limits.partitions[0].root.queues[0]
    assert level1.limits[0].limit == ""  # "limit:" with no value is unset
    assert level1.limits[2].groups == ["*"]
    assert [q.limits[0].maxapplications for q in level1.queues] == [1, 5]


def test_default_config_yaml() -> None:
    config = parse_config(DEFAULT_CONFIG_YAML)
    (partition,) = config.partitions
    assert partition.name == "default"
    assert partition.root.name == "root" and partition.root.queues == []
    assert partition.root.submitacl == "*"
    assert partition.root.submit_acl.allows("anyone", [])
    assert [(r.name, r.value, r.create) for r in partition.placementrules] == [
        ("tag", "namespace", True)]
    assert partition.nodesortpolicy.type == "fair"
    assert partition.root.sort_policy == "fifo"


def test_load_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config_file(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config_file(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config_file(binary)
    bad = tmp_path / "bad.yaml"
    bad.write_text(under_root("- name: a.b"))
    with pytest.raises(ConfigError) as info:
        load_config_file(bad)
    assert info.value.path == "partitions[0].queues[0].queues[0].name"


# ---------------------------------------------------------------------------
# YAML and structural errors
# ---------------------------------------------------------------------------


def test_yaml_syntax_error_reports_line_and_column() -> None:
    error = config_error("partitions:\n  - name: default\n    queues: [\n")
    assert error.path == ""
    assert "YAML syntax error at line" in error.reason
    assert "column" in error.reason
    error = config_error("partitions:\n  - name: x\n   bad: 1\n")
    assert "line 3" in error.reason


def test_duplicate_keys_are_rejected() -> None:
    error = config_error("partitions:\n  - name: a\n    name: b\n    queues: []\n")
    assert "duplicate key" in error.reason and "line 3" in error.reason


@pytest.mark.parametrize("text", ["- a\n- b\n", "just text\n", "42\n"])
def test_document_must_be_a_mapping(text: str) -> None:
    error = config_error(text)
    assert error.path == ""
    assert "mapping" in error.reason


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("partition:\n  - name: x\n", "partition"),
        (under_root("- name: a\n  maxapps: 3"), "partitions[0].queues[0].queues[0].maxapps"),
        (under_root("- name: a\n  resources:\n    min: {memory: 1}"), ""),
        (
            under_root("", partition_extra="nodesortpolicy: {type: fair, weights: {}}"),
            "partitions[0].nodesortpolicy.weights",
        ),
        (
            under_root("", partition_extra="placementrules:\n  - name: x\n    regex: y"),
            "partitions[0].placementrules[0].regex",
        ),
    ],
)
def test_unknown_fields_rejected_with_path(text: str, path: str) -> None:
    error = config_error(text)
    if not path:
        path = "partitions[0].queues[0].queues[0].resources.min"
    assert error.path == path
    assert error.reason.startswith("unknown field")


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (under_root("- name: a\n  parent: 'true'"), "partitions[0].queues[0].queues[0].parent"),
        (
            under_root("- name: a\n  maxapplications: -1"),
            "partitions[0].queues[0].queues[0].maxapplications",
        ),
        (
            under_root("- name: a\n  maxapplications: '5'"),
            "partitions[0].queues[0].queues[0].maxapplications",
        ),
        (under_root("- name: a\n  queues: {b: 1}"), "partitions[0].queues[0].queues[0].queues"),
        (under_root("- parent: true"), "partitions[0].queues[0].queues[0].name"),
        ("partitions:\n  - name: x\n", "partitions[0].queues"),
        ("partitions:\n  - name: x\n    queues:\n", "partitions[0].queues"),
        (
            under_root("", partition_extra="nodesortpolicy: fair"),
            "partitions[0].nodesortpolicy",
        ),
    ],
)
def test_type_errors_have_paths(text: str, path: str) -> None:
    assert config_error(text).path == path


def test_scalars_in_string_fields_keep_their_yaml_text() -> None:
    root = root_of(under_root("- name: 2024-01-01\n- name: 007\n  properties: {x: 1.50, y: true}"))
    assert [q.name for q in root.queues] == ["2024-01-01", "007"]
    assert root.queues[1].properties == {"x": "1.50", "y": "true"}


def test_null_values_mean_unset() -> None:
    root = root_of(
        under_root("- name: a\n  properties:\n  limits:\n  queues:\n  submitacl:\n  resources:")
    )
    child = root.queues[0]
    assert child.properties == {} and child.limits == [] and child.queues == []
    assert child.submitacl is None and not child.is_parent


# ---------------------------------------------------------------------------
# partitions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "partitions: []\n", "checksum: ABC\n"])
def test_no_partitions_is_valid(text: str) -> None:
    """YuniKorn loads such a file as no partitions (the core then uses its default)."""
    assert parse_config(text).partitions == []


@pytest.mark.parametrize(
    ("first", "second"),
    [("gpu", "gpu"), ("gpu", "GPU"), ("", "default"), ("Default", "")],
)
def test_duplicate_partition_names(first: str, second: str) -> None:
    text = (
        f"partitions:\n  - name: '{first}'\n    queues: [{{name: root}}]\n"
        f"  - name: '{second}'\n    queues: [{{name: root}}]\n"
    )
    error = config_error(text)
    assert error.path == "partitions[1].name"
    assert "duplicate partition" in error.reason


@pytest.mark.parametrize("name", ["", "default", "DEFAULT", "Default"])
def test_default_partition_name_is_normalised(name: str) -> None:
    config = parse_config(f"partitions:\n  - name: '{name}'\n    queues: [{{name: root}}]\n")
    assert config.partitions[0].name == "default"
    assert config.partition("DeFault") is config.partitions[0]
    assert config.partition("other") is None


def test_checksum_and_deprecated_keys_accepted() -> None:
    text = (
        "checksum: 0A1B\npartitions:\n  - name: x\n    statedumpfilepath: /tmp/d.json\n"
        "    preemption: {enabled: false, quotapreemptionenabled: true}\n"
        "    usergroupresolver: {type: os}\n    queues: [{name: root}]\n"
    )
    config = parse_config(text)
    assert config.checksum == "0A1B"
    partition = config.partitions[0]
    assert partition.statedumpfilepath == "/tmp/d.json"
    assert partition.preemption.enabled is False
    assert partition.preemption.quotapreemptionenabled is True
    assert partition.usergroupresolver.type == "os"
    assert parse_config(DEFAULT_CONFIG_YAML).partitions[0].preemption.enabled is True


# ---------------------------------------------------------------------------
# root queue
# ---------------------------------------------------------------------------


def test_root_queue_is_a_parent_and_normalised() -> None:
    root = root_of("partitions:\n  - queues:\n      - name: ROOT\n")
    assert root.name == "root"
    assert root.parent and root.is_parent


@pytest.mark.parametrize(
    "queues",
    ["[{name: a}, {name: b}]", "[{name: a, queues: [{name: b}]}]", "[]"],
)
def test_root_is_inserted_when_missing(queues: str) -> None:
    config = parse_config(f"partitions:\n  - name: default\n    queues: {queues}\n")
    partition = config.partitions[0]
    assert len(partition.queues) == 1
    assert partition.root.name == "root" and partition.root.parent
    assert partition.root.submitacl is None


def test_paths_below_an_inserted_root_point_into_the_document() -> None:
    text = "partitions:\n  - queues:\n      - name: a\n      - name: b.c\n"
    error = config_error(text)
    assert error.path == "partitions[0].queues[1].name"
    text = (
        "partitions:\n  - queues:\n      - name: a\n        queues:\n"
        "          - name: x\n            resources: {max: {memory: 2}, guaranteed: {memory: 3}}\n"
    )
    assert (
        config_error(text).path == "partitions[0].queues[0].queues[0].resources.guaranteed.memory"
    )


@pytest.mark.parametrize(
    ("resources", "path"),
    [
        ("{max: {memory: 1G}}", "max"),
        ("{guaranteed: {vcore: 1}}", "guaranteed"),
        ("{guaranteed: {vcore: 1}, max: {vcore: 2}}", "guaranteed"),
    ],
)
def test_root_must_not_set_resources(resources: str, path: str) -> None:
    error = config_error(under_root("", root_extra=f"resources: {resources}"))
    assert error.path == f"partitions[0].queues[0].resources.{path}"
    assert "root queue must not set resource" in error.reason


@pytest.mark.parametrize("resources", ["resources:\n  max:\n  guaranteed:", "resources: {}"])
def test_root_with_unset_resources_is_fine(resources: str) -> None:
    root = root_of(under_root("", root_extra=resources))
    assert root.resources.max == {} and root.resources.guaranteed == {}


@pytest.mark.parametrize(
    ("resources", "path"),
    [("{max: {}}", "max"), ("{guaranteed: {}, max: {}}", "guaranteed"),
     ("{guaranteed: {}, max: {vcore: 2}}", "max")],
)
def test_root_with_empty_resource_maps_is_refused(resources: str, path: str) -> None:
    # YuniKorn's checkQueuesStructure refuses a map that is written, even empty
    # (configvalidator_test.go TestCheckQueuesStructure sets one with values)
    error = config_error(under_root("", root_extra=f"resources: {resources}"))
    assert error.path == f"partitions[0].queues[0].resources.{path}"
    assert "root queue must not set resource" in error.reason


def test_yaml_anchors_and_merge_keys() -> None:
    text = under_root(
        """
        - name: a
          resources: &small
            guaranteed: {memory: 1G}
            max: {memory: 2G}
        - name: b
          resources: *small
        - name: c
          <<: {maxapplications: 3, submitacl: "*"}
          maxapplications: 4
        """
    )
    a, b, c = root_of(text).queues
    assert a.resources == b.resources
    assert c.maxapplications == 4 and c.submit_acl.allow_all


# ---------------------------------------------------------------------------
# queue names and parents
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("a.b", "dot"),
        ("a" * 65, "64"),
        ("with space", "64"),
        ("star*", "64"),
        ("'é'", "64"),
        ("''", "64"),
    ],
)
def test_invalid_queue_names(name: str, fragment: str) -> None:
    error = config_error(under_root(f"- name: ok\n- name: {name}"))
    assert error.path == "partitions[0].queues[0].queues[1].name"
    assert fragment in error.reason


@pytest.mark.parametrize("name", ["a" * 64, "team_A-1", "'a:b#c/d@e'", "42"])
def test_valid_queue_names(name: str) -> None:
    assert root_of(under_root(f"- name: {name}")).queues[0].name == name.strip("'")


@pytest.mark.parametrize(("first", "second"), [("dev", "dev"), ("dev", "Dev"), ("A", "a")])
def test_duplicate_sibling_names_ignore_case(first: str, second: str) -> None:
    text = under_root(f"- name: p\n  queues:\n    - name: {first}\n    - name: {second}")
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[1].name"
    assert "duplicate queue name" in error.reason


def test_same_name_at_different_levels_and_partitions_is_fine() -> None:
    text = under_root("- name: test\n- name: parent\n  queues:\n    - name: test")
    root = root_of(text)
    assert root.queues[0].name == root.queues[1].queues[0].name == "test"


def test_parent_flags() -> None:
    root = root_of(
        under_root("- name: p\n  queues: [{name: leaf}]\n- name: empty\n  parent: true\n- name: l")
    )
    parent, empty, leaf = root.queues
    assert parent.parent and parent.is_parent
    assert empty.is_parent and empty.queues == []
    assert not leaf.parent and not leaf.is_parent
    assert not parent.queues[0].is_parent


# ---------------------------------------------------------------------------
# resources
# ---------------------------------------------------------------------------


def test_guaranteed_larger_than_max() -> None:
    text = under_root(
        "- name: a\n  resources:\n    guaranteed: {memory: 2G}\n    max: {memory: 1G}"
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].resources.guaranteed.memory"
    assert "larger than max" in error.reason


def test_guaranteed_and_max_on_different_types_do_not_conflict() -> None:
    text = under_root("- name: a\n  resources:\n    guaranteed: {memory: 2G}\n    max: {vcore: 1}")
    assert root_of(text).queues[0].resources.guaranteed == {"memory": 2 * 10**9}


def test_guaranteed_equal_to_max_is_fine() -> None:
    text = under_root("- name: a\n  resources: {guaranteed: {vcore: 1}, max: {vcore: 1000m}}")
    assert root_of(text).queues[0].resources.max == {"vcore": 1000}


def test_child_max_larger_than_parent_max() -> None:
    text = under_root(
        """
        - name: p
          resources: {max: {memory: 4Gi, vcore: 4}}
          queues:
            - name: ok
              resources: {max: {memory: 4Gi}}
            - name: big
              resources: {max: {vcore: 4, memory: 5Gi}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[1].resources.max.memory"
    assert "parent" in error.reason


def test_grandchild_max_is_checked_against_any_ancestor() -> None:
    text = under_root(
        """
        - name: p
          resources: {max: {vcore: 2}}
          queues:
            - name: mid
              resources: {max: {memory: 1G}}
              queues:
                - name: leaf
                  resources: {max: {vcore: 3}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[0].queues[0].resources.max.vcore"


def test_children_guarantees_larger_than_parent_guarantee() -> None:
    text = under_root(
        """
        - name: p
          resources: {guaranteed: {vcore: 4, memory: 8G}}
          queues:
            - name: a
              resources: {guaranteed: {vcore: 2}}
            - name: b
              resources: {guaranteed: {vcore: 2500m}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].resources.guaranteed.vcore"
    assert "4500" in error.reason


def test_children_guarantees_only_checked_for_types_the_parent_guarantees() -> None:
    text = under_root(
        """
        - name: p
          resources: {guaranteed: {memory: 8G}}
          queues:
            - name: a
              resources: {guaranteed: {vcore: 200}}
        """
    )
    assert root_of(text).queues[0].queues[0].resources.guaranteed == {"vcore": 200_000}


def test_children_guarantees_larger_than_parent_max() -> None:
    text = under_root(
        """
        - name: p
          resources: {max: {memory: 4G}}
          queues:
            - name: a
              resources: {guaranteed: {memory: 3G}}
            - name: b
              resources: {guaranteed: {memory: 2G}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].resources.max.memory"
    assert "max" in error.reason


def test_children_guarantees_larger_than_inherited_max() -> None:
    text = under_root(
        """
        - name: p
          resources: {max: {memory: 4G}}
          queues:
            - name: mid
              queues:
                - name: a
                  resources: {guaranteed: {memory: 3G}}
                - name: b
                  resources: {guaranteed: {memory: 2G}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[0].queues"


def test_queue_without_guarantee_passes_its_childrens_sum_up() -> None:
    text = under_root(
        """
        - name: p
          resources: {guaranteed: {memory: 4G}}
          queues:
            - name: mid
              resources: {max: {vcore: 10}}
              queues:
                - name: a
                  resources: {guaranteed: {memory: 3G}}
                - name: b
                  resources: {guaranteed: {memory: 2G}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].resources.guaranteed.memory"
    # an explicit zero is a guarantee of zero for its own children
    zero = text.replace("{max: {vcore: 10}}", "{guaranteed: {memory: 0}}")
    error = config_error(zero)
    assert error.path == "partitions[0].queues[0].queues[0].queues[0].resources.guaranteed.memory"


def test_a_set_child_guarantee_hides_its_children() -> None:
    text = under_root(
        """
        - name: p
          resources: {guaranteed: {memory: 4G}}
          queues:
            - name: mid
              resources: {guaranteed: {memory: 4G}}
              queues:
                - name: a
                  resources: {guaranteed: {memory: 2G}}
            - name: other
        """
    )
    assert root_of(text).queues[0].queues[0].queues[0].resources.guaranteed["memory"] == 2 * 10**9


# ---------------------------------------------------------------------------
# maxapplications
# ---------------------------------------------------------------------------


def test_child_maxapplications_above_parent() -> None:
    text = under_root(
        "- name: p\n  maxapplications: 5\n  queues:\n"
        "    - {name: a, maxapplications: 5}\n    - {name: b, maxapplications: 6}"
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[1].maxapplications"
    assert "6" in error.reason


def test_child_must_set_maxapplications_when_parent_does() -> None:
    text = under_root("- name: p\n  maxapplications: 5\n  queues:\n    - name: a")
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[0].maxapplications"
    assert "not set" in error.reason


def test_maxapplications_below_an_unlimited_parent() -> None:
    root = root_of(under_root("- name: p\n  queues:\n    - {name: a, maxapplications: 7}"))
    assert root.queues[0].maxapplications == 0
    assert root.queues[0].queues[0].maxapplications == 7


# ---------------------------------------------------------------------------
# properties: application sort policy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "fifo"),
        ("''", "fifo"),
        ("fifo", "fifo"),
        ("fair", "fair"),
        ("stateaware", "stateaware"),
    ],
)
def test_sort_policy(value: str | None, expected: str) -> None:
    props = "" if value is None else f"\n  properties: {{application.sort.policy: {value}}}"
    config = parse_config(under_root(f"- name: a{props}"))
    assert config.partitions[0].root.queues[0].sort_policy == expected
    assert config.warnings == []


@pytest.mark.parametrize("value", ["lifo", "priority", "fair ", "binpacking", "FAIR", "StateAware"])
def test_unknown_sort_policy_is_fifo_with_a_warning(value: str) -> None:
    config = parse_config(
        under_root(f"- name: a\n  properties: {{application.sort.policy: '{value}'}}"))
    queue = config.partitions[0].root.queues[0]
    assert queue.sort_policy == "fifo"
    assert queue.properties["application.sort.policy"] == value      # the text is kept
    (warning,) = config.warnings
    assert warning.startswith(
        'partitions[0].queues[0].queues[0].properties["application.sort.policy"]: '
        f"unknown application sort policy {value!r}, using fifo")


def test_unknown_sort_policy_in_child_template() -> None:
    text = under_root(
        "- name: p\n  parent: true\n  childtemplate:\n"
        "    properties: {application.sort.policy: random}"
    )
    config = parse_config(text)
    assert config.partitions[0].root.queues[0].childtemplate.sort_policy == "fifo"
    assert config.warnings[0].startswith(
        'partitions[0].queues[0].queues[0].childtemplate.properties["application.sort.policy"]')


def test_sort_policy_property_key_is_case_sensitive() -> None:
    root = root_of(under_root("- name: a\n  properties: {Application.Sort.Policy: whatever}"))
    assert root.queues[0].sort_policy == "fifo"


# ---------------------------------------------------------------------------
# node sort policy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [("fair", "fair"), ("binpacking", "binpacking"), ("''", "fair")]
)
def test_node_sort_policy(value: str, expected: str) -> None:
    text = under_root("", partition_extra=f"nodesortpolicy: {{type: {value}}}")
    assert parse_config(text).partitions[0].nodesortpolicy.type == expected


@pytest.mark.parametrize("value", ["Fair", "BINPACKING", "spread"])
def test_unknown_node_sort_policy(value: str) -> None:
    error = config_error(under_root("", partition_extra=f"nodesortpolicy: {{type: {value}}}"))
    assert error.path == "partitions[0].nodesortpolicy.type"


def test_negative_resource_weight() -> None:
    text = under_root(
        "", partition_extra="nodesortpolicy:\n  resourceweights: {memory: 1, nvidia.com/gpu: -0.5}"
    )
    error = config_error(text)
    assert error.path == 'partitions[0].nodesortpolicy.resourceweights["nvidia.com/gpu"]'


def test_resource_weight_must_be_a_number() -> None:
    text = under_root("", partition_extra="nodesortpolicy:\n  resourceweights: {memory: high}")
    assert config_error(text).path == "partitions[0].nodesortpolicy.resourceweights.memory"


# ---------------------------------------------------------------------------
# ACLs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "user", "groups", "allowed"),
    [
        (None, "alice", ["dev"], False),
        ("", "alice", ["dev"], False),
        (" ", "alice", ["dev"], False),
        ("*", "anyone", [], True),
        (" *", "anyone", [], True),
        ("* ", "anyone", [], True),
        ("alice", "alice", [], True),
        ("alice", "bob", ["alice"], False),
        ("alice,bob", "bob", [], True),
        ("alice,bob", "carol", [], False),
        ("alice dev", "alice", [], True),
        ("alice dev", "carol", ["qa", "dev"], True),
        ("alice dev", "carol", ["qa"], False),
        ("alice dev", "dev", [], False),
        (" dev,ops", "carol", ["ops"], True),
        (" dev,ops", "dev", [], False),
        ("alice ", "alice", [], True),
        ("alice *", "anyone", [], True),
        ("* dev", "anyone", [], True),
        ("*,alice", "bob", [], False),
        ("*,alice", "alice", [], True),
        ("bad!name,carol", "bad!name", [], False),
        ("bad!name,carol", "carol", [], True),
        ("john$ g_1", "john$", [], True),
        ("svc@corp.com", "svc@corp.com", [], True),
        ("alice,,bob", "bob", [], True),
    ],
)
def test_acl_allows(text: str | None, user: str, groups: list[str], allowed: bool) -> None:
    assert parse_acl(text).allows(user, groups) is allowed


@pytest.mark.parametrize("text", ["alice  dev", "a b c", "  *", " * ", "alice dev ", "a\tb c"])
def test_acl_with_more_than_one_separating_space(text: str) -> None:
    with pytest.raises(ConfigError, match="multiple spaces"):
        parse_acl(text)


def test_acl_value_object() -> None:
    acl = parse_acl("zed,alice,bad!user ops,dev")
    assert acl.users == frozenset({"zed", "alice"})
    assert acl.groups == frozenset({"ops", "dev"})
    assert acl.sorted_users == ("alice", "zed")
    assert acl.sorted_groups == ("dev", "ops")
    assert acl.ignored == ("bad!user",)
    assert str(acl) == "alice,zed dev,ops"
    assert str(parse_acl(" dev")) == " dev"
    assert str(parse_acl("*")) == "*"
    assert str(parse_acl(None)) == ""
    assert parse_acl(None) == ACL()
    assert parse_acl("*").allow_all and not parse_acl("alice").allow_all
    assert acl.allows("x", "ops")  # a single group given as a string
    assert not acl.allows("x")


@pytest.mark.parametrize("key", ["submitacl", "adminacl"])
def test_acl_errors_in_config_have_paths(key: str) -> None:
    error = config_error(under_root(f"- name: a\n  {key}: 'alice  dev'"))
    assert error.path == f"partitions[0].queues[0].queues[0].{key}"
    error = config_error(under_root("", root_extra=f"{key}: 'a b c'"))
    assert error.path == f"partitions[0].queues[0].{key}"


# ---------------------------------------------------------------------------
# limits
# ---------------------------------------------------------------------------


def limit_error(limits: str, *, queue_extra: str = "") -> ConfigError:
    body = textwrap.indent(textwrap.dedent(limits).strip("\n"), "    ")
    extra = textwrap.dedent(queue_extra).strip("\n")
    text = "- name: q\n" + (textwrap.indent(extra, "  ") + "\n" if extra else "")
    return config_error(under_root(text + "  limits:\n" + body))


LIMITS = "partitions[0].queues[0].queues[0].limits"


@pytest.mark.parametrize(
    ("limits", "path", "fragment"),
    [
        ("- limit: nobody\n  maxapplications: 1", "[0]", "at least one user or group"),
        ("- users: ['bad name']\n  maxapplications: 1", "[0].users[0]", "invalid user"),
        ("- groups: ['grp@x']\n  maxapplications: 1", "[0].groups[0]", "invalid group"),
        ("- users: [a, b, a]\n  maxapplications: 1", "[0].users[2]", "already has a limit"),
        (
            "- users: [a]\n  maxapplications: 1\n- users: [a]\n  maxapplications: 2",
            "[1].users[0]",
            "already has a limit",
        ),
        ("- users: ['*', bob]\n  maxapplications: 1", "[0].users[1]", "wildcard"),
        (
            "- users: ['*']\n  maxapplications: 1\n- users: [bob]\n  maxapplications: 1",
            "[1].users[0]",
            "wildcard",
        ),
        ("- groups: ['*']\n  maxapplications: 1", "[0].groups", "named group"),
        ("- users: [a]\n  maxresources: {memory: 0, vcore: 0}", "[0].maxresources", "zero"),
        ("- users: [a]", "[0]", "maxapplications or maxresources"),
    ],
)
def test_limit_rules(limits: str, path: str, fragment: str) -> None:
    error = limit_error(limits)
    assert error.path == LIMITS + path
    assert fragment in error.reason


def test_limit_above_queue_settings() -> None:
    error = limit_error("- users: [a]\n  maxapplications: 6", queue_extra="maxapplications: 5")
    assert error.path == LIMITS + "[0].maxapplications"
    error = limit_error(
        "- users: [a]\n  maxresources: {memory: 2G, vcore: 1}",
        queue_extra="resources: {max: {memory: 1G}}",
    )
    assert error.path == LIMITS + "[0].maxresources.memory"


def test_valid_limits_with_wildcards_last() -> None:
    text = under_root(
        """
        - name: q
          limits:
            - {users: [alice], groups: [dev], maxapplications: 2}
            - {users: ['*'], groups: ['*'], maxresources: {memory: 1G}}
        """
    )
    assert root_of(text).queues[0].limits[1].maxresources == {"memory": 10**9}


def test_partition_limits_are_checked() -> None:
    text = under_root(
        "", partition_extra="limits:\n  - users: ['bad name']\n    maxapplications: 1"
    )
    assert config_error(text).path == "partitions[0].limits[0].users[0]"


def test_child_limit_above_parent_limit() -> None:
    text = under_root(
        """
        - name: p
          limits:
            - {users: [alice], maxresources: {memory: 2G}, maxapplications: 3}
          queues:
            - name: mid
              queues:
                - name: c
                  limits:
                    - {users: [alice], maxresources: {memory: 3G}, maxapplications: 1}
        """
    )
    error = config_error(text)
    assert error.path == (
        "partitions[0].queues[0].queues[0].queues[0].queues[0].limits[0].maxresources.memory"
    )
    text = text.replace("memory: 3G}, maxapplications: 1", "memory: 1G}, maxapplications: 4")
    error = config_error(text)
    assert error.path == (
        "partitions[0].queues[0].queues[0].queues[0].queues[0].limits[0].maxapplications"
    )


def test_group_limit_hierarchy() -> None:
    text = under_root(
        """
        - name: p
          limits:
            - {groups: [dev], maxapplications: 3}
          queues:
            - name: c
              limits:
                - {groups: [dev], maxresources: {memory: 1G}}
        """
    )
    error = config_error(text)
    assert error.path == "partitions[0].queues[0].queues[0].queues[0].limits[0].maxapplications"


def test_yunikorn_limit_example_with_wildcard_group_first_is_rejected() -> None:
    text = under_root(
        """
        - name: q
          limits:
            - {users: [a], maxapplications: 1}
            - {groups: ['*'], maxapplications: 1}
            - {groups: [dev], maxapplications: 1}
        """
    )
    assert config_error(text).path == LIMITS + "[1].groups"


# ---------------------------------------------------------------------------
# placement rules
# ---------------------------------------------------------------------------

QUEUES = """
- name: leaf
- name: parent
  parent: true
- name: team
  queues:
    - name: dev
"""


def placement(rules: str) -> str:
    return under_root(QUEUES, partition_extra="placementrules:\n" + textwrap.indent(rules, "  "))


@pytest.mark.parametrize(
    "rules",
    [
        "- name: provided\n  create: true",
        "- {name: fixed, value: leaf}",
        "- {name: fixed, value: root.team.dev}",
        "- {name: fixed, value: ROOT.Team.DEV}",
        "- {name: fixed, value: root.newleaf, create: true}",
        "- {name: fixed, value: root.parent.x, create: true}",
        "- name: user\n  create: true\n  parent: {name: fixed, value: parent}",
        "- name: tag\n  value: namespace\n  parent: {name: fixed, value: team}",
        "- name: Fixed\n  value: Leaf",
        # YuniKorn's validator takes `Fixed` for a dynamic rule, and `team` (children,
        # no `parent: true`) for a leaf: a rule that gives a parent fails at run time
        "- {name: Fixed, value: Team}",
        "- {name: provided}\n- {name: fixed, value: team}",
        "- name: user\n  filter: {type: DENY, users: ['^sys.*$']}",
        "- name: user\n  filter: {type: allow, users: [a, 'b c', '(']}",
    ],
)
def test_valid_placement_rules(rules: str) -> None:
    assert parse_config(placement(rules)).partitions[0].placementrules


@pytest.mark.parametrize(
    ("rules", "path", "fragment"),
    [
        ("- name: bad-name", "[0].name", "identifier"),
        ("- name: ''", "[0].name", "identifier"),
        ("- name: user\n  parent: {name: '1x'}", "[0].parent.name", "identifier"),
        ("- name: user\n  filter: {type: block}", "[0].filter.type", "allow or deny"),
        ("- name: user\n  filter: {users: ['bad name']}", "[0].filter.users[0]", "regular"),
        ("- name: user\n  filter: {groups: ['(']}", "[0].filter.groups[0]", "regular"),
        ("- {name: provided}\n- {name: fixed, value: parent}", "[1]", "parent queue"),
        ("- {name: fixed, value: root.nothere}", "[0]", "missing queue"),
        ("- {name: fixed, value: root.leaf.below, create: true}", "[0]", "leaf queue"),
        ("- name: user\n  parent: {name: fixed, value: leaf}", "[0]", "leaf queue"),
        (
            "- name: fixed\n  value: root.x\n  parent: {name: fixed, value: root.parent}",
            "[0].value",
            "full queue path",
        ),
        (
            "- name: fixed\n  value: root.x\n  create: true\n"
            "  parent: {name: fixed, value: root.parent, parent: {name: fixed, value: root}}",
            "[0].parent.value",
            "full queue path",
        ),
    ],
)
def test_invalid_placement_rules(rules: str, path: str, fragment: str) -> None:
    error = config_error(placement(rules))
    assert error.path == "partitions[0].placementrules" + path
    assert fragment in error.reason
