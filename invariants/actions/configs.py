"""Queue configurations drawn at random, so one checker run covers many shapes (swarm).

Each test case of the checker draws its own ``queues.yaml``: one or two
partitions, trees one to three levels deep, ``max`` and ``guaranteed`` at
random levels (kept valid: a child's max within its parent's, guarantees
adding up), every application sort policy, ``maxapplications``, submit and
admin ACLs with users and groups, child templates, placement rules, and user and
group limits (named, wildcard, at several levels).
The fixed default configuration stays one of the shapes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from invariants.actions.config_texts import DEFAULT, PREEMPTION, PREEMPTION_CREATED
from invariants.readings import model
from scheduler.errors import ConfigError

USERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("alice", ()), ("bob", ("admins",)), ("carol", ()), ("dave", ("devs",)),
    ("e.f", ("devs", "admins")),
)
"""Users and their groups; ``e.f`` has a dot, which the user placement rule rewrites."""

NAMESPACES = ("ns1", "ns2", "checker-ns", "NS1")
"""``NS1`` names the same queue as ``ns1`` (queue names are case-insensitive)."""


ACLS = ("*", "alice", "bob,carol", " admins", "alice devs", "dave")


POLICIES = ("", "fifo", "fair", "stateaware", "Fair")
"""``Fair`` is no policy (YuniKorn matches with case): such a queue sorts fifo and takes gangs."""


MEMORIES = (30, 40, 60, 80, 120, 200)


CORE = 1000


@dataclass(frozen=True)
class Shape:
    """A drawn configuration and the names a shim may use with it."""

    text: str
    queue_names: tuple[str, ...]
    """Queue names submissions try (leaves, parents, unknown, bare names)."""
    users: tuple[tuple[str, tuple[str, ...]], ...] = USERS
    """Users (and their groups) submissions draw from: the checker's own, and for a given
    configuration (``--config``) also each user and a member of each group its ACLs,
    limits and placement filters name, so a configuration that admits only those is
    not checked vacuously."""


def draw(rng: random.Random) -> Shape:
    """A valid configuration drawn at random (the default one a quarter of the time, the
    preemption one about a sixth, most of those with created leaves)."""
    draw = rng.random()
    if draw < 0.25:
        return shape_of(DEFAULT)
    if draw < 0.4:
        # Most of them with created leaves, from a side stream: the others stay as
        # they were.
        return shape_of(PREEMPTION_CREATED if _side(rng).random() < 0.6 else PREEMPTION)
    for _ in range(20):
        text = _generate(rng)
        try:
            model.read(text)
        except ConfigError:
            continue
        return shape_of(text)
    return shape_of(DEFAULT)


def shape_of(text: str, given: bool = False) -> Shape:
    """The shape of a configuration; ``given``: one the user gave (``--config``), whose
    ACLs name users and groups the checker's own may not be."""
    config = model.read(text)
    names: list[str] = []
    for pm in config.partitions.values():
        for path in pm.queues:
            if path != model.ROOT and path not in names:
                names.append(path)
    names += ["root.nosuchqueue", "nosuchqueue"]
    names += sorted({p.rsplit(".", 1)[-1] for p in names if "." in p})[:3]
    names.append(names[0].upper())  # the same queue in capitals: names are case-insensitive
    leaves = [path for pm in config.partitions.values() for path, q in pm.queues.items()
              if q.leaf and path != model.ROOT]
    if leaves:
        # Below a leaf: no rule may create a queue there, a leaf has no children.
        names.append(f"{leaves[0]}.sub")
    return Shape(text, tuple(names), users_of(text) if given else USERS)


def users_of(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:data:`USERS`, then a user for each name and a member for each group the
    configuration's ACLs, limits and placement filters name (sorted; ``*`` is no name)."""
    named: set[str] = set()
    groups: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("submitacl", "adminacl") and isinstance(value, str):
                    parts = value.split(" ", 1)
                    named.update(n for n in parts[0].split(",") if n)
                    if len(parts) > 1:
                        groups.update(n for n in parts[1].split(",") if n)
                elif key in ("users", "groups") and isinstance(value, list):
                    (named if key == "users" else groups).update(
                        str(n) for n in value if isinstance(n, str | int))
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(text))
    known = {user for user, _ in USERS}
    extra: list[tuple[str, tuple[str, ...]]] = [
        (user, ()) for user in sorted(named - {"*"} - known)]
    extra += [(f"{group}-member", (group,)) for group in sorted(groups - {"*"})
              if f"{group}-member" not in known]
    return (*USERS, *extra)


def _generate(rng: random.Random) -> str:
    partitions = [_partition(rng, "default")]
    if rng.random() < 0.2:
        partitions.append(_partition(rng, "second"))
    return json.dumps({"partitions": partitions})


def _partition(rng: random.Random, name: str) -> dict[str, Any]:
    counter = [0]
    root: dict[str, Any] = {"name": "root"}
    if rng.random() < 0.5:
        root["submitacl"] = "*"
    depth = rng.choice((1, 2, 2, 3))
    cap: tuple[int | None, int | None] = (None, None)
    if rng.random() < 0.2:
        root["limits"] = _limits(rng, None, None, cap)
        cap = _tightest(root["limits"], cap)
    root["queues"] = [_queue(rng, 1, depth, None, None, counter, cap)
                      for _ in range(rng.randint(1, 3))]
    _default_leaf(_side(rng, 1), root)
    part: dict[str, Any] = {"name": name, "queues": [root]}
    if rng.random() < 0.3:
        part["nodesortpolicy"] = {"type": rng.choice(("fair", "binpacking"))}
    if rng.random() < 0.3:
        part["placementrules"] = _rules(rng, root)
    else:
        _inheriting_rule(_side(rng), root, part)
    if rng.random() < 0.25:
        part["preemption"] = {"enabled": rng.choice((False, "false", True))}
    return part


def _side(rng: random.Random, salt: int | None = None) -> random.Random:
    """A side stream drawn from ``rng``'s state without advancing it, the same in every
    process: the state's tuple of ints hashes alike everywhere (the whole state, whose
    last item may be None, does not before Python 3.12: None hashes by its address).
    ``salt`` gives another stream from the same state."""
    state = rng.getstate()[1]
    return random.Random(hash(state if salt is None else (state, salt)))


def _default_leaf(side: random.Random, root: dict[str, Any]) -> None:
    """Sometimes a leaf below root is named ``default``: ``root.default`` takes what no
    placement rule places (YuniKorn ``PlaceApplication``). From a side stream of its own:
    every other draw stays as it was."""
    leaves = [q for q in root["queues"] if not q.get("queues")]
    if leaves and side.random() < 0.35:
        side.choice(leaves)["name"] = "default"


def _inheriting_rule(side: random.Random, root: Mapping[str, Any],
                     part: dict[str, Any]) -> None:
    """Often, when a queue below root has a childtemplate and no placement rule was drawn,
    a rule that creates its leaf two levels below that queue: below a parent it creates, or
    below a configured parent without a template of its own, which inherit the template
    (YUNIKORN-193, YUNIKORN-814). Drawn from a side stream: every other draw stays as it
    was."""
    templated = [q for q in root["queues"] if q.get("childtemplate")]
    if not templated or side.random() < 0.25:
        return
    # Mostly a templated queue with a configured parent below it, and that parent: the
    # template passes through a configured parent only when it has none of its own.
    through = [q for q in templated if any(c.get("queues") for c in q.get("queues", []))]
    top = side.choice(through if through and side.random() < 0.8 else templated)
    below = [c["name"] for c in top.get("queues", []) if c.get("queues")]
    deeper = side.choice(below) if below and side.random() < 0.85 else "team"
    parent = f"root.{top['name']}.{deeper}"
    kind = side.choice(("user", "tag"))
    rule: dict[str, Any] = {"name": kind, "create": True,
                            "parent": {"name": "fixed", "value": parent, "create": True}}
    if kind == "tag":
        rule["value"] = "namespace"
    rules = [rule, {"name": "provided", "create": side.random() < 0.5}]
    if side.random() < 0.5:
        # Some users pass the creating rule by: the provided rule then places them by the
        # queue they name, and a parent fails it, for a last fixed rule to place them.
        rule["filter"] = {"type": "deny", "users": [side.choice(("alice", "bob", "carol"))]}
        leaves = _leaf_paths(root)
        if leaves:
            rules.append({"name": "fixed", "value": side.choice(leaves)})
    part["placementrules"] = rules


def _queue(rng: random.Random, level: int, depth: int, parent_max: int | None,
           parent_apps: int | None, counter: list[int],
           cap: tuple[int | None, int | None] = (None, None)) -> dict[str, Any]:
    counter[0] += 1
    # Some names in capitals: the queue is still found by its lower-case path.
    q: dict[str, Any] = {"name": f"{'Q' if rng.random() < 0.15 else 'q'}{counter[0]}"}
    mx = parent_max
    if rng.random() < 0.45:
        choices = [m for m in MEMORIES if parent_max is None or m <= parent_max]
        if choices:
            mx = rng.choice(choices)
            q.setdefault("resources", {})["max"] = {"memory": mx}
            if rng.random() < 0.2:
                q["resources"]["max"]["vcore"] = rng.choice((4, 8, 20))
    if rng.random() < 0.45:
        q.setdefault("resources", {})["guaranteed"] = {"memory": rng.choice((10, 20, 30))}
    apps = parent_apps
    if parent_apps is not None:
        apps = rng.randint(1, parent_apps)
        q["maxapplications"] = apps
    elif rng.random() < 0.2:
        apps = rng.randint(1, 3)
        q["maxapplications"] = apps
    policy = rng.choice(POLICIES)
    if policy:
        q["properties"] = {"application.sort.policy": policy}
    if rng.random() < 0.3:
        q.setdefault("properties", {}).update(priority_properties(rng))
    if rng.random() < 0.3:
        q.setdefault("properties", {}).update(_preemption(rng))
    if rng.random() < 0.3:
        q["submitacl"] = rng.choice(ACLS)
    if rng.random() < 0.15:
        q["adminacl"] = rng.choice(ACLS)
    if rng.random() < 0.3:
        q["limits"] = _limits(rng, mx, apps, cap)
        cap = _tightest(q["limits"], cap)
    backoff = _side(rng, 13)
    if backoff.random() < 0.25:
        # Application backoff (YUNIKORN-3115), from a stream of its own: the case's draws
        # stay as they were.
        props = q.setdefault("properties", {})
        props["application.unschedasks.backoff"] = backoff.choice(("1", "1", "2", "0", "-1"))
        if backoff.random() < 0.7:
            props["application.unschedasks.backoff.delay"] = backoff.choice(
                ("2s", "10s", "45s", "0s", "x"))
    if level < depth and rng.random() < 0.7:
        q["queues"] = [_queue(rng, level + 1, depth, mx, apps, counter, cap)
                       for _ in range(rng.randint(1, 3))]
        _fit_guarantees(q)
        # More often above a configured parent, which hands the template down (YUNIKORN-814).
        if rng.random() < (0.35 if any(c.get("queues") for c in q["queues"]) else 0.2):
            template: dict[str, Any] = {"properties": {"application.sort.policy": rng.choice(
                ("fifo", "fair", "stateaware"))}}
            if mx is not None:
                template["resources"] = {"max": {"memory": mx}}
            if apps is not None:
                template["maxapplications"] = apps
            # Priority settings a created leaf takes from the template only (YUNIKORN-1486),
            # drawn from a side stream so the configurations of every other draw stay as
            # they were (the seeds' cases keep their numbers).
            side = _side(rng)
            if side.random() < 0.5:
                template["properties"].update(priority_properties(side))
            # A template max (maxapplications) below its parent's, so that a created leaf's
            # own quota binds before the parent's does (YUNIKORN-193, YUNIKORN-2033).
            smaller = [m for m in MEMORIES[:3] if mx is None or m < mx]
            if smaller and side.random() < 0.6:
                template["resources"] = {"max": {"memory": side.choice(smaller)}}
            if apps is not None and apps > 1 and side.random() < 0.5:
                template["maxapplications"] = side.randint(1, apps - 1)
            elif apps is None and side.random() < 0.3:
                template["maxapplications"] = 1
            # A guarantee the created leaf takes from the template (its fair base and its
            # preemption guarantee), never above the template's max.
            top = template.get("resources", {}).get("max", {}).get("memory")
            if side.random() < 0.4:
                template.setdefault("resources", {})["guaranteed"] = {
                    "memory": side.choice([g for g in (10, 20) if top is None or g <= top]
                                          or [top])}
            # Preemption settings a created leaf takes from the template alone, never from
            # its parent (YUNIKORN-809): a disabled parent does not disable it.
            if side.random() < 0.4:
                template["properties"]["preemption.policy"] = side.choice(
                    ("disabled", "Disabled", "fence", "default"))
            if side.random() < 0.3:
                template["properties"]["preemption.delay"] = side.choice(("1ms", "5s", "1m"))
            q["childtemplate"] = template
    return q


def _preemption(rng: random.Random) -> dict[str, str]:
    """Preemption properties (behaviour section 2.1): a policy (any case, or unknown:
    default) and a delay as a Go duration (bad, zero or negative: 30 s)."""
    props: dict[str, str] = {}
    if rng.random() < 0.6:
        props["preemption.policy"] = rng.choice(
            ("fence", "disabled", "default", "Disabled", "none"))
    if rng.random() < 0.6:
        props["preemption.delay"] = rng.choice(("1ms", "5s", "1m", "0s", "-2s", "x", "1m30s"))
    return props


def priority_properties(rng: random.Random) -> dict[str, str]:
    """Priority properties (behaviour section 3.1): an offset (sometimes at the int32
    bounds, or malformed: 0), a fence, priority sorting off; values in any case."""
    props: dict[str, str] = {}
    if rng.random() < 0.7:
        props["priority.offset"] = rng.choice(
            ("5", "-5", "20", "100", "2147483647", "-2147483648", "x"))
    if rng.random() < 0.35:
        props["priority.policy"] = rng.choice(("fence", "Fence", "default"))
    if rng.random() < 0.25:
        props["application.sort.priority"] = rng.choice(("disabled", "Disabled", "enabled"))
    return props


LIMIT_NAMES = (["alice"], ["dave", "e.f"], ["*"], ["bob", "*"], ["alice", "dave"])


GROUP_NAMES = (["devs"], ["admins", "devs"], ["devs", "*"])


WILDCARD_USER = "*"


def _limits(rng: random.Random, queue_max: int | None, queue_apps: int | None,
            cap: tuple[int | None, int | None]) -> list[dict[str, Any]]:
    """User and group limits within the queue's max and maxapplications and every limit
    above (so valid: YuniKorn refuses a limit larger than its queue's or a parent's, and
    one without maxapplications below one that sets it)."""
    top_mem = min(m for m in (queue_max, cap[0], MEMORIES[-1]) if m is not None)
    top_apps = min(a for a in (queue_apps, cap[1], 3) if a is not None)
    out: list[dict[str, Any]] = []
    for kind in rng.sample(("users", "groups"), rng.randint(1, 2)):
        names = rng.choice(LIMIT_NAMES if kind == "users" else GROUP_NAMES)
        limit: dict[str, Any] = {kind: list(names)}
        if rng.random() < 0.7:
            limit["maxresources"] = {"memory": rng.choice(
                [m for m in (20, 30, 40, 60, 80) if m <= top_mem] or [top_mem])}
        if rng.random() < 0.65 or "maxresources" not in limit or cap[1] is not None:
            limit["maxapplications"] = rng.randint(1, top_apps)
        out.append(limit)
        if kind == "users" and WILDCARD_USER not in names and rng.random() < 0.5:
            # a wildcard beside the named users, tighter: the named entries override it
            wild = {k: v for k, v in limit.items() if k != "users"}
            if "maxresources" in wild:
                wild["maxresources"] = {"memory": max(10, wild["maxresources"]["memory"] // 2)}
            out.append({"users": [WILDCARD_USER], **wild})
    return out


def _tightest(limits: list[dict[str, Any]],
              cap: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
    """The smallest memory and application limits so far, which every limit below keeps to."""
    mem, apps = cap
    for limit in limits:
        m = limit.get("maxresources", {}).get("memory")
        a = limit.get("maxapplications")
        mem = m if mem is None or (m is not None and m < mem) else mem
        apps = a if apps is None or (a is not None and a < apps) else apps
    return mem, apps


def _leaf_paths(queue: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The paths of the configured leaves below ``queue`` (a queue's dict), in order."""
    path = f"{prefix}.{queue['name']}" if prefix else queue["name"]
    children = queue.get("queues", [])
    if not children:
        return [path] if prefix else []
    return [leaf for child in children for leaf in _leaf_paths(child, path)]


def _fit_guarantees(q: dict[str, Any]) -> None:
    """Drop guarantees the validator would refuse (children's sum above the parent's)."""
    total = sum(_guaranteed(c) for c in q["queues"])
    own = q.get("resources", {}).get("guaranteed", {}).get("memory")
    mx = q.get("resources", {}).get("max", {}).get("memory")
    if (own is not None and total > own) or (mx is not None and total > mx):
        for c in q["queues"]:
            c.get("resources", {}).pop("guaranteed", None)
    g = q.get("resources", {}).get("guaranteed", {}).get("memory")
    if g is not None and mx is not None and g > mx:
        q["resources"].pop("guaranteed")


def _guaranteed(q: Mapping[str, Any]) -> int:
    own = q.get("resources", {}).get("guaranteed", {}).get("memory")
    if own is not None:
        return int(own)
    return sum(_guaranteed(c) for c in q.get("queues", []))


_EXPRESSIONS = ("^a", "o", "(li|ob)", "^(bob|dave)$", "e.f|carol")
"""Lone filter entries with expression characters: YuniKorn searches them anywhere in a
name (``^a`` and ``o`` match more than a whole-name match would)."""


def _yunikorn_quirks(side: random.Random, rule: dict[str, Any]) -> None:
    """Now and then a rule in the forms where YuniKorn's reading is its own (a side stream:
    every other draw stays): a filter without lists (a deny one denies everyone), a lone
    expression entry, or a ``user`` rule whose parent rule gives ``root`` (its queues go
    below ``root.root``)."""
    if rule["name"] == "user" and side.random() < 0.25:
        rule["parent"] = {"name": "fixed", "value": "root"}
        rule["create"] = True
    roll = side.random()
    if roll < 0.06:
        rule["filter"] = {"type": side.choice(("allow", "deny"))}
    elif roll < 0.3:
        rule["filter"] = {"type": side.choice(("allow", "deny")),
                          "users" if side.random() < 0.8 else "groups":
                          [side.choice(_EXPRESSIONS)]}


def _rules(rng: random.Random, root: Mapping[str, Any]) -> list[dict[str, Any]]:
    parents = [q["name"] for q in root["queues"] if q.get("queues")]
    rules: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(("provided", "tag", "user", "fixed"))
        rule: dict[str, Any] = {"name": kind, "create": rng.random() < 0.6}
        if kind == "tag":
            rule["value"] = "namespace"
        if kind == "fixed":
            leaves = [f"root.{q['name']}" for q in root["queues"] if not q.get("queues")]
            if not leaves:
                continue
            rule["value"] = rng.choice(leaves)
            rule["create"] = False
            fixed_side = _side(rng)
            if parents and fixed_side.random() < 0.3:
                # A fixed parent queue: the rule always fails (applications go to leaves),
                # and the rules after it decide.
                rule["value"] = f"root.{fixed_side.choice(parents)}"
        if kind in ("tag", "user") and parents and rng.random() < 0.6:
            parent = rng.choice(parents)
            # Mostly a parent with a childtemplate, when there is one: the leaves it creates
            # then take the template (a side stream: every other draw stays as it was).
            side = _side(rng)
            templated = [q["name"] for q in root["queues"] if q.get("childtemplate")]
            if templated and side.random() < 0.7:
                parent = side.choice(templated)
            rule["parent"] = {"name": "fixed", "value": f"root.{parent}"}
            # Often a parent one level further down: a configured parent below it, or one
            # the rule creates, so that a leaf is created two levels below the template,
            # which it still takes (YUNIKORN-193, YUNIKORN-814).
            # (A missing parent is valid only when the rule itself may create.)
            below = [c["name"] for q in root["queues"] if q["name"] == parent
                     for c in q.get("queues", []) if c.get("queues")]
            deeper = [*below, *(("team", "team") if rule["create"] else ())]
            if side.random() < 0.5 and deeper:
                rule["parent"]["value"] += f".{side.choice(deeper)}"
                rule["parent"]["create"] = True
            if side.random() < 0.25:
                # A parent rule's own filter: when it refuses, the whole rule fails.
                rule["parent"]["filter"] = {"type": side.choice(("allow", "deny")),
                                            "users": [side.choice(("alice", "bob"))]}
        elif kind in ("tag", "user") and \
                _side(rng, 2).random() < 0.3:
            # The queue the application names as the parent: a leaf named there makes the
            # rule err, which rejects the application (YuniKorn: "parent rule returned a
            # leaf queue"); a side stream of its own, every other draw stays.
            rule["parent"] = {"name": "provided"}
        if rng.random() < 0.2:
            rule["filter"] = {"type": rng.choice(("allow", "deny")),
                              "users": [rng.choice(("alice", "bob", "carol"))]}
        _yunikorn_quirks(_side(rng, 3), rule)
        rules.append(rule)
    leaves = _leaf_paths(root)
    side = _side(rng)
    last = rules[-1] if rules else {}
    if leaves and rules and (last["name"] != "fixed" or last["value"] not in leaves) \
            and side.random() < 0.75:
        # A last rule that places what the others did not: an application a rule wrongly
        # refuses (or wrongly takes) then lands somewhere else than the reading says.
        rules.append({"name": "fixed", "value": side.choice(leaves)})
    return rules
