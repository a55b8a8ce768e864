"""Depth-bounded spanning forests on a root set: the core the k-hop and exchange models share.

A k-hop tree is the forest on the root set ``{0}``, an exchange forest the one on ``{0, b}``.
The modules here know distances, hop arcs, label searches and brute force; they never import
:mod:`synth.models.khop` or :mod:`synth.models.xhop`.
"""
