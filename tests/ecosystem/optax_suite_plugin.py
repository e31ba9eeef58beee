"""pytest plugin (`-p tests.ecosystem.optax_suite_plugin`) that makes `import jax` resolve to
pyjax before pytest collects optax's own test modules from the installed wheel."""
import pyjax

pyjax.install_as_jax()
