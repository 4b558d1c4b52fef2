"""The ``yunikorn-fsm`` command line (also ``python -m scheduler``)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def _cmd_diagrams(args: argparse.Namespace) -> int:
    import statemachines
    from statemachines.diagrams import BEGIN, END, embed, write_coverage, write_diagrams

    svg = True if args.svg else (False if args.no_svg else None)
    if args.coverage:
        try:
            data = json.loads(Path(args.coverage).read_text(encoding="utf-8"))
            counts = {(e["lifecycle"], e["source"], e["trigger"], e["dest"]): int(e["count"])
                      for e in data["edges"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"yunikorn-fsm diagrams: {args.coverage} is not a coverage report "
                  f"(check --coverage-out): {exc}", file=sys.stderr)
            return 2
        for path in write_coverage(statemachines.LIFECYCLES.values(), counts, Path(args.out)):
            print(path)
        return 0
    pages: list[tuple[Path, str]] = []
    for doc in args.embed or ():
        page = Path(doc)
        try:
            text = page.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"yunikorn-fsm diagrams: can not read {doc}: {exc.strerror}", file=sys.stderr)
            return 2
        if BEGIN.split("{")[0] not in text:
            print(f"yunikorn-fsm diagrams: {doc} has no generated-diagram markers "
                  f"({BEGIN.format(name='<lifecycle>')} ... {END.format(name='<lifecycle>')})",
                  file=sys.stderr)
            return 2
        pages.append((page, text))
    try:
        paths = write_diagrams(statemachines.LIFECYCLES.values(), Path(args.out), svg=svg)
    except FileNotFoundError as exc:
        print(f"yunikorn-fsm diagrams: {exc}", file=sys.stderr)
        return 2
    if svg is None and shutil.which("dot") is None:
        print("yunikorn-fsm diagrams: graphviz 'dot' is not installed: Mermaid only, no SVG",
              file=sys.stderr)
    for page, text in pages:
        page.write_text(embed(text, statemachines.LIFECYCLES.values()), encoding="utf-8")
        paths.append(page)
    for path in paths:
        print(path)
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from .si import today, write_json_schemas

    models = today.MESSAGE_MODELS if args.dialect == "today" else None
    written = write_json_schemas(Path(args.out)) if models is None \
        else write_json_schemas(Path(args.out), models)
    for path in written:
        print(path)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from .config import load_config_file
    from .errors import ConfigError

    try:
        config = load_config_file(args.file)
    except ConfigError as exc:
        where = f"{exc.path}: " if exc.path else ""
        print(f"{args.file}: invalid: {where}{exc.reason}", file=sys.stderr)
        return 1
    for warning in config.warnings:
        print(f"{args.file}: warning: {warning}", file=sys.stderr)
    queues = sum(_count_queues(p.queues) for p in config.partitions)
    empty = "" if config.partitions else "; no partitions: the core loads its default configuration"
    print(f"{args.file}: valid ({len(config.partitions)} partition(s), {queues} queue(s)){empty}")
    return 0


def _count_queues(queues: Sequence[object]) -> int:
    return sum(1 + _count_queues(getattr(q, "queues", [])) for q in queues)


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.grpc or args.soak is not None:
        from .rpc.commands import run_bench

        return run_bench(args)
    from .bench import run, run_shape

    sizes = [int(n) for n in str(args.nodes).split(",") if n.strip()]
    if len(sizes) == 1:
        result = run_shape(args.shape, sizes[0]) if args.shape else run(sizes[0], args.pods)
        print(json.dumps(result), flush=True)
        return 0
    # One process per size, so each peak RSS is that run's own.
    for n in sizes:
        cmd = [sys.executable, "-m", "scheduler", "bench", "--nodes", str(n), "--pods",
               str(args.pods)] + (["--shape", args.shape] if args.shape else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        print(out.stdout.strip().splitlines()[-1], flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yunikorn-fsm",
        description="Apache YuniKorn's scheduler core as declarative, checked state machines.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("diagrams", help="write one Mermaid (and SVG) diagram per lifecycle")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--embed", action="append", metavar="PAGE",
                   help="also refresh the generated diagram blocks inside this Markdown page")
    p.add_argument("--coverage", metavar="FILE",
                   help="draw a `check --coverage-out` report's edge counts instead")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--svg", action="store_true", help="require SVG output (needs graphviz dot)")
    g.add_argument("--no-svg", action="store_true", help="never write SVG")
    p.set_defaults(func=_cmd_diagrams)

    p = sub.add_parser("schema", help="write the JSON Schema of every SI message")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--dialect", choices=("seed", "today"), default="seed",
                   help="the seed's SI (f59a9f4, the default) or today's (2858f4d)")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("validate-config", help="validate a YuniKorn queues.yaml")
    p.add_argument("file")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("bench", help="the scheduling benchmark (YuniKorn BenchmarkScheduling)")
    p.add_argument("--nodes", default="5000",
                   help="number of nodes, or a comma-separated list (one process each)")
    p.add_argument("--pods", type=int, default=10000, help="number of pods to allocate")
    from .bench import SHAPES

    p.add_argument("--shape", choices=SHAPES,
                   help="a workload beyond BenchmarkScheduling (docs/performance.md)")
    from .rpc.commands import add_bench_options

    add_bench_options(p)
    p.set_defaults(func=_cmd_bench)

    from invariants.commands.checker import add_check_command

    add_check_command(sub)

    from .rpc.commands import add_serve_command

    add_serve_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except BrokenPipeError:
        # The reader went away (``yunikorn-fsm flows | head``): stop quietly, as Unix tools do.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    return code


if __name__ == "__main__":
    raise SystemExit(main())
