"""Text embeddings for semantic search: model registry, execution providers and the Embedder.

Nothing is imported here: a parse process reads the token counter alone (token_counting.py), without numpy and
ONNX Runtime (~0.1 s of its start), so each part is imported from its module.
"""
