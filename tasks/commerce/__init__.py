"""Tasks of the commerce API: address validation, deliverability, delivery reference data, pickup, and the
store of a signed-in user's refresh token."""
