"""crew.tools: the Python parts of the `crew` command (`crew plot` runs crew.tools.plot)."""
