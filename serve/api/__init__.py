"""The API's routes: ask.json (``routes_ask``), bench readings (``routes_bench``), the release's
files and distributions (``routes_catalogue``), page.json and changes.json (``routes_pages``),
query parameters (``params``), HTTP errors as problem+json (``problems``) and answers sent
straight from a release's files (``release_responses``)."""
