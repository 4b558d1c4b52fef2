"""The model shim: the core's answers judged step by step, and the world that runs it."""
