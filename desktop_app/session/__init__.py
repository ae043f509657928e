"""What the user of a window is looking at, kept apart from Qt so that it can be driven and tested alone."""
