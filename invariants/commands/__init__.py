"""The checker's commands: check, replay, view, explore, invariants, flows; the generated docs."""
