"""Array layouts, as ``jax.experimental.layout``: `Layout` (the order of dimensions in memory)
and `Format` (a layout with a sharding). pyjax arrays always use the default (row-major)
layout; these are the value types libraries build and inspect. `device_put` takes a `Format`
of the default layout (None) as its sharding (orbax restores that way); `jit` does not
accept them in place of a sharding."""


class Layout:
    """A device-local layout: `major_to_minor` dimension order and an optional tiling."""

    def __init__(self, major_to_minor, tiling=None):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)

    def __eq__(self, other):
        return (type(other) is Layout and self.major_to_minor == other.major_to_minor
                and self.tiling == other.tiling)

    def __hash__(self):
        return hash((self.major_to_minor, self.tiling))

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling})"


class Format:
    """A layout (None: the default) together with a sharding."""

    def __init__(self, layout=None, sharding=None):
        if layout is not None and not isinstance(layout, Layout):
            raise TypeError(f"Format: layout must be a Layout or None, got {type(layout)}")
        self.layout, self.sharding = layout, sharding

    def __eq__(self, other):
        return (type(other) is Format and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format({self.layout}, {self.sharding})"
