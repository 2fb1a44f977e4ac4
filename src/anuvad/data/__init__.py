"""Text to tensors: the tokenizer, corpus readers and cleaning, token-budget batches, the
prepared (encoded) cache, and the catalogue of downloadable corpora."""
