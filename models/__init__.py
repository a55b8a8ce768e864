"""Optimization models (installed as ``synth.models``): k-hop trees, exchange forests, balanced families.

The checker (:mod:`synth.check`) never imports this package.
"""
