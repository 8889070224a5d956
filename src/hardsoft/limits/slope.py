"""Log-log slopes with a Student-t interval: how fast a measured quantity decays with ``n``.

The statistics of :mod:`hardsoft.limits.sensitivity` (Hahn (2020) Lemma 5 predicts slope −1 for
the influence of one symbol on the last position) and of the learning experiment. Importable
from ``hardsoft.limits.sensitivity`` too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hardsoft.errors import HardsoftError

__all__ = ["MIN_CI_POINTS", "Slope", "fit_slope", "t_quantile"]

MIN_CI_POINTS = 3
"""A t-interval needs at least this many lengths (two points leave no degree of freedom)."""


def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile (``q > 1/2``) of Student's t distribution (``scipy.stats.t.ppf``)."""
    if not 0.5 < q < 1 or df <= 0:
        raise ValueError("t_quantile needs 1/2 < q < 1 and df > 0")
    from scipy.stats import t as student_t  # scipy is slow to import: only when fitting

    return float(student_t.ppf(q, df))


@dataclass
class Slope:
    """A least-squares fit ``log y = intercept + slope · log n`` with a t-interval."""

    slope: float
    ci: tuple[float, float]
    intercept: float
    n_points: int
    n_range: tuple[int, int]

    @property
    def has_interval(self) -> bool:
        """Whether ``ci`` is a real interval (with two points it is the whole line)."""
        return self.n_points >= MIN_CI_POINTS

    @property
    def ci_note(self) -> str | None:
        """Why there is no interval (None when there is one)."""
        if self.has_interval:
            return None
        return (
            f"a confidence interval needs >= {MIN_CI_POINTS} lengths in the fitting range; "
            f"got {self.n_points}"
        )


def fit_slope(
    lengths: Sequence[int],
    values: Sequence[float],
    n_min: int | None = None,
    n_max: int | None = None,
    level: float = 0.95,
) -> Slope:
    """Fit the log-log slope of ``values`` against ``lengths`` on ``n_min <= n <= n_max``.

    The interval is the usual OLS one, ``slope ± t_{(1+level)/2, m−2} · se``; with only two
    points it is (−inf, inf) and :attr:`Slope.has_interval` is False. Zero or negative values
    cannot be fitted (HardsoftError)."""
    pts = [
        (float(n), float(v))
        for n, v in zip(lengths, values)
        if (n_min is None or n >= n_min) and (n_max is None or n <= n_max)
    ]
    if len(pts) < 2:
        raise HardsoftError("a slope needs at least two lengths in the fitting range")
    if any(not (v > 0 and math.isfinite(v)) for _, v in pts):
        raise HardsoftError("cannot fit a log-log slope to zero or non-finite values")
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    if sxx == 0:
        raise HardsoftError("a slope needs at least two distinct lengths")
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    m = len(pts)
    if m >= MIN_CI_POINTS:
        resid = y - (intercept + slope * x)
        se = math.sqrt(float((resid**2).sum()) / (m - 2) / sxx)
        half = t_quantile((1 + level) / 2, m - 2) * se
    else:
        half = math.inf
    n_lo, n_hi = int(min(p[0] for p in pts)), int(max(p[0] for p in pts))
    return Slope(slope, (slope - half, slope + half), intercept, m, (n_lo, n_hi))
