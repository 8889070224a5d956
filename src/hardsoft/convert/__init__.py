"""Converting between hard and soft attention (Yang, Strobl, Chiang & Angluin (TACL 2026);
Hahn (2020) §5): :func:`soften` turns any hard-attention model into a softmax model with a
temperature and a certified error bound; :func:`harden` turns softmax heads into hard heads
with the same weights. See docs/soften.md."""

from hardsoft.convert.harden import harden
from hardsoft.convert.soften import DEFAULT_EPS, DEFAULT_N, SoftenResult, soften

__all__ = ["DEFAULT_EPS", "DEFAULT_N", "SoftenResult", "harden", "soften"]
