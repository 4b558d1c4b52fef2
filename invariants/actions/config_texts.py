"""The fixed configurations the drawn ones start from: the default tree, the preemption
tree, the queues created by placement rules."""

from __future__ import annotations

DEFAULT = """\
partitions:
  - name: default
    nodesortpolicy:
      type: fair
    queues:
      - name: root
        queues:
          - name: a
            submitacl: "*"
            maxapplications: 2
            limits:
              - users: [alice]
                maxresources: {memory: 100}
              - users: ["*"]
                maxresources: {memory: 40}
            resources:
              guaranteed: {memory: 60}
              max: {memory: 120, vcore: 20}
          - name: b
            submitacl: "alice"
            properties:
              application.sort.policy: fair
              preemption.policy: fence
            resources:
              max: {memory: 150}
            queues:
              - name: b1
                resources:
                  max: {memory: 80}
                  guaranteed: {memory: 30}
              - name: b2
                resources:
                  guaranteed: {memory: 20}
                properties:
                  preemption.delay: 5s
          - name: c
            adminacl: " admins"
            properties:
              application.sort.policy: stateaware
              preemption.policy: disabled
            resources:
              guaranteed: {memory: 10}
            limits:
              - groups: [devs]
                maxresources: {memory: 80}
              - users: ["*"]
                maxapplications: 2
"""
"""The checker's fixed configuration: a quota on a leaf and on a parent, fair and
stateaware leaves, ACLs by user, by group and by admin, a gang-eligible leaf,
group and wildcard user limits, guarantees on four leaves (one with a short
preemption.delay), a preemption fence around a parent's leaves, and a leaf whose
tasks are never preempted."""


PREEMPTION = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources: {guaranteed: {memory: 20}}
            properties: {preemption.delay: 1s}
          - name: b
            resources: {guaranteed: {memory: 30}}
            properties: {priority.offset: "10", preemption.policy: fence}
          - name: fenced
            resources: {guaranteed: {memory: 30}}
            properties: {preemption.policy: fence}
            queues:
              - name: f1
                resources: {guaranteed: {memory: 20}}
              - name: f2
                resources: {guaranteed: {memory: 10}}
          - name: kept
            resources: {guaranteed: {memory: 10}}
            properties: {preemption.policy: disabled}
          - name: open
          - name: low
            properties: {priority.policy: fence, priority.offset: "-10"}
            queues:
              - name: l1
                resources: {guaranteed: {memory: 10}}
  - name: second
    preemption: {enabled: false}
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources: {guaranteed: {memory: 20}}
          - name: b
            resources: {guaranteed: {memory: 20}}
"""
"""A configuration where preemption has something to decide: guarantees everywhere, a
short delay, an offset, preemption fences (on a parent, and on a leaf: it can never
preempt), a leaf never preempted, a leaf without a
guarantee (never a victim source), a priority-fenced parent, and a second partition
with preemption switched off."""


CREATED_RULES = """\
    placementrules:
      - name: tag
        value: made
        create: true
        parent: {name: fixed, value: root.made}
      - name: tag
        value: spare
        create: true
        parent: {name: fixed, value: root.spare}
      - name: provided
"""


CREATED_PARENTS = """\
          - name: made
            parent: true
            properties: {preemption.policy: disabled}
            childtemplate:
              resources: {guaranteed: {memory: 10}}
              properties: {preemption.delay: 1s}
          - name: spare
            parent: true
            childtemplate:
              resources: {guaranteed: {memory: 10}}
              properties: {preemption.policy: disabled}
"""


PREEMPTION_CREATED = PREEMPTION.replace(
    "  - name: default\n", "  - name: default\n" + CREATED_RULES, 1).replace(
    "          - name: open\n", "          - name: open\n" + CREATED_PARENTS, 1)
"""The preemption configuration with leaves placement rules create by tag (``made``,
``spare``) below two parents: below ``root.made``, preemption.policy disabled but not in
its template, created leaves may lose tasks; below ``root.spare`` the template disables
it (YUNIKORN-809: a created queue takes its template's properties, never its parent's).
Submissions without those tags are placed as without rules."""
