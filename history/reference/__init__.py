"""Reference data kept beside the run history: the newspapers' master data, distribution and black lists,
and the commerce API's holidays, delivery instructions and additional services, with their change log."""
