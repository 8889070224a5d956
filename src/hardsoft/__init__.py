"""hardsoft: what transformers with hard and soft attention can and cannot compute.

Subpackages: ``model`` (the exact transformer), ``languages`` (oracles, samplers, Hahn's
processes), ``logic`` (temporal logic with counting), ``compile`` (formulas to transformers),
``programs`` (average-hard programs and their softmax simulation), ``limits`` (restrictions,
sensitivity), ``learn`` (training), ``experiments`` and ``report`` (the reproduce pipeline).
"""

__version__ = "0.1.0"
