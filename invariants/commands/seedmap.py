"""The map from the design's normative statements to what checks each one.

Every rule the seeds state is listed with the invariants, protocol checks and
``sometimes`` goals that check it, or with the reason it can not be checked.
``docs/invariants.md`` publishes the table; a test keeps every name in it real
and every check of the registries on it.

Seeds: ``001`` gang scheduling design, ``002`` scheduler interface spec,
``003`` cache removal design, ``004`` scheduler core design; their URLs (and
the commits they are cited at) are in ``statemachines/sources.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """One normative statement: where it is, what it says, and what checks it."""

    seed: str
    section: str
    statement: str
    checks: tuple[str, ...] = ()
    why_not: str = ""


E = Entry
Y = "YuniKorn"
G = "001"
S = "002"
C = "003"
D = "004"

MAP: tuple[Entry, ...] = (
    # -- 001 gang scheduling ----------------------------------------------------
    E(G, "Generic flow", "Placeholder asks are scheduled like any ask; every allocation, "
      "placeholders included, is communicated to the shim.",
      ("shim.view_agrees", "protocol.allocation_matches_ask", "gang.placeholders_counted")),
    E(G, "Total placeholder size", "A gang whose placeholderAsk is larger than the quota of "
      "its queue (of any queue on the path) is rejected.",
      ("gang.admission", "protocol.admission")),
    E(G, "Handling queue with a FAIR sort policy", "A gang submitted to a queue that sorts "
      "applications fair is rejected.", ("gang.admission", "protocol.admission")),
    E(G, "Handling queue with a FAIR sort policy", "A stateaware queue processes one New "
      "application at a time: one not yet started is offered resources only while no other "
      "application of the queue is starting, and only the first of them in fifo order.",
      ("scheduling.order", "sorting.stateaware_held"),
      "The seed names FIFO and StateAware alike; like YuniKorn only stateaware holds the "
      "others back (docs/design-notes.md 'Scheduling'). Judged from each application's state "
      "when the call started and what it held just before the allocation."),
    E(G, "Scheduling in queues with a quota set", "Scheduling of a gang should not start "
      "until the queue has room for its whole placeholderAsk.", (),
      "Not implemented, like YuniKorn: placeholders are placed one by one as room allows "
      "(docs/design-notes.md); the seed's first phase assumes the quota can always be "
      "reached by scaling up."),
    E(G, "Scheduling in queues with a quota set", "Other applications in the queue keep "
      "being scheduled while a gang waits.", ("scheduling.maximal",)),
    E(G, "Scheduler logic changes", "A placeholder allocation does not move the application "
      "out of Accepted; only a real allocation makes it Running.",
      ("protocol.application_states", "application.state_agrees")),
    E(G, "Scheduler logic changes", "Real asks are ignored while placeholder asks of the "
      "application are pending (the application can not request real allocations until all "
      "placeholder asks are allocated).",
      ("gang.accepted_waits_for_placeholders", "protocol.gang_waits",
       "reservations.valid")),
    E(G, "Scheduler logic changes", "The core must not assume one task group per "
      "application.", ("protocol.gang_waits", "protocol.replacement"),
      "Exercised: the checker's gangs have one or two task groups."),
    E(G, "Scheduler logic changes, step 1", "A real ask of a task group takes an unreleased "
      "placeholder of that group; with none it is scheduled normally.",
      ("protocol.gang_waits", "gang.replaced_on_same_node")),
    E(G, "Scheduler logic changes, step 1", "A placeholder smaller than its real ask can "
      "never be swapped; it is released (TIMEOUT, as YuniKorn) and the next one tried.",
      ("protocol.core_releases", "gang.incompatible_placeholder")),
    E(G, "Scheduler logic changes, step 2", "The chosen placeholder is marked released and "
      "the shim is asked to release it (PLACEHOLDER_REPLACED); nothing is released in the "
      "core yet.", ("gang.release_once", "protocol.replacement", "protocol.core_releases",
                    "gang.placeholders_counted")),
    E(G, "Scheduler logic changes, step 3", "The real ask is parked until the shim confirms "
      "the placeholder's release.", ("gang.release_once", "gang.replacement_after_confirmation")),
    E(G, "Scheduler logic changes, steps 4-5", "After the confirmation the real ask is "
      "allocated on the placeholder's node, in the same update; if it can not be, on another "
      "node; else it stays pending.",
      ("protocol.replacement", "gang.replacement_after_confirmation",
       "gang.replaced_on_same_node", "gang.replaced_on_other_node",
       "gang.fallback_beside_confirmed_placeholder")),
    E(G, "Scheduler logic changes, step 5", "The placeholder's removal and the real "
      "allocation are one update to application, queue and node.",
      ("accounting.application", "accounting.queue", "accounting.node")),
    E(G, "Definition", "An application with no pending asks and no real allocations waits "
      "(Completing).", ("application.state_agrees", "protocol.application_states")),
    E(G, "Definition", "An application completes after it has waited for the completing "
      "timeout.", ("protocol.application_states", "protocol.timers", "app.completed")),
    E(G, "Cleanup", "Placeholders are not active allocations; placeholder asks are pending "
      "asks.", ("application.state_agrees",)),
    E(G, "Cleanup", "New asks move a waiting application back to Running.",
      ("protocol.application_states",)),
    E(G, "Cleanup", "Leaving the waiting state for Completed needs no (placeholder) "
      "allocations or asks at all.", ("gang.clean_exit", "protocol.application_states",
                                      "application.state_agrees")),
    E(G, "Placeholder asks pending", "The placeholder timeout starts when the first "
      "placeholder is allocated.", ("protocol.core_releases", "protocol.timers",
                                    "protocol.application_states")),
    E(G, "Placeholder asks pending", "When it fires with placeholder asks pending, the "
      "application is killed (Hard: Failing, then Failed) and every placeholder and "
      "placeholder ask is released with TIMEOUT in one response.",
      ("protocol.timers", "gang.hard_failed", "gang.failed_while_running")),
    E(G, "Placeholder asks pending", "The killed state is reached only once every "
      "placeholder is released; the application then leaves its queue.",
      ("gang.clean_exit", "protocol.application_states", "application.state_agrees")),
    E(G, "Cleanup", "An application whose placeholders are all allocated but whose real pods "
      "never come does not hold them forever (read literally, the timeout acts only while "
      "placeholder asks are pending and such a gang stays Accepted: docs/design-notes.md "
      "finding 1).", ("liveness.applications_settle", "liveness.placeholders_time_out",
                      "protocol.timers")),
    E(G, "Placeholder timeout", "No placeholder outlives its application's placeholder "
      "timeout: pending ones are released when it fires, allocated leftovers too (or when "
      "the application completes).", ("liveness.placeholders_time_out", "protocol.timers")),
    E(G, "Interface changes (gangSchedulingStyle)", "Soft: after the timeout the "
      "application is scheduled as a normal application.",
      ("protocol.application_states", "gang.soft_resumed")),
    E(G, "Allocated placeholders", "Leftover placeholders are released by the core (TIMEOUT) "
      "when the application completes, and it is Completed once they are confirmed.",
      ("protocol.timers", "gang.clean_exit", "gang.completed_after_leftover_placeholders")),
    E(G, "Allocated placeholders", "A completed application does not stop a new "
      "application with the same id.", ("protocol.admission",)),
    E(G, "Application completion", "Finished applications are cleaned up, so memory and "
      "queues do not grow in long-running deployments (after a retention, as YuniKorn).",
      ("protocol.timers", "app.expired")),
    E(G, "Application recovery", "Recovered placeholders keep taskGroupName and the "
      "placeholder flag; the core generates the ask a recovered allocation came from.",
      ("protocol.recovery", "gang.recovered_placeholder", "accounting.application")),
    E(G, "AllocationAsk", "The placeholder flag is ignored without a taskGroupName.",
      ("protocol.allocation_matches_ask",)),
    E(G, "AllocationRelease Response and Request", "A release the shim starts is confirmed "
      "by the core with the same TerminationType; the core never confirms a confirmation.",
      ("protocol.confirmations",)),
    E(G, "AllocationRelease Response and Request", "A release the core starts is confirmed by "
      "the shim; until then the allocation is released and may not be released again.",
      ("gang.release_once", "protocol.core_releases", "shim.view_agrees")),
    E(G, "TerminationType", "TIMEOUT, PREEMPTED_BY_SCHEDULER and PLACEHOLDER_REPLACED are "
      "started by the core, STOPPED_BY_RM by the shim.",
      ("protocol.core_releases", "protocol.confirmations")),
    E(G, "Scheduler storage object changes", "An application tracks its placeholder "
      "allocations apart from its real ones.", ("accounting.application",
                                                "gang.placeholders_within_ask")),
    E(G, "Queue & Node", "Placeholders count on queue and node like real allocations.",
      ("gang.placeholders_counted", "accounting.queue", "accounting.node",
       "protocol.quota_on_path")),
    # -- 002 scheduler interface -----------------------------------------------
    E(S, "Lifecycle of RM-Scheduler communication", "register: Running; connection loss: "
      "Paused; timeout: Stopped; voluntary shutdown: Stopped.",
      ("lifecycle.legal", "protocol.paused", "protocol.timers", "rm.resynced_after_pause")),
    E(S, "RPC Interface", "Over the Scheduler service's bidirectional streams the RM hears "
      "every answer the core decided for it, on its own stream, in the core's order, once; "
      "a registered RM that reads is never cut off; a dropped connection pauses it.",
      ("wire.answer_lost", "wire.delivered", "wire.live", "wire.paused", "wire.independent"),
      "Judged by `check --transport grpc` only: a real server on loopback between the model "
      "shim and the core, beside an RM that never reads (docs/checker.md 'Through the "
      "wire')."),
    E(S, "RM register with scheduler", "Registering a known RM id cleans up everything it "
      "had; the RM then reports its full state.", ("protocol.recovery",)),
    E(S, "AddApplicationRequest.queueName", "The scheduler places the application into a "
      "queue according to policy, taking the requested queue into account (placement "
      "rules, which may create the queue).", ("protocol.admission",
                                              "queue.created_by_placement")),
    E(S, "RM and scheduler updates", "Applications must be added before asks for them; "
      "removing an application removes its asks and allocations.",
      ("protocol.expected_rejection", "protocol.confirmations", "references.allocation")),
    E(S, "Ask for more resources (Lifecycle of AllocationAsk)", "Initial -> Pending -> "
      "Allocated; Rejected by the scheduler or on the RM's request.", ("lifecycle.legal",)),
    E(S, "Lifecycle of Allocations", "Allocated -> Completed (stopped by RM), Preempted, "
      "Expired (timeout).", ("lifecycle.legal", "alloc.execution_timeout")),
    E(S, "Allocation ask", "An ask with a known allocationKey is an update; never more "
      "allocations than maxAllocations.", ("protocol.allocation_matches_ask",)),
    E(S, "Allocation ask", "executionTimeoutMilliSeconds: the allocation is terminated by the "
      "scheduler once it has run that long; 0 or negative never.",
      ("protocol.core_releases", "protocol.timers", "alloc.execution_timeout")),
    E(S, "Allocation ask", "priority, Originator, PreemptionPolicy.",
      ("priority.cached", "priority.order", "preemption.victims", "preemption.order"),
      "The seed only names the fields; YuniKorn's reading of them (priority across "
      "applications and queues, victims by originator and preemption policy) is in the "
      "YuniKorn rows below."),
    E(S, "AllocationRelease", "A release without a UUID releases every allocation of the "
      "application.", ("protocol.confirmations",)),
    E(S, "AllocationAskRelease", "An ask release without an allocationKey releases every ask "
      "of the application.", ("protocol.confirmations",)),
    E(S, "Schedulable nodes registration and updates", "A CREATE for an existing node is "
      "rejected; an update of an unknown node fails.", ("protocol.expected_rejection",
                                                        "protocol.nodes")),
    E(S, "State transition of node", "SCHEDULABLE <-> DRAINING -> REMOVED; "
      "DRAIN_TO_SCHEDULABLE of a node that is not draining is an error.",
      ("lifecycle.legal", "protocol.expected_rejection")),
    E(S, "NodeInfo.DRAIN_NODE", "No new allocations on a draining node.",
      ("protocol.allocation_fits_node", "reservations.valid")),
    E(S, "NodeInfo.DECOMISSION", "Allocations on the node stop at once and the node leaves "
      "the schedulable lists.", ("protocol.confirmations", "references.allocation",
                                 "node.decommissioned_with_allocations")),
    E(S, "NodeInfo.schedulableResource / occupiedResource", "Allocations fit the schedulable "
      "resource minus what other schedulers occupy.",
      ("protocol.allocation_fits_node", "capacity.node", "accounting.node")),
    E(S, "NodeInfo.existingAllocations", "Allocations on a registering node are recovered.",
      ("protocol.recovery", "shim.view_agrees")),
    E(S, "Allocation of resources", "An allocation has one UUID: a registration that "
      "recovers a UUID twice, or one already running, is rejected.",
      ("protocol.expected_rejection", "recovery.repeated_uuid_refused")),
    E(S, "Feedback from Scheduler", "A rejected ask, application or node is told with a "
      "human-readable reason.", ("protocol.answered",)),
    E(S, "Constant of spec: allocation tags (KeyRequiredNode)", "An ask tagged requiredNode "
      "(a DaemonSet pod) is placed on that node only.", ("protocol.allocation_fits_node",),
      "The seed names the tag key only; its meaning is YuniKorn's (docs/design-notes.md "
      "'Preemption'). A placeholder's replacement goes where its placeholder was."),
    E(S, "Scheduler plugin (Predicates)", "An allocation is made only on a node the RM's "
      "predicates accept.", ("protocol.allocation_fits_node", "scheduling.maximal")),
    E(S, "Scheduler plugin (UpdateContainerSchedulingState)", "Scheduling states name known "
      "asks and known states.", ("protocol.messages",)),
    E(S, "Event Plugin", "Events name their object and carry a message and a timestamp.",
      ("protocol.messages",)),
    E(S, "API Interface", "Requests that can not be honoured are answered, not raised.",
      ("protocol.no_exception", "protocol.rejection_changes_nothing")),
    E(S, "API Interface (AllocationResponse)", "What a scheduling pass decides reaches the RM "
      "as new allocations, and schedule() returns how many it made.",
      ("protocol.schedule_count",),
      "The seed's interface has no schedule call (YuniKorn schedules on its own); this "
      "project's API adds one (docs/shim-guide.md section 3), and a shim paces its loop by "
      "the count, as the background loop does."),
    E(G, "Scheduler logic changes, step 3", "Every release the core asks for ends once the "
      "shim confirms it; transient application states (Resuming, Failing, Completing) are "
      "left once the shim has answered and the timers have fired.",
      ("liveness.releases_end", "liveness.applications_settle")),
    E(S, "Scheduler Interfaces (RPC)", "The gRPC service and its streams.", (),
      "Checked by the RPC tests, not by the checker (which drives the in-process API)."),
    # -- 003 cache removal -------------------------------------------------------
    E(C, "Operations to add/remove app", "Every added application is answered, accepted or "
      "rejected.", ("protocol.answered", "protocol.admission")),
    E(C, "Operations to remove allocations and add or remove asks", "Ask sanity checks "
      "reject asks for unknown applications or partitions.", ("protocol.expected_rejection",)),
    E(C, "Operations to add, update or remove nodes", "A node registration is answered; "
      "removing a node removes its allocations and tells the RM.",
      ("protocol.answered", "protocol.confirmations")),
    E(C, "Update and Remove partition", "Partitions and queues removed from the "
      "configuration drain, then are removed once empty.",
      ("lifecycle.legal", "protocol.config_applied", "partition.removed_by_reload",
       "queue.removed_by_reload", "queue.parent_removed_by_reload",
       "queue.removed_empty_by_reload", "queue.cleaned_periodically")),
    E(C, "Allocations", "Allocation and accounting change in one step: no in-flight "
      "allocation, nothing counted twice or lost.",
      ("accounting.application", "accounting.queue", "accounting.node",
       "references.allocation", "shim.view_agrees")),
    E(C, "Locking", "One lock per object, a lock order.", (),
      "Python: one state lock for every call (docs/design-notes.md); threads are tested by "
      "tests/test_threads.py, not by the checker."),
    # -- 004 overall design -------------------------------------------------------
    E(D, "Implementation", "Sort queues, applications and nodes; skip requests that can not "
      "be satisfied and find the next.", ("scheduling.maximal", "quota.skipped"),
      "What the order is, is the entry below."),
    E(D, "Implementation", "Queues and applications are sorted by their resource usage, "
      "nodes by the partition's policy: each allocation goes to the first queue, "
      "application, ask and node in that order that can take it.",
      ("scheduling.order", "nodes.order", "sorting.fair_decided", "sorting.binpacking_decided"),
      "The policies' keys are YuniKorn's (docs/design-notes.md 'Scheduling'). Judged against "
      "the state rebuilt from after the cycle; where that is uncertain (reservations made or "
      "dropped in the cycle, queues the configuration no longer has) the core's choice is "
      "taken as right, and an order that priority alone decided is priority.order's."),
    E(D, "Implementation", "A request that fits an empty node and its queue's quota is "
      "eventually allocated (or rejected with a reason): nothing waits forever.",
      ("liveness.asks_served", "scheduling.maximal")),
    E(D, "Implementation", "The cycle comes to rest: with no new requests, a bounded number "
      "of cycles and timers leaves nothing to do.", ("liveness.quiescence",)),
    E(D, "Implementation", "Reserve room for requests that fragmentation blocks.",
      ("reservations.valid", "reservation.made", "reservation.honoured")),
    E(D, "Implementation", "An ordinary request reserves a node only after the reservation "
      "delay (the seed is silent on when; YuniKorn's tryNodes waits 2 s from the ask's "
      "creation).", ("reservations.delay", "reservation.waited")),
    E(D, "Implementation", "A node holds one ordinary request's reservation alone, or "
      "several required-node requests' (the seed is silent on sharing; YuniKorn be3bb48 "
      "node.go Reserve keeps a map).",
      ("reservations.shared", "reservations.required_held", "reservation.shared")),
    E(D, "Configurations & Semantics", "Queue hierarchy, ACLs and capacities of the "
      "configuration are what the core enforces; capacity is not set on root.",
      ("protocol.config_applied", "protocol.admission", "quota.queue_max",
       "protocol.quota_on_path", "config.reload_refused", "queue.namespace_quota",
       "queue.namespace_quota_unread")),
    E(D, "Configurations & Semantics", "maxapplications limits the applications running on "
      "every queue of the path.", ("protocol.quota_on_path", "quota.maxapplications_held")),
    E(D, "Flow of events (Job Remove, Scheduling Request remove)", "A removed application "
      "or ask gets no new allocation.", ("protocol.allocation_matches_ask",)),
    E(D, "RM registration", "A registering RM that is known is removed first, with "
      "everything it owned.", ("protocol.recovery",)),
    E(D, "Relations between Entities", "Each object belongs to one partition and one RM.",
      ("references.allocation",)),
    # -- added by the seed audit (docs/seed-audit.md) ------------------------------------
    E(S, "AddApplicationRequest.gangSchedulingStyle", "Hard: the application fails after the "
      "placeholder timeout; Soft: it is scheduled as a normal application (only a gang "
      "submitted Hard goes Failing, only a Soft one Resuming).",
      ("protocol.application_states", "gang.hard_failed", "gang.soft_resumed")),
    E(G, "Definition", "Placeholders are not active allocations: a Running application with "
      "nothing pending and only placeholders left waits (Completing), and an Accepted one "
      "with nothing pending and nothing allocated waits too.",
      ("application.state_agrees", "gang.running_waits_on_placeholders")),
    E(G, "Placeholder asks pending", "The placeholder timeout counts from the first "
      "placeholder allocated, even when others of the gang are allocated later.",
      ("protocol.timers", "gang.timeout_from_first_placeholder")),
    E(G, "Scheduler logic changes, steps 4-5", "A replacement whose placeholder's node was "
      "drained or removed before the shim confirmed goes to another schedulable node, or "
      "stays pending.", ("protocol.allocation_fits_node", "gang.replacement_node_lost")),
    E(C, "Partition Lock", "A node added, updated or removed changes the partition's total "
      "resource.", ("accounting.node",)),
    E(C, "Update and Remove partition", "A partition removed from the configuration takes no "
      "new node and no new application while it drains.",
      ("protocol.expected_rejection", "protocol.admission", "partition.removed_by_reload")),
    # -- YuniKorn's user and group limits (not in the seeds; docs/design-notes.md) -------
    E(Y, "User and group limits (ugm)", "Usage is tracked for the application's user and its "
      "tracked group on every queue of the path, placeholders included; the running "
      "applications of each are counted.", ("limits.accounting",)),
    E(Y, "User and group limits (ugm)", "The tracked group is resolved from the leaf up (the "
      "first named group of a queue's limits the user belongs to, else '*') and kept.",
      ("protocol.tracked_group",)),
    E(Y, "User and group limits (ugm)", "An ask that would take its user or group past "
      "maxresources on a queue of the path, or an application whose user or group runs "
      "maxapplications there, waits; a named user limit overrides '*' on its queue; a "
      "replacement and a recovered allocation are not checked.",
      ("protocol.user_limits", "scheduling.maximal")),
    E(Y, "User and group limits (ugm)", "Limits never reject and never release.",
      ("protocol.core_releases",),
      "Releases are checked; a rejection of an ask for a limit is not told apart from "
      "other rejections with a reason (protocol.expected_rejection accepts any reason)."),
    # -- YuniKorn's inspection of outstanding requests (docs/design-notes.md) ------------
    E(Y, "Outstanding requests (scheduler.go inspectOutstandingRequests)", "Once a second "
      "every ask a node search found no room for, within its queue's max and its user's "
      "and group's limits, with no required node and no placeholder to swap with, is told "
      "FAILED 'waiting for cluster resources' once; no other ask is.",
      ("protocol.waiting_for_room", "waiting.told")),
    # -- YuniKorn's priority scheduling (not in the seeds; docs/design-notes.md) ----------
    E(Y, "Priority scheduling", "An application's priority is the highest priority of its "
      "asks with pending repeats; a queue's is its applications' or children's highest plus "
      "its priority.offset (clamped to int32), or its offset alone under priority.policy "
      "fence, and the lowest int32 with nothing pending.", ("priority.cached",)),
    E(Y, "Priority scheduling", "With application.sort.priority enabled (the default), "
      "applications of a leaf and queues under a parent go by priority first.",
      ("priority.order", "priority.higher_first"),
      "Judged against the state rebuilt from after the cycle; where that is uncertain "
      "(reservations made or dropped in the cycle, applications that started in it, "
      "stateaware's choice) the core's choice is taken as right. With priority sorting "
      "disabled priority only breaks the policy's ties (scheduling.order)."),
    # -- YuniKorn's scheduling features the seeds are silent on ---------------------------
    E(Y, "Submission time", "An ask the core takes or an allocation it recovers whose "
      "creationTime tag is earlier than its application's submission moves the submission "
      "time back; fifo order reads it.", ("scheduling.order", "sorting.fifo_by_creation"),
      "The model shim keeps its own submission time from the tags it sent."),
    E(Y, "Application backoff", "Once application.unschedasks.backoff asks of one application "
      "found no node in one walk and another ask follows, the application is skipped for "
      "application.unschedasks.backoff.delay.",
      ("scheduling.backoff", "scheduling.backed_off", "scheduling.backoff_ended"),
      "That a backoff must begin is judged where it is certain: asks larger than any node, "
      "no max, limit, predicate, gang or stateaware on the way."),
    # -- YuniKorn's preemption (the seeds name only its SI fields; docs/design-notes.md) ----
    E(Y, "Preemption, laws 1, 4 and when it is attempted", "A general preemption is started "
      "once per ask, only for an ask with allowPreemptOther, in a partition with "
      "preemption.enabled, at least its leaf's preemption.delay old, with a guarantee on its "
      "path, that failed its queue headroom or fitted no schedulable node; a required-node "
      "preemption only when its node lacks the room.",
      ("preemption.trigger", "preemption.completed", "preemption.required_node",
       "liveness.preemption_serves"),
      "The ask is identified by the release message (YuniKorn's text names it). The 15 s "
      "between two attempts and the 10 attempts per leaf and step are not checked. That "
      "preemption does happen when it must is a liveness property, judged by the explorer "
      "where one victim settles it and the ask's path is within its guarantee."),
    E(Y, "Required-node (DaemonSet) preemption", "A required-node ask whose node lacks the "
      "room, within its queues' headroom, reserves the node at once and, once, takes over "
      "what it may there: allocations that are not required-node ones, of a priority at most "
      "its own, holding a resource type it asks for.",
      ("preemption.trigger", "preemption.victims", "liveness.required_node_served"),
      "That it happens when it must is judged at rest, where no user or group limit, "
      "stateaware leaf, gang, predicates callback or other required-node ask on the node "
      "could hold it back."),
    E(Y, "Preemption, laws 2, 3, 5, 6, 7", "Victims come from other leaves inside the ask's "
      "fence (a fence policy, or a queue the ask would take past its max: YUNIKORN-3241), "
      "not disabled, over their guarantee, of a priority at most the ask's adjusted "
      "by offsets and fences; never a required-node allocation or one being released; no "
      "victim leaf is left below its guarantee. Required-node victims sit on the node, are "
      "not required-node allocations, have no higher priority, and free enough. A leaf a "
      "placement rule created has its childtemplate's settings, none of its parent's.",
      ("preemption.victims", "preemption.placeholder_victim", "preemption.refused_guarantee",
       "preemption.created_victim", "preemption.spared_max_fenced")),
    E(Y, "Preemption, the victim choice", "No victim beyond what the ask needs (the node's "
      "victims end where the ask fits, further ones only while its leaf is not within its "
      "guarantee; required-node ones end where they cover the ask); every victim frees "
      "something the ask lacks (a type it asks for, what the node lacks, what an ancestor "
      "is over); the node is schedulable, not held for another waiting ask, and holds the "
      "ask once its victims leave; victims go in YuniKorn's order (required node: regular, "
      "opted out, originators, then priority, then newer; general: opted in, "
      "non-originators, then newer).",
      ("preemption.enough", "preemption.useful", "preemption.node", "preemption.order",
       "preemption.spared_unshared", "preemption.spared_older_twin"),
      "Read from the release's order, which is the order of the choice. Age is judged only "
      "between allocations the shim saw start at different times, and a general victim's "
      "place only against a newer twin (same leaf, size and flags) left running: the "
      "queue-guarantee passes make other skips legitimate. Size as a last tie-break is never "
      "needed (the core orders by creation). The RM's PreemptionPredicates choice is checked "
      "by scenario tests: the model shim does not offer it."),
    E(Y, "Preemption, the commit", "With the victims gone the ask's leaf is within its "
      "guarantee; the ask holds a reservation on one node (its required node); every victim "
      "counts as preempting on its queue and every ancestor until the RM confirms it.",
      ("preemption.outcome", "preemption.accounting")),
    E(Y, "Quota preemption", "With the partition's preemption.quotapreemptionenabled on and "
      "a queue's quota.preemption.delay set, a reload that lowers the queue's max below its "
      "usage releases allocations of that queue's subtree once the delay has passed: no more "
      "than its usage over the max (capped by the guarantees on its path), never a "
      "required-node allocation or one already being released, once per start time.",
      ("preemption.quota",),
      "That it must happen is not judged: YuniKorn tries once per change, and a guarantee or "
      "a pod too large for what is over can keep a queue above its max for good."),
)
