"""Other toolkits' model formats: Hugging Face Marian import and export."""
