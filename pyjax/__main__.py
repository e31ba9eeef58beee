"""`python -m pyjax script.py [args]` (or `python -m pyjax -m module [args]`): run an unmodified
JAX program with `jax` and every `jax.*` module resolved to pyjax."""
import runpy
import sys

from pyjax._src.jax_alias import install_as_jax

USAGE = "usage: python -m pyjax script.py [args...]  |  python -m pyjax -m module [args...]"


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install_as_jax()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
