"""``queues.yaml`` as Apache YuniKorn reads it, where it differed (issue 11, items 16-19).

Each test goes through the public surface: ``scheduler.config.parse_config``,
``yunikorn-fsm validate-config``, or a ``Scheduler`` registered with the text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler import ManualClock, Scheduler, si
from scheduler.cli import main
from scheduler.config import parse_config
from scheduler.errors import ConfigError
from scheduler.testing import RecordingShim


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
