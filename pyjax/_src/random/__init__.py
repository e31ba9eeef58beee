"""``pyjax.random``: explicit PRNG keys and samplers (Threefry-2x32, JAX's default mode).

``prng`` holds the cipher and key arrays, ``keys`` the key functions, ``distributions`` the
closed-form samplers, ``samplers`` those JAX builds on ``while`` loops (gamma, Poisson,
binomial, multinomial, ...), with JAX's algorithms and numbers, and ``matrix`` the
matrix-valued ones.
"""
