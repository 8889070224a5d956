"""A compiled RASP program's outputs: which coordinates, named how, read how.

* a Boolean SOp: one output named after it, 1 for true (``encoding: bool``);
* a numerical SOp: one output carrying its value (``encoding: number``), or a count carried
  as count/n or count/i (``unit``) where that saves the lookup head that recovers the integer;
* a categorical SOp: one output per value, ``NAME=VALUE`` (``encoding: onehot``);
* an SOp that can be None (a Boolean or a number) also gets ``NAME=None``, 1 where it is None
  (a categorical one is None where no ``NAME=VALUE`` output is 1).

``read`` says how a value is read off an output: ``threshold`` (> 1/2), ``round`` (the
nearest integer), ``nearest`` (the nearest of ``values``) or ``exact``. With softmax
attention (Theorem 26) an output is within ε of the average-hard one, and ``read`` recovers
it exactly when ε is below half the spacing of its values — which is how ε is chosen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hardsoft.errors import HardsoftError
from hardsoft.programs.ahat import dsl
from hardsoft.programs.ahat.dsl import Linear
from hardsoft.programs.rasp import api as R
from hardsoft.programs.rasp.aggregate import OTHERS
from hardsoft.programs.rasp.domains import Finite, Ints, Reals
from hardsoft.programs.rasp.lower import Low, Lowering
from hardsoft.programs.rasp.selectors import Unsupported


@dataclass
class Output:
    """One output coordinate: its form, its meta entry, and the precision it needs (half the
    spacing of its values; None for an exact real that must not pass a tieless head)."""

    form: Linear
    entry: dict[str, Any]
    precision: float | None


def json_value(v: Any) -> Any:
    """A RASP value as JSON (tuples become lists)."""
    if isinstance(v, tuple):
        return [json_value(x) for x in v]
    return v


def value_text(v: Any) -> str:
    """How a value appears in an output name: ``hist=3``, ``sort=a``, ``x=None``."""
    return v if isinstance(v, str) else repr(v)


def tieless_upstream(form: Linear) -> bool:
    """Whether any attention head that is not uniform feeds ``form`` (directly or not)."""
    seen: set[int] = set()
    stack: list[dsl.SOp] = [form]
    while stack:
        x = stack.pop()
        if x.uid in seen:
            continue
        seen.add(x.uid)
        if isinstance(x, dsl.Attend) and not x.uniform:
            return True
        stack.extend(dsl.dependencies(x))
    return False


def build_outputs(lw: Lowering, chosen: list[tuple[str, R.SOp]]) -> list[Output]:
    """The outputs of the statements ``chosen`` (name, SOp), in order."""
    out: list[Output] = []
    for stmt, sop in chosen:
        low = lw.low(sop)
        if R.is_numerical(sop):
            out.extend(_numerical(lw, stmt, low))
        else:
            out.extend(_categorical(lw, stmt, low))
    names = [o.entry["name"] for o in out]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise HardsoftError(f"two outputs would both be named {dup!r}; rename a statement")
    return out


def _entry(name: str, stmt: str, encoding: str, read: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "statement": stmt,
        "encoding": encoding,
        "unit": None,
        "read": read,
        **extra,
    }


def _none_output(lw: Lowering, stmt: str, low: Low) -> list[Output]:
    flag = lw.none(low)
    if flag is None:
        return []
    entry = _entry(f"{stmt}=None", stmt, "onehot", "threshold", value=None)
    return [Output(flag, entry, 0.5)]


def _numerical(lw: Lowering, stmt: str, low: Low) -> list[Output]:
    d = low.domain
    if isinstance(d, Finite) and not d.numeric:
        raise HardsoftError(
            f"the numerical output {stmt} takes values that are not numbers: {d.describe()}"
        )
    if low.scaled is not None and low.number is None:
        form = low.scaled.form
        if low.scaled.unit == OTHERS:  # a mean over j != i: only this form exists
            entry = _entry(stmt, stmt, "number", "exact", unit=OTHERS)
            return [Output(form, entry, None), *_none_output(lw, stmt, low)]
        if not tieless_upstream(form):
            entry = _entry(stmt, stmt, "number", "round", unit=f"count/{low.scaled.unit}")
            return [Output(form, entry, 0.5), *_none_output(lw, stmt, low)]
    number = lw.number(low)
    if isinstance(d, Ints) or (
        isinstance(d, Finite) and all(float(v).is_integer() for v in d.values)
    ):
        out = Output(number, _entry(stmt, stmt, "number", "round"), 0.5)
    elif isinstance(d, Finite):
        values = sorted({float(v) for v in d.values})
        out = Output(
            number, _entry(stmt, stmt, "number", "nearest", values=values), d.spacing() / 2
        )
    else:
        assert isinstance(d, Reals)
        out = Output(number, _entry(stmt, stmt, "number", "exact"), None)
    return [out, *_none_output(lw, stmt, low)]


def dict_update(o: Output, **extra: Any) -> Output:
    """``o`` with ``extra`` added to its meta entry."""
    return Output(o.form, {**o.entry, **extra}, o.precision)


def _one() -> Linear:
    return dsl.as_linear(1.0)


def _categorical(lw: Lowering, stmt: str, low: Low) -> list[Output]:
    d = low.domain
    user = f"the categorical output {stmt}"
    if isinstance(d, Ints):
        # integers that grow with n (a count, the length, indices): one output holding the
        # integer, read by rounding; a one-hot would need one coordinate per value
        lw.gadget(stmt, "a categorical SOp of integers that grow with n: one output holding "
                  "the integer (read by rounding), not one coordinate per value")  # fmt: skip
        return [dict_update(o, categorical=True) for o in _numerical(lw, stmt, low)]
    if not isinstance(d, Finite):
        try:
            fin = lw.finite(low, user)
            oh = lw.onehot(low, user)
        except Unsupported as exc:
            raise Unsupported(
                exc.operation,
                f"{exc.reason}; declare it numerical (rasp.numerical) for one output that is "
                "exact at every length",
                boundable=exc.boundable,
            ) from None
    else:
        fin, oh = d, lw.onehot(low, user)
    if not fin.values:  # always None (a Map whose function returns None on every value)
        entry = _entry(f"{stmt}=None", stmt, "onehot", "threshold", value=None)
        return [Output(_one(), entry, 0.5)]
    if fin.boolean:
        codes = [c for c, v in enumerate(fin.values) if v is True]
        form = oh[codes[0]] if codes else dsl.as_linear(0.0)
        return [
            Output(form, _entry(stmt, stmt, "bool", "threshold"), 0.5),
            *_none_output(lw, stmt, low),
        ]
    # One output per value as RASP compares them (==): 0, 0.0 and False are one value. The
    # lowering keeps them apart (a later function may tell them apart); here their indicators
    # add up (at most one is 1).
    classes: dict[Any, list[int]] = {}
    for c, v in enumerate(fin.values):
        classes.setdefault(_eq_key(v), []).append(c)
    reps = [fin.values[codes[0]] for codes in classes.values()]
    shown = [value_text(v) for v in reps]
    if len(set(shown)) != len(shown):
        shown = [repr(v) for v in reps]
    return [
        Output(
            _sum(oh, codes),
            _entry(f"{stmt}={text}", stmt, "onehot", "threshold", value=json_value(v)),
            0.5,
        )
        for codes, v, text in zip(classes.values(), reps, shown)
    ]


def _eq_key(v: Any) -> Any:
    """Values equal under == share a key (tuples and lists alike)."""
    return tuple(_eq_key(x) for x in v) if isinstance(v, (list, tuple)) else v


def _sum(oh: dict[int, Linear], codes: list[int]) -> Linear:
    total = Linear({}, 0.0)
    for c in codes:
        total = total.plus(oh[c])
    return total
