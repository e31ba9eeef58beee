"""The standing guard against bad input: every case of bad_input_cases.CASES raises the
expected exception with a message naming the bad argument (or computes JAX's documented
result); the cases that once killed the process run together in one subprocess."""
import json
import os
import subprocess
import sys

import pytest

from .bad_input_cases import CASES, CRASH_PRONE, namespace, run_case

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def ns():
    return namespace()


@pytest.mark.parametrize("case", CASES, ids=[c.expr for c in CASES])
def test_bad_input(case, ns):
    problem = run_case(case, ns)
    assert problem is None, f"{case.expr}: {problem}"


_CHILD = """
import json, sys
sys.path.insert(0, {here!r})
from bad_input_cases import CRASH_PRONE, namespace, run_case
ns = namespace()
for c in CRASH_PRONE:
    print(json.dumps([c.expr, run_case(c, ns)]), flush=True)
print("DONE")
"""


def test_crash_prone_inputs_in_a_subprocess():
    """All CRASH_PRONE cases in one fresh interpreter (a crash ends it: the last case printed
    is the one before the crash)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _CHILD.format(here=here)], env=env,
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and lines[-1:] == ["DONE"], (
        f"rc={r.returncode} after {lines[-1:]}\n{r.stderr[-2000:]}")
    results = [json.loads(l) for l in lines[:-1]]
    assert len(results) == len(CRASH_PRONE)
    problems = [f"{expr}: {p}" for expr, p in results if p is not None]
    assert not problems, "\n".join(problems)


def test_the_table_is_large():
    assert len(CASES) + len(CRASH_PRONE) >= 400
