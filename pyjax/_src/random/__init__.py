"""``pyjax.random``: explicit PRNG keys and samplers (Threefry-2x32, JAX's default mode).

``prng`` holds the cipher and key arrays, ``keys`` the key functions, ``distributions`` the
samplers that match JAX bit for bit, ``samplers`` the loop-based ones (gamma, Poisson,
binomial, ...); ``distributions`` also has the matrix-valued ones over ``jnp.linalg``.
"""
