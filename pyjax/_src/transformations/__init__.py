"""Transformations as users call them (jit, grad and friends, vmap, custom derivatives,
checkpoint): front ends and the higher-order primitives they bind."""
