"""``jax.experimental``: the parts pyjax has (``compilation_cache``)."""
