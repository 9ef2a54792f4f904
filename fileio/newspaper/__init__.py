"""The newspaper flows' files: order and purchase parameter files, statistics tables, saved answers."""
