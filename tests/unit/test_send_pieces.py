"""A bench page leaves in pieces small enough for slow clients, cut after whole lines."""

from serve.routes_bench import SEND_BYTES, send_pieces


def test_pieces_join_back_to_the_page_and_end_on_lines():
    body = b"".join(b"%05d," % i + b"x" * 200 + b"\n" for i in range(2000))
    pieces = list(send_pieces(body))
    assert b"".join(pieces) == body
    assert len(pieces) > 1 and all(len(piece) <= SEND_BYTES for piece in pieces)
    assert all(piece.endswith(b"\n") for piece in pieces)


def test_a_line_longer_than_a_piece_is_cut_and_nothing_is_lost():
    body = b"short\n" + b"y" * (SEND_BYTES * 2 + 5) + b"\nend\n"
    pieces = list(send_pieces(body))
    assert b"".join(pieces) == body
    assert all(0 < len(piece) <= SEND_BYTES for piece in pieces)


def test_an_empty_page_sends_nothing():
    assert list(send_pieces(b"")) == []
