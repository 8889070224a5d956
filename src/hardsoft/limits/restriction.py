"""Input restrictions ρ_n (Hahn (2020) §5): the value type lives in
:mod:`hardsoft.languages.restriction` (the languages' witness hooks take one, and the ground
truth imports nothing from the engines); this module keeps the names importable from the
restriction engine's package."""

from hardsoft.languages.restriction import FREE, AcceptingModel, RestrictedModel, Restriction

__all__ = ["FREE", "AcceptingModel", "RestrictedModel", "Restriction"]
