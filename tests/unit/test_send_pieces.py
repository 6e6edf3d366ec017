"""A bench page holds about PAGE_BYTES and leaves in pieces small enough for slow clients, cut after whole lines."""

from serve.api.routes_bench import MAX_PAGE_ROWS, MIN_PAGE_ROWS, PAGE_BYTES, SEND_BYTES, next_page_rows, send_pieces


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


def test_pages_after_the_first_hold_about_page_bytes_within_bounds():
    assert next_page_rows(0, 0) == MIN_PAGE_ROWS
    assert next_page_rows(256 * 600, 256) == PAGE_BYTES // 600
    assert next_page_rows(256 * 10, 256) == MAX_PAGE_ROWS  # tiny rows: capped
    assert next_page_rows(256 * 100_000, 256) == MIN_PAGE_ROWS  # huge rows: still a useful page
