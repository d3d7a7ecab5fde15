"""Small training programs in the style of common public ones, each written once against
a ``torch``-like module passed in (``eager`` or PyTorch), for the ``realprograms``
benchmark family (``benchmarks/families/realprograms.py``).

Each module defines ``build(torch, seed=0, wrap=None) -> (step, batches)``: ``step(*batch)``
does one training step (forward, loss, backward, optimizer step) and returns the loss
detached; ``batches`` is a list of argument tuples, cycled.  ``wrap``, when given, is
applied to the model (or the forward function) as ``torch.compile(model)`` users do.
Weights come from NumPy (:func:`common.init_params`), so every library starts from the
same state and the losses can be compared.
"""

PROGRAMS = ["vae", "gpt", "makemore", "vit", "seq2seq", "actor_critic", "cnn", "lstm"]
