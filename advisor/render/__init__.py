"""Rendering: verdicts, predictions, options and chat replies as Markdown; the terminal with ``rich``.

* :mod:`advisor.render.markdown` the long form (``advisor diagnose``, exports) and shared thresholds;
* :mod:`advisor.render.reply` the chat's short answers and follow-ups;
* :mod:`advisor.render.options` options side by side (the Compare engine);
* :mod:`advisor.render.conversation` which of those a chat turn gets;
* :mod:`advisor.render.terminal` Markdown, tables and progress in a terminal (``rich``).
"""
