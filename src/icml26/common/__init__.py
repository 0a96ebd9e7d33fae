"""Fixtures several papers share: a tiny decoder LM (:mod:`.tinylm`) and a synthetic fact corpus (:mod:`.facts`).

Not part of the core machinery: models and data live here, so ``icml26.core`` stays paper- and model-free.
Import the submodules directly (``from icml26.common.tinylm import TinyLM``); importing this package loads
nothing heavy.
"""
