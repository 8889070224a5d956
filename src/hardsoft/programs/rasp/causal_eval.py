"""Tracr's ``causal_eval`` by its name (``tracr.rasp.causal_eval``): RASP evaluated with every
selector ANDed with the causal mask j <= i. Programs compiled with ``causal=True`` are checked
against it."""

from __future__ import annotations

from hardsoft.programs.rasp.evaluate import DefaultRASPEvaluator


class CausalEvaluator(DefaultRASPEvaluator):
    """Evaluates RASP with causal masking: a query at index i selects only keys j <= i."""

    causal = True


evaluate = CausalEvaluator().evaluate

__all__ = ["CausalEvaluator", "evaluate"]
