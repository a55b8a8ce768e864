"""The version of synth, in a module of its own.

Modules that stamp the version into files (certificates, the solve cache) import it from here, not
from the :mod:`synth` facade, whose imports would run back into them (an import cycle).

>>> from synth._version import __version__
>>> __version__.count(".")
2
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
