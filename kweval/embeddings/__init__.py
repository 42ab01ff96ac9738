"""Sentence embeddings: the model (torch or ONNX Runtime), the persistent vector store, semantic similarities."""
