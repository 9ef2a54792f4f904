"""Data files of the commerce sandbox (a package so that they ship with it): the registered end users
``default_users.json`` and the delivery catalogue ``delivery_options.json``."""
