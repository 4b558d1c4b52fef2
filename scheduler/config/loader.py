"""Loading ``queues.yaml``: strict YAML reading, then the schema and the semantic checks.

YAML is read the way YuniKorn's strict decoder reads it (duplicate keys are
errors, scalars keep their text, only ``true``/``false`` are booleans); YAML
and pydantic errors become a :class:`~scheduler.errors.ConfigError` whose
``path`` locates the value.

A configuration comes from a shim, maybe from a user: reading it is bounded
so that no text can hold the caller for long. The text may be at most
:data:`MAX_CONFIG_CHARS` long, nest at most :data:`MAX_CONFIG_DEPTH` levels,
and its aliases may repeat at most :data:`MAX_ALIAS_NODES` nodes in all (an
"alias bomb" of a few hundred bytes would otherwise expand to billions).
The checks run on the composed YAML, before anything is expanded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import yaml
from pydantic import ValidationError

from scheduler.errors import ConfigError

from .models import SchedulerConfig
from .paths import key_path
from .scalars import YAML12_BOOL_WORDS, _YamlFloat, _YamlInt
from .validate import validate

MAX_CONFIG_CHARS: Final = 4 * 1024 * 1024
"""Characters a configuration may have: 4 Mi, four times the 1 MiB a Kubernetes
ConfigMap (where YuniKorn's shim reads ``queues.yaml``) can hold."""
MAX_CONFIG_DEPTH: Final = 100
"""Nesting levels of collections: about 48 levels of queues. The composer recurses
per level, so this also keeps a deep text from exhausting Python's stack."""
MAX_ALIAS_NODES: Final = 100_000
"""Nodes that aliases may add to the document, counted as expanded (an alias of an
anchor that itself holds aliases counts everything it stands for). Anchors for a
resource block reused by a few thousand queues stay well within it."""


class _DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping repeats a key (YuniKorn's strict decoder rejects that)."""


class _Strict(yaml.constructor.SafeConstructor):
    """Duplicate keys are errors (YuniKorn's strict decoder), whichever parser composed
    the document."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: the base class reports it
                continue
            if duplicate:
                raise _DuplicateKeyError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key!r}",
                    key_node.start_mark,
                )
            seen.add(key)
        return dict(super().construct_mapping(node, deep=deep))


class _Loader(_Strict, yaml.SafeLoader):
    """``yaml.SafeLoader`` that keeps scalar text, rejects duplicate keys and bounds
    nesting and alias expansion while it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._expanded: dict[yaml.Node, int] = {}   # a node's size with aliases expanded
        self._repeated = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        alias = self.check_event(yaml.AliasEvent)
        line = self.current_event.start_mark.line + 1   # the event check_event peeked at
        if self._depth >= MAX_CONFIG_DEPTH:
            raise ConfigError(f"the YAML nests deeper than {MAX_CONFIG_DEPTH} levels "
                              f"(line {line})")
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        if alias:
            size = self._expanded.get(node)
            if size is None:        # the anchor is still open: the alias is inside it
                raise ConfigError(f"a YAML alias refers to a collection that contains it "
                                  f"(line {line})")
            self._repeated += size
            if self._repeated > MAX_ALIAS_NODES:
                raise ConfigError(
                    f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} repeated nodes "
                    f"(line {line}; an alias bomb?): write the repeated parts out")
            return node
        size = 1
        if isinstance(node, yaml.SequenceNode):
            size += sum(self._expanded[child] for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            size += sum(self._expanded[k] + self._expanded[v] for k, v in node.value)
        self._expanded[node] = size
        return node


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int:
    value = _YamlInt(loader.construct_yaml_int(node))
    value.yaml_text = str(node.value)
    return value


def _construct_float(loader: _Loader, node: yaml.ScalarNode) -> float:
    value = _YamlFloat(loader.construct_yaml_float(node))
    value.yaml_text = str(node.value)
    return value


def _construct_timestamp_as_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    # YuniKorn has no timestamps: "2024-01-01" is a valid queue name.
    return str(loader.construct_scalar(node))


_CLoader: type[yaml.CSafeLoader] | None = None
if yaml.__with_libyaml__:   # PyYAML built without libyaml has no CSafeLoader

    class _FastLoader(_Strict, yaml.CSafeLoader):
        """The same reading with libyaml's scanner, parser and composer (five times
        faster); the limits are checked on the composed graph by
        :func:`_well_within_limits`."""

    _CLoader = _FastLoader


_BOOL_TAG = "tag:yaml.org,2002:bool"
for _cls in (_Loader, *((_CLoader,) if _CLoader is not None else ())):
    # YAML 1.2 booleans only (YuniKorn's decoder): ``no``, ``on``, ``off`` stay text.
    _cls.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL_TAG]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _cls.add_implicit_resolver(
        _BOOL_TAG, re.compile("^(?:" + "|".join(YAML12_BOOL_WORDS) + ")$"), list("tTfF"))
    _cls.add_constructor("tag:yaml.org,2002:int", _construct_int)
    _cls.add_constructor("tag:yaml.org,2002:float", _construct_float)
    _cls.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)


def parse_config(text: str) -> SchedulerConfig:
    """Parse and validate ``queues.yaml`` text; any problem raises :class:`ConfigError`.

    The result is normalised as YuniKorn does: a missing root queue is inserted,
    ``root`` is spelled in lower case and every queue with children has
    ``parent`` set, an empty or "default" partition name becomes ``default``
    and an empty node sort policy type becomes ``fair``.
    """
    if len(text) > MAX_CONFIG_CHARS:
        raise ConfigError(f"the configuration has {len(text):,} characters; at most "
                          f"{MAX_CONFIG_CHARS:,} are read")
    try:
        data = _load(text)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(_yaml_reason(exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"the configuration must be a YAML mapping with a 'partitions' list, "
            f"got {type(data).__name__}"
        )
    try:
        config = SchedulerConfig.model_validate(data, context={"quantities": True})
    except ValidationError as exc:
        raise _config_error(exc) from None
    validate(config)
    return config


def _load(text: str) -> Any:
    """``yaml.safe_load`` semantics, through the bounded loader.

    libyaml composes first when it is there. Its result is taken only when the
    document is well inside the limits and libyaml found nothing wrong; anything
    else (an error, a document near a limit) is read again by the pure-Python
    loader, whose verdict and messages are the reference.
    """
    if _CLoader is not None:
        fast = _CLoader(text)
        try:
            node = fast.get_single_node()
            if node is None:
                return None
            if _well_within_limits(node):
                return fast.construct_document(node)
        except yaml.YAMLError:
            pass
        finally:
            fast.dispose()
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _well_within_limits(root: yaml.Node) -> bool:
    """Whether a composed document nests at most half of :data:`MAX_CONFIG_DEPTH` levels,
    repeats at most half of :data:`MAX_ALIAS_NODES` nodes through aliases, and has no
    alias inside its own anchor: then the strict composer accepts it too. Sizes are
    counted per node with aliases expanded, without expanding anything."""
    expanded: dict[yaml.Node, int] = {}
    open_nodes: set[yaml.Node] = set()
    repeated = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, closing = stack.pop()
        if closing:
            open_nodes.discard(node)
            expanded[node] = 1 + sum(expanded[child] for child in _children(node))
            continue
        if node in open_nodes:
            return False
        size = expanded.get(node)
        if size is not None:     # met again: an alias
            repeated += size
            if repeated > MAX_ALIAS_NODES // 2:
                return False
            continue
        if depth > MAX_CONFIG_DEPTH // 2:
            return False
        children = _children(node)
        if not children:
            expanded[node] = 1
            continue
        open_nodes.add(node)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in reversed(children))
    return True


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def load_config_file(path: str | os.PathLike[str]) -> SchedulerConfig:
    """Read a ``queues.yaml`` file (UTF-8) and :func:`parse_config` it (a file too large
    is not read whole: the first character past the limit is enough to refuse it)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(MAX_CONFIG_CHARS + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {os.fspath(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {os.fspath(path)!r} is not UTF-8: {exc.reason}") from None
    return parse_config(text)


def _yaml_reason(exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    what = exc.problem or exc.context or "syntax error"
    kind = "duplicate key" if isinstance(exc, _DuplicateKeyError) else "YAML syntax error"
    return f"{kind}{where}: {what}"


def _format_loc(loc: Sequence[str | int]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part != "[key]":
            path = key_path(path, part)
    return path


def _config_error(exc: ValidationError) -> ConfigError:
    error = exc.errors(include_url=False)[0]
    loc: list[str | int] = list(error["loc"])
    ctx = error.get("ctx") or {}
    if error["type"] == "quantity" and "resource" in ctx:
        loc.append(str(ctx["resource"]))
    if error["type"] == "extra_forbidden":
        reason = f"unknown field {str(loc[-1])!r}"
    elif error["type"] == "missing":
        reason = "required field is missing"
    elif error["type"] == "quantity":
        reason = str(ctx.get("reason", error["msg"]))
    else:
        shown = repr(error.get("input"))
        if len(shown) > 60:
            shown = shown[:57] + "..."
        reason = f"{error['msg']} (got {shown})"
    return ConfigError(reason, _format_loc(loc))
