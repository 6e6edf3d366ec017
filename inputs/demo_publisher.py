"""Synthetic demo publisher: a product catalogue and lab bench sheets in the raw export formats.

The committed ``demo/`` folder is this generator's output at its default size, next to the
hand-written editorial export (categories, protocols, people, scenarios, answers, content).
Every product and every reading is drawn from a random generator seeded by the product's
category and position, so a larger run extends a smaller one instead of reshuffling it.

The sheets carry the dirt real lab exports carry, which staging must normalise:
a tester who records in °F, one whose spreadsheet writes decimal commas (and semicolons),
stray whitespace and capitals in slugs and names, an XLSX workbook with one sheet per
protocol, and one session exported twice.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import random
import re
import shutil
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from openpyxl import Workbook

from inputs.ask_inputs import LABELLED_SETS, SHIPPED_ENCODER_FOLDER
from inputs.bench_sheets import SHEET_COLUMNS

VOCABULARY_PATH = Path(__file__).with_name("demo_vocabulary.yml")
UNTESTED_SHARE = 0.07  # share of planned slots the lab has not reached yet
SESSION_SIZE = 12  # products per bench session (one CSV file per session)
FIRST_TEST_DAY = dt.date(2026, 2, 2)
TEST_PERIOD_DAYS = 240

TESTERS_BY_PROTOCOL_GROUP = {
    "thermal": ["Eleni Papadaki", "Jordan Ellis"],
    "durability": ["Jordan Ellis", "Eleni Papadaki"],
    "textile": ["Nguyen Thi Lan"],
    "coffee": ["Harpreet Kaur"],
    "personal-care": ["Nguyen Thi Lan"],
}
PROTOCOL_GROUP = {
    "heat-retention": "thermal",
    "cold-retention": "thermal",
    "brew-temperature-drop": "coffee",
    "leak-loss": "durability",
    "drop-dent": "durability",
    "dishwasher-durability": "durability",
    "stain-retention": "durability",
    "cleaning-residue": "durability",
    "corrosion-loss": "durability",
    "load-capacity": "textile",
    "abrasion-resistance": "textile",
    "sediment": "coffee",
    "bar-lifespan": "personal-care",
    "bristle-wear": "personal-care",
}
FAHRENHEIT_TESTER = "Jordan Ellis"  # trained in the US, records temperatures in °F
DECIMAL_COMMA_TESTER = "Eleni Papadaki"  # her spreadsheet locale writes 71,4 and uses ';'
WORKBOOK_PROTOCOLS = ("bar-lifespan", "bristle-wear")  # sent in as one XLSX workbook


@dataclass(frozen=True)
class Product:
    """One catalogue entry, and the true means its bench readings scatter around."""

    record: dict
    true_means: dict[str, float]
    spreads: dict[str, float]

    @property
    def slug(self) -> str:
        return self.record["slug"]


@dataclass
class Reading:
    """One replicate as a tester types it into a sheet."""

    product: str
    protocol: str
    sample: int
    reading: float
    unit: str
    tester: str
    date: dt.date
    notes: str = ""


def slugify(text: str) -> str:
    """Lower-case ASCII slug: 'Kestrel & Co Summit 750' -> 'kestrel-co-summit-750'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def load_vocabulary() -> dict:
    return yaml.safe_load(VOCABULARY_PATH.read_text(encoding="utf-8"))


def load_yaml_list(path: Path) -> list[dict]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def products_per_category(total: int, categories: list[str]) -> dict[str, int]:
    """Spread ``total`` products over the categories as evenly as possible, in order."""
    base, extra = divmod(total, len(categories))
    return {c: base + (1 if i < extra else 0) for i, c in enumerate(categories)}


def make_product(category: str, index: int, vocabulary: dict, protocols: list[str], seed: int) -> Product:
    """Draw product ``index`` of ``category``; the same arguments always give the same product."""
    rng = random.Random(f"{seed}:{category}:{index}")
    spec = vocabulary["categories"][category]
    brand = vocabulary["brands"][(index * 5 + len(category)) % len(vocabulary["brands"])]
    series = spec["series"][index % len(spec["series"])]
    generation = index // len(spec["series"])
    size = spec["sizes"][(index + generation) % len(spec["sizes"])]
    unit = spec["size_unit"]
    size_label = f"{size} {unit}" if unit in ("ml", "l", "g") else (f"{size}-{unit}" if size > 1 else "")
    model = f"{series}{' ' + str(generation + 1) if generation else ''}"
    name = f"{brand} {model} {size_label}".strip()
    slug = slugify(name)

    specs: dict[str, object] = {}
    for key, choices in spec["specs"].items():
        if len(choices) == 2 and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in choices):
            low, high = choices
            value = rng.uniform(low, high)
            specs[key] = round(value, 1) if isinstance(low, float) else int(round(value, -1 if high >= 100 else 0))
        else:
            specs[key] = rng.choice(choices)
    if unit in ("ml", "l", "g"):
        specs[{"ml": "capacity_ml", "l": "capacity_l", "g": "net_weight_g"}[unit]] = size
    elif size > 1:
        specs["pack_size"] = size

    low, high = spec["price"]
    price = round(rng.uniform(low, high)) - 0.01
    colours = rng.sample(vocabulary["colours"], k=rng.randint(1, 4))
    variants = [
        {
            "sku": f"{slug[:12].upper().strip('-')}-{i + 1:02d}",
            "colour": colour,
            "price": {"amount": price, "currency": "GBP"},
        }
        for i, colour in enumerate(colours)
    ]
    record = {
        "slug": slug,
        "brand": brand,
        "name": name,
        "category": category,
        "price": {"amount": price, "currency": "GBP"},
        "specs": specs,
        "variants": variants,
        "certifications": sorted(
            rng.sample(spec["certifications"], k=rng.randint(1, min(3, len(spec["certifications"]))))
        ),
        "pros": rng.sample(spec["pros"], k=3),
        "cons": rng.sample(spec["cons"], k=2),
        "testing_notes": " ".join(rng.sample(spec["notes"], k=min(2, len(spec["notes"])))),
        "editorial_scores": {
            "design": rng.randint(55, 95),
            "ease_of_use": rng.randint(50, 95),
            "value_for_money": rng.randint(45, 95),
        },
        "updated_at": f"{(FIRST_TEST_DAY + dt.timedelta(days=rng.randint(0, 60))).isoformat()}T09:00:00Z",
    }
    # Replace drawn phrases that contradict the specs (a separate generator, so every other
    # draw, and with it every reading, stays what it was).
    fix_rng = random.Random(f"{seed}:{category}:{index}:consistency")
    rules = vocabulary.get("consistency", {})
    record["pros"] = consistent_phrases(record["pros"], spec["pros"], specs, [], rules, fix_rng)
    record["cons"] = consistent_phrases(record["cons"], spec["cons"], specs, record["pros"], rules, fix_rng)
    true_means = {}
    spreads = {}
    for protocol in protocols:
        performance = spec["performance"][protocol]
        true_means[protocol] = rng.uniform(*performance["mean"])
        spreads[protocol] = performance["sd"]
    return Product(record=record, true_means=true_means, spreads=spreads)


def consistent_phrases(
    drawn: list[str], pool: list[str], specs: dict, chosen: list[str], rules: dict, rng: random.Random
) -> list[str]:
    """``drawn`` without phrases that contradict ``specs`` or ``chosen``, topped up from ``pool``."""
    requires, excludes = rules.get("requires", {}), rules.get("excludes", {})

    def allows(allowed: list | dict, value: object) -> bool:
        if isinstance(allowed, dict):  # a range: {min: 90} or {max: 200}
            return allowed.get("min", value) <= value <= allowed.get("max", value)
        return value in allowed

    def fits(phrase: str, taken: list[str]) -> bool:
        if not all(allows(allowed, specs.get(key)) for key, allowed in requires.get(phrase, {}).items()):
            return False
        return not any(other in excludes.get(phrase, []) or phrase in excludes.get(other, []) for other in taken)

    kept: list[str] = []
    for phrase in drawn:
        if fits(phrase, [*chosen, *kept]):
            kept.append(phrase)
    spare = [p for p in pool if p not in drawn]
    rng.shuffle(spare)
    for phrase in spare:
        if len(kept) == len(drawn):
            break
        if fits(phrase, [*chosen, *kept]):
            kept.append(phrase)
    return kept


def generate_products(total: int, vocabulary: dict, protocols: list[dict], seed: int) -> list[Product]:
    categories = list(vocabulary["categories"])
    protocols_by_category = {c: [p["slug"] for p in protocols if c in p["categories"]] for c in categories}
    counts = products_per_category(total, categories)
    return [
        make_product(category, index, vocabulary, protocols_by_category[category], seed)
        for category in categories
        for index in range(counts[category])
    ]


def planned_slots(products: list[Product]) -> list[tuple[Product, str]]:
    return [(product, protocol) for product in products for protocol in product.true_means]


def draw_readings(products: list[Product], protocols: list[dict], measurements: int, seed: int) -> list[Reading]:
    """Replicate readings for the tested slots: at least each protocol's sample size, more
    replicates when ``measurements`` asks for more rows; about 7 % of slots stay untested."""
    protocol_by_slug = {p["slug"]: p for p in protocols}
    slots = planned_slots(products)
    tested = [s for s in slots if random.Random(f"{seed}:untested:{s[0].slug}:{s[1]}").random() >= UNTESTED_SHARE]
    replicates = max(1, math.ceil(measurements / max(1, len(tested))))
    readings: list[Reading] = []
    for product, protocol_slug in tested:
        protocol = protocol_by_slug[protocol_slug]
        rng = random.Random(f"{seed}:readings:{product.slug}:{protocol_slug}")
        count = max(protocol["sample_size"], replicates)
        for sample in range(1, count + 1):
            value = rng.gauss(product.true_means[protocol_slug], product.spreads[protocol_slug])
            value = min(max(value, protocol["plausible_min"]), protocol["plausible_max"])
            readings.append(
                Reading(
                    product=product.slug,
                    protocol=protocol_slug,
                    sample=sample,
                    reading=round(value, 1),
                    unit=protocol["unit"],
                    tester="",
                    date=FIRST_TEST_DAY,
                )
            )
    return readings


def sessions(readings: list[Reading], seed: int) -> Iterator[tuple[str, list[Reading]]]:
    """Group readings into bench sessions (one protocol, one tester, one day, ≤ SESSION_SIZE
    products) and stamp each reading with its session's tester and date."""
    by_protocol: dict[str, list[Reading]] = {}
    for reading in readings:
        by_protocol.setdefault(reading.protocol, []).append(reading)
    for protocol, rows in sorted(by_protocol.items()):
        product_order = list(dict.fromkeys(r.product for r in rows))
        testers = TESTERS_BY_PROTOCOL_GROUP[PROTOCOL_GROUP[protocol]]
        for number, start in enumerate(range(0, len(product_order), SESSION_SIZE), start=1):
            chunk = set(product_order[start : start + SESSION_SIZE])
            rng = random.Random(f"{seed}:session:{protocol}:{number}")
            tester = testers[(number - 1) % len(testers)]
            day = FIRST_TEST_DAY + dt.timedelta(days=rng.randint(0, TEST_PERIOD_DAYS))
            session_rows = [r for r in rows if r.product in chunk]
            for r in session_rows:
                r.tester = tester
                r.date = day
            yield f"{day.isoformat()}_{protocol}_session-{number:02d}", session_rows


def fahrenheit(celsius: float) -> float:
    return round(celsius * 9 / 5 + 32, 1)


def sheet_cells(reading: Reading, rng: random.Random, decimal_comma: bool) -> list[str]:
    """A reading as the tester types it: units in °F for one tester, stray whitespace and
    capitals now and then, decimal commas for the tester whose locale writes them."""
    value, unit = reading.reading, reading.unit
    # Absolute temperatures only: a temperature *drop* does not convert like this.
    absolute_temperature = unit == "°C" and reading.protocol != "brew-temperature-drop"
    if reading.tester == FAHRENHEIT_TESTER and absolute_temperature and rng.random() < 0.6:
        value, unit = fahrenheit(value), "°F"
    text = f"{value:.1f}".replace(".", ",") if decimal_comma else f"{value:.1f}"
    product = reading.product
    tester = reading.tester
    if rng.random() < 0.08:
        product = f" {product} "
    if rng.random() < 0.04:
        product = product.upper()
    if rng.random() < 0.06:
        tester = f"{tester}  "
    if rng.random() < 0.05:
        unit = f" {unit}"
    note = ""
    roll = rng.random()
    if roll < 0.04:
        note = "sample re-seated before reading"
    elif roll < 0.07:
        note = "ambient 22 °C, within tolerance"
    return [product, reading.protocol, str(reading.sample), text, unit, tester, reading.date.isoformat(), note]


def write_csv_sheet(path: Path, rows: list[list[str]], delimiter: str, line_terminator: str = "\r\n") -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=line_terminator)
    writer.writerow(SHEET_COLUMNS)
    writer.writerows(rows)
    path.write_bytes(buffer.getvalue().encode("utf-8"))


def write_bench_sheets(out: Path, readings: list[Reading], seed: int) -> list[Path]:
    """Write the session CSVs, the personal-care XLSX workbook and one doubled export."""
    bench = out / "bench"
    if bench.exists():
        shutil.rmtree(bench)
    bench.mkdir(parents=True)
    written: list[Path] = []
    workbook_sessions: list[tuple[str, list[Reading]]] = []
    csv_sessions: list[Path] = []
    for name, rows in sessions(readings, seed):
        if rows[0].protocol in WORKBOOK_PROTOCOLS:
            workbook_sessions.append((name, rows))
            continue
        rng = random.Random(f"{seed}:sheet:{name}")
        decimal_comma = rows[0].tester == DECIMAL_COMMA_TESTER
        cells = [sheet_cells(r, rng, decimal_comma) for r in rows]
        path = bench / f"{name}.csv"
        write_csv_sheet(path, cells, delimiter=";" if decimal_comma else ",")
        csv_sessions.append(path)
        written.append(path)
    if csv_sessions:
        # The lab exported one session twice: same rows, saved again with Unix line endings.
        original = csv_sessions[len(csv_sessions) // 2]
        again = original.with_name(f"{original.stem} (exported again).csv")
        again.write_bytes(original.read_bytes().replace(b"\r\n", b"\n"))
        written.append(again)
    if workbook_sessions:
        written.append(write_workbook(bench / "personal-care-bench-workbook.xlsx", workbook_sessions, seed))
    return written


def write_workbook(path: Path, workbook_sessions: list[tuple[str, list[Reading]]], seed: int) -> Path:
    workbook = Workbook()
    workbook.remove(workbook.active)
    for name, rows in workbook_sessions:
        # Sheet titles hold 31 characters at most: "09-01_bar-lifespan_s01".
        sheet = workbook.create_sheet(title=name[5:].replace("session-", "s")[:31])
        sheet.append(SHEET_COLUMNS)
        rng = random.Random(f"{seed}:sheet:{name}")
        for reading in rows:
            cells = sheet_cells(reading, rng, decimal_comma=False)
            # Spreadsheet cells keep numbers and dates typed, as Excel saves them.
            sheet.append(
                [cells[0], cells[1], reading.sample, reading.reading, cells[4], cells[5], reading.date, cells[7]]
            )
    workbook.properties.creator = "Reuse Lab bench"
    workbook.properties.created = dt.datetime(2026, 10, 31, 17, 0)
    workbook.save(path)
    _fix_zip_timestamps(path)
    return path


def _fix_zip_timestamps(path: Path) -> None:
    """Give every member of an XLSX (a zip) a fixed timestamp, so the same data gives the same bytes."""
    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    # openpyxl stamps the save time into the document properties as well.
    members = [
        (info, re.sub(rb"<dcterms:modified([^>]*)>[^<]*<", rb"<dcterms:modified\1>2026-10-31T17:00:00Z<", data))
        if info.filename == "docProps/core.xml"
        else (info, data)
        for info, data in members
    ]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info, data in members:
            fixed = zipfile.ZipInfo(info.filename, date_time=(2026, 10, 31, 17, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            target.writestr(fixed, data)


def write_catalogue(out: Path, products: list[Product]) -> Path:
    path = out / "editorial" / "products.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for product in products:
            handle.write(json.dumps(product.record, ensure_ascii=False) + "\n")
    return path


def _front_matter(text: str) -> tuple[dict, str]:
    _, header, body = text.split("---", 2)
    return yaml.safe_load(header), body


def copy_editorial(
    source: Path, out: Path, products: list[Product], tested: set[tuple[str, str]], report: Callable[[str], None]
) -> None:
    """Copy the hand-written editorial export so that it fits the generated catalogue.

    Comparisons and reviews of products the catalogue lacks are dropped, guides and posts
    keep only the products that exist, answers citing a dropped page go, and so do buying
    scenarios no tested product in the catalogue can answer.
    """
    source_editorial, out_editorial = source / "editorial", out / "editorial"
    for name in ("categories.yml", "protocols.yml", "people.yml", "publisher.yml"):
        shutil.copyfile(source_editorial / name, out_editorial / name)
    slugs = {p.slug for p in products}
    kept_pages = {f"/products/{slug}" for slug in slugs}
    dropped = 0
    for item in sorted((source_editorial / "content").glob("*/*.md")):
        front_matter, body = _front_matter(item.read_text(encoding="utf-8"))
        listed = front_matter.get("products") or []
        missing = set(listed) - slugs
        if missing and front_matter["type"] in ("comparison", "review"):
            dropped += 1
            continue
        target = out_editorial / "content" / item.parent.name / item.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if missing:
            front_matter["products"] = [slug for slug in listed if slug in slugs]
            header = yaml.safe_dump(front_matter, allow_unicode=True, sort_keys=False, width=100)
            target.write_text(f"---\n{header}---{body}", encoding="utf-8")
        else:
            shutil.copyfile(item, target)
        kept_pages.add(f"/{item.parent.name}/{front_matter['slug']}")
    answers = [a for a in load_yaml_list(source_editorial / "answers.yml") if a["cites"] in kept_pages]
    scenarios = [s for s in load_yaml_list(source_editorial / "scenarios.yml") if _answerable(s, products, tested)]
    for name, entries in (("answers.yml", answers), ("scenarios.yml", scenarios)):
        (out_editorial / name).write_text(
            yaml.safe_dump(entries, allow_unicode=True, sort_keys=False, width=100), encoding="utf-8"
        )
    # The labelled questions and the trained ask encoder go along: questions about entries the
    # copy lacks are left out where they are read, and a build says when the encoder was trained
    # on other entries.
    for folder in (*LABELLED_SETS.values(), SHIPPED_ENCODER_FOLDER):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, out / folder, dirs_exist_ok=True)
    if dropped:
        report(f"dropped {dropped} comparisons and reviews of products outside the catalogue")


def _answerable(scenario: dict, products: list[Product], tested: set[tuple[str, str]]) -> bool:
    """Whether some product of the scenario's category, within its price, is tested on what it ranks by."""
    for product in products:
        record = product.record
        if record["category"] != scenario["category"]:
            continue
        if scenario.get("max_price") is not None and record["price"]["amount"] > scenario["max_price"]:
            continue
        if scenario["rank_by"] == "overall":
            if any((product.slug, protocol) in tested for protocol in product.true_means):
                return True
        elif (product.slug, scenario["rank_by"]) in tested:
            return True
    return False


def generate(
    out: Path,
    products: int,
    measurements: int,
    seed: int = 2026,
    editorial_source: Path | None = None,
    report: Callable[[str], None] = print,
) -> dict[str, int]:
    """Write a publisher of ``products`` products and about ``measurements`` readings to ``out``.

    ``editorial_source`` is the folder whose hand-written editorial export is copied (the
    committed demo); when ``out`` is that folder, only the catalogue and sheets are rewritten.
    """
    out = out.resolve()
    source = (editorial_source or out).resolve()
    vocabulary = load_vocabulary()
    protocols = load_yaml_list(source / "editorial" / "protocols.yml")
    report(f"drawing {products} products over {len(vocabulary['categories'])} categories")
    catalogue = generate_products(products, vocabulary, protocols, seed)
    (out / "editorial").mkdir(parents=True, exist_ok=True)
    write_catalogue(out, catalogue)
    readings = draw_readings(catalogue, protocols, measurements, seed)
    tested = {(r.product, r.protocol) for r in readings}
    if source != out:
        copy_editorial(source, out, catalogue, tested, report)
    report(f"writing {len(readings)} bench readings as session sheets")
    sheets = write_bench_sheets(out, readings, seed)
    slots = planned_slots(catalogue)
    summary = {
        "products": len(catalogue),
        "readings": len(readings),
        "sheets": len(sheets),
        "planned_slots": len(slots),
        "untested_slots": len(slots) - len(tested),
    }
    report(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in summary.items()))
    return summary
