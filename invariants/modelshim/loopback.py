"""The checker through the wire: a real ``serve`` on loopback between the model shim and the core.

``check --transport grpc`` builds each world's core behind a
``scheduler.rpc.Server`` on port 0 and sends the shim's requests through
``scheduler.rpc.Client``s, so every invariant and protocol rule also judges
what the server does with them (``docs/checker.md``, "Through the wire").

How a step runs:

- the world's ``Scheduler`` *instance* gets wrappers before the server is
  built (instance attributes; the core's code is untouched): its
  ``register_resource_manager`` hands the core a :class:`_Tee` around the
  callback the server's registry gives it, which records every message the
  core emits, in the core's decision order, and forwards it to the session;
  ``update_*`` count the requests the core has run;
- registrations, ``update_*``, reloads and unregistrations go through one
  client per RM (in the dialect the RM speaks); ``schedule()`` and the clock
  stay in process, for the wire has no call for them; ``connection_lost`` is
  the RM's client closing its streams, which the server must turn into a pause;
- a request for an RM whose streams are closed (paused, stopped, never
  registered) never reaches the core over the wire (the client refuses it,
  as the server would): it is run on the core in process, so the model shim
  judges the core's own refusal exactly as in process;
- after the step, a barrier: the core ran every request sent; then a marker goes
  through the server's session on every open stream, after the step's messages, and
  each must arrive (bounded: ``wire.answer_lost``): gRPC keeps order within a
  stream, so what arrived before it is all the step delivered;
  the tee's records are then fed to the model shim in the core's order, so
  the rules about decision order judge what they judge in process, and each
  stream's delivery is compared with what the core emitted for it
  (``wire.delivered``), and no stream of a reading RM ended (``wire.live``).

Verdicts do not depend on thread timing: the model shim sees the core's
order, and the wire's own checks compare complete, settled sequences.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Final

import grpc

from invariants.modelshim import bridge
from invariants.properties import protocol as P
from invariants.properties.catalog import Violation, WireFault
from scheduler import Scheduler, si
from scheduler.errors import ConfigError, UnknownResourceManager
from scheduler.rpc import Client, Server, ServerOptions
from scheduler.rpc.client import Disconnected
from scheduler.trace import Step

STREAM_OF: Final[dict[str, str]] = {
    "update_allocation": "allocation",
    "update_application": "application",
    "update_node": "node",
    "send_event": "events",
    "update_container_scheduling_state": "events",
}
"""The client stream each of the core's callback methods reaches (events and scheduling
states share the extension service's subscription)."""

UPDATES: Final = ("update_allocation", "update_application", "update_node")
BYSTANDER: Final = "wire-bystander"
"""The RM that never reads (``wire.independent``): registered beside the world's RMs, its
client's callback blocks on its first message, and it floods its application stream with
refusals; the core and the server must keep serving everyone else."""
FLOOD = (1, 100, 100)
"""The bystander's flood when it registers: requests, applications per request, length of
their ids; each application is for a partition that does not exist and is refused. The
default (15 kB of answers) is cheap and gRPC buffers it; a stalled transport, where the
server's writer for the bystander blocks, takes megabytes (``(8, 1, 1_000_000)``, some two
seconds), which ``tests/test_checker_wire.py`` sets for the broken server it hunts."""
MARK: Final = "wire-marker-"
"""The id a barrier's marker carries: one message per stream, sent through the server's
session after the core's messages of a step, so its arrival proves everything before it
on that stream arrived (gRPC keeps order within a stream). No rule draws such an id."""
_BYSTANDER_CONFIG: Final = "partitions:\n  - name: default\n    queues:\n      - name: root\n"
TIMEOUT: Final = 20.0
"""Seconds a barrier waits for the wire before an answer counts as lost (a loaded machine
with two cores shared by several runs stays far below it)."""


class _Registration:
    """One registration of one RM: what the core emitted for its streams and what arrived."""

    def __init__(self, rm_id: str, model: Any | None, client: Client) -> None:
        self.rm_id = rm_id
        self.model = model
        """The model shim's callback for the RM (fed after each step, in the core's order)."""
        self.client = client
        self.live = True
        """Its streams are open: what the core emits for them must arrive."""
        self.expected: dict[str, list[Any]] = {k: [] for k in set(STREAM_OF.values())}
        self.received: dict[str, list[Any]] = {k: [] for k in set(STREAM_OF.values())}
        self.marks: dict[str, int] = dict.fromkeys(self.expected, 0)
        """The last barrier marker each stream delivered."""
        self.tee: _Tee | None = None
        self.errors_seen = 0


class _Callback:
    """The SI callback's five methods, each handed to :meth:`_on` with its name."""

    def _on(self, method: str, message: Any) -> None:
        raise NotImplementedError

    def update_allocation(self, response: Any) -> None:
        self._on("update_allocation", response)

    def update_application(self, response: Any) -> None:
        self._on("update_application", response)

    def update_node(self, response: Any) -> None:
        self._on("update_node", response)

    def send_event(self, events: Any) -> None:
        self._on("send_event", events)

    def update_container_scheduling_state(self, request: Any) -> None:
        self._on("update_container_scheduling_state", request)


class _Tee(_Callback):
    """The callback the core holds: records each message, then hands it to the server's."""

    def __init__(self, wire: Wire, registration: _Registration | None, inner: Any) -> None:
        self._wire = wire
        self._reg = registration
        self._inner = inner
        if registration is not None and registration.model is not None \
                and callable(getattr(registration.model, "predicates", None)):
            self.predicates = self._predicates

    @property
    def wants_events(self) -> bool:
        """Always: the core builds every event it builds in process (the model shim reads
        them); whether a subscriber gets them is the server's business."""
        return True

    def _predicates(self, args: Any) -> bool:
        answer: bool = self._inner.predicates(args)
        return answer

    def mark(self, n: int) -> None:
        """Marker ``n`` on each stream, through the server's session (not the core's)."""
        ident = f"{MARK}{n}"
        inner = self._inner
        inner.update_allocation(si.AllocationResponse.model_construct(
            released=[si.AllocationRelease.model_construct(application_id=ident)]))
        inner.update_application(si.ApplicationResponse.model_construct(
            rejected=[si.RejectedApplication.model_construct(application_id=ident)]))
        inner.update_node(si.NodeResponse.model_construct(
            rejected=[si.RejectedNode.model_construct(node_id=ident)]))
        inner.send_event([si.EventRecord.model_construct(object_id=ident)])

    def _on(self, method: str, message: Any) -> None:
        reg = self._reg
        owed = reg is not None and reg.live and (
            STREAM_OF[method] != "events" or bool(getattr(self._inner, "wants_events", True)))
        self._wire.emitted(reg, method, message, owed)
        getattr(self._inner, method)(message)


class _Receiver(_Callback):
    """The callback a client holds: keeps what each stream delivered."""

    def __init__(self, wire: Wire, registration: _Registration) -> None:
        self._wire = wire
        self._reg = registration
        if callable(getattr(registration.model, "predicates", None)):
            self.predicates = self._predicates

    def _predicates(self, args: Any) -> bool:
        model = self._reg.model
        assert model is not None
        return bool(model.predicates(args))

    def _on(self, method: str, message: Any) -> None:
        self._wire.arrived(self._reg, STREAM_OF[method], message, _marker(message))


class _Deaf(_Callback):
    """The bystander's callback: it takes its first message and never returns (until the
    wire closes), so its client stops reading every stream."""

    def __init__(self, until: threading.Event) -> None:
        self._until = until

    def _on(self, method: str, message: Any) -> None:
        self._until.wait()


class Wire:
    """A world's core served on loopback, and the clients of its RMs."""

    def __init__(self, api: Scheduler, timeout: float | None = None,
                 bystander: bool = True) -> None:
        self.api = api
        self.timeout = TIMEOUT if timeout is None else timeout
        self._cond = threading.Condition()
        self._sent: Counter[str] = Counter()
        self._ran: Counter[str] = Counter()
        self._paused: Counter[str] = Counter()
        self._crash: BaseException | None = None
        self._records: list[tuple[_Registration | None, str, Any]] = []
        self._links: dict[str, _Registration] = {}
        self._pending: tuple[_Registration, str | None] | None = None
        self._retired: list[Client] = []
        self._marker = 0
        self.violations: list[Violation] = []
        self._wrap(api)
        self.server = Server(api, ServerOptions(port=0, predicate_timeout=self.timeout,
                                                stalled_grace=self.timeout), background=False)
        self.target = f"127.0.0.1:{self.server.start()}"
        self._deaf = threading.Event()
        self._bystander: _Registration | None = None
        if bystander:
            self._start_bystander()

    # ------------------------------------------------------------ the core's side
    def _wrap(self, api: Scheduler) -> None:
        register = api.register_resource_manager
        lost = api.connection_lost

        def registered(request: Any, callback: Any, dialect: Any = None) -> Any:
            pending, self._pending = self._pending, None
            reg, fixed = pending if pending is not None else (None, None)
            dialect = dialect if dialect is not None else fixed
            tee = _Tee(self, reg, callback)
            if reg is not None:
                reg.tee = tee
            if dialect is None:
                return register(request, tee)
            return register(request, tee, dialect=dialect)

        def paused(rm_id: str) -> None:
            lost(rm_id)
            with self._cond:
                self._paused[rm_id] += 1
                self._cond.notify_all()

        api.register_resource_manager = registered  # type: ignore[method-assign]
        api.connection_lost = paused  # type: ignore[method-assign]
        for name in UPDATES:
            setattr(api, name, self._counted(getattr(api, name)))

    def _counted(self, method: Callable[[Any], None]) -> Callable[[Any], None]:
        def counted(request: Any) -> None:
            try:
                method(request)
            except BaseException as exc:
                with self._cond:
                    if self._crash is None:
                        self._crash = exc
                raise
            finally:
                with self._cond:
                    self._ran[request.rm_id] += 1
                    self._cond.notify_all()
        return counted

    def emitted(self, reg: _Registration | None, method: str, message: Any, owed: bool) -> None:
        """A message the core emitted (inside its delivery, in its decision order)."""
        with self._cond:
            self._records.append((reg, method, message))
            if owed and reg is not None:
                reg.expected[STREAM_OF[method]].append(message)

    def arrived(self, reg: _Registration, stream: str, message: Any, mark: int | None) -> None:
        """A message a client's stream delivered (on the client's thread)."""
        with self._cond:
            if mark is None:
                reg.received[stream].append(message)
            else:
                reg.marks[stream] = mark
            self._cond.notify_all()

    # ------------------------------------------------------------ the bystander
    def _start_bystander(self) -> None:
        client = Client(self.target, timeout=self.timeout)
        reg = self._bystander = _Registration(BYSTANDER, None, client)
        reg.live = False
        self._pending = (reg, None)
        try:
            client.register_resource_manager(si.RegisterResourceManagerRequest(
                rm_id=BYSTANDER, policy_group="queues", config=_BYSTANDER_CONFIG),
                _Deaf(self._deaf))
        finally:
            self._pending = None
        requests, apps, length = FLOOD
        for r in range(requests):
            self._poke(apps, f"flood-{r}-", length)

    def _poke(self, apps: int, prefix: str, length: int = 0) -> None:
        assert self._bystander is not None
        with self._cond:
            self._sent[BYSTANDER] += 1
        self._bystander.client.update_application(si.ApplicationRequest(
            rm_id=BYSTANDER, new=[si.AddApplicationRequest(
                application_id=f"{prefix}{i:04}-" + "x" * length, queue_name="root.a",
                partition_name="nowhere", ugi=si.UserGroupInformation(user="deaf"))
                for i in range(apps)]))

    def _bystander_ran(self) -> bool:
        return self._ran[BYSTANDER] >= self._sent[BYSTANDER]

    def before(self) -> Violation | None:
        """Before a step: the bystander, which has not read a message since it registered,
        sends one more request; the core must have run it, and its flood, at once
        (``wire.independent``). A violation ends the case: a core that waits on a deaf RM
        would hold up the step too."""
        if self._bystander is None:
            return None
        self._poke(1, "again-")
        if self._wait(self._bystander_ran):
            return None
        with self._cond:
            waiting = self._sent[BYSTANDER] - self._ran[BYSTANDER]
        return Violation(
            P.WIRE_INDEPENDENT, f"resource manager {BYSTANDER}",
            f"{waiting} request(s) of an RM that stopped reading its streams were not run by "
            f"the core within {self.timeout:g}s: serving them waits on its reading")

    # ------------------------------------------------------------ a step
    def execute(self, step: Step, shim: Any, direct: Callable[[Step], None]) -> None:
        """Run ``step`` through the wire (``direct`` runs it in process), wait for the wire to
        settle, then feed the model shim what the core emitted, in the core's order.

        Raises what the in-process call would (``ConfigError``, ``UnknownResourceManager``,
        the core's own exception) and :class:`WireFault` for a call the server ended.
        """
        refused: BaseException | None = None
        try:
            self._send(step, shim, direct)
        except (ConfigError, UnknownResourceManager) as exc:
            refused = exc
        except BaseException:
            self._crash = None
            raise
        self._settle(step)
        crash, self._crash = self._crash, None
        self._feed()
        if crash is not None:
            raise crash
        if refused is not None:
            raise refused

    def _send(self, step: Step, shim: Any, direct: Callable[[Step], None]) -> None:
        call = step.call
        rm_id = step.rm_id or getattr(step.request, "rm_id", "")
        link = self._links.get(rm_id)
        live = link is not None and link.live
        if call == "register_resource_manager":
            self._register(step, shim)
        elif call in UPDATES:
            with self._cond:
                self._sent[rm_id] += 1
            if not live or _bare(step.request):
                direct(step)
                return
            assert link is not None
            try:
                getattr(link.client, call)(step.request)
            except Disconnected:
                direct(step)
        elif call == "update_configuration" and live:
            assert link is not None
            self._unary(lambda: link.client.update_configuration(step.request))
        elif call == "unregister_resource_manager" and live:
            assert link is not None
            link.live = False
            self._unary(lambda: link.client.unregister_resource_manager(rm_id))
            self._close(rm_id)
        elif call == "connection_lost" and live:
            assert link is not None
            link.live = False
            with self._cond:
                before = self._paused[rm_id]
            self._close(rm_id)
            if not self._wait(lambda: self._paused[rm_id] > before):
                raise WireFault(Violation(
                    P.WIRE_PAUSED, f"resource manager {rm_id}",
                    f"its client closed every stream, and the core was not told "
                    f"connection_lost within {self.timeout:g}s"))
        else:
            direct(step)

    def _unary(self, call: Callable[[], None]) -> None:
        try:
            call()
        except grpc.RpcError as error:
            if self._crash is not None:
                raise self._crash from None
            raise WireFault(Violation(
                P.WIRE_LIVE, "unary call", f"the server ended a call of a registered, "
                f"reading RM with {error.code()}: {error.details()}")) from None

    def _register(self, step: Step, shim: Any) -> None:
        request = step.request
        rm_id = request.rm_id
        fixed = step.extra.get(bridge.REGISTERS)
        speaks = "today" if (fixed or step.extra.get(bridge.SPEAKS)) == bridge.TODAY \
            else "seed"
        old = self._links.get(rm_id)
        reuse = old is not None and old.live and old.client.dialect == speaks
        client = old.client if reuse and old is not None else Client(
            self.target, events=True, timeout=self.timeout, dialect=speaks)
        reg = _Registration(rm_id, shim.callback(rm_id), client)
        was_live = old is not None and old.live
        if old is not None:
            old.live = False
        self._pending = (reg, fixed)
        try:
            client.register_resource_manager(request, _Receiver(self, reg))
        except ConfigError:
            if old is not None:
                old.live = was_live
            if not reuse:
                client.close()
            raise
        except grpc.RpcError as error:
            if old is not None:
                old.live = was_live
            if self._crash is not None:
                raise self._crash from None
            raise WireFault(Violation(
                P.WIRE_LIVE, f"resource manager {rm_id}",
                f"the server refused its registration with {error.code()}: "
                f"{error.details()}")) from None
        finally:
            self._pending = None
        if old is not None and not reuse and old.client is not client:
            self._retired.append(old.client)
        reg.errors_seen = len(client.errors)
        self._links[rm_id] = reg

    def _close(self, rm_id: str) -> None:
        reg = self._links.get(rm_id)
        if reg is not None:
            reg.live = False
            reg.client.close()

    def _wait(self, done: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    # ------------------------------------------------------------ after a step
    def _ran_all(self) -> bool:
        return all(self._ran[rm] >= sent for rm, sent in self._sent.items() if rm != BYSTANDER)

    def _marked(self, n: int) -> bool:
        return all(mark >= n for reg in self._links.values() if reg.live and reg.tee is not None
                   for mark in reg.marks.values())

    def _settle(self, step: Step) -> None:
        """The barrier (the core ran every request; then a marker after the step's messages on
        every open stream, and each one's arrival), then the wire's own checks."""
        self._wait(self._ran_all)
        self._marker += 1
        n = self._marker
        for reg in self._links.values():
            if reg.live and reg.tee is not None:
                reg.tee.mark(n)
        self._wait(lambda: self._marked(n))
        with self._cond:
            for rm_id, sent in sorted(self._sent.items()):
                if self._ran[rm_id] < sent and rm_id != BYSTANDER:
                    self.violations.append(Violation(
                        P.WIRE_ANSWER_LOST, f"resource manager {rm_id}",
                        f"{sent - self._ran[rm_id]} request(s) sent over the wire never "
                        f"reached the core within {self.timeout:g}s"))
                    self._ran[rm_id] = sent
            for rm_id, reg in sorted(self._links.items()):
                if not reg.live:
                    continue
                self._compare(reg, n)
                errors = reg.client.errors[reg.errors_seen:]
                reg.errors_seen = len(reg.client.errors)
                for _, code, details in errors:
                    self.violations.append(Violation(
                        P.WIRE_LIVE, f"resource manager {rm_id}",
                        f"the server ended a stream of a registered RM that reads: "
                        f"{code}: {details}"))

    def _compare(self, reg: _Registration, n: int) -> None:
        """Each stream's delivery up to marker ``n`` against what the core emitted for it."""
        for stream in sorted(reg.expected):
            owed, got = reg.expected[stream], reg.received[stream]
            for i, (want, have) in enumerate(zip(owed, got, strict=False)):
                if not _same(want, have):
                    self.violations.append(Violation(
                        P.WIRE_DELIVERED, f"resource manager {reg.rm_id}, {stream} stream",
                        f"message {i + 1} of the step arrived as {_short(have)}; the core "
                        f"emitted {_short(want)}"))
                    break
            if len(got) > len(owed):
                self.violations.append(Violation(
                    P.WIRE_DELIVERED, f"resource manager {reg.rm_id}, {stream} stream",
                    f"{len(got) - len(owed)} message(s) more arrived than the core emitted "
                    f"(the first extra: {_short(got[len(owed)])})"))
            elif len(got) < len(owed):
                self.violations.append(Violation(
                    P.WIRE_ANSWER_LOST, f"resource manager {reg.rm_id}, {stream} stream",
                    f"{len(owed) - len(got)} of the {len(owed)} message(s) the core emitted "
                    f"did not arrive before the barrier's marker (the first: "
                    f"{_short(owed[len(got)])})"))
            elif reg.marks[stream] < n:
                self.violations.append(Violation(
                    P.WIRE_ANSWER_LOST, f"resource manager {reg.rm_id}, {stream} stream",
                    f"the barrier's marker, sent after the step's messages, did not arrive "
                    f"within {self.timeout:g}s"))
            owed.clear()
            got.clear()

    def _feed(self) -> None:
        """The core's messages to the model shim, in the core's order (as in process)."""
        with self._cond:
            records, self._records = self._records, []
        for reg, method, message in records:
            if reg is not None and reg.model is not None:
                getattr(reg.model, method)(message)

    def close(self) -> None:
        """Stop the server, then every client.

        The server first: it ends every session at once, which frees a core delivery a
        broken server holds (a client closing first would make the server pause its RM,
        and the pause would wait for that delivery)."""
        self._deaf.set()
        self.server.stop(grace=0)
        clients = [reg.client for reg in self._links.values()] + self._retired
        if self._bystander is not None:
            clients.append(self._bystander.client)
        for reg in self._links.values():
            reg.live = False
        for client in clients:
            client.close()
        self._links.clear()
        self._retired.clear()


def _bare(request: Any) -> bool:
    """A request with nothing but its RM's id on the wire: the server reads it as a stream's
    greeting and never passes it on (``scheduler_service``), so the core's in-process answer
    to it is the one to judge."""
    return not set(request.model_dump(exclude_defaults=True)) - {"rm_id"}


def _marker(message: Any) -> int | None:
    """The number of a barrier marker, or None for any other message."""
    if isinstance(message, list):
        ident = message[0].object_id if len(message) == 1 else ""
    else:
        items: list[Any] = getattr(message, "released", None) \
            or getattr(message, "rejected", None) or []
        first = items[0] if len(items) == 1 else None
        ident = (getattr(first, "application_id", "") or getattr(first, "node_id", "")) \
            if first is not None else ""
    if not ident.startswith(MARK):
        return None
    return int(ident[len(MARK):])


def _same(want: Any, have: Any) -> bool:
    """The message a stream delivered is the one the core emitted (as the RM's dialect reads
    it: the wire carries values, not Python objects)."""
    return bool(_plain(want) == _plain(have))


def _plain(message: Any) -> Any:
    if isinstance(message, list):
        return [_plain(m) for m in message]
    return message.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def _short(message: Any) -> str:
    text = str(_plain(message))
    return text if len(text) <= 200 else text[:197] + "..."


__all__ = ["TIMEOUT", "Wire", "WireFault"]
