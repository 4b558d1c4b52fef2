"""Protocol checks: what the SI allows the core to say, given what the shim said.

A protocol check compares a message the core sends (or fails to send) with
what a shim knows: the requests it made, the answers it got, its own clock.
The model shim (``invariants/readings/shim.py``) runs them on every call; each is
registered here with its statement and seed section, like the invariants of
``invariants/properties/catalog.py``, so ``docs/invariants.md`` lists both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProtocolCheck:
    """A named rule about the traffic between shim and core."""

    name: str
    statement: str
    seed: str
    meaning: str


PROTOCOL: dict[str, ProtocolCheck] = {}


def check(name: str, statement: str, seed: str, meaning: str) -> str:
    """Register a protocol check and return its name (names are unique and stable)."""
    if name in PROTOCOL:
        raise ValueError(f"protocol check {name} registered twice")
    PROTOCOL[name] = ProtocolCheck(name, statement, seed, meaning)
    return name


S = "002 Spec"
G = "001 Gang design"

ANSWERED = check(
    "protocol.answered",
    "Every AddApplicationRequest is answered in the same call, accepted or rejected, "
    "exactly once; so is every node CREATE; a rejection always gives a reason.",
    f"003 'Operations to add/remove app' ('No matter if failed or not, send ... to RM'), "
    f"'node add'; {S} 'RejectedApplication', 'RejectedNode', 'RejectedAllocationAsk'",
    "A shim waits forever for an answer, or gets two contradicting answers.",
)
EXPECTED_REJECTION = check(
    "protocol.expected_rejection",
    "Requests the shim can tell are invalid are rejected: a node CREATE for a node that "
    "exists or for a partition the configuration no longer has, or whose recovered "
    "allocations repeat a uuid (or one the RM runs), an action on an unknown "
    "node, DRAIN_TO_SCHEDULABLE of a node that is not "
    "draining, an ask for an unknown or finished application or naming a partition that "
    "does not hold its application, an ask for no resources; "
    "and nothing else the shim sent in that call is rejected without a reason.",
    f"{S} 'Schedulable nodes registration and updates' ('rejected if the node exist "
    "already', 'fail if the node doesn't exist', 'If node is not in draining state, error "
    "will be thrown'); 003 'ask add' (sanity check), 'node add' (node sanity check), "
    "'Update and Remove partition'; 002 'Allocation of resources' (one UUID an allocation)",
    "The core accepted a request the interface says it must refuse, so its state and the "
    "shim's diverge.",
)
ADMISSION = check(
    "protocol.admission",
    "An application is accepted exactly when the checker's own reading of the "
    "configuration admits it (placement rules, an existing leaf, active queues, the "
    "submit or admin ACL of the leaf or an ancestor, gang style, and for a gang: no fair "
    "queue and a placeholderAsk within every max on the path, unless a shim recovering it "
    "with running pods forces it in with the force-create tag), and lands in the queue "
    "that reading names.",
    f"004 'Configurations & Semantics' (acls); {S} AddApplicationRequest.queueName; "
    f"{G} 'Total placeholder size', 'Handling queue with a FAIR sort policy'",
    "An application was let into a queue its user may not use or a gang the design says "
    "can never run, or a valid one was refused or put in the wrong queue.",
)
NO_EXCEPTION = check(
    "protocol.no_exception",
    "No request, and no schedule(), raises out of the API; only a configuration the core "
    "refuses raises (ConfigError), and a request from an RM that never registered "
    "(UnknownResourceManager, there is no callback to answer it).",
    "docs/shim-guide.md '10. Errors' (everything else is answered, never raised); "
    "003 'Allocations'",
    "The core broke on input a shim may send, or on its own state: the shim sees an "
    "exception and nobody knows what was decided.",
)
SCHEDULE_COUNT = check(
    "protocol.schedule_count",
    "schedule() returns the number of allocations it made, placeholders included: as many "
    "as the answers it sent carry as new allocations.",
    "docs/shim-guide.md '3. What each call answers' (schedule() returns the number of new "
    "allocations); 002 "
    "'AllocationResponse' (new allocations are sent to the RM)",
    "A shim that paces its calls by schedule()'s count (as the background loop does: it "
    "sleeps when nothing was made) waits while work is placed, or spins while none is.",
)
NO_CHANGE = check(
    "protocol.rejection_changes_nothing",
    "A request that is refused or ignored as a whole (bad input, a duplicate "
    "confirmation, a paused RM) leaves the core's state exactly as it was.",
    "docs/shim-guide.md '10. Errors' (a refusal changes nothing); 002 'Feedback from "
    "Scheduler'",
    "Bad input from one shim corrupted the core's state.",
)
ALLOCATION_MATCHES_ASK = check(
    "protocol.allocation_matches_ask",
    "Every new allocation is for an ask the shim sent and has not released, of a live "
    "application the shim added, with the ask's resource, placeholder flag, task "
    "group, priority and tags, in the ask's partition, and never more allocations of an "
    "ask than its maxAllocations.",
    f"{S} 'Allocation ask' (allocationKey, maxAllocations), 'Allocation of resources'; "
    f"{G} 'Allocation' (taskGroupName, placeholder); 004 'Scheduling Request remove'",
    "The core allocated something nobody asked for, too often, or for an ask the RM "
    "already withdrew.",
)
FITS_NODE = check(
    "protocol.allocation_fits_node",
    "Every new allocation is on a node the shim registered and did not drain or remove, "
    "and fits that node's schedulable resource minus occupied minus every allocation the "
    "shim knows on it, at the moment it is made; an ask tagged requiredNode is placed on "
    "that node only (a placeholder's replacement excepted: it goes where its placeholder "
    "was).",
    f"{S} NodeInfo (schedulableResource, occupiedResource, DRAIN_NODE 'Do not allocate new "
    "allocations on the node'); the requiredNode tag key (YuniKorn's DaemonSet pods)",
    "A pod was placed where there is no room, on a node being drained, or a DaemonSet pod "
    "on a node other than its own.",
)
QUOTA_ON_PATH = check(
    "protocol.quota_on_path",
    "A new allocation keeps every queue on its application's path within that queue's "
    "max for the types the allocation uses, counting the shim's own allocations; and an "
    "application that holds nothing yet only starts while every queue on the path has "
    "a maxapplications slot free. Max and maxapplications are the configuration's (a "
    "leaf a placement rule created: the childtemplate its parent handed down when it "
    "was created, the parent's own or inherited).",
    f"004 'Configurations & Semantics' (max-capacity); {G} 'Scheduling in queues with a "
    "quota set'; YuniKorn maxapplications",
    "A queue ran over its quota at some level of the path (a parent's max ignored, a "
    "stale usage), or more applications started than a queue allows.",
)
GANG_WAITS = check(
    "protocol.gang_waits",
    "No real allocation of a gang application is made while one of its placeholder asks "
    "is still pending, and a real ask of a task group takes one of that group's "
    "placeholders (released PLACEHOLDER_REPLACED and confirmed) whenever an unreleased "
    "placeholder large enough for it exists.",
    f"{G} 'Scheduler logic changes' ('AllocationAsks that do not have a placeholder flag "
    "set should be ignored', steps 1-3), 'The application cannot request real allocations "
    "until all placeholder asks are allocated'",
    "A real pod started before its gang was placed, or beside its placeholder instead of "
    "in its place.",
)
REPLACEMENT = check(
    "protocol.replacement",
    "After the shim confirms a PLACEHOLDER_REPLACED release, the real ask it was replaced "
    "for is allocated in the same call on the placeholder's node, or on another node only "
    "when the placeholder's node is gone, draining, reserved for another ask, refused by "
    "the RM's predicates or without room (when one request confirms several placeholders "
    "of a task group, by some pairing of them with the real allocations made: the SI does "
    "not name it); and a placeholder is only released PLACEHOLDER_REPLACED while a real "
    "ask of its task group that fits in it is pending.",
    f"{G} 'Scheduler logic changes' steps 2-5 ('allocated on the same node as the "
    "placeholder used'; 'On Failure: try to allocate on a different node')",
    "The real pod moved away from the room its placeholder held, or a placeholder was "
    "released for nothing.",
)
RELEASES = check(
    "protocol.core_releases",
    "A release the core starts names an allocation the shim runs that is not already "
    "being released, with a type the core may start (TIMEOUT, PLACEHOLDER_REPLACED; "
    "PREEMPTED_BY_SCHEDULER only with preemption), and a reason the shim can check: "
    "TIMEOUT of a real allocation at or after its execution timeout or when its gang "
    "fails; TIMEOUT of a placeholder at or after its application's placeholder timeout, "
    "when its application completes, or when a larger real ask of its group arrives.",
    f"{G} 'AllocationRelease Response and Request', 'TerminationType', 'Cleanup'; {S} "
    "AllocationAsk.executionTimeoutMilliSeconds",
    "The core killed a pod early, twice, or for a reason the design does not have.",
)
CONFIRMATIONS = check(
    "protocol.confirmations",
    "The RM's own releases (STOPPED_BY_RM) of allocations and asks are confirmed in the "
    "same call with the same type, once per object, when the partition they name holds "
    "them (else they are ignored, unconfirmed); the core never answers the RM's "
    "confirmation of a release it started; a node DECOMISSION and an application removal "
    "(naming the partition that holds the application) report every allocation they end "
    "as released.",
    f"{G} 'AllocationRelease Response and Request' ('A confirmation or response uses the "
    f"same TerminationType'; 'For releases initiated by the core no such confirmation "
    f"message can or must be sent'); {S} NodeInfo.DECOMISSION, RemoveApplicationRequest",
    "The shim never learns a release was processed, or processes a release twice.",
)
APP_STATES = check(
    "protocol.application_states",
    "The states reported for an application follow its lifecycle's edges one at a time, "
    "stamped with the time of the change, and the last one reported is the state the core "
    "holds; "
    "Running is reported only when it got a real allocation or a new ask while "
    "Completing; Completed only 30 s or more after Completing and Failed or Completed "
    "only once the shim holds nothing of it; after the placeholder timeout only a gang "
    "the shim submitted Hard goes Failing, and only a Soft one Resuming.",
    f"{G} 'Scheduler logic changes' (placeholders keep the application Accepted), "
    f"'Application completion', 'Cleanup'; {S} AddApplicationRequest.gangSchedulingStyle "
    "('hard (the application will fail after placeholder timeout) or soft (after the "
    "timeout the application will be scheduled as a normal application)'), "
    "UpdatedApplication.stateTransitionTimestamp",
    "The shim was told a story the lifecycle does not allow: a gang running on "
    "placeholders alone, an application finished while its pods still run.",
)
TIMERS = check(
    "protocol.timers",
    "Timers fire in the first schedule() at or after they are due: an allocation past "
    "its execution timeout is being released; a gang past its placeholder timeout (from "
    "its first placeholder) is Failing or Resuming, or, when it already runs, has its "
    "placeholders released; an application Completing for 30 s has its placeholders "
    "released; and when a gang times out, one call carries its state change and the "
    "TIMEOUT release of every placeholder and placeholder ask.",
    f"{G} 'Cleanup' ('The timeout must start at the time the first placeholder ask is "
    "allocated'; 'can be handled in a single UpdateResponse message'); Scheduler.schedule() "
    "(fires due timers)",
    "A timeout never fired, so resources a gang or a finished application held are never "
    "given back.",
)
WAITING = check(
    "protocol.waiting_for_room",
    "An ask is told FAILED 'waiting for cluster resources' once, in a schedule() call, "
    "and only while it waits for the cluster to grow: pending, once reported RESERVED or "
    "FAILED (a node search found no room), with no required node, not swapping in for a "
    "placeholder nor with a placeholder of its task group left to swap with, its "
    "application Accepted, Running or Completing and free to start, and one more repeat "
    "within every max of its queue path and its user's and group's limits. An ask found "
    "so at the end of schedule() calls a second apart has been told by the later one.",
    "YuniKorn scheduler.go inspectOutstandingRequests (once a second, SetScaleUpTriggered); "
    "objects/application.go getOutstandingRequests, canReplace",
    "A shim's cluster autoscaler never hears of an ask that needs a new node, hears of it "
    "twice, or scales up for one the queue's max or a limit keeps waiting anyway.",
)
RECOVERY = check(
    "protocol.recovery",
    "A node CREATE with existing allocations is all or nothing: when accepted, the core "
    "holds every reported allocation with its uuid, application, node, resource, "
    "placeholder flag and task group; when rejected, none of them; re-registering an RM "
    "first removes everything it owned.",
    f"{G} 'Application recovery'; {S} NodeInfo.existingAllocations; 004 'RM registration' "
    "('If RM already registered, remove old one, including everything belong to RM')",
    "Recovery lost, duplicated or mislabelled a running pod (a placeholder recovered as a "
    "real allocation can never be replaced).",
)
CONFIG_APPLIED = check(
    "protocol.config_applied",
    "After a registration or an accepted reload, every configured queue exists, is "
    "active, is a leaf or parent as configured, and has the configured max, guaranteed, "
    "maxapplications and effective sort policy; a refused configuration changes nothing; "
    "a queue a placement rule creates has what its parent's childtemplate and its "
    "configured ancestors give it, and its application's namespace tags (quota, "
    "guaranteed, max applications) when they read; a created queue is gone once no "
    "application the shim runs is in or below it; a queue a reload removed is Draining, "
    "leaves only in a scheduling call, and is gone by the first one 10 s after it "
    "emptied (the periodic cleanup).",
    "004 'Configurations & Semantics'; 003 'Update and Remove partition'; "
    "Scheduler.update_configuration(); YuniKorn childtemplate and dynamic queues, "
    "namespace quota tags (partition.go AddApplication), partition_manager.go cleanQueues",
    "A quota or policy the administrator set is not the one the core enforces, or a queue "
    "outlives what it was made or kept for.",
)
NODES = check(
    "protocol.nodes",
    "The nodes the core holds are exactly the nodes the RM registered and did not remove, "
    "with the schedulable and occupied resources and the drain state the RM last reported.",
    f"{S} 'Schedulable nodes registration and updates' (NodeInfo, ActionFromRM)",
    "The core schedules onto a node that is not there, or with a size the RM never gave.",
)
PAUSED = check(
    "protocol.paused",
    "While an RM is paused it receives no new allocation, nothing but events in a "
    "scheduling cycle (its timers do not fire), and its requests are refused; "
    "nothing but the refusal of its own requests reaches an RM that unregistered.",
    f"{S} 'Lifecycle of RM-Scheduler communication'",
    "The core kept deciding for an RM it can not talk to.",
)
MESSAGES = check(
    "protocol.messages",
    "Every event names its object and says something, with the clock's time; every "
    "container scheduling state is a known state for an ask the shim sent.",
    f"{S} 'Event Plugin' (EventRecord), 'Scheduler plugin' "
    "(UpdateContainerSchedulingStateRequest)",
    "A shim can not show the user what happened.",
)

# -- through the wire (``check --transport grpc``, ``invariants/modelshim/loopback.py``) ---
W = (f"{S} 'RPC Interface' (the Scheduler service's bidirectional streams), 'Why "
     "bi-directional gRPC'; docs/shim-guide.md '11. Over gRPC'")
WIRE_ANSWER_LOST = check(
    "wire.answer_lost",
    "Through the wire, every request a client sends on a stream reaches the core, and every "
    "message the core emits for an RM whose streams are open arrives at its client, within "
    "the wire's bound.",
    W,
    "A shim waits forever for an answer the core gave, or the core never heard a request "
    "the shim sent: the two no longer agree on what happened.",
)
WIRE_DELIVERED = check(
    "wire.delivered",
    "Each stream delivers exactly the messages the core emitted for it, in the core's "
    "order, each once, with the same content (events and scheduling states on the "
    "extension service's subscription).",
    W,
    "The server reordered, duplicated or altered an answer: the shim reads a decision the "
    "core did not make.",
)
WIRE_LIVE = check(
    "wire.live",
    "The server never ends a stream or refuses a call of a registered, running RM that "
    "reads its streams: only a new registration, an unregistration or the RM's own "
    "disconnection ends them.",
    W,
    "A shim that did everything right lost its connection and is paused.",
)
WIRE_PAUSED = check(
    "wire.paused",
    "An RM whose client closes its streams is paused in the core (connection_lost), as a "
    "dropped connection must.",
    f"{S} 'Lifecycle of RM-Scheduler communication' (connection loss: Paused); "
    "docs/shim-guide.md '11. Over gRPC'",
    "The core keeps deciding for an RM that can no longer hear it.",
)
WIRE_INDEPENDENT = check(
    "wire.independent",
    "An RM that stops reading its streams never holds up the core or another RM: the core "
    "runs its requests at once, and every other RM's answers keep arriving "
    "(wire.answer_lost), while its own wait for it on the server.",
    f"{W}; the Scheduler service serves several RMs ('RPC based ... multiple remote "
    "clusters')",
    "One slow shim stalls the scheduler for every cluster it serves.",
)
