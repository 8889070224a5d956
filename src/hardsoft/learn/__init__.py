"""Learning experiments: exact-target next-symbol training of the soft-attention ``Transformer``
and an LSTM baseline on Hahn's §6 processes, with evaluation of cross-entropy by prefix length
against the optimal and unigram-chance cross-entropy; recognizers of any language (Butoi et al.
2025, :mod:`hardsoft.learn.recognize`) with accuracy by length; and sweeps of many runs
in-process or on Ray (:mod:`hardsoft.learn.sweep`). See docs/learning.md."""

from hardsoft.learn.data import LANGUAGES, exact_targets, get_process, sample_batch
from hardsoft.learn.evaluate import (
    GeneralizationResult,
    LengthRow,
    cross_entropy_by_length,
    evaluate_model,
    length_generalization,
    majority_baseline,
)
from hardsoft.learn.models import ARCHS, ArchConfig, LSTMModel, build_model, logits
from hardsoft.learn.recognize import Objective, accuracy_by_length, resolve_objective
from hardsoft.learn.train import TrainConfig, load_config, load_run, train

__all__ = [
    "ARCHS",
    "LANGUAGES",
    "ArchConfig",
    "GeneralizationResult",
    "LSTMModel",
    "LengthRow",
    "Objective",
    "TrainConfig",
    "accuracy_by_length",
    "build_model",
    "cross_entropy_by_length",
    "evaluate_model",
    "exact_targets",
    "get_process",
    "length_generalization",
    "load_config",
    "load_run",
    "logits",
    "majority_baseline",
    "resolve_objective",
    "sample_batch",
    "train",
]
