"""The named scopes: the small worlds ``explore --scope NAME`` searches, and their depths."""

from __future__ import annotations

from invariants.explore.scope import AppShape, AskShape, GangShape, Scope
from invariants.explore.texts import (
    ADMISSION,
    LIMITS,
    PREEMPTION,
    REQUIRED,
    ROUTING,
    SORTING,
    TEMPLATE,
    WIDE,
)

_PLAIN = AppShape("app-1", "root.parent.batch", (AskShape("k1", 10, repeats=2),))
_TIMED = AppShape("app-1", "root.parent.batch",
                  (AskShape("k1", 10, repeats=2, timeout_ms=30_000),))
_GANG_HARD = AppShape("gang-1", "root.parent.gangs",
                      (AskShape("k1", 10, repeats=2, task_group="tg"),), GangShape("Hard", 2, 10))
_OTHER = AppShape("app-2", "root.other", (AskShape("k1", 10, repeats=2),))
_GANG_SOFT = AppShape("gang-1", "root.parent.gangs", (AskShape("k1", 10, task_group="tg"),
                                          AskShape("big", 20, task_group="tg")),
                      GangShape("Soft", 1, 10))

SCOPES: dict[str, Scope] = {s.name: s for s in (
    Scope("tiny", "one node, one application with one ask of two repeats and a 30 s "
          "execution timeout",
          nodes=(("node-1", 20),), apps=(_TIMED,),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release", "remove_ask",
                           "remove_app", "tick", "drain", "restore", "decommission",
                           "occupy", "confirm", "resend"}),
          depth=30),
    Scope("today", "the tiny scope in today's SI (2858f4d): pods by key, releases by key, "
          "a node's occupied room as a foreign pod, recovery as bound pods",
          nodes=(("node-1", 20),), apps=(_TIMED,),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release", "remove_ask",
                           "remove_app", "tick", "drain", "restore", "decommission",
                           "occupy", "confirm", "resend"}),
          depth=10, dialect="today"),
    Scope("small", "two nodes of one size, an application and a Hard gang under one max",
          nodes=(("node-1", 20), ("node-2", 20)), apps=(_PLAIN, _GANG_HARD),
          kinds=frozenset({"node", "submit", "placeholders", "ask", "schedule", "confirm",
                           "release", "tick", "drain", "decommission", "restart"}),
          depth=8),
    Scope("wide", "small grown for a cluster: three nodes, a third application in a leaf of "
          "its own beside the parent, and one more step",
          nodes=(("node-1", 20), ("node-2", 20), ("node-3", 20)),
          apps=(_PLAIN, _GANG_HARD, _OTHER),
          kinds=frozenset({"node", "submit", "placeholders", "ask", "schedule", "confirm",
                           "release", "tick", "drain", "decommission", "restart"}),
          depth=9, config=WIDE, hunted=False),
    Scope("gang", "one node, a Soft gang whose real asks fit or outgrow their placeholder",
          nodes=(("node-1", 30),), apps=(_GANG_SOFT,),
          kinds=frozenset({"node", "submit", "placeholders", "ask", "schedule", "confirm",
                           "confirm_twice", "confirm_unasked", "release", "remove_ask",
                           "remove_app", "tick", "restart"}),
          depth=9),
    Scope("findings", "one node, a Hard gang of two placeholders and two real pods, "
          "and what may happen to it mid-swap or across a restart: the RM withdraws a real "
          "pod or releases a placeholder, the parent's max drops below the gang's "
          "placeholderAsk and the RM restarts (docs/findings/)",
          nodes=(("node-1", 30),), apps=(_GANG_HARD,),
          kinds=frozenset({"node", "submit", "placeholders", "ask", "schedule", "confirm",
                           "remove_ask", "release_placeholder", "reload", "restart"}),
          depth=8),
    Scope("quota", "two applications in two leaves under a parent max, and reloads",
          nodes=(("node-1", 20), ("node-2", 20)),
          apps=(_PLAIN, AppShape("app-2", "root.parent.gangs", (AskShape("k1", 10, repeats=2),))),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release", "reload",
                           "remove_app", "tick", "restart"}),
          depth=8),
    Scope("admission", "who may submit where: placement without create (root.default takes "
          "what it does not place), ACLs, maxapplications, gangs over a max or in a fair "
          "queue, an empty user",
          nodes=(("node-1", 40),),
          apps=(AppShape("app-1", "root.parent.batch", (AskShape("k1", 10),)),
                AppShape("app-2", "root.parent.batch", (AskShape("k1", 10),), user="bob"),
                AppShape("app-3", "root.parent.gangs", (AskShape("k1", 10),)),
                AppShape("lost", "root.parent.newq", (AskShape("k1", 10),)),
                AppShape("gang-big", "root.parent.gangs", (), GangShape("Hard", 4, 10)),
                AppShape("gang-fair", "root.parent.batch", (), GangShape("Soft", 1, 10)),
                AppShape("nobody", "root.parent.gangs", (AskShape("k1", 10),), user="")),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release"}),
          depth=5, config=ADMISSION),
    Scope("limits", "user and group limits: a parent's wildcard and group limit, a leaf's "
          "named limit over its wildcard, maxapplications 1, a user in two groups",
          nodes=(("node-1", 60),),
          apps=(AppShape("app-1", "root.parent.a", (AskShape("k1", 10, repeats=2),)),
                AppShape("app-2", "root.parent.a", (AskShape("k1", 10),)),
                AppShape("app-3", "root.parent.b", (AskShape("k1", 10, repeats=3),),
                         user="carol"),
                AppShape("app-4", "root.parent.a", (), user="e.f", groups=("devs", "admins")),
                AppShape("app-5", "root.parent.b", (AskShape("k1", 10, repeats=2),),
                         user="e.f", groups=("devs", "admins"))),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release", "confirm"}),
          depth=6, config=LIMITS),
    Scope("preemption", "general preemption: a leaf over its guarantee holds the nodes, a "
          "leaf under its guarantee asks later with allowPreemptOther (more than its "
          "guarantee, too); the first leaf's high-priority asks are never its victims and "
          "sort their leaf first",
          nodes=(("node-1", 20), ("node-2", 20)),
          apps=(AppShape("hog", "root.hog", (AskShape("k1", 10, repeats=2),
                                             AskShape("vip", 10, repeats=2, priority=20))),
                AppShape("late", "root.late",
                         (AskShape("k1", 10, repeats=3, preempt=(True, True)),))),
          kinds=frozenset({"node", "submit", "ask", "schedule", "wait", "confirm"}),
          depth=12, config=PREEMPTION, hunt_depth=11),
    Scope("sorting", "the policies' order: two applications contending in a fair leaf, a "
          "Hard gang and an application after it (by id) in a stateaware leaf, binpacking "
          "nodes",
          nodes=(("node-1", 20), ("node-2", 20)),
          apps=(AppShape("app-1", "root.fair", (AskShape("k1", 10, repeats=2),)),
                AppShape("app-2", "root.fair", (AskShape("k1", 10),)),
                AppShape("gang-1", "root.aware", (AskShape("k1", 10, task_group="tg"),),
                         GangShape("Hard", 1, 10)),
                AppShape("late-1", "root.aware", (AskShape("k1", 10, repeats=2),))),
          kinds=frozenset({"node", "submit", "placeholders", "ask", "schedule"}),
          depth=7, config=SORTING, hunt_depth=6),
    Scope("template", "leaves a placement rule creates below a childtemplate: below the "
          "templated parent, below a configured parent without a template, below a parent "
          "the rule creates; each asks past the template's max, with a priority the "
          "template's offset lifts",
          nodes=(("node-1", 60),),
          apps=(AppShape("app-1", "root.org.new", (AskShape("k1", 10, repeats=2, priority=1),)),
                AppShape("app-2", "root.org.dept.new", (AskShape("k1", 10, repeats=2),)),
                AppShape("app-3", "", (AskShape("k1", 10, repeats=2),), user="bob")),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release", "remove_app"}),
          depth=7, config=TEMPLATE, hunt_depth=5),
    Scope("required", "required-node (DaemonSet) asks: two pods of one application require "
          "the only node; one outranks the low-priority pods of another application, "
          "whose pod filling the whole node outranks it in turn",
          nodes=(("node-1", 20),),
          apps=(AppShape("app-1", "root.pods", (AskShape("k1", 10), AskShape("mid", 10, priority=5),
                                                AskShape("hi", 20, priority=20))),
                AppShape("ds-1", "root.daemons",
                         (AskShape("d1", 10, priority=10, required_node="node-1"),
                          AskShape("d2", 10, required_node="node-1")))),
          kinds=frozenset({"node", "submit", "ask", "schedule"}),
          depth=8, config=REQUIRED, hunt_depth=8),
    Scope("predicates", "the RM's predicates refuse a large pod and a DaemonSet pod on "
          "node-1: reservations and the reserved pass must ask them too",
          nodes=(("node-1", 20), ("node-2", 20)),
          apps=(AppShape("app-1", "root.pods", (AskShape("k1", 10, repeats=2),
                                                AskShape("big", 20))),
                AppShape("ds-1", "root.daemons",
                         (AskShape("d1", 10, priority=10, required_node="node-1"),))),
          kinds=frozenset({"node", "submit", "ask", "schedule"}),
          depth=7, config=REQUIRED, hunt_depth=7,
          refused=(("big", "node-1"), ("d1", "node-1"))),
    Scope("routing", "requests naming a partition that does not hold the application, "
          "releases and node actions the core must ignore or refuse: an application of two "
          "pods in a partition with a twin",
          nodes=(("node-1", 20),),
          apps=(AppShape("app-1", "root.a", (AskShape("k1", 10, repeats=2),)),),
          kinds=frozenset({"node", "submit", "ask", "schedule", "release", "resize", "misroute",
                           "stray", "drain", "restore", "misact"}),
          depth=7, config=ROUTING, hunt_depth=6),
)}
"""The named scopes (``yunikorn-fsm explore --scope NAME``)."""
