"""Compatibility shim: the renderers moved to :mod:`advisor.render` (``advisor.render.markdown``)."""

from advisor.render.markdown import *  # noqa: F403
from advisor.render.markdown import __all__  # noqa: F401
