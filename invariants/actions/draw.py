"""The search's draw: a case's :class:`Scenario`, the generator :class:`Gen` that draws its
steps, and the decorator every action registers with (``RULES``, in declaration order).
"""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from invariants.actions import config_texts, configs
from invariants.actions.configs import CORE
from invariants.modelshim import bridge, speaking
from invariants.modelshim.world import World
from invariants.readings import model
from invariants.readings.shim import RMView
from scheduler import si
from scheduler.config import parse_config
from scheduler.trace import Step

TT = si.TerminationType
NA = si.NodeAction
RM_ID = "checker-rm"

CLOCK_START = 1_000.0
"""The clock every case, every explored world and every stored counterexample starts at."""

RuleFn = Callable[["Gen"], Iterator[Step]]


@dataclass(frozen=True)
class Rule:
    """A thing a shim may do: its weight, whether every case keeps it, whether it undoes work."""

    name: str
    fn: RuleFn
    weight: float
    core: bool
    undo: bool
    doc: str
    late: bool = False
    """Drawn from its own stream (``Scenario.draw``): added after the self-test's figures."""


RULES: dict[str, Rule] = {}


def rule(weight: float, *, core: bool = False, undo: bool = False,
         late: bool = False) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        name = fn.__name__
        RULES[name] = Rule(name, fn, weight, core, undo, (fn.__doc__ or "").strip(), late)
        return fn

    return register


ENDINGS: list[RuleFn] = []
"""How a case ends: ``finale.py`` registers its one ending on import, as the actions register
themselves (the draw imports no action module)."""


def ending(fn: RuleFn) -> RuleFn:
    ENDINGS.append(fn)
    return fn


@dataclass(frozen=True)
class Scenario:
    """What one test case runs with; everything drawn from the case's seed."""

    seed: int
    shape: configs.Shape
    node_sizes: tuple[tuple[int, int], ...]
    gang_timeouts: tuple[int, ...]
    ask_timeouts: tuple[int, ...]
    predicate_salt: int | None
    enabled: frozenset[str]
    length: int
    rm_pause_timeout: float | None
    reservation_delay: float
    """The core's ``reservation_delay``: mostly YuniKorn's 2 s, sometimes none."""
    weights: tuple[tuple[str, float], ...]
    """Per-rule weight factors: swarm testing skews each case differently."""

    @classmethod
    def draw(cls, seed: int, fixed_config: str | None = None, max_steps: int | None = None,
             rules: frozenset[str] | None = None) -> Scenario:
        rng = random.Random(seed)
        shape = configs.shape_of(fixed_config, given=True) if fixed_config \
            else configs.draw(rng)
        sizes = rng.sample([(20, 2), (40, 4), (100, 8), (60, 8)], rng.randint(1, 3))
        optional = [n for n, r in RULES.items() if not r.core and not r.late]
        enabled = frozenset({n for n, r in RULES.items() if r.core}
                            | {n for n in optional if rng.random() < 0.6})
        # Late rules draw from a stream of their own and never join the preemption
        # configuration's cases: a case that does not run them is the case it was before
        # they came (the self-test's broken cores were tuned on those cases).
        late_rng = random.Random(f"late-{seed}")
        late = {n: late_rng.choice((0.5, 1.0, 2.0)) for n, r in RULES.items()
                if r.late and late_rng.random() < 0.3
                and shape.text != configs.shape_of(config_texts.PREEMPTION).text}
        if rules is not None:
            enabled = frozenset(enabled & rules) | frozenset(n for n in rules if RULES[n].core)
        length = rng.choice((20, 40, 80, 150, 250))
        if max_steps is not None:
            length = min(length, max_steps)
        weights = tuple((n, rng.choice((0.5, 1.0, 1.0, 2.0, 4.0))) for n in sorted(enabled))
        if rules is not None:
            late = {n: w for n, w in late.items() if n in rules}
        enabled |= frozenset(late)
        weights += tuple(sorted(late.items()))
        # Its own stream too: the other draws stay what they were before the delay came.
        delay = random.Random(f"reservation-{seed}").choice((2.0, 2.0, 0.0))
        return cls(
            seed=seed, shape=shape, weights=weights, reservation_delay=delay,
            rm_pause_timeout=rng.choice((None, None, 60.0, 300.0)),
            node_sizes=tuple((m, v * CORE) for m, v in sizes),
            gang_timeouts=tuple(rng.sample([0, 30_000, 60_000, 120_000], 2)),
            ask_timeouts=(0, rng.choice((10_000, 20_000, 45_000))),
            predicate_salt=rng.randrange(1 << 30) if rng.random() < 0.15 else None,
            enabled=enabled, length=length)

    def predicate(self) -> Callable[[str, str], bool] | None:
        return predicate_for(self.predicate_salt)

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "predicate_salt": self.predicate_salt,
                "rm_pause_timeout": self.rm_pause_timeout,
                "reservation_delay": self.reservation_delay, "rules": sorted(self.enabled)}


def predicate_for(salt: int | None, refused: Iterable[Sequence[str]] = ()
                  ) -> Callable[[str, str], bool] | None:
    """The predicates callback a case or a trace names: ``salt`` draws one refusing about a
    quarter of (ask, node) pairs, ``refused`` lists the pairs refused (an explorer scope's);
    neither: no callback."""
    if refused:
        return Refusing(tuple(sorted((str(k), str(n)) for k, n in refused)))
    return None if salt is None else Salted(salt)


@dataclass(frozen=True)
class Salted:
    """Refuses about a quarter of (ask key, node) pairs, by a hash of the pair and the salt.
    A class rather than a closure: the explorer pickles worlds, predicates included."""

    salt: int

    def __call__(self, key: str, node_id: str) -> bool:
        h = 2166136261 ^ self.salt
        for ch in f"{key}@{node_id}":
            h = ((h ^ ord(ch)) * 16777619) & 0xFFFFFFFF
        return h % 4 != 0


@dataclass(frozen=True)
class Refusing:
    """Refuses exactly the listed (ask key, node) pairs."""

    pairs: tuple[tuple[str, str], ...]

    def __call__(self, key: str, node_id: str) -> bool:
        return (key, node_id) not in self.pairs


@dataclass
class Gen:
    """Draws the next steps of one test case."""

    world: World
    scenario: Scenario
    rng: random.Random
    rm_id: str = RM_ID
    next_id: int = 0
    factor: float = 1.0
    removed: set[str] = field(default_factory=set)
    gangs: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    sizes: dict[str, tuple[dict[str, int], dict[str, int]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    current: str = "register"
    """The rule whose steps are being produced (for ``--stats``)."""
    side: random.Random = field(init=False)
    """A side stream for choices added after the self-test's figures (a story's extra
    endings): drawing from it leaves the case's own stream, and so its draws, as they were."""

    ending: random.Random = field(init=False)
    """The preemption story's directed endings (added after the side stream's figures): a
    stream of their own, so the side stream's draws stay as they were."""

    reshape: random.Random = field(init=False)
    """Whether a reshaping reload removes a parent, and which (added after the other
    streams' figures): a stream of its own, so theirs stay as they were."""

    rival: random.Random = field(init=False)
    """Whether an ask is followed by a rival's in the same fair leaf, and its repeats."""

    victims: random.Random = field(init=False)
    """How the directed endings vary the victims they offer (twins of different ages, a
    pod sharing no type with what the ask lacks): a stream of its own, so the others'
    draws stay as they were."""

    placing: random.Random = field(init=False)
    """Submissions in the forms YuniKorn places its own way (a tag value that is a queue
    path, a user named ``root``): a stream of its own, so the others' draws stay."""

    gang_victims: random.Random = field(init=False)
    """Whether a preemption story ends with a gang's placeholders as the victims, and
    where (``work._gang_ending``): a stream of its own, so the others' draws stay."""

    refusals: random.Random = field(init=False)
    """Whether a preemption story ends with a preemption every victim's guarantee refuses
    (``work._refusal_ending``): a stream of its own, so the others' draws stay."""

    quotas: random.Random = field(init=False)
    """The namespace quota tags a submission carries (``work._namespace_tags``): a stream of
    its own, so the others' draws stay."""

    backoff: random.Random = field(init=False)
    """Whether an ask is followed by asks no node holds, to back its application off
    (``work._unschedulable_asks``): a stream of its own, so the others' draws stay."""

    capped: random.Random = field(init=False)
    """Whether a preemption story ends with an ask a queue's max fences, and where
    (``work._max_fence_ending``): a stream of its own, so the others' draws stay."""

    created: random.Random = field(init=False)
    """Whether an ask carries a ``creationTime`` tag, and which (a pod created before its
    application was submitted, later, or an unreadable value): a stream of its own, so the
    others' draws stay."""

    dialects: random.Random = field(init=False)
    """Which SI each registration speaks (a stream of its own: a case whose registrations
    all speak the seed's draws everything else as it did before today's SI came)."""

    speech: random.Random = field(init=False)
    """The choices of today's SI's speaking (``invariants/modelshim/speaking.py``): drawn only
    for an RM of today's dialect."""

    drawn: str = field(init=False, default="seed")
    """The dialect the last registration drawn speaks once the core takes it."""

    speaks: str = field(init=False, default="seed")
    """The dialect of the registration the shim's view holds (``_speaking``)."""

    _heard: RMView | None = field(init=False, default=None)

    grouping: random.Random = field(init=False)
    """Whether a task group's placeholders go as one ask with repeats (``002``'s
    ``maxAllocations``) instead of a pod each: a stream of its own, so the others' draws
    stay."""

    finale: random.Random = field(init=False)
    """Whether the case ends with a story of ``finale.py``, and where it plays."""

    quota: random.Random = field(init=False)
    """Whether a quota-scaling reload turns quota preemption on (the partition switch and a
    ``quota.preemption.delay`` on root, which every configured queue inherits), and with
    which delay: a stream of its own, so the others' draws stay."""

    quota_delay: str = field(init=False, default="")
    """The ``quota.preemption.delay`` the configuration now sets on root ("": none)."""

    quota_switch: bool = field(init=False, default=False)
    """Whether the configuration now sets ``preemption.quotapreemptionenabled``."""

    retune: random.Random = field(init=False)
    """Whether a quota-scaling reload also redraws the priority settings of some configured
    queues, and which: a stream of its own, so the others' draws stay."""

    priorities: dict[tuple[str, str], dict[str, str]] = field(init=False, default_factory=dict)
    """Per (partition, queue path): the priority properties a reload put in place of the
    scenario's (``priority.offset``, ``priority.policy``, ``application.sort.priority``)."""

    def __post_init__(self) -> None:
        self.finale = random.Random(f"finale-{self.scenario.seed}")
        self.quota = random.Random(f"quota-preemption-{self.scenario.seed}")
        self.retune = random.Random(f"retune-{self.scenario.seed}")
        self.grouping = random.Random(f"grouping-{self.scenario.seed}")
        self.placing = random.Random(f"placing-{self.scenario.seed}")
        self.side = random.Random(f"side-{self.scenario.seed}")
        self.ending = random.Random(f"ending-{self.scenario.seed}")
        self.reshape = random.Random(f"reshape-{self.scenario.seed}")
        self.rival = random.Random(f"rival-{self.scenario.seed}")
        self.victims = random.Random(f"victims-{self.scenario.seed}")
        self.dialects = random.Random(f"dialect-{self.scenario.seed}")
        self.gang_victims = random.Random(f"gang-victims-{self.scenario.seed}")
        self.refusals = random.Random(f"refusals-{self.scenario.seed}")
        self.speech = random.Random(f"speech-{self.scenario.seed}")
        self.quotas = random.Random(f"quotas-{self.scenario.seed}")
        self.created = random.Random(f"created-{self.scenario.seed}")
        self.capped = random.Random(f"capped-{self.scenario.seed}")
        self.backoff = random.Random(f"backoff-{self.scenario.seed}")

    # -- helpers ---------------------------------------------------------------
    @property
    def rv(self) -> RMView | None:
        return self.world.shim.rm(self.rm_id)

    def new_id(self, prefix: str) -> str:
        self.next_id += 1
        return f"{prefix}{self.next_id}"

    def config_text(self) -> str:
        """The scenario's configuration with the current quota factor and removals."""
        if self.factor == 1.0 and not self.removed and not self.quota_delay \
                and not self.quota_switch and not self.priorities:
            return self.scenario.shape.text
        return json.dumps(self.config_data())

    def config_data(self) -> dict[str, Any]:
        """The configuration as it stands now, as plain data (quantities in core units)."""
        data = copy.deepcopy(_shape_data(self.scenario.shape.text))
        _transform(data, self.factor, self.removed)
        if self.priorities:
            for (partition, path), queue in configured_queues(data):
                props = self.priorities.get((partition, path))
                if props is not None:
                    kept = {k: v for k, v in queue.get("properties", {}).items()
                            if k not in PRIORITY_PROPERTIES}
                    queue["properties"] = {**kept, **props}
        for p in data["partitions"]:
            if self.quota_switch:
                p.setdefault("preemption", {})["quotapreemptionenabled"] = True
            if self.quota_delay:
                root = p["queues"][0]
                root["properties"] = {**root.get("properties", {}),
                                      "quota.preemption.delay": self.quota_delay}
        return data

    def partitions(self) -> list[str]:
        return sorted(model.read(self.scenario.shape.text).partitions)

    def pick(self, items: list[Any]) -> Any:
        return items[self.rng.randrange(len(items))] if items else None

    def _speaking(self) -> str:
        """The dialect of the RM's registration as the shim knows it: a registration the
        core took (a new view) speaks what was drawn for it; a refused one changes nothing."""
        rv = self.rv
        if rv is not self._heard:
            self._heard = rv
            self.speaks = self.drawn
        return self.speaks

    def say(self, step: Step) -> Iterator[Step]:
        """``step`` as the RM's dialect says it (today's: ``invariants/modelshim/speaking.py``)."""
        if step.call == "register_resource_manager" or self._speaking() != bridge.TODAY:
            yield step
            return
        yield from speaking.speak(step, self.rv, self.speech)

    def steps(self) -> Iterator[Step]:
        """The case's steps: register, rules drawn by weight among the enabled ones, then
        maybe the finale (``finale.py``)."""
        for step in self._said(register(self)):
            yield step
        enabled = [RULES[n] for n in sorted(self.scenario.enabled)]
        factors = dict(self.scenario.weights)
        weights = [r.weight * factors.get(r.name, 1.0) for r in enabled]
        produced = 0
        misses = 0
        while produced < self.scenario.length and misses < 50:
            chosen = self.rng.choices(enabled, weights)[0]
            self.current = chosen.name
            got = False
            for step in self._said(chosen.fn(self)):
                got = True
                produced += 1
                yield step
            self.counts[chosen.name] = self.counts.get(chosen.name, 0) + int(got)
            misses = 0 if got else misses + 1
        self.current = "finale"
        yield from self._said(ENDINGS[0](self))

    def _said(self, steps: Iterable[Step]) -> Iterator[Step]:
        for step in steps:
            yield from self.say(step)

    def request(self, call: str, request: Any, **extra: Any) -> Step:
        return Step(call, request=request, extra=extra)


@functools.lru_cache(maxsize=64)
def _shape_data(text: str) -> dict[str, Any]:
    """A drawn configuration as plain data, parsed once per text (callers copy it)."""
    return parse_config(text).model_dump(mode="python", exclude_defaults=True)


def removal_prefix(partition: str) -> str:
    """How ``Gen.removed`` names a queue of ``partition``: bare in the default partition,
    ``name:path`` in another."""
    return "" if partition == "default" else partition + ":"


PRIORITY_PROPERTIES = ("priority.offset", "priority.policy", "application.sort.priority")
"""The queue properties a retuning reload redraws (``configs.priority_properties``)."""


def configured_queues(data: Any) -> list[tuple[tuple[str, str], dict[str, Any]]]:
    """Every queue of a configuration's data below root, by (partition, path), in order."""
    out: list[tuple[tuple[str, str], dict[str, Any]]] = []

    def walk(partition: str, queue: dict[str, Any], path: str) -> None:
        for child in queue.get("queues", []) or []:
            here = f"{path}.{child['name']}"
            out.append(((partition, here), child))
            walk(partition, child, here)

    for p in data["partitions"]:
        for root in p.get("queues", []) or []:
            walk(p.get("name", "default"), root, root["name"])
    return out


def _transform(data: Any, factor: float, removed: set[str]) -> None:
    """Scale every memory quantity by ``factor`` (>= 1) and drop removed queues/partitions."""
    if removed:
        data["partitions"] = [p for p in data["partitions"] if p.get("name", "default")
                              not in removed]
        for p in data["partitions"]:
            p["queues"] = _prune(p["queues"], "", removal_prefix(p.get("name", "default")),
                                 removed)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("max", "guaranteed", "maxresources") and isinstance(value, dict):
                    for name in list(value):
                        if name == "memory":
                            value[name] = max(1, int(value[name] * factor))
                        elif name == "vcore":
                            value[name] = f"{value[name]}m"  # parsed as milli-cores
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)


def _prune(queues: list[Any], prefix: str, partition: str, removed: set[str]) -> list[Any]:
    kept = []
    for q in queues:
        path = f"{prefix}.{q['name']}" if prefix else q["name"]
        if partition + path in removed:
            continue
        if q.get("queues"):
            q["queues"] = _prune(q["queues"], path, partition, removed)
        kept.append(q)
    return kept




TODAY_SHARE = 0.25
"""How often a registration speaks today's SI; half of those fix it at registration
(``dialect="today"``), the others let the RM's first request decide."""


def register(g: Gen) -> Iterator[Step]:
    """The registration every case starts with (the configuration as it stands now), in a
    dialect drawn from a stream of its own."""
    drawn = g.dialects.random()
    g.drawn = bridge.TODAY if drawn < TODAY_SHARE else "seed"
    extra = {bridge.REGISTERS: bridge.TODAY} if drawn < TODAY_SHARE / 2 else \
        {bridge.SPEAKS: bridge.TODAY} if drawn < TODAY_SHARE else {}
    yield g.request("register_resource_manager", si.RegisterResourceManagerRequest(
        rm_id=g.rm_id, policy_group="queues", config=g.config_text()), **extra)
