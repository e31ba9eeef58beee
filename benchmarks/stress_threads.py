"""Longer thread stress than tests/guard/test_threads.py: many threads x many mixed
operations (eager, jit, grad, vmap, device_put between 8 CPU devices, deletes, reads racing
with deletes), each run in a fresh interpreter so that a crash is counted, not fatal.

Run: python benchmarks/stress_threads.py [--threads 16] [--ops 2000] [--runs 3]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
WORKLOAD = os.path.join(ROOT, "tests", "guard", "thread_workload.py")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--ops", type=int, default=2000)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    env = dict(os.environ, PYJAX_CPU_DEVICES="8",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    crashes = hangs = wrong = ops = 0
    for run in range(a.runs):
        t = time.perf_counter()
        try:
            r = subprocess.run([sys.executable, WORKLOAD, str(a.threads), str(a.ops)], env=env,
                               capture_output=True, text=True, timeout=60 + a.threads * a.ops / 50)
        except subprocess.TimeoutExpired:
            hangs += 1
            print(f"run {run}: HANG")
            continue
        lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
        if r.returncode != 0 or not lines:
            crashes += 1
            print(f"run {run}: CRASH rc={r.returncode}\n{r.stderr[-1500:]}")
            continue
        res = json.loads(lines[-1][7:])
        ops += res["ops"]
        wrong += len(res["errors"])
        print(f"run {run}: {res['ops']} ops, {res['deleted_errors']} deleted-array errors, "
              f"{res['victim_reads']} racing reads, {len(res['errors'])} wrong/failed, "
              f"{time.perf_counter() - t:.1f} s {res['errors'][:2]}")
    print(f"threads x ops: {a.threads} x {a.ops}, runs {a.runs}: {ops} checked ops, "
          f"{crashes} crashes, {hangs} hangs, {wrong} threads with wrong results")


if __name__ == "__main__":
    main()
