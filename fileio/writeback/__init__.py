"""Writing a user's table file back: a copy of it (delimited or fixed-width text, or a workbook) with some
cells replaced and everything else as it was, every row in input order; each edit that cannot be made is
left out and said why (:func:`write_back`, :class:`WriteBackOutcome`).
"""

# The names are those of __init__.pyi: each module is imported when one of its names is first looked up,
# so a flow that only names the write-back's options loads no writer before its write-back step.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
