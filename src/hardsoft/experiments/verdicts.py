"""The words of a verdict, and the Theorem 6 trend test (Hahn 2020 §6) that both the learning
experiment's summary and the report's claim table read: one fixed trained model per seed,
evaluated at growing n, judged by 95% t-intervals over seeds."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hardsoft.limits.sensitivity import t_quantile

REPRODUCED, DEVIATES, EXTENDS = "reproduced", "deviates", "extends"
INCONCLUSIVE = "inconclusive"


def finite_values(values: list[Any]) -> list[float]:
    return [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]


def _interval(values: list[float]) -> tuple[float, float, float] | None:
    """Mean and 95% t-interval of the mean over seeds; None with fewer than 2 finite values."""
    v = finite_values(values)
    if len(v) < 2:
        return None
    mean = sum(v) / len(v)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1))
    half = t_quantile(0.975, len(v) - 1) * sd / math.sqrt(len(v))
    return mean, mean - half, mean + half


def _iv(b: tuple[float, float, float]) -> str:
    return f"{b[0]:.2f} [{b[1]:.2f}, {b[2]:.2f}]"


def _parity_transformer(entry: Mapping[str, Any]) -> tuple[str, str]:
    """PARITY, one fixed transformer at growing n: the gap as a fraction of the chance gap
    must start clearly below 1 (mean over seeds <= 0.8), rise (last − first length, interval
    above 0) and end near 1 (lower end >= 0.8)."""
    gaps, chance = entry["gap"], entry["chance_gap"]
    ratios = [[float(g) / float(chance[k]) for g in gaps[k]] for k in range(len(gaps))]
    first, last = _interval(ratios[0]), _interval(ratios[-1])
    rise = _interval([b - a for a, b in zip(ratios[0], ratios[-1])])
    if first is None or last is None or rise is None:
        mean = sum(ratios[-1]) / max(1, len(ratios[-1]))
        return INCONCLUSIVE, f"gap/chance {mean:.2f} at the largest n; one seed, no interval"
    text = f"gap/chance {_iv(first)} → {_iv(last)}, rise {_iv(rise)}"
    if first[0] > 0.8:  # within 20% of chance (mean over seeds) at the shortest n
        return INCONCLUSIVE, text + " (near chance already at the shortest n: nothing to grow)"
    if rise[1] > 0 and last[1] >= 0.8:
        return REPRODUCED, text
    if rise[2] <= 0 and last[2] < 0.5:
        return DEVIATES, text + " (no rise towards chance)"
    return INCONCLUSIVE, text


def _dyck_transformer(
    entry: Mapping[str, Any], lengths: list[int], train_max: int
) -> tuple[str, str]:
    """2DYCK, one fixed transformer at growing n: beyond the training lengths the gap must
    stay above Hahn's bound P0(n)(1−p)ln 2 (a positive constant in the limit)."""
    long = [k for k, n in enumerate(lengths) if n > train_max] or [len(lengths) - 1]
    bands = [_interval(entry["gap"][k]) for k in long]
    bound = [float(entry["hahn_bound"][k]) for k in long]
    if any(b is None for b in bands):
        mean = sum(entry["gap"][-1]) / max(1, len(entry["gap"][-1]))
        return INCONCLUSIVE, f"gap {mean:.3f} at the largest n; one seed, no interval"
    ok = [b for b in bands if b is not None]
    text = f"gap {_iv(ok[-1])} at n = {lengths[long[-1]]} (Hahn's bound {bound[-1]:.3f})"
    if all(b[1] >= c for b, c in zip(ok, bound)):
        return REPRODUCED, text
    drop = _interval([b - a for a, b in zip(entry["gap"][long[0]], entry["gap"][long[-1]])])
    if all(b[2] < c for b, c in zip(ok, bound)) and drop is not None and drop[2] < 0:
        return DEVIATES, text + " (below the bound and falling)"
    return INCONCLUSIVE, text


def _lstm_optimal(entry: Mapping[str, Any]) -> tuple[str, str]:
    """PARITY: an LSTM reaches the optimum: gap at the largest n within 10% of chance."""
    last = _interval([float(g) / float(entry["chance_gap"][-1]) for g in entry["gap"][-1]])
    if last is None:
        return INCONCLUSIVE, "one seed, no interval"
    ok = last[2] <= 0.1
    return (REPRODUCED if ok else INCONCLUSIVE), f"LSTM gap/chance {_iv(last)}"


def theorem6_trend(fixed: Mapping[str, Any]) -> dict[str, Any]:
    """The Theorem 6 verdict on one trained model per seed evaluated at growing n (train on
    n <= train_max, test longer): per part (``{language}/{model}``) a verdict and its numbers,
    and the overall verdict: reproduced when every transformer part and the PARITY LSTM are,
    deviates when a transformer part deviates, else inconclusive."""
    lengths, by = [int(n) for n in fixed["lengths"]], fixed["by"]
    parts: dict[str, tuple[str, str]] = {}
    order = ("tf-none", "tf-bidir", "lstm")
    for key in sorted(
        by,
        key=lambda k: (
            k.split("/")[0] != "parity",
            order.index(k.split("/")[1]) if k.split("/")[1] in order else 9,
        ),
    ):
        entry = by[key]
        language, model = key.split("/")
        if model == "lstm":
            if language == "parity":
                parts[key] = _lstm_optimal(entry)
        elif model in ("tf-none", "tf-bidir"):
            parts[key] = (
                _parity_transformer(entry)
                if language == "parity"
                else _dyck_transformer(entry, lengths, int(fixed["train_max"]))
            )
    verdicts = [v for v, _ in parts.values()]
    if not parts:
        raise ValueError("no fixed-model results")
    if any(v == DEVIATES for v in verdicts):
        overall = DEVIATES
    elif all(v == REPRODUCED for v in verdicts) and len(parts) == 5:
        overall = REPRODUCED
    else:
        overall = INCONCLUSIVE
    return {
        "verdict": overall,
        "parts": {k: {"verdict": v, "numbers": t} for k, (v, t) in parts.items()},
    }
