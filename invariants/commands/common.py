"""What the check and explore commands share: their usage errors, the variant and
Ray options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from invariants.campaign.ray_cluster import ClusterError

FAILURES = ".yunikorn-fsm/failures"


VARIANT_HELP = ("run on a variant core that follows YuniKorn's code path for one flow "
                "(A1 to A5: docs/findings/)")


RAY_HELP = ("spread the work over the Ray cluster at ADDRESS (host:port of its head; "
            "local: a fresh one on this machine; docs/checker.md 'On a Ray cluster'; needs "
            "the ray extra)")


class UsageError(Exception):
    """A command line that can not run: exit 2 with this message."""


def usage_errors_exit_2(command: str, body: Callable[[argparse.Namespace], int]
                        ) -> Callable[[argparse.Namespace], int]:
    """``body`` as a command: a :class:`UsageError` prints one line and exits 2."""
    def run(args: argparse.Namespace) -> int:
        try:
            return body(args)
        except (UsageError, ClusterError) as exc:
            print(f"yunikorn-fsm {command}: {exc}", file=sys.stderr)
            return 2
    return run


def on_variant(body: Callable[[argparse.Namespace], int]
                ) -> Callable[[argparse.Namespace], int]:
    """``body`` run on the core of ``--variant`` (when given), in this process only."""
    def run(args: argparse.Namespace) -> int:
        name = getattr(args, "variant", None)
        if name is None:
            return body(args)
        from invariants.selftest.variants import VARIANTS, applied, by_name

        try:
            variant = by_name(name)
        except KeyError:
            raise UsageError(f"no variant {name!r}; one of "
                             f"{', '.join(v.name for v in VARIANTS)}") from None
        if getattr(args, "workers", None) not in (None, 1) or getattr(args, "self_test", False):
            raise UsageError("--variant runs in one process: no --workers, no --self-test")
        if hasattr(args, "workers"):
            args.workers = 1
        if hasattr(args, "no_replay"):
            args.no_replay = True
        print(f"variant {variant.name}: {variant.title} ({variant.upstream})", flush=True)
        with applied(variant):
            return body(args)
    return run


def ray_usable(args: argparse.Namespace) -> None:
    """``--ray`` with options it can serve, and the extra installed (exit 2 otherwise)."""
    from invariants.campaign.ray_cluster import ray_module

    if args.workers not in (None, 1):
        raise UsageError("--ray uses every CPU of the cluster: no --workers")
    if getattr(args, "variant", None) is not None:
        raise UsageError("--variant runs in one process: no --ray")
    ray_module()
