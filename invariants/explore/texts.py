"""The scopes' texts: what each kind of action does, and the queue configurations the
named scopes run on (``scope.py``, ``named_scopes.py``)."""

from __future__ import annotations

CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: parent
            resources:
              max: {memory: 30}
            queues:
              - name: gangs
                properties:
                  application.sort.policy: fifo
              - name: batch
                properties:
                  application.sort.policy: fair
"""
"""Two leaves under a parent with a max; ``gangs`` is fifo (gangs are allowed there),
``batch`` is fair (a gang submitted there is rejected, ``001``)."""

WIDE = CONFIG + """\
          - name: other
            resources:
              max: {memory: 20}
"""
"""``CONFIG`` with a third leaf beside the parent, under a max of its own."""

ADMISSION = """\
partitions:
  - name: default
    placementrules:
      - name: provided
        create: false
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: parent
            resources:
              max: {memory: 30}
            queues:
              - name: gangs
                submitacl: "bob"
                properties:
                  application.sort.policy: fifo
              - name: batch
                maxapplications: 1
                properties:
                  application.sort.policy: fair
          - name: default
"""
"""The ``admission`` scope's configuration: the ``provided`` placement rule without
``create``, an ACL on a leaf that root's ``*`` overrides, ``maxapplications: 1``, and a
``root.default`` leaf that takes what the rule does not place."""

RELOADED = CONFIG.replace("max: {memory: 30}", "max: {memory: 10}")
"""The configuration a ``reload`` action switches to and back from: a lower parent max."""

LIMITS = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: parent
            limits:
              - users: ["*"]
                maxresources: {memory: 20}
              - groups: [devs]
                maxresources: {memory: 10}
            queues:
              - name: a
                limits:
                  - users: [alice]
                    maxresources: {memory: 20}
                    maxapplications: 1
                  - users: ["*"]
                    maxresources: {memory: 10}
                  - groups: [admins]
                    maxresources: {memory: 20}
              - name: b
"""
"""The ``limits`` scope's configuration: a wildcard user limit and a group limit on a
parent; on leaf ``a`` a named user limit over a tighter wildcard, and another group
(so a user in both groups is tracked for ``admins`` in ``a``, ``devs`` in ``b``)."""

PREEMPTION = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: hog
            resources:
              guaranteed: {memory: 15}
          - name: late
            resources:
              guaranteed: {memory: 10}
"""
"""Two guaranteed leaves: ``hog`` (15) may run over its guarantee and is preemption-fenced
(its own asks find no victims outside it), ``late`` (10) asks later and may preempt it down
to its guarantee; the default 30 s ``preemption.delay``."""

SORTING = """\
partitions:
  - name: default
    nodesortpolicy:
      type: binpacking
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: fair
            properties:
              application.sort.policy: fair
          - name: aware
            properties:
              application.sort.policy: stateaware
"""
"""The ``sorting`` scope's configuration: binpacking nodes, a fair leaf and a stateaware
leaf (which takes gangs) under root."""

TEMPLATE = """\
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
      - name: user
        create: true
        parent:
          name: fixed
          value: root.org.made
          create: true
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: org
            parent: true
            childtemplate:
              maxapplications: 1
              resources:
                max: {memory: 10}
                guaranteed: {memory: 10}
              properties:
                priority.offset: "5"
                application.sort.policy: stateaware
            queues:
              - name: dept
                parent: true
"""
"""The ``template`` scope's configuration: a parent ``org`` whose childtemplate holds every
leaf created below it to 10 memory (its guarantee too), one running application and the
stateaware policy, and offsets its priority by 5; ``provided`` creates
``root.org.new`` (a leaf of ``org``) and ``root.org.dept.new`` (below ``dept``, a configured
parent without a template of its own, which takes ``org``'s); an application with no queue
goes to the user's leaf below ``root.org.made``, a parent the rule creates and which inherits
the template (YUNIKORN-193, YUNIKORN-814, YUNIKORN-1486)."""

REQUIRED = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: pods
          - name: daemons
"""
"""The ``required`` scope's configuration: two plain leaves, one for ordinary pods and one
for a DaemonSet's pods (required-node preemption reads no guarantee, fence or delay)."""

ROUTING = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
  - name: other
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
"""
"""The ``routing`` scope's configuration: two partitions with the same queue names, so a
request naming the wrong one names a partition that exists and does not hold the
application."""


KINDS: dict[str, str] = {
    "node": "the RM registers a node of the scope (CREATE)",
    "submit": "an application of the scope is submitted",
    "placeholders": "a gang's placeholder pods are sent (one ask, a repeat per member)",
    "ask": "an ask of an application is sent (a real pod)",
    "schedule": "a scheduling cycle",
    "confirm": "the shim confirms the first release the core started",
    "confirm_twice": "the shim confirms the first release the core started, twice",
    "release": "a pod ends: the RM releases an application's first real allocation",
    "release_placeholder": "a placeholder pod is deleted outside the scheduler (a user, an "
                           "eviction): the RM releases an application's first placeholder, "
                           "also while the core is replacing it",
    "confirm_unasked": "the RM ends a running allocation the core never released with "
                       "TIMEOUT, a type only the core starts: it goes, unanswered",
    "resend": "an informer resync: an ask whose repeats all run is sent again, unchanged",
    "resize": "an ask whose repeats all run is sent again 5 memory larger (a pod resized in "
              "place): it asks for no new repeat, so the core must refuse it",
    "remove_ask": "the RM withdraws a pending ask",
    "remove_app": "the RM removes an application",
    "tick": "the clock jumps to the next live timer, then a cycle",
    "wait": "the clock passes the preemption.delay of the pending ask that may preempt and "
            "is the first to reach it (or, when every such ask is past its delay, the 15 s "
            "between two preemption checks), then a cycle; read from what the shim sent "
            "and its configuration, not from the core",
    "occupy": "UPDATE of a node: something outside the scheduler occupies 10 memory on it, "
              "or stops doing so",
    "drain": "DRAIN_NODE of a schedulable node",
    "restore": "DRAIN_TO_SCHEDULABLE of a draining node",
    "decommission": "DECOMISSION of a node",
    "restart": "the RM loses its connection, registers again and resyncs (002 recovery)",
    "reload": "the administrator lowers the parent's max, or puts it back",
    "misroute": "a request names partition `other`, which does not hold the application: a "
                "new ask, the withdrawal of its first pending ask, the release of its first "
                "running allocation, or its removal",
    "stray": "a release the ids or type alone do not decide: an ask release naming a key "
             "the application does not have, or of its first pending ask with a type only "
             "the core starts (TIMEOUT), both ignored; the release of its first running "
             "allocation under an unknown application (ignored), or with no termination "
             "type (the RM's own: it goes, confirmed STOPPED_BY_RM)",
    "misact": "a node action its node's state does not allow (DRAIN_NODE of a draining node, "
              "DRAIN_TO_SCHEDULABLE of a schedulable one) or one the SI does not define",
}
"""Every kind of action, in the order the alphabet lists them."""
