"""Compatibility shim: the renderers moved to :mod:`advisor.render` (``advisor.render.markdown``)."""

from advisor.render.markdown import *  # noqa: F403
from advisor.render.markdown import __all__  # noqa: F401
from advisor.render.verdict_line import plain_verdict  # noqa: F401  (report.plain_verdict, as before)
