"""The checker's own readings: of a configuration, of the core, of what a shim knows,
of one step being judged."""
