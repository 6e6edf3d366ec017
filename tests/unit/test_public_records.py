"""A collection's items are written by orjson in one call (``encoded_record``): the same bytes as
the record built value by value (``record``) that the other documents use."""

import datetime as dt
import decimal

import orjson
import pytest

from public.documents import encoded_record, record

ROW = {
    "product_slug": "copperleaf-meridian-750-ml",
    "price_amount": decimal.Decimal("34.90"),
    "changed_at": dt.datetime(2026, 11, 22, 8, 15, 2, 123456, tzinfo=dt.UTC),
    "tested_on": dt.date(2026, 9, 20),
    "naive": dt.datetime(2026, 11, 22, 8, 15, 2),
    "sub_scores": [{"protocol": "heat-retention", "score": decimal.Decimal("8.5"), "on": dt.date(2026, 9, 20)}],
    "specs": '{"capacity_ml": 750, "lid": "screw"}',
    "record_hash": "private",
    "rating": 8.65,
    "pros": None,
}


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"drop": ("record_hash",), "json": frozenset({"specs"})},
        {"keep": ("product_slug", "sub_scores", "specs"), "json": frozenset({"specs"})},
    ],
)
def test_an_encoded_record_is_the_record_as_json(options):
    assert encoded_record(ROW, **options) == orjson.dumps(record(ROW, **options))


def test_an_encoded_record_writes_times_to_the_millisecond_and_decimals_as_numbers():
    written = orjson.loads(encoded_record(ROW, json=frozenset({"specs"})))
    assert written["changed_at"] == "2026-11-22T08:15:02.123Z" and written["naive"] == "2026-11-22T08:15:02.000Z"
    assert written["price_amount"] == 34.9 and written["sub_scores"][0] == {
        "protocol": "heat-retention",
        "score": 8.5,
        "on": "2026-09-20",
    }
    assert written["specs"] == {"capacity_ml": 750, "lid": "screw"}
    with pytest.raises(TypeError):
        encoded_record({"unknown": object()})
