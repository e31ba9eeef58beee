"""RSS growth over 100k eager operations and 1,000 distinct compilations (the trial of
issue 12), in a fresh interpreter; tests/guard/test_memory.py runs a cut-down version.

Run: python benchmarks/stress_memory.py [--ops 100000] [--compilations 1000]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
WORKLOAD = os.path.join(ROOT, "tests", "guard", "memory_workload.py")


def measure(ops, compilations):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, WORKLOAD, str(ops), str(compilations)], env=env,
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"workload failed rc={r.returncode}\n{r.stderr[-2000:]}")
    return json.loads([l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1][7:])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ops", type=int, default=100_000)
    p.add_argument("--compilations", type=int, default=1000)
    a = p.parse_args()
    res = measure(a.ops, a.compilations)
    print(f"RSS at start {res['rss_start_mb']:.1f} MB")
    print(f"{res['eager_ops']} eager ops: +{res['eager_growth_mb']:.2f} MB "
          f"({res['eager_growth_mb_per_100k']:.2f} MB per 100k ops), "
          f"{res['eager_us_per_op']:.1f} us/op")
    print(f"{res['compilations']} distinct compilations: +{res['compile_growth_mb']:.1f} MB, "
          f"{res['compile_ms_each']:.1f} ms each")


if __name__ == "__main__":
    main()
