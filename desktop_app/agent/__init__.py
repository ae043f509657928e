"""Quarry for coding agents and editors: the index served over the Model Context Protocol (`quarry mcp`)."""
