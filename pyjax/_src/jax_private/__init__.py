"""What `jax._src.*` resolves to under `install_as_jax()`: the few private JAX names that
optax, chex, flax and equinox read, with JAX's behaviour where pyjax can give it. Only code
run as `jax` reaches these modules; pyjax itself never imports them."""
