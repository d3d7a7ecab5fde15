"""The functional forms added together for the most-used remaining names of
``torch.nn.functional``: :mod:`.extra_losses` (margin, embedding and likelihood losses),
:mod:`.embedding_bag`, :mod:`.grid` (``affine_grid``, ``grid_sample``) and
:mod:`.gumbel` (``gumbel_softmax``); :mod:`eager.nn.functional` re-exports ``__all__``."""

from .embedding_bag import embedding_bag
from .extra_losses import (
                           cosine_embedding_loss,
                           gaussian_nll_loss,
                           hinge_embedding_loss,
                           margin_ranking_loss,
                           multilabel_soft_margin_loss,
                           poisson_nll_loss,
                           soft_margin_loss,
                           triplet_margin_loss,
)
from .grid import affine_grid, grid_sample
from .gumbel import gumbel_softmax

__all__ = ["affine_grid", "cosine_embedding_loss", "embedding_bag", "gaussian_nll_loss",
           "grid_sample", "gumbel_softmax", "hinge_embedding_loss", "margin_ranking_loss",
           "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
           "triplet_margin_loss"]
