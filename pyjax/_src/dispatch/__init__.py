"""Running things: eager execution of primitives, the executable caches, compiling a
Jaxpr, choosing the device, and the eager grad record/replay."""
