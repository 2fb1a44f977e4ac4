"""CTranslate2: export a model file to a CTranslate2 folder, and an engine that serves it."""
