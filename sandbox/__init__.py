"""The embedded sandbox: a FastAPI fake of the address web service and the newspaper API, faithful to the
specifications, with reference data and fault injection. It never imports :mod:`connectors`.
"""
