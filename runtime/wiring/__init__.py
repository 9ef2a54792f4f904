"""The composition root: builds each API's clients from :class:`~runtime.settings.Settings`, one module per
API (:mod:`.address_service`, :mod:`.newspaper`, :mod:`.commerce`) on what they share (:mod:`.services`),
with the embedded sandbox attached as a transport where a service's URL is unset (:mod:`.embedded`).

The names are those of ``__init__.pyi``: each module is imported when one of its names is first looked up,
so a run of one API loads no other API's client, connector or tasks.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
