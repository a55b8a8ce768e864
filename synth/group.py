"""Moved to synth.symmetry.group (Group), synth.symmetry.torus (the torus groups) and synth.symmetry.spec
(named_group); kept so old imports work.
"""

from synth.symmetry.group import Group
from synth.symmetry.spec import named_group
from synth.symmetry.torus import torus_gamma, torus_translations, torus_translations_negation

__all__ = ["Group", "named_group", "torus_gamma", "torus_translations", "torus_translations_negation"]
