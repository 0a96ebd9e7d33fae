"""icml26: tested, reusable implementations of ICML 2026 methods.

Each paper lives in its own subpackage (``icml26.<slug>``) with the method as a component, the baselines the
paper compares against, and a reproduction registered with :mod:`icml26.core.registry`.  Run
``icml26 list`` to see them and ``icml26 run SLUG`` to check a paper's claims.
"""

__version__ = "0.1.0"
