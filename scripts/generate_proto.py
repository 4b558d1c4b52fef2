#!/usr/bin/env python3
"""Regenerate the Python code of the gRPC interface from ``scheduler/rpc/proto/*.proto``.

Runs ``grpcio-tools`` (the version pinned in pyproject's ``test`` extra, so the
output is the same on every machine) with ``--python_out --grpc_python_out
--pyi_out`` and writes the result to ``scheduler/rpc/_generated/``. protoc
writes top-level imports between the generated modules (``import si_pb2``);
they are rewritten to package-relative ones so the code lives inside
``scheduler.rpc``. ``tests/test_rpc_proto.py`` calls :func:`generate` and fails
when the committed code differs from a fresh run.

    python scripts/generate_proto.py          # rewrite scheduler/rpc/_generated/
    python scripts/generate_proto.py --check  # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "scheduler" / "rpc" / "proto"
OUT_DIR = ROOT / "scheduler" / "rpc" / "_generated"
PROTOS = ("si.proto", "si_today.proto", "yunikorn_fsm_ext.proto")
INIT = '"""Code generated from scheduler/rpc/proto by scripts/generate_proto.py: do not edit."""\n'

_SIBLING_IMPORT = re.compile(r"^import (\w+_pb2) as (\w+)$", re.MULTILINE)


def generate() -> dict[str, bytes]:
    """The generated files, by name, as this machine's grpcio-tools writes them."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        args = ["grpc_tools.protoc", f"-I{PROTO_DIR}", f"-I{well_known}",
                f"--python_out={tmp}", f"--grpc_python_out={tmp}", f"--pyi_out={tmp}",
                *PROTOS]
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed (see its messages above)")
        files = {"__init__.py": INIT.encode()}
        for path in sorted(Path(tmp).iterdir()):
            text = _SIBLING_IMPORT.sub(r"from . import \1 as \2", path.read_text("utf-8"))
            files[path.name] = text.encode()
    return files


def stale(files: dict[str, bytes]) -> list[str]:
    """Names of the files whose committed copy differs (or is missing, or is extra)."""
    committed = {p.name for p in OUT_DIR.glob("*") if p.is_file()}
    names = sorted(committed | set(files))
    return [n for n in names
            if n not in files or not (OUT_DIR / n).is_file()
            or (OUT_DIR / n).read_bytes() != files[n]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    files = generate()
    if args.check:
        names = stale(files)
        for name in names:
            print(f"stale: scheduler/rpc/_generated/{name}")
        return 1 if names else 0
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for old in OUT_DIR.glob("*"):
        if old.is_file() and old.name not in files:
            old.unlink()
    for name, data in files.items():
        (OUT_DIR / name).write_bytes(data)
        print(f"scheduler/rpc/_generated/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
