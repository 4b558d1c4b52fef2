"""The command line of the RPC interface: ``yunikorn-fsm serve`` and ``bench --grpc``.

Kept apart from ``scheduler.cli`` so that the CLI parses (and every other
command runs) without the ``grpc`` extra; grpc is imported only when one of
these commands runs, and its absence is a usage error (exit 2) that names the
extra to install.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from . import missing_extra

DIALECTS = ("seed", "seed-pods", "today")
"""What ``bench --grpc`` sends: the seed's two asks of many repeats (YuniKorn's
``BenchmarkScheduling`` of the seed's time), the seed's SI with one ask per pod (the
same messages as today's, in the seed's words), or today's SI (one pod per key)."""


def add_serve_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve", help="serve the core over gRPC (the interface spec's si.v1.Scheduler)",
        description="Run the core with background scheduling behind the SI's gRPC service "
                    "and the extension service (docs/shim-guide.md, 'Over gRPC').")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=3333, help="port (default 3333; 0: any free)")
    p.add_argument("--tls-cert", metavar="PEM", help="certificate chain: serve TLS only")
    p.add_argument("--tls-key", metavar="PEM", help="private key of --tls-cert")
    p.add_argument("--token-file", metavar="FILE",
                   help="every call must send 'authorization: Bearer <the file's text>'")
    p.add_argument("--rm-pause-timeout", type=float, default=0.0, metavar="SECONDS",
                   help="the core's paused-RM timeout: an RM that stays paused (its streams "
                        "dropped) this long is stopped and everything it owned removed; "
                        "0 (default): keep it until it registers again")
    p.add_argument("--reservation-delay", type=float, default=None, metavar="SECONDS",
                   help="how long an ask waits from its arrival before it may reserve a "
                        "node (default 2, YuniKorn's; 0: at once; inf: never)")
    p.add_argument("--stream-buffer-mb", type=float, default=64.0, metavar="MB",
                   help="bytes waiting for one stream before its client counts as not reading "
                        "and is disconnected (default 64)")
    p.add_argument("--max-streams", type=int, default=256,
                   help="concurrent calls, streams included (default 256)")
    p.add_argument("--predicate-timeout", type=float, default=0.5, metavar="SECONDS",
                   help="how long the scheduling cycle waits for one answer of an RM's "
                        "predicates stream; unanswered, the node does not fit (default 0.5)")
    p.add_argument("--rest-port", type=int, metavar="PORT",
                   help="also serve YuniKorn's REST routes (ws/v1) and Prometheus metrics "
                        "over HTTP on --host (0: any free port; needs the rest extra; "
                        "docs/observability.md)")
    p.set_defaults(func=run_serve)


def _fail(message: str) -> int:
    print(f"yunikorn-fsm serve: {message}", file=sys.stderr)
    return 2


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ValueError(f"can not read {what} {path}: {error.strerror}") from None


def run_serve(args: argparse.Namespace) -> int:
    problem = missing_extra()
    if problem is not None:
        return _fail(problem)
    from scheduler import Scheduler

    from .server import Server, ServerOptions

    if (args.tls_cert is None) != (args.tls_key is None):
        return _fail("--tls-cert and --tls-key go together")
    if args.port < 0 or args.port > 65535:
        return _fail(f"--port {args.port} is not a port")
    rest_port: int | None = args.rest_port
    if rest_port is not None:
        if rest_port < 0 or rest_port > 65535:
            return _fail(f"--rest-port {rest_port} is not a port")
        from scheduler.rest import missing_extra as missing_rest

        problem = missing_rest()
        if problem is not None:
            return _fail(problem)
    if args.stream_buffer_mb <= 0 or args.max_streams < 4 or args.rm_pause_timeout < 0 \
            or not args.predicate_timeout > 0 \
            or (args.reservation_delay is not None and not args.reservation_delay >= 0):
        return _fail("--stream-buffer-mb must be > 0, --max-streams >= 4, "
                     "--rm-pause-timeout >= 0, --predicate-timeout > 0, "
                     "--reservation-delay >= 0")
    try:
        token = None
        if args.token_file is not None:
            token = _read(args.token_file, "--token-file").decode("utf-8").strip()
            if not token:
                return _fail(f"--token-file {args.token_file} is empty")
        cert = _read(args.tls_cert, "--tls-cert") if args.tls_cert else None
        key = _read(args.tls_key, "--tls-key") if args.tls_key else None
    except (ValueError, UnicodeDecodeError) as error:
        return _fail(str(error))

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("transitions").setLevel(logging.WARNING)
    options = ServerOptions(
        host=args.host, port=args.port, tls_cert=cert, tls_key=key, token=token,
        stream_buffer_bytes=int(args.stream_buffer_mb * 1024 * 1024),
        max_streams=args.max_streams, predicate_timeout=args.predicate_timeout)
    delay = {} if args.reservation_delay is None else \
        {"reservation_delay": args.reservation_delay}
    api = Scheduler(rm_pause_timeout=args.rm_pause_timeout or None, **delay)
    server = Server(api, options)
    rest = None
    if rest_port is not None:
        from scheduler.rest.http_server import RestServer

        try:
            rest = RestServer(api, args.host, rest_port)
        except OSError as error:
            return _fail(f"can not listen on {args.host}:{rest_port} (--rest-port): "
                         f"{error.strerror or error}")
    try:
        port = server.start()
    except (OSError, RuntimeError) as error:
        server.stop(grace=0)
        if rest is not None:
            rest.stop()
        return _fail(str(error))
    if cert is None and args.host not in ("127.0.0.1", "localhost", "::1"):
        logging.getLogger("yunikorn_fsm.rpc").warning(
            "listening on %s without TLS: anyone who can reach it can read the traffic%s",
            args.host, "" if token else " and drive the core (see --token-file)")

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"listening on {host}:{port}", flush=True)
    if rest is not None:
        print(f"rest on {host}:{rest.start()}", flush=True)
    while not stop.wait(0.2):
        pass
    if rest is not None:
        rest.stop()
    server.stop(grace=1.0)
    logging.getLogger("yunikorn_fsm.rpc").info("stopped")
    return 0


def add_bench_options(p: argparse.ArgumentParser) -> None:
    """``bench --grpc``: the benchmark (or a soak) driven over gRPC by the Python client."""
    g = p.add_argument_group("over gRPC (docs/performance.md, 'Over gRPC')")
    g.add_argument("--grpc", action="store_true",
                   help="drive a yunikorn-fsm serve process over loopback gRPC")
    g.add_argument("--target", metavar="HOST:PORT",
                   help="with --grpc: a running server instead of a new one on a free port")
    g.add_argument("--samples", type=int, default=200,
                   help="with --grpc: single asks timed on the idle cluster (default 200)")
    g.add_argument("--soak", type=float, metavar="SECONDS",
                   help="with --grpc: several RMs adding and releasing work for SECONDS")
    g.add_argument("--rms", type=int, default=8, help="with --soak: concurrent RMs (default 8)")
    g.add_argument("--dialect", choices=(*DIALECTS, "both"), default="seed",
                   help="with --grpc: what the client sends (seed: two asks of many repeats; "
                   "seed-pods: one seed ask per pod; today: today's SI, one pod per key); "
                   "'both' runs the three, each against its own server, and reports today's "
                   "throughput as a share of seed-pods' (the dialect's own cost) and of the "
                   "seed's (default seed)")


def run_bench(args: argparse.Namespace) -> int:
    import json

    problem = missing_extra()
    if problem is not None:
        print(f"yunikorn-fsm bench: {problem}", file=sys.stderr)
        return 2
    from .grpc_bench import run_bench as bench
    from .grpc_bench import run_soak

    if args.soak is not None:
        if args.soak <= 0 or args.rms < 1:
            print("yunikorn-fsm bench: --soak must be > 0 and --rms >= 1", file=sys.stderr)
            return 2
        result = run_soak(args.rms, args.soak, args.target)
        print(json.dumps(result), flush=True)
        ok = result["views_agree_with_state_dump"] and not result["doubled"]
        return 0 if ok else 1
    sizes = [int(n) for n in str(args.nodes).split(",") if n.strip()]
    if len(sizes) != 1 or args.samples < 0:
        print("yunikorn-fsm bench: --grpc takes one --nodes size and --samples >= 0",
              file=sys.stderr)
        return 2
    if args.dialect != "both":
        print(json.dumps(bench(sizes[0], args.pods, args.samples, args.target, args.dialect)),
              flush=True)
        return 0
    runs = {d: bench(sizes[0], args.pods, args.samples, args.target, d)
            for d in DIALECTS}
    rate = {d: r["allocations_per_second"] for d, r in runs.items()}
    print(json.dumps({**runs,
                      "today_share_of_seed_pods": round(rate["today"] / rate["seed-pods"], 3),
                      "today_share_of_seed": round(rate["today"] / rate["seed"], 3)}),
          flush=True)
    return 0
