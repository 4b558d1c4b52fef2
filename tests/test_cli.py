"""The ``yunikorn-fsm`` command line, in-process through ``scheduler.cli.main`` and once
through ``python -m scheduler`` in a subprocess.

Every test asserts what the command produced (files, exit codes, printed
lines), never only that it ran.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import statemachines
from scheduler.cli import main

DATA = Path(__file__).parent / "data" / "configs"
CONFIG_FILES = sorted(DATA.glob("*.yaml"))

LIFECYCLE_NAMES = ("application", "ask", "allocation", "node", "rm", "object")

# The state names of the contract's "State names" table, per lifecycle.
CONTRACT_STATES = {
    "application": ["New", "Accepted", "Running", "Completing", "Completed", "Failing",
                    "Failed", "Rejected", "Resuming", "Expired"],
    "ask": ["Pending", "Allocated", "Rejected"],
    "allocation": ["Allocated", "Releasing", "Completed", "Preempted", "Expired", "Replaced"],
    "node": ["Schedulable", "Draining", "Removed"],
    "rm": ["Init", "Running", "Paused", "Stopped"],
    "object": ["Active", "Draining", "Stopped"],
}

MERMAID_RE = re.compile(r"```mermaid\n(stateDiagram-v2\n.*?)```", re.DOTALL)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)`` in-process: (exit code, stdout, stderr). SystemExit counts as a code."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# python -m scheduler
# ---------------------------------------------------------------------------


def test_python_dash_m_scheduler_runs_the_cli(tmp_path: Path) -> None:
    good = subprocess.run(
        [sys.executable, "-m", "scheduler", "validate-config", str(CONFIG_FILES[0])],
        capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stderr
    assert str(CONFIG_FILES[0]) in good.stdout and "valid" in good.stdout

    bad = tmp_path / "bad.yaml"
    bad.write_text("partitions: [\n", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "scheduler", "validate-config", str(bad)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stdout + proc.stderr
    assert str(bad) in proc.stdout + proc.stderr


def test_python_dash_m_scheduler_bench_last_line_is_json() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scheduler", "bench", "--nodes", "20", "--pods", "200"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    figures = json.loads(last)
    assert figures["nodes"] == 20 and figures["pods"] == 200


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys)
    assert code != 0
    assert "usage" in (out + err).lower()


# ---------------------------------------------------------------------------
# diagrams
# ---------------------------------------------------------------------------


def test_diagrams_writes_one_mermaid_page_per_lifecycle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "diagrams"
    code, out, _err = run_cli(capsys, "diagrams", "--out", str(out_dir), "--no-svg")
    assert code == 0
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == sorted(f"{name}.md" for name in LIFECYCLE_NAMES), written
    assert not list(out_dir.glob("*.svg")), "--no-svg must not write SVG"
    for name in LIFECYCLE_NAMES:
        page = out_dir / f"{name}.md"
        assert str(page) in out, f"{page} not reported on stdout"
        text = page.read_text(encoding="utf-8")
        blocks = MERMAID_RE.findall(text)
        assert len(blocks) == 1, f"{name}.md must hold exactly one mermaid stateDiagram-v2"
        diagram = blocks[0]
        lc = statemachines.LIFECYCLES[name]
        assert f"[*] --> {lc.initial}" in diagram
        for state in CONTRACT_STATES[name]:
            assert re.search(rf"\b{state}\b", diagram), f"{name}: state {state} not drawn"
        for t in lc.transitions:
            assert re.search(rf"\b{t.source} --> {t.dest}: .*\b{t.trigger}\b", diagram), \
                f"{name}: edge {t.source} --{t.trigger}--> {t.dest} not drawn"


def test_diagrams_embed_refreshes_generated_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent("""\
        # Lifecycles

        Intro text that must survive.

        <!-- BEGIN generated diagram: node -->
        ```mermaid
        stateDiagram-v2
          Stale --> Gone: outdated
        ```
        <!-- END generated diagram: node -->

        Between the blocks.

        <!-- BEGIN generated diagram: rm -->
        <!-- END generated diagram: rm -->

        Trailing text that must survive.
        """), encoding="utf-8")
    out_dir = tmp_path / "out"
    code, out, _err = run_cli(capsys, "diagrams", "--out", str(out_dir), "--no-svg",
                              "--embed", str(page))
    assert code == 0
    assert str(page) in out
    text = page.read_text(encoding="utf-8")
    assert "Stale" not in text and "outdated" not in text
    for kept in ("# Lifecycles", "Intro text that must survive.", "Between the blocks.",
                 "Trailing text that must survive."):
        assert kept in text
    for name in ("node", "rm"):
        m = re.search(rf"<!-- BEGIN generated diagram: {name} -->\n(.*?)"
                      rf"<!-- END generated diagram: {name} -->", text, re.DOTALL)
        assert m is not None, f"markers for {name} lost"
        blocks = MERMAID_RE.findall(m.group(1))
        assert len(blocks) == 1
        for state in CONTRACT_STATES[name]:
            assert re.search(rf"\b{state}\b", blocks[0])
        # The embedded diagram is the same one the per-lifecycle page carries.
        standalone = MERMAID_RE.findall((out_dir / f"{name}.md").read_text(encoding="utf-8"))
        assert blocks == standalone
    # Only the marked lifecycles are embedded.
    assert "BEGIN generated diagram: application" not in text
    assert len(MERMAID_RE.findall(text)) == 2
    # Refreshing again changes nothing.
    run_cli(capsys, "diagrams", "--out", str(out_dir), "--no-svg", "--embed", str(page))
    assert page.read_text(encoding="utf-8") == text


def test_diagrams_embed_of_a_missing_page_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.md"
    code, out, err = run_cli(capsys, "diagrams", "--out", str(tmp_path / "o"), "--no-svg",
                             "--embed", str(missing))
    assert code != 0
    assert str(missing) in out + err


def test_diagrams_embed_into_a_page_without_markers_says_so_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page with no diagram markers\n", encoding="utf-8")
    out_dir = tmp_path / "o"
    code, _, err = run_cli(capsys, "diagrams", "--out", str(out_dir), "--no-svg",
                           "--embed", str(page))
    assert code == 2
    assert "no generated-diagram markers" in err and str(page) in err
    assert page.read_text(encoding="utf-8") == "# A page with no diagram markers\n"
    assert not out_dir.exists()


def test_diagrams_without_dot_say_once_that_svg_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "dot" else real_which(name))
    code, _, err = run_cli(capsys, "diagrams", "--out", str(tmp_path / "o"))
    assert code == 0
    assert err.count("'dot' is not installed") == 1


# ---------------------------------------------------------------------------
# schema
# ---------------------------------------------------------------------------


def _schemas(out_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out_dir.iterdir())}


def test_schema_writes_camel_case_json_schemas_deterministically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    code, out, _err = run_cli(capsys, "schema", "--out", str(first))
    assert code == 0
    assert run_cli(capsys, "schema", "--out", str(second))[0] == 0
    files = _schemas(first)
    assert files == _schemas(second), "schema output differs between two runs"
    assert len(files) >= 20
    for name in files:
        assert str(first / name) in out
    for required in ("AllocationAsk", "AllocationRequest", "NodeInfo", "Allocation",
                     "AllocationRelease", "AddApplicationRequest", "UpdatedApplication"):
        assert f"{required}.schema.json" in files, f"no schema for {required}"
    for name, raw in files.items():
        schema = json.loads(raw)
        assert isinstance(schema.get("properties"), dict), f"{name} has no properties"
        for prop in schema["properties"]:
            assert "_" not in prop, f"{name}: property {prop!r} is not the spec's camelCase"
    ask = json.loads(files["AllocationAsk.schema.json"])
    for prop in ("allocationKey", "applicationID", "resourceAsk", "maxAllocations",
                 "executionTimeoutMilliSeconds", "taskGroupName"):
        assert prop in ask["properties"], prop
    assert "allocation_key" not in ask["properties"]
    assert "allocationKey" in ask.get("required", [])
    node = json.loads(files["NodeInfo.schema.json"])
    assert {"nodeID", "schedulableResource", "existingAllocations"} <= set(node["properties"])


# ---------------------------------------------------------------------------
# validate-config
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", CONFIG_FILES, ids=[p.name for p in CONFIG_FILES])
def test_validate_config_accepts_the_sample_files(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "validate-config", str(path))
    assert code == 0, err
    assert str(path) in out and "valid" in out
    assert "invalid" not in out + err


BAD_CONFIGS = {
    "negative_max": (
        """\
        partitions:
          - name: default
            queues:
              - name: root
                queues:
                  - name: a
                  - name: b
                    resources:
                      max: {memory: -5}
        """,
        "partitions[0].queues[0].queues[1].resources.max.memory",
        "negative",
    ),
    "unparsable_max": (
        """\
        partitions:
          - name: default
            queues:
              - name: root
                queues:
                  - name: a
                  - name: b
                    resources:
                      max: {memory: lots}
        """,
        "partitions[0].queues[0].queues[1].resources.max.memory",
        "lots",
    ),
    "guaranteed_over_max": (
        """\
        partitions:
          - name: default
            queues:
              - name: root
                queues:
                  - name: a
                  - name: b
                    resources:
                      guaranteed: {memory: 100}
                      max: {memory: 50}
        """,
        "partitions[0].queues[0].queues[1].resources",
        "larger than max",
    ),
    "duplicate_queue": (
        """\
        partitions:
          - name: default
            queues:
              - name: root
                queues:
                  - name: a
                  - name: a
        """,
        "partitions[0].queues[0].queues[1]",
        "duplicate",
    ),
    "yaml_syntax": ("partitions: [\n", "", "YAML"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_validate_config_rejects_bad_files_with_path_and_reason(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, where, reason = BAD_CONFIGS[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    code, out, err = run_cli(capsys, "validate-config", str(path))
    both = out + err
    assert code != 0
    assert "Traceback" not in both
    assert str(path) in both
    assert where in both, f"the path inside the file ({where}) is not printed: {both!r}"
    assert reason.lower() in both.lower(), f"no reason ({reason}) in {both!r}"
    assert "valid (" not in out


def test_validate_config_on_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "does-not-exist.yaml"
    code, out, err = run_cli(capsys, "validate-config", str(missing))
    both = out + err
    assert code != 0
    assert "Traceback" not in both
    assert str(missing) in both
    assert "no such file" in both.lower()


def test_validate_config_on_non_utf8_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"partitions:\n  - name: d\xe9faut\n")
    code, out, err = run_cli(capsys, "validate-config", str(path))
    assert code != 0
    assert "Traceback" not in out + err
    assert "UTF-8" in out + err


# ---------------------------------------------------------------------------
# bench
# ---------------------------------------------------------------------------


def test_bench_prints_figures_as_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _err = run_cli(capsys, "bench", "--nodes", "20", "--pods", "200")
    assert code == 0
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["nodes"] == 20
    assert figures["pods"] == 200
    for key in ("seconds", "allocations_per_second", "peak_rss_mb"):
        assert isinstance(figures[key], float | int), key
        assert figures[key] > 0, key
    # allocations_per_second is pods / seconds (both rounded).
    assert figures["allocations_per_second"] == pytest.approx(
        200 / figures["seconds"], rel=0.05)


@pytest.mark.parametrize("shape", ["limits", "priorities"])
def test_the_limits_and_priorities_shapes_place_every_pod(shape: str) -> None:
    """``run_shape`` raises unless every one of the 10,000 pods is placed."""
    from scheduler.bench import run_shape

    figures = run_shape(shape, 100)
    assert figures["allocations"] == figures["asks"] == 10_000


def test_the_limits_shape_limits_bind_when_a_user_asks_for_more() -> None:
    """The ``limits`` shape's limits are real: past its named limit (200 memory on its
    leaf) a user gets nothing more, and past the wildcard one (400) neither does another."""
    from scenario_helpers import Env

    from scheduler.bench import limits_config

    env = Env(limits_config())
    env.add_node("n1", 100_000, vcore=100_000)
    env.add_app("named", "root.p0.l1", user="user-1", groups=["team-1"])
    env.add_app("other", "root.p0.l1", user="user-41", groups=["team-1"])
    env.ask("named", "k", 10, vcore=1, repeats=50)
    env.ask("other", "k", 10, vcore=1, repeats=50)
    env.schedule()
    assert len(env.allocs_by("named")) == 20
    assert len(env.allocs_by("other")) == 40


def test_a_reader_that_goes_away_ends_the_output_quietly(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``yunikorn-fsm flows | head``: a closed pipe ends the command without a traceback."""
    import io

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            raise io.UnsupportedOperation("no file descriptor")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["flows"]) == 141
