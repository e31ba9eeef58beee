"""Thread guard: 8 threads x 300 mixed operations (eager, jit, grad, vmap, device_put between
the 8 CPU devices, deletes, reads racing with deletes), every result exact, in a subprocess
so that a crash fails this test instead of killing pytest. A longer run:
benchmarks/stress_threads.py."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _run_workload(threads, ops):
    env = dict(os.environ, PYJAX_CPU_DEVICES="8",
               PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, os.path.join(HERE, "thread_workload.py"), str(threads),
                        str(ops)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"rc={r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def test_eight_threads_of_mixed_operations_are_exact_and_survive():
    res = _run_workload(8, 300)
    assert res["errors"] == [], res["errors"]
    assert res["ops"] == 8 * 300
    assert res["devices"] == 8
    assert res["deleted_errors"] > 0  # the delete paths ran
