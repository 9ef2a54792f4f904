"""Data files of the address-service sandbox (a package so that they ship with it): the postcode directory
``swiss_postcodes.csv``, its source and licence named in its header; the synthetic reference data's towns,
curated records and filler names, ``reference_seed.json``."""
