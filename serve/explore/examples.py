"""The example queries ``/explore`` offers, one click each: written for this data, over the views the
page defines (one per published table, named as in ``datapackage.json``). Each runs in DuckDB-WASM
1.28.0, a DuckDB 0.9 engine without the JSON extension, so specs are read with a regular
expression, and without ICU, so a timestamp with time zone is cast to a plain (UTC) one before
date functions; ``tests/api/test_explore.py`` runs every one against a built release, in Python's
DuckDB and in the browser."""

from __future__ import annotations

from typing import NamedTuple


class Example(NamedTuple):
    title: str
    sql: str


EXAMPLES = (
    Example(
        "Best heat retention in each category",
        """-- value: the water's temperature after the test (higher keeps heat better)
SELECT category_slug, arg_max(product_name, value) AS product, max(value) AS value, any_value(unit) AS unit
FROM bench_measurements
WHERE protocol_slug = 'heat-retention' AND status = 'measured'
GROUP BY category_slug
ORDER BY value DESC""",
    ),
    Example(
        "Heat lost per 100 ml of capacity, insulated bottles",
        """-- the bench fills each bottle at 95 °C; capacity_ml is in the product's specs
SELECT m.product_name, m.value AS degrees_after_test,
       CAST(regexp_extract(p.specs, '"capacity_ml": *([0-9]+)', 1) AS INTEGER) AS capacity_ml,
       round((95 - m.value) / (capacity_ml / 100), 2) AS degrees_lost_per_100_ml
FROM bench_measurements AS m JOIN products AS p USING (product_slug)
WHERE m.protocol_slug = 'heat-retention' AND m.status = 'measured' AND p.category_slug = 'insulated-bottles'
ORDER BY degrees_lost_per_100_ml""",
    ),
    Example(
        "Readings per protocol and tester",
        """SELECT protocol_slug, tester, count(*) AS readings, count(DISTINCT product_slug) AS products
FROM bench_readings
GROUP BY ALL
ORDER BY readings DESC""",
    ),
    Example(
        "Pending slots by category",
        """SELECT category_slug, count(*) FILTER (WHERE status = 'pending') AS pending,
       count(*) AS planned, round(100.0 * pending / planned, 1) AS pending_percent
FROM bench_measurements
GROUP BY category_slug
ORDER BY pending DESC, category_slug""",
    ),
    Example(
        "Price against overall rating",
        """SELECT product_name, category_slug, CAST(price_amount AS DOUBLE) AS price, price_currency, overall_rating
FROM products
WHERE overall_rating IS NOT NULL
ORDER BY overall_rating DESC""",
    ),
    Example(
        "Claims and the readings behind them",
        """SELECT c.product_name, c.protocol_slug, c.value, c.unit, count(c.reading_id) AS cited_readings,
       count(r.reading_id) AS readings_found
FROM (SELECT *, unnest(reading_ids) AS reading_id FROM claims) AS c
LEFT JOIN bench_readings AS r USING (reading_id)
GROUP BY ALL
ORDER BY readings_found, c.product_name""",
    ),
    Example(
        "Pages changed, month by month",
        """SELECT date_trunc('month', changed_at::TIMESTAMP) AS month, count(*) AS changes
FROM changes
GROUP BY month
ORDER BY month""",
    ),
)
