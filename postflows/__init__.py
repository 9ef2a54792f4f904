"""The application shell of postflows: settings, the composition root that builds clients, and the CLI."""
