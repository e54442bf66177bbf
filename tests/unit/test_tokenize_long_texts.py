"""A long text is analysed a piece at a time (no call holds the interpreter for long) into the
terms a one-call analysis gives: the reference below is that analysis, as `tokenize` did it before."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_engine.retrieval import text as analysis
from memory_engine.retrieval.text import tokenize


def _whole(text: str) -> list[str]:
    terms: list[str] = []
    for hangul, word, glued in analysis._WORD.findall(unicodedata.normalize("NFKC", text).lower()):
        if hangul:
            terms.extend(analysis._korean_terms(hangul))
            continue
        term = analysis._word_term(word)
        if term:
            terms.append(term)
        if glued and glued not in analysis._JOSA_SET:
            terms.extend(analysis._korean_terms(glued))
    return terms


_FRAGMENTS = (
    "Caroline's", "running", "AI가", "2023년에", "미라가", "ㅋㅋ", "ΣΑΣ", "Σ", "ﬁne", "Ａｂｃ", "e\u0301",
    "\u0301", "\u1100\u1161", "İstanbul", " ", "\n", "\u3000", "\xa0", "\u2003", "don’t", "the",
)  # fmt: skip


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=2000, max_size=6000))
def test_a_long_text_gives_the_terms_of_a_one_call_analysis(fragments: list[str]) -> None:
    # Given a text of several pieces, with words glued together and every kind of whitespace
    text = "".join(fragments)
    # When it is analysed / Then its terms are the one-call analysis's, in order
    assert tokenize(text) == _whole(text)


def test_a_long_text_is_cut_only_before_whitespace_and_kept_whole_without_it() -> None:
    # Given a long text of words, and one of no whitespace at all
    words = "alpha beta\u3000감자가 " * 3000
    solid = "x" * (3 * analysis._PIECE_CHARS)
    # When cut / Then every piece but the first starts with whitespace, nothing is lost, no piece is
    # much longer than a piece; the solid text stays one piece
    pieces = analysis._pieces(words)
    assert len(pieces) > 2 and "".join(pieces) == words
    assert all(piece[0].isspace() for piece in pieces[1:])
    assert max(len(piece) for piece in pieces) <= analysis._PIECE_CHARS + 16
    assert analysis._pieces(solid) == [solid]
