"""The self-test: the deliberately broken cores and the hunt for each."""
