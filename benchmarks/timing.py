"""Timing helpers shared by the benchmark scripts (run from this folder's parent as
``python benchmarks/bench_x.py``; Python puts this folder on the path)."""
import statistics
import time


def per_call_us(fn, n=20000, repeat=5):
    """Best-of-``repeat`` mean time of one call, in microseconds, after a warm-up call."""
    fn()
    best = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t) / n * 1e6)
    return min(best)


def ms(fn, repeat=10):
    """Median time of one call, in milliseconds, after a warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def print_table(results, rows=None, label="measurement", width=45, cell=12, digits=2):
    """Print ``{library: {row: value}}`` side by side, one row per measurement ("-" where a
    library has no value); rows default to those of the first library."""
    names = list(results)
    rows = list(results[names[0]]) if rows is None else rows
    print(f"{label:{width}s}" + "".join(f"{n:>{cell}s}" for n in names))
    for row in rows:
        cells = "".join(f"{results[n][row]:{cell}.{digits}f}" if row in results[n]
                        else f"{'-':>{cell}s}" for n in names)
        print(f"{row:{width}s}{cells}")
