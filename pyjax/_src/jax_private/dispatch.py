"""`jax._src.dispatch`: pyjax's dispatch is `pyjax._src.dispatch`; none of JAX's private names
(e.g. `wait_for_tokens`) exist here, so code probing for them takes its fallback path."""
