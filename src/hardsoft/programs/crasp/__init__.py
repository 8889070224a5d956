"""C-RASP (Yang & Chiang, COLM 2024, "Counting like transformers"), read from ``.cr`` files in
the form of the coli-saar/c-rasp interpreter, with the periodic and local predicates of Huang
et al. (ICLR 2025). See docs/programs.md, "C-RASP".

========================  =============================================================
module                    what
========================  =============================================================
``syntax``                the expression tree and its printer
``parser``                the lark grammar (precedence, line/column errors with a caret)
``predicates``            the built-in ``#import`` predicates (pred, predK, prevK, ...)
``checker``               names, order, types, predicates, symbols: one-line refusals
``interpret``             the plain interpreter (numpy, every operator by its definition)
``translate``             statements → past-only LTL[C,+] formulas for the compiler
``emit``                  LTL[C,+] formulas (e.g. decompiled) → a C-RASP program
``random``                random well-typed programs for property tests
``program``               :class:`CRaspProgram`: run, translate, compile; :func:`load`
========================  =============================================================
"""

from hardsoft.programs.crasp.program import CRaspProgram, from_text, load

__all__ = ["CRaspProgram", "from_text", "load"]
