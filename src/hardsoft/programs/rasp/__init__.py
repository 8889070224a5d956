"""Tracr's RASP in hardsoft: the API (:mod:`.api`), its evaluator (:mod:`.evaluate`), the
lowering to average-hard programs (:mod:`.lower`) and the compiler (:mod:`.compile`); loaded
from ``FILE.py[:NAME]`` by :func:`load` (:mod:`.load`). Users import it as
``from hardsoft import rasp`` (the facade ``hardsoft/rasp.py``)."""

from hardsoft.programs.rasp import evaluate as _evaluate  # noqa: F401  (installs expr(xs))
from hardsoft.programs.rasp.load import RaspProgram, load, programs_in

__all__ = ["RaspProgram", "load", "programs_in"]
