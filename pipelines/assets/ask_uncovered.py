"""What the library does not cover, as the ask engine sees it: the uncovered topics' questions embedded.

The publisher knows what it does not review, and the seed ``ask_uncovered_topics`` says it once.
The encoder is trained to push those questions away from every entry; the server also refuses a
question that sits closer to one of them than to any entry text (``ask.engine``), so a question
about a product type next to the library's (an electric toothbrush beside the bamboo ones) gets
the no-match answer rather than the nearest entry's.
"""

from pipelines.ask_keys import UNCOVERED_VECTORS
from pipelines.assets.ask_vectors import embedded_texts_asset

ask_uncovered_vectors = embedded_texts_asset(
    UNCOVERED_VECTORS,
    "The uncovered topics' questions embedded with the ask encoder: a question closer to one of them than to "
    "any entry gets no answer.",
)
