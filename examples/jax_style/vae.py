"""A variational autoencoder in the style of JAX's examples/mnist_vae.py: stax encoder and
decoder, Gaussian latent with the reparameterisation trick, Bernoulli likelihood, adam from
jax.example_libraries.optimizers; trained on 16-pixel binary images drawn from four prototypes
with 5% of pixels flipped.

    python -m pyjax examples/jax_style/vae.py
"""
import numpy as np
import numpy.random as npr

import jax
import jax.numpy as jnp
from jax import jit, grad, lax, random
from jax.example_libraries import optimizers
from jax.example_libraries import stax
from jax.example_libraries.stax import Dense, FanOut, Relu, Softplus

NUM_PIXELS, LATENT, FLIP = 16, 2, 0.05


def prototypes():
    rng = npr.RandomState(42)
    return (rng.rand(4, NUM_PIXELS) < 0.5).astype(np.float32)


def binary_images(n, seed):
    rng = npr.RandomState(seed)
    protos = prototypes()
    images = protos[rng.randint(0, 4, n)]
    flips = rng.rand(n, NUM_PIXELS) < FLIP
    return np.where(flips, 1.0 - images, images).astype(np.float32)


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard Gaussian."""
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu**2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    return mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def elbo(rng, params, images):
    enc_params, dec_params = params
    mu_z, sigmasq_z = encode(enc_params, images)
    logits_x = decode(dec_params, gaussian_sample(rng, mu_z, sigmasq_z))
    return bernoulli_logpdf(logits_x, images) - gaussian_kl(mu_z, sigmasq_z)


encoder_init, encode = stax.serial(
    Dense(32), Relu,
    FanOut(2),
    stax.parallel(Dense(LATENT), stax.serial(Dense(LATENT), Softplus)),
)

decoder_init, decode = stax.serial(
    Dense(32), Relu,
    Dense(NUM_PIXELS),
)

if __name__ == "__main__":
    step_size, num_epochs, batch_size = 0.01, 30, 32
    train_images = binary_images(512, 0)
    num_batches = len(train_images) // batch_size

    enc_init_rng, dec_init_rng = random.split(random.PRNGKey(2))
    _, init_encoder_params = encoder_init(enc_init_rng, (batch_size, NUM_PIXELS))
    _, init_decoder_params = decoder_init(dec_init_rng, (batch_size, LATENT))
    init_params = init_encoder_params, init_decoder_params

    opt_init, opt_update, get_params = optimizers.adam(step_size)

    def binarize_batch(i):
        i = i % num_batches
        return lax.dynamic_slice_in_dim(train_images, i * batch_size, batch_size)

    @jit
    def run_epoch(rng, opt_state):
        def body_fun(i, opt_state):
            elbo_rng = random.fold_in(rng, i)
            batch = binarize_batch(i)
            loss = lambda params: -elbo(elbo_rng, params, batch) / batch_size
            g = grad(loss)(get_params(opt_state))
            return opt_update(i, g, opt_state)
        return lax.fori_loop(0, num_batches, body_fun, opt_state)

    @jit
    def neg_elbo_per_image(params, images):
        # averaged over 32 latent samples, so that one noisy draw does not decide the number
        rngs = random.split(random.PRNGKey(123), 32)
        return -jnp.mean(jax.vmap(lambda r: elbo(r, params, images))(rngs)) / images.shape[0]

    print(f"initial_neg_elbo {float(neg_elbo_per_image(init_params, train_images)):.6f}")
    opt_state = opt_init(init_params)
    for epoch in range(num_epochs):
        opt_state = run_epoch(random.PRNGKey(epoch), opt_state)
    print(f"final_neg_elbo {float(neg_elbo_per_image(get_params(opt_state), train_images)):.6f}")
