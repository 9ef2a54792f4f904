"""The commerce flows' input files: addresses to validate or check, pickup registrations."""
