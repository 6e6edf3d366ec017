"""How many entries ``ask.json`` answers with: by default, and at most.

Declared here, under everything, because both sides of the flow read them: the public contract
(``public.openapi``) and the server that applies them, and the ask engine's evaluation and
fitting, which score and fit on what a reader gets by default. ``public`` may not import ``ask``.
"""

from __future__ import annotations

ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT = 5, 20
