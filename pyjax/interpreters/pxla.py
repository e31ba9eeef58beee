"""``jax.interpreters.pxla``: JAX's internal SPMD-lowering helpers. pyjax lowers SPMD programs
its own way (pyjax._src.parallel) and provides none of them; the module exists because
libraries import it (orbax-checkpoint uses it only under Pathways)."""
