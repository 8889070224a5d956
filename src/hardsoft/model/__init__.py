"""The exact transformer of Hahn (2020) and Yang et al. (2026): spec, position features,
attention, module, I/O."""

from hardsoft.model.attention import attend, attend_chunked, weights_from_scores
from hardsoft.model.factory import random_model
from hardsoft.model.features import PositionFeature, feature_matrix, parse_feature
from hardsoft.model.io import load_model, read_metadata, save_model
from hardsoft.model.spec import (
    HARD_WEIGHTINGS,
    MASKS,
    WEIGHTINGS,
    HeadSpec,
    LayerNormPlacement,
    LayerSpec,
    Mask,
    ModelSpec,
    Weighting,
    eval_tau,
    parse_tau,
)
from hardsoft.model.transformer import ModelOutput, Transformer

__all__ = [
    "HARD_WEIGHTINGS",
    "MASKS",
    "WEIGHTINGS",
    "HeadSpec",
    "LayerNormPlacement",
    "LayerSpec",
    "Mask",
    "ModelOutput",
    "ModelSpec",
    "PositionFeature",
    "Transformer",
    "Weighting",
    "attend",
    "attend_chunked",
    "eval_tau",
    "feature_matrix",
    "load_model",
    "parse_feature",
    "parse_tau",
    "random_model",
    "read_metadata",
    "save_model",
    "weights_from_scores",
]
