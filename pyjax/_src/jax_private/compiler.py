"""`jax._src.compiler`: pyjax compiles through its own runtime (`pyjax._src.dispatch.compiler`),
not through JAX's `backend_compile*` functions, so this module has none of them: code that
patches them (chex.restrict_backends) fails when used instead of silently not applying."""
