"""Scores: sacreBLEU BLEU and chrF++, and the paper's tokenized BLEU."""
