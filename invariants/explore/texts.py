"""The queue configurations the named scopes run on (``scope.py``)."""

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

WIDE = """\
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
