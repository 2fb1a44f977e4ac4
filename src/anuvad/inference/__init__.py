"""Translation as a product: result types and the engine protocol, the torch engine, the CPU
acceleration applied from outside the model, documents (sentence splitting), attention views,
back-translation and the CTranslate2 export and engine (:mod:`anuvad.inference.ct2`)."""
