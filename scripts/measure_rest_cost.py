"""What REST polling costs the scheduler: ``bench --grpc`` against a ``serve`` without
``--rest-port`` and against one with it, polled at 10 requests/s, rounds interleaved.

    python scripts/measure_rest_cost.py [--rounds 5] [--nodes 500] [--pods 20000]

Prints each run's allocations/s and the medians' ratio (docs/performance.md, "REST").
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import urllib.request

SERVE = [sys.executable, "-m", "scheduler", "serve", "--port", "0"]
ROUTES = ("/ws/v1/partitions", "/ws/v1/partition/default/queues",
          "/ws/v1/partition/default/nodes", "/ws/v1/metrics",
          "/ws/v1/scheduler/node-utilizations", "/ws/v1/clusters")


def _poll(base: str, stop: threading.Event, rate: float, served: list[int],
          routes: tuple[str, ...]) -> None:
    i = 0
    while not stop.wait(1.0 / rate):
        route = routes[i % len(routes)]
        i += 1
        try:
            with urllib.request.urlopen(base + route, timeout=5) as answer:
                answer.read()
            served[0] += 1
        except OSError:
            pass


def run(rest: bool, nodes: int, pods: int, rate: float,
        routes: tuple[str, ...] = ROUTES) -> tuple[float, int]:
    """One bench against a fresh server: allocations/s, REST requests answered."""
    args = [*SERVE, "--rest-port", "0"] if rest else SERVE
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    port = proc.stdout.readline().strip().rsplit(":", 1)[1]
    stop, served = threading.Event(), [0]
    poller = None
    if rest:
        rest_port = proc.stdout.readline().strip().rsplit(":", 1)[1]
        poller = threading.Thread(target=_poll, args=(f"http://127.0.0.1:{rest_port}", stop,
                                                       rate, served, routes))
        poller.start()
    try:
        out = subprocess.run([sys.executable, "-m", "scheduler", "bench", "--grpc",
                              "--target", f"127.0.0.1:{port}", "--nodes", str(nodes),
                              "--pods", str(pods), "--samples", "20"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        stop.set()
        if poller is not None:
            poller.join()
        proc.terminate()
        proc.wait()
    line = next(x for x in out.splitlines() if x.startswith("{"))
    return float(json.loads(line)["allocations_per_second"]), served[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--routes", default=",".join(ROUTES),
                        help="comma-separated routes polled in turn")
    args = parser.parse_args()
    routes = tuple(args.routes.split(","))
    plain, polled = [], []
    for r in range(args.rounds):
        for rest in (False, True) if r % 2 == 0 else (True, False):
            speed, served = run(rest, args.nodes, args.pods, args.rate, routes)
            (polled if rest else plain).append(speed)
            print(f"round {r + 1} {'rest' if rest else 'plain'}: {speed:,.0f} allocations/s"
                  + (f", {served} REST answers" if rest else ""), flush=True)
    a, b = statistics.median(plain), statistics.median(polled)
    print(f"median plain {a:,.0f}, with REST polled at {args.rate:g}/s {b:,.0f}: "
          f"{b / a:.1%} of plain")


if __name__ == "__main__":
    main()
