"""Trace files: a run of SI calls as JSON Lines, to record, replay and share.

The format is the contract's ("Trace files"): a header object
``{"format": "yunikorn-fsm-trace", "version": 1, "config": ..., "clock_start": ...}``
then one step per line: ``{"call": NAME, "request": {...}}`` with the SI
message in the spec's camelCase JSON, ``{"call": "connection_lost" |
"unregister_resource_manager", "rm_id": ...}``, ``{"call": "schedule"}`` or
``{"advance": seconds}``. Lines with other keys (the callbacks the core made,
a violation) are kept for the reader and ignored on replay. The checker
writes these files for its counterexamples; :class:`scheduler.testing.
RecordingScheduler` writes them from a real shim's traffic.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from . import si
from .errors import SchedulerError
from .si import today

FORMAT = "yunikorn-fsm-trace"
VERSION = 1

REQUEST_CALLS: dict[str, type[BaseModel]] = {
    "register_resource_manager": si.RegisterResourceManagerRequest,
    "update_application": si.ApplicationRequest,
    "update_node": si.NodeRequest,
    "update_allocation": si.AllocationRequest,
    "update_configuration": si.UpdateConfigurationRequest,
}
"""Calls that carry an SI request, with its message class."""
TODAY_REQUEST_CALLS: dict[str, type[BaseModel]] = {
    **REQUEST_CALLS,
    "update_node": today.NodeRequest,
    "update_allocation": today.AllocationRequest,
}
"""The same in today's SI (``scheduler.si.today``): a step or a header with ``"dialect":
"today"`` reads its requests so; the other calls carry the messages both share."""
DIALECTS = ("seed", "today")
"""The values of a trace's ``dialect`` key (the header's default, or one step's own)."""
RM_CALLS = ("connection_lost", "unregister_resource_manager")
"""Calls that carry only an RM id."""


class TraceError(SchedulerError):
    """A trace file that can not be read; ``line`` is 1-based (0: the file itself)."""

    def __init__(self, reason: str, line: int = 0) -> None:
        self.reason = reason
        self.line = line
        super().__init__(f"line {line}: {reason}" if line else reason)


@dataclass(frozen=True)
class Step:
    """One step of a run: an API call, a ``schedule()``, or the clock moving on.

    ``call`` is a ``Scheduler`` method name, ``"schedule"`` or ``"advance"``;
    ``request`` is the SI message of a request call, ``rm_id`` the RM of
    ``connection_lost`` / ``unregister_resource_manager``, ``seconds`` how far
    the clock moves. ``extra`` holds keys replay ignores (an expectation a
    checker rule had, for example).
    """

    call: str
    request: Any = None
    rm_id: str = ""
    seconds: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def schedule() -> Step:
        return Step("schedule")

    @staticmethod
    def advance(seconds: float) -> Step:
        return Step("advance", seconds=float(seconds))

    def to_json(self) -> dict[str, Any]:
        """The step as the contract's JSON object (plus its extra keys)."""
        if self.call == "advance":
            out: dict[str, Any] = {"advance": self.seconds}
        elif self.call in REQUEST_CALLS:
            out = {"call": self.call,
                   "request": self.request.model_dump(mode="json", by_alias=True)}
            if type(self.request).__module__ == today.__name__:
                out["dialect"] = "today"
        elif self.call in RM_CALLS:
            out = {"call": self.call, "rm_id": self.rm_id}
        else:
            out = {"call": self.call}
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @staticmethod
    def from_json(obj: Any, line: int = 0, dialect: str = "seed") -> Step | None:
        """Parse one line's object; None for a line replay ignores (a callback, a note).

        ``dialect`` is the trace's (its header's); a step's own ``dialect`` key wins.
        """
        if not isinstance(obj, dict):
            raise TraceError(f"a step must be a JSON object, got {type(obj).__name__}", line)
        extra = {k: v for k, v in obj.items()
                 if k not in ("call", "request", "rm_id", "advance", "dialect")}
        dialect = obj.get("dialect", dialect)
        if dialect not in DIALECTS:
            raise TraceError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}",
                             line)
        if "advance" in obj:
            seconds = obj["advance"]
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
                raise TraceError(f"advance needs a number of seconds >= 0, got {seconds!r}", line)
            return Step("advance", seconds=float(seconds), extra=extra)
        if "call" not in obj:
            return None
        call = obj["call"]
        if call == "schedule":
            return Step("schedule", extra=extra)
        if call in RM_CALLS:
            rm_id = obj.get("rm_id")
            if not isinstance(rm_id, str) or not rm_id:
                raise TraceError(f"{call} needs a non-empty rm_id", line)
            return Step(call, rm_id=rm_id, extra=extra)
        calls = TODAY_REQUEST_CALLS if dialect == "today" else REQUEST_CALLS
        model = calls.get(call) if isinstance(call, str) else None
        if model is None:
            known = ", ".join([*REQUEST_CALLS, *RM_CALLS, "schedule"])
            raise TraceError(f"unknown call {call!r} (known: {known})", line)
        try:
            request = model.model_validate(obj.get("request"))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "request"
            raise TraceError(f"{call}: invalid request at {where}: {first['msg']}", line) from None
        return Step(call, request=request, extra=extra)


@dataclass
class Trace:
    """A header and the steps replay executes (other lines are not kept)."""

    header: dict[str, Any]
    steps: list[Step]

    @property
    def clock_start(self) -> float:
        return float(self.header.get("clock_start", 0.0))


def header(config: str, clock_start: float, **more: Any) -> dict[str, Any]:
    """A trace header in the contract's form (more keys allowed)."""
    return {"format": FORMAT, "version": VERSION, "config": config,
            "clock_start": clock_start, **more}


def parse_lines(lines: Iterable[str]) -> Trace:
    """Parse a trace from its lines; :class:`TraceError` names the bad line."""
    head: dict[str, Any] | None = None
    steps: list[Step] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TraceError(f"not JSON: {exc.msg}", number) from None
        if head is None:
            if not isinstance(obj, dict) or obj.get("format") != FORMAT:
                raise TraceError(f"the first line must be a header with format {FORMAT!r}",
                                 number)
            if obj.get("version") != VERSION:
                raise TraceError(f"unsupported trace version {obj.get('version')!r} "
                                 f"(this build reads {VERSION})", number)
            start = obj.get("clock_start", 0.0)
            if isinstance(start, bool) or not isinstance(start, int | float):
                raise TraceError(f"clock_start must be a number, got {start!r}", number)
            if obj.get("dialect", "seed") not in DIALECTS:
                raise TraceError(f"dialect must be one of {', '.join(DIALECTS)}, got "
                                 f"{obj.get('dialect')!r}", number)
            head = obj
            continue
        step = Step.from_json(obj, number, head.get("dialect", "seed"))
        if step is not None:
            steps.append(step)
    if head is None:
        raise TraceError("the file is empty: no header line")
    return Trace(head, steps)


def read_trace(path: str | Path) -> Trace:
    """Read a trace file; an unreadable or malformed file raises :class:`TraceError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"can not read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path} is not UTF-8: {exc.reason}") from None
    return parse_lines(text.splitlines())


def dump_lines(head: Mapping[str, Any], steps: Iterable[Mapping[str, Any] | Step]) -> Iterator[str]:
    """The lines of a trace file: the header, then each step or note object."""
    yield json.dumps(dict(head), sort_keys=False)
    for item in steps:
        yield json.dumps(item.to_json() if isinstance(item, Step) else dict(item))


def write_trace(
    path: str | Path, head: Mapping[str, Any], steps: Iterable[Mapping[str, Any] | Step]
) -> Path:
    """Write a trace file (creating its directory) and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as out:
        write_lines(out, head, steps)
    return target


def write_lines(
    out: IO[str], head: Mapping[str, Any], steps: Iterable[Mapping[str, Any] | Step]
) -> None:
    for line in dump_lines(head, steps):
        out.write(line + "\n")
