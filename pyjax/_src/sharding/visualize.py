"""``jax.debug.visualize_array_sharding`` / ``visualize_sharding``: the device layout of a 1-D
or 2-D array as a text table, one cell per distinct block, naming the devices that hold it
(plain box-drawing text; ``rich`` is not used)."""
from __future__ import annotations

import sys

from pyjax._src.core.sharding import Sharding


def _span(s, size):
    start, stop, _ = s.indices(size) if isinstance(s, slice) else (s, s + 1, 1)
    return start, stop


def layout_text(shape, sharding, *, min_width=9, max_width=80):
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding only works for 1-D or 2-D shapes, got the "
                         f"shape {shape}")
    if not isinstance(sharding, Sharding):
        raise TypeError(f"visualize_sharding expects a Sharding, got {sharding!r}")
    full = shape if len(shape) == 2 else (1,) + shape
    idx = sharding.devices_indices_map(shape)
    cells = {}
    for d, index in idx.items():
        index = tuple(index) if len(shape) == 2 else (slice(None),) + tuple(index)
        key = (_span(index[0], full[0]), _span(index[1], full[1]))
        cells.setdefault(key, []).append(d)
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    labels = {k: f"{devs[0].platform.upper()} " + ",".join(str(d.id) for d in
                                                          sorted(devs, key=lambda d: d.id))
              for k, devs in cells.items()}
    width = max(min_width, max(len(v) for v in labels.values()) + 2)
    width = min(width, max_width)
    top = "┌" + "┬".join("─" * width for _ in cols) + "┐"
    mid = "├" + "┼".join("─" * width for _ in cols) + "┤"
    bot = "└" + "┴".join("─" * width for _ in cols) + "┘"
    lines = [top]
    for i, r in enumerate(rows):
        lines.append("│" + "│".join(labels.get((r, c), "").center(width) for c in cols) + "│")
        lines.append(mid if i < len(rows) - 1 else bot)
    return "\n".join(lines)


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Print the layout of an array of ``shape`` laid out as ``sharding`` (plain text: the
    cells are not coloured, whatever ``use_color`` says)."""
    if color_map is not None or scale != 1.0:
        raise NotImplementedError("visualize_sharding(color_map=, scale=): pyjax draws "
                                  "plain text tables of the default size only")
    sys.stdout.write(layout_text(shape, sharding, min_width=min_width,
                                 max_width=max_width) + "\n")


def visualize_array_sharding(arr, **kwargs):
    """Print the device layout of the array ``arr``."""
    visualize_sharding(arr.shape, arr.sharding, **kwargs)
