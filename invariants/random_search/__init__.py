"""The random search: seeded cases, their counterexamples (replay, shrink, shorten)."""
