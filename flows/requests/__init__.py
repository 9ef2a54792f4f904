"""Every flow's options as pydantic models, declared once: the Prefect form, the ``postflows`` command's
options, the pre-checks and the work's identity are read from them (see :mod:`flows.requests.base`).

A flow takes one parameter per part: its request (what to do) and the shared parts (how long to wait, where
the results go). Importing this package imports pydantic and nothing of the flows' engine.

The names are those of ``__init__.pyi``: each module is imported when one of its names is first looked up,
so the address flows load no newspaper or commerce request (nor what those import).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
