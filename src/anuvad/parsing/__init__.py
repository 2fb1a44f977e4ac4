"""Constituency parsing as translation (section 6.3): trees and their linearisation, the
treebank corpus format, the well-formed-tree decoding constraint and an EVALB scorer.

It plugs into the generic layers through their hooks (a corpus format, an output constraint);
nothing generic imports it.
"""
