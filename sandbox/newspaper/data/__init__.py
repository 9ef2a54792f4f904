"""Data files of the newspaper sandbox (a package so that they ship with it): the reference newspapers and
the places, titles, publishers and printers generated newspapers are drawn from, ``newspapers.json``."""
