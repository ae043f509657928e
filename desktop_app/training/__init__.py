"""Training Quarry's own models from a corpus of public source packages (issue 30)."""
