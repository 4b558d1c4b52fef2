"""The properties an auditor reads, by topic, and the registries they are declared in."""
