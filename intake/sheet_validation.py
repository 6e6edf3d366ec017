"""A bench sheet checked row by row against the warehouse's reference data, before it is accepted.

The reference is the published snapshot's products, protocols and testers, and the unit
conversions seed the pipeline converts with (``sql/seeds/unit_conversions.csv``), so a sheet
accepted here is one the build ingests without a failing test. Every problem names the row
as the tester sees it in the sheet (the header is row 1) and the column.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from foundations.input_problems import RowProblem
from foundations.settings import PROJECT_ROOT
from inputs.bench_sheets import SHEET_COLUMNS, SheetError, parse_reading, parse_sheet_date, read_sheet_rows

UNIT_CONVERSIONS = PROJECT_ROOT / "sql" / "seeds" / "unit_conversions.csv"


@dataclass(frozen=True)
class Protocol:
    unit: str
    plausible_min: float | None
    plausible_max: float | None
    categories: frozenset[str]

    def runs_on(self, category: str) -> bool:
        """Whether the lab runs this protocol on products of ``category`` (a reading of any other is refused)."""
        return category in self.categories


@dataclass(frozen=True)
class Conversion:
    to_unit: str
    scale: float
    offset: float


@dataclass(frozen=True)
class Reference:
    """What a reading must agree with: known products, protocols, units and testers."""

    product_categories: Mapping[str, str]  # product slug -> category slug
    protocols: Mapping[str, Protocol]
    testers: Mapping[str, str]  # lower-cased name -> the name as the site writes it
    conversions: Mapping[str, Conversion]  # lower-cased unit as typed -> the unit it converts to
    product_names: Mapping[str, str] = field(default_factory=dict)  # product slug -> name, for people to search

    @classmethod
    def from_tables(cls, tables: Mapping[str, Iterable[Mapping[str, Any]]]) -> Reference:
        """The reference of a published snapshot's tables."""
        return cls(
            product_categories={p["product_slug"]: p["category_slug"] for p in tables["products"]},
            product_names={p["product_slug"]: p["product_name"] for p in tables["products"]},
            protocols={
                p["protocol_slug"]: Protocol(
                    p["unit"], p["plausible_min"], p["plausible_max"], frozenset(p["category_slugs"] or ())
                )
                for p in tables["protocols"]
            },
            testers={
                p["person_name"].strip().lower(): p["person_name"].strip() for p in tables["people"] if p["is_tester"]
            },
            conversions=read_conversions(),
        )

    def protocols_for(self, product_slug: str) -> list[str]:
        """The protocols a row of this product may name: those run on its category, by slug."""
        category = self.product_categories[product_slug]
        return sorted(slug for slug, protocol in self.protocols.items() if protocol.runs_on(category))

    def conversion(self, unit: str, protocol: Protocol) -> Conversion | None:
        """How a reading typed in ``unit`` becomes one in the protocol's unit; None when it cannot."""
        conversion = self.conversions.get(unit.strip().lower())
        return conversion if conversion is not None and conversion.to_unit == protocol.unit else None

    def units_of(self, protocol_slug: str) -> list[str]:
        """Every unit a reading of the protocol may be typed in, its own first (case does not matter)."""
        protocol = self.protocols[protocol_slug]
        others = [unit for unit in self.conversions if unit != protocol.unit.lower()]  # keys: lower-cased
        return [unit for unit in (protocol.unit, *others) if self.conversion(unit, protocol)]


def read_conversions(path: Path = UNIT_CONVERSIONS) -> dict[str, Conversion]:
    with path.open(encoding="utf-8") as handle:
        return {
            row["from_unit"].strip().lower(): Conversion(row["to_unit"], float(row["scale"]), float(row["offset"]))
            for row in csv.DictReader(handle)
        }


@dataclass(frozen=True)
class CheckedSheet:
    """A sheet that passed every check: its rows and the bench slots (product:protocol) they fill."""

    rows: pl.DataFrame
    slots: list[str]


def _text(value: str | None) -> str:
    return (value or "").strip()


def validate_sheet(path: Path, file_name: str, reference: Reference, today: dt.date | None = None) -> CheckedSheet:
    """Check every row of the sheet at ``path``; SheetError lists every problem found, in sheet order.

    A cell with a structural problem (empty, not a number, not a date) is reported once, for
    that; the checks against the reference look only at the cells that could be read.
    """
    frame, problems = read_sheet_rows(path, file_name)
    today = today or dt.datetime.now(dt.UTC).date()
    unreadable = {(p.sheet, p.row, p.column) for p in problems}
    seen: dict[tuple[str, ...], int] = {}
    slots: set[str] = set()
    if frame.is_empty() and not problems:
        raise SheetError([RowProblem(file_name, 2, "product", "", "the sheet has no readings")])
    for row in frame.iter_rows(named=True):
        number, sheet = row["_source_row"], row["_source_sheet"]

        def readable(column: str, number: int = number, sheet: str | None = sheet) -> bool:
            return (sheet, number, column) not in unreadable

        def problem(column: str, message: str, row: dict[str, Any] = row, number: int = number) -> None:
            problems.append(RowProblem(file_name, number, column, _text(row[column]), message, row["_source_sheet"]))

        product, protocol_slug = _text(row["product"]).lower(), _text(row["protocol"]).lower()
        category = reference.product_categories.get(product)
        protocol = reference.protocols.get(protocol_slug)
        if category is None and readable("product"):
            problem("product", "unknown product; use its slug, as the product list on the upload page has it")
        if protocol is None and readable("protocol"):
            if category is None:
                problem("protocol", f"unknown protocol; known protocols: {', '.join(sorted(reference.protocols))}")
            else:
                runs = ", ".join(reference.protocols_for(product))
                problem("protocol", f"unknown protocol; this product's protocols: {runs}")
        elif protocol is not None and category is not None and not protocol.runs_on(category):
            runs = ", ".join(reference.protocols_for(product))
            problem("protocol", f"the protocol is not run on {category} products; this product's protocols: {runs}")
        if protocol is not None and readable("unit"):
            conversion = reference.conversion(_text(row["unit"]), protocol)
            if conversion is None:
                units = ", ".join(reference.units_of(protocol_slug))
                problem("unit", f"not a unit of {protocol_slug}; record it in one of {units}")
            elif (value := parse_reading(row["reading"])) is not None:
                converted = value * conversion.scale + conversion.offset
                low, high = protocol.plausible_min, protocol.plausible_max
                if (low is not None and converted < low) or (high is not None and converted > high):
                    problem(
                        "reading",
                        f"outside the plausible range of {protocol_slug} ({low} to {high} {protocol.unit}); "
                        "check the reading and its unit",
                    )
        tested_on = parse_sheet_date(row["date"])
        if tested_on is not None and dt.date.fromisoformat(tested_on) > today:
            problem("date", f"in the future (today is {today.isoformat()})")
        if _text(row["tester"]).lower() not in reference.testers and readable("tester"):
            problem("tester", "not a known tester; write the name as on the site's team page")
        key = (product, protocol_slug, _text(row["sample"]), tested_on or "", _text(row["tester"]).lower(), sheet or "")
        if key in seen:
            problem("sample", f"the same sample as row {seen[key]} (product, protocol, sample, date and tester)")
        else:
            seen[key] = number
        if category is not None and protocol is not None:
            slots.add(f"{product}:{protocol_slug}")
    if problems:
        sheet_order: dict[str | None, int] = {}
        for found in problems:
            sheet_order.setdefault(found.sheet, len(sheet_order))
        column_order = {column: index for index, column in enumerate(SHEET_COLUMNS)}
        problems.sort(key=lambda p: (sheet_order[p.sheet], p.row, column_order.get(p.column, len(column_order))))
        raise SheetError(problems)
    return CheckedSheet(rows=frame, slots=sorted(slots))
