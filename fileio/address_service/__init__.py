"""The address web service's files: the batch upload written, the result read back, alignment profiles."""
