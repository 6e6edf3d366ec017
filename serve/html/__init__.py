"""The HTML site for people: the pages rendered from a snapshot (``site``), their bench charts
(``charts``) and their Jinja templates (``templates/``)."""
