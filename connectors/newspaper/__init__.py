"""Connector of the newspaper Online Services API: orders, newspapers, distribution lists, statistics and
address purchases, with OAuth 2.0 client credentials per endpoint group.
"""

# The names are those of __init__.pyi: each module is imported when one of its names is first looked up,
# so what needs one module of a connector (its codes, its errors) does not load the others.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
