"""Data files of the address-service sandbox (a package so that they ship with it): the postcode directory
``swiss_postcodes.csv``, its source and licence named in its header."""
