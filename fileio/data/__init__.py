"""Data files of the file layer (a package so that they ship with it): the header aliases by which address
columns are recognised, ``address_header_aliases.json``."""
