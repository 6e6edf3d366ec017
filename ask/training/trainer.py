"""The ask encoder's fine-tuning: quantisation-aware contrastive training on the publisher's library.

A frozen multilingual encoder cannot tell this library's entries apart (they are all about
reusable bottles, bags and brushes), so it is trained to. Each step draws a batch of pairs:

- half are two texts of one entry (its question or scenario in two languages, an analyst's
  phrasing), half a dev question with a text of its entry: about half the gain comes from the
  library itself, half from questions written the way people ask;
- the batch's entries are drawn a few categories at a time, so most of an anchor's in-batch
  negatives are entries of its own category, the ones it is confused with;
- every anchor is scored against every positive of the batch (InfoNCE at temperature T), other
  positives of the anchor's own entry masked out; a question's row has one more column, "no
  entry", whose logit is a fixed cosine margin / T: a dev question has it as a negative (its entry
  must beat the margin), a question nothing answers has it as its positive (every entry must stay
  under the margin), so the library learns where it ends;
- lambda times the mean squared distance between the trained and the base embeddings of the
  batch's entry texts keeps the space in place: texts the training never saw (a new entry, a
  question in a new wording) keep their meaning. Distilling into a smaller network, the teacher
  takes the base's place and every text of the batch is held to its vector.

The matrices are fake-quantised to Q4_0 in every forward pass (``ask.training.network``), so the
exported file computes what was trained. A training is deterministic given the recipe's seed and
thread count, and independent of the order of the training set (its digest is order-free too).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from ask.model.file import ModelFile
from ask.model.tokenizer import QUERY
from ask.training.data import TrainingSet
from ask.training.loss import contrastive_loss
from ask.training.network import E5Network, export
from ask.training.recipes import Recipe

if TYPE_CHECKING:
    from ask.model.tokenizer import Tokenizer


@dataclass(frozen=True)
class Pair:
    anchor: str
    positive: str  # always an entry text
    entry: str


@dataclass(frozen=True)
class Batch:
    pairs: tuple[Pair, ...]
    no_match: tuple[str, ...]  # anchors whose positive is the "no entry" column


class BatchDrawer:
    """Draws each step's pairs, from the training set sorted first: the same seed, the same batches."""

    def __init__(self, data: TrainingSet, recipe: Recipe):
        self.rng = random.Random(recipe.seed)
        self.recipe = recipe
        self.texts = {entry: tuple(sorted(set(texts))) for entry, texts in sorted(data.entry_texts.items()) if texts}
        if not self.texts:
            raise ValueError("a training set without entry texts")
        self.library = frozenset(text for texts in self.texts.values() for text in texts)
        self.groups: dict[str, list[str]] = {}
        for entry in self.texts:
            self.groups.setdefault(data.entry_groups.get(entry, entry), []).append(entry)
        self.questions_of: dict[str, list[tuple[str, str]]] = {}
        for question, entry in sorted(set(data.questions)):
            if entry in self.texts:
                self.questions_of.setdefault(data.entry_groups.get(entry, entry), []).append((question, entry))
        self.no_match = sorted(set(data.no_match))
        self.categories = sorted(self.groups)

    def draw(self) -> Batch:
        rng, pairs_wanted = self.rng, self.recipe.pairs_per_step
        categories = rng.sample(self.categories, min(self.recipe.categories_per_step, len(self.categories)))
        with_questions = [c for c in categories if self.questions_of.get(c)] or sorted(self.questions_of)
        library_pairs = pairs_wanted // 2 if with_questions else pairs_wanted
        pairs = [self._library_pair(categories[i % len(categories)]) for i in range(library_pairs)]
        for i in range(pairs_wanted - library_pairs):
            question, entry = rng.choice(self.questions_of[with_questions[i % len(with_questions)]])
            pairs.append(Pair(question, rng.choice(self.texts[entry]), entry))
        no_match_count = min(len(self.no_match), max(1, pairs_wanted // self.recipe.pairs_per_no_match))
        return Batch(tuple(pairs), tuple(rng.sample(self.no_match, no_match_count)))

    def _library_pair(self, category: str) -> Pair:
        entry = self.rng.choice(self.groups[category])
        texts = self.texts[entry]
        if len(texts) == 1:  # an entry of one text is its own positive: still a negative for the others
            return Pair(texts[0], texts[0], entry)
        anchor, positive = self.rng.sample(texts, 2)
        return Pair(anchor, positive, entry)


class TokenCache:
    """Each text's token ids, cut to the recipe's length (``<s>``, the first tokens, ``</s>``), computed once."""

    def __init__(self, tokenizer: Tokenizer, max_tokens: int):
        self.tokenizer, self.max_tokens, self.ids = tokenizer, max_tokens, {}

    def __call__(self, text: str) -> list[int]:
        if text not in self.ids:
            ids = self.tokenizer.encode(text, prefix=QUERY)  # both sides embed with e5's query prefix
            self.ids[text] = ids if len(ids) <= self.max_tokens else [*ids[: self.max_tokens - 1], ids[-1]]
        return self.ids[text]


class Objective:
    """A batch's loss: the contrastive loss, plus lambda times the drift of its texts from a reference
    network: the base model's vectors of its entry texts (fine-tuning keeps the space in place), or,
    given a ``teacher``, the teacher's vectors of every text (distillation into a smaller network)."""

    def __init__(
        self,
        base: ModelFile,
        network: E5Network,
        tokens: TokenCache,
        library: frozenset[str],
        recipe: Recipe,
        teacher: ModelFile | None = None,
    ):
        self.network, self.tokens, self.library, self.recipe = network, tokens, library, recipe
        self.reference = E5Network(teacher or base)  # frozen
        self.anchors_every_text = teacher is not None
        self.reference_vectors: dict[str, Tensor] = {}  # each anchored text's reference vector, computed once

    def __call__(self, batch: Batch) -> Tensor:
        texts = list(dict.fromkeys([*(p.anchor for p in batch.pairs), *(p.positive for p in batch.pairs)]))
        texts += [question for question in dict.fromkeys(batch.no_match) if question not in texts]
        row = {text: n for n, text in enumerate(texts)}
        vectors = self.network.embed([self.tokens(text) for text in texts])
        loss = contrastive_loss(
            anchors=vectors[[row[p.anchor] for p in batch.pairs]],
            positives=vectors[[row[p.positive] for p in batch.pairs]],
            entries=[p.entry for p in batch.pairs],
            asked=torch.tensor([p.anchor not in self.library for p in batch.pairs]),
            no_match=vectors[[row[question] for question in batch.no_match]],
            margin=self.recipe.no_match_margin,
            temperature=self.recipe.temperature,
            symmetric=self.recipe.symmetric,
        )
        anchored = [text for text in texts if self.anchors_every_text or text in self.library]
        if not self.recipe.regulariser or not anchored:
            return loss
        if fresh := [text for text in anchored if text not in self.reference_vectors]:
            with torch.no_grad():
                computed = self.reference.embed([self.tokens(text) for text in fresh])
            self.reference_vectors.update(zip(fresh, computed, strict=True))
        reference = torch.stack([self.reference_vectors[text] for text in anchored])
        drift = vectors[[row[text] for text in anchored]] - reference
        return loss + self.recipe.regulariser * drift.pow(2).sum(dim=1).mean()


def available_device() -> tuple[str, str]:
    """Where ``fit`` runs best here, and its name for a manifest: a GPU where PyTorch sees one (the pinned
    PyTorch is a CPU build: installing a CUDA one is the operator's choice), else the CPU."""
    if torch.cuda.is_available():
        return "cuda", torch.cuda.get_device_name()
    return "cpu", "cpu"


def fit(
    base: ModelFile,
    tokenizer: Tokenizer,
    data: TrainingSet,
    recipe: Recipe,
    *,
    progress: Callable[[int, int, float], None] | None = None,
    device: str = "cpu",
    teacher: ModelFile | None = None,
) -> E5Network:
    """The network ``recipe`` trains from ``base`` on ``data``, on ``device`` ("cuda" where PyTorch sees a GPU:
    the same steps, other rounding, so not the same bytes as on the CPU). With a ``teacher``, ``base`` is a
    smaller network to distil it into (``Objective``).

    PyTorch runs on ``recipe.threads`` threads (restored after): beside a server on two cores one
    thread is faster than two. ``progress(step, steps, loss)`` is called after every step, from 1.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(recipe.threads)
    try:
        with torch.device(device):
            torch.manual_seed(recipe.seed)
            drawer = BatchDrawer(data, recipe)
            network = E5Network(base, trainable=True)
            objective = Objective(
                base, network, TokenCache(tokenizer, recipe.max_tokens), drawer.library, recipe, teacher
            )
            parameters = [p for p in network.parameters() if p.requires_grad]
            optimiser = torch.optim.AdamW(parameters, lr=recipe.learning_rate, weight_decay=0.0)
            warmup = recipe.steps // recipe.warmup_share
            schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: min(1.0, (step + 1) / (warmup + 1)))
            for step in range(1, recipe.steps + 1):
                loss = objective(drawer.draw())
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(parameters, recipe.gradient_norm)
                optimiser.step()
                schedule.step()
                if progress:
                    progress(step, recipe.steps, float(loss.detach()))
        return network
    finally:
        torch.set_num_threads(threads)


def train(base: ModelFile, tokenizer: Tokenizer, data: TrainingSet, recipe: Recipe, **options: Any) -> ModelFile:
    """``base`` fine-tuned on ``data`` with ``recipe`` (``fit``, with its ``options``): a copy of the model file
    with the trained tensors."""
    return export(fit(base, tokenizer, data, recipe, **options), base)
