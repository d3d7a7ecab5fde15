"""Logging topics switched on by ``DYNGRAPH_LOG=guards,recompiles,graph,kernels,fallbacks``
(or ``all``).  Each topic is a ``logging`` logger named ``dyngraph.<topic>``."""

from __future__ import annotations

import logging
import os

TOPICS = ("guards", "recompiles", "graph", "kernels", "fallbacks")


# the library's loggers stay silent unless the application configures logging (a
# NullHandler on the parent, as libraries should), and a topic switched on here prints once
logging.getLogger("dyngraph").addHandler(logging.NullHandler())


def _logger(topic: str) -> logging.Logger:
    return logging.getLogger(f"dyngraph.{topic}")


guards = _logger("guards")
recompiles = _logger("recompiles")
graph = _logger("graph")
kernels = _logger("kernels")
fallbacks = _logger("fallbacks")


class _TopicHandler(logging.StreamHandler):
    """Prints a switched-on topic to stderr while the application has not configured
    logging; once the root logger has handlers (``logging.basicConfig``), the record reaches
    them through propagation instead, so each line prints once either way."""

    def emit(self, record):
        if not logging.getLogger().handlers:
            super().emit(record)


def configure(spec: str | None = None) -> None:
    """Enable the topics named in ``spec`` (default: ``$DYNGRAPH_LOG``) at INFO level."""
    spec = os.environ.get("DYNGRAPH_LOG", "") if spec is None else spec
    wanted = {t.strip() for t in spec.split(",") if t.strip()}
    if "all" in wanted:
        wanted = set(TOPICS)
    unknown = wanted - set(TOPICS)
    if unknown:
        raise ValueError(f"DYNGRAPH_LOG: unknown topics {sorted(unknown)}; known: "
                         f"{', '.join(TOPICS)}")
    for t in TOPICS:
        lg = _logger(t)
        if t in wanted:
            lg.setLevel(logging.INFO)
            if not lg.handlers:
                h = _TopicHandler()
                h.setFormatter(logging.Formatter(f"[dyngraph.{t}] %(message)s"))
                lg.addHandler(h)
        else:
            lg.setLevel(logging.WARNING)


configure()
