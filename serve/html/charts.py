"""Inline SVG bench charts: per protocol, where a reading stands, drawn on the server.

A product page gets a strip per planned protocol: every tested product of its category as a
small mark, the product's own reading highlighted with its ± tolerance band and its figure, and
the readings its category's scoring rule scores 0 and 100 as dashed lines. A comparison or guide
gets one row per covered product. A pending or retest slot is labelled as such and drawn without
a value mark: no estimate, ever. The charts are plain SVG (no script, no external asset), every
text passes through ``Markup.format`` (escaped), and each states its figures in a ``<desc>``.
The axis runs right to left on right-to-left pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from release.snapshot import Snapshot

# Every bench slot a page's charts draw, in one query: the category's (product pages) or the
# covered products' (comparisons, guides).
SLOTS_SQL = (
    "SELECT product_slug, product_name, category_slug, protocol_slug, status, value, unit, tolerance,"
    " sample_size, sub_score FROM bench_measurements WHERE category_slug = ? OR list_contains(?, product_slug)"
)  # unordered (an ORDER BY costs a third of the query): the charts order their slots themselves
WIDTH = 400  # viewBox units; the chart is scaled to the column's width
MARGIN = 14  # room at either end for a mark's radius and the band's edge
ROW = 36  # height of one product's row in a comparison or guide chart
TOP = 34  # the two threshold labels above the plot
# Widths of a character in viewBox units, generous for 13px sans-serif: a row's name is cut ("…")
# where it would run into the figure at the row's other end (it is whole in its tooltip and the table).
NAME_CHARACTER_WIDTH, FIGURE_CHARACTER_WIDTH = 7.2, 8.2
LTR_ISOLATE, POP_ISOLATE = "\u2066", "\u2069"  # a figure reads left to right inside right-to-left text


@dataclass(frozen=True)
class Slot:
    """One product × protocol bench slot; ``value`` is None unless measured."""

    product_slug: str
    product_name: str
    category_slug: str
    protocol_slug: str
    status: str
    value: float | None
    unit: str
    tolerance: float | None
    sample_size: int | None
    sub_score: float | None

    @property
    def measured(self) -> bool:
        return self.status == "measured" and self.value is not None

    @property
    def span(self) -> list[float]:
        """The reading's tolerance band, [value - tolerance, value + tolerance] (empty unless measured)."""
        if not self.measured:
            return []
        tolerance = self.tolerance or 0.0
        return [self.value - tolerance, self.value + tolerance]


@dataclass(frozen=True)
class Protocol:
    """A protocol as a page names it (in its language), with the scoring rules of every category."""

    slug: str
    name: str
    unit: str
    tolerance: float | None
    scoring_rules: list[dict[str, Any]]

    def rule(self, category: str) -> dict[str, Any] | None:
        """The category's own scoring rule (direction, zero_at, full_at), else the general one."""
        rules = {rule["category"]: rule for rule in self.scoring_rules or []}
        return rules.get(category) or rules.get(None)


@dataclass(frozen=True)
class Chart:
    """A protocol's chart and the slots it states (the page's own: the others are context)."""

    protocol: Protocol
    slots: list[Slot]
    svg: Markup


def page_slots(snapshot: Snapshot, page: dict[str, Any]) -> list[Slot]:
    """The slots a page's charts need, read in one query: for a product page every slot of its
    category (to place it among the others), for a comparison or guide those of its products."""
    category = page["category_slug"] if page["page_type"] == "product" else None
    return [Slot(**row) for row in snapshot.query(SLOTS_SQL, [category, page["product_slugs"]])]


def figure(value: float, unit: str) -> str:
    """A reading as the page writes it in its bench table ("28.41 kcycles")."""
    return f"{value} {unit}"


def reading(slot: Slot) -> str:
    """A measured slot's figure with its tolerance ("28.41 ± 0.5 kcycles")."""
    tolerance = f" ± {slot.tolerance}" if slot.tolerance is not None else ""
    return f"{slot.value}{tolerance} {slot.unit}"


@dataclass(frozen=True)
class Axis:
    """Readings to x positions across the viewBox, increasing rightwards (leftwards when ``rtl``)."""

    low: float
    high: float
    rtl: bool

    @classmethod
    def spanning(cls, values: list[float], rtl: bool) -> Axis:
        """An axis a little wider than ``values`` (nothing measured and no rule: 0 to 1)."""
        low, high = min(values, default=0.0), max(values, default=1.0)
        pad = (high - low) * 0.04 or abs(high) * 0.1 or 1.0
        return cls(low - pad, high + pad, rtl)

    def x(self, value: float) -> float:
        share = (value - self.low) / (self.high - self.low)
        return round(
            WIDTH - MARGIN - share * (WIDTH - 2 * MARGIN) if self.rtl else MARGIN + share * (WIDTH - 2 * MARGIN), 1
        )

    def anchor(self, x: float) -> str:
        """The text-anchor keeping a label at ``x`` inside the chart: it grows away from the
        nearer edge; in the chart's own direction, so "start" is the right edge when rtl."""
        if WIDTH * 0.3 <= x <= WIDTH * 0.7:
            return "middle"
        grows_right = x < WIDTH * 0.3
        return "start" if grows_right != self.rtl else "end"

    def edge(self, side: str) -> float:
        """The x of a line's "start" or "end" in reading order (a label there takes that anchor)."""
        return MARGIN if (side == "start") != self.rtl else WIDTH - MARGIN


def element(template: str, *values: Any, **named: Any) -> Markup:
    """SVG markup: ``template`` filled with ``values``, each escaped (``Markup.format`` escapes
    too, but costs a page some milliseconds: it formats every chart's dozens of elements)."""
    return Markup(template.format(*map(escape, values), **{name: escape(value) for name, value in named.items()}))


def axis_line(y: float) -> Markup:
    return element('<line class="axis" x1="{}" x2="{}" y1="{y}" y2="{y}"/>', MARGIN, WIDTH - MARGIN, y=y)


def text(x: float, y: float, anchor: str, css_class: str, content: str) -> Markup:
    return element('<text x="{}" y="{}" text-anchor="{}" class="{}">{}</text>', x, y, anchor, css_class, content)


def isolated(content: str) -> str:
    """Figures kept in left-to-right order inside a right-to-left label."""
    return f"{LTR_ISOLATE}{content}{POP_ISOLATE}"


def svg(chart_id: str, height: int, rtl: bool, title: str, description: str, parts: list[Markup]) -> Markup:
    """The chart's element: an image named by its title and described by its figures in words."""
    head = element(
        '<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" role="img"'
        ' aria-labelledby="{id}-title {id}-desc" direction="{direction}">'
        '<title id="{id}-title">{title}</title><desc id="{id}-desc">{description}</desc>',
        width=WIDTH,
        height=height,
        id=chart_id,
        direction="rtl" if rtl else "ltr",
        title=title,
        description=description,
    )
    return head + Markup("").join(parts) + Markup("</svg>")


def thresholds(
    axis: Axis, rule: dict[str, Any] | None, unit: str, bottom: float, labels: dict[str, Any]
) -> list[Markup]:
    """The readings scored 0 and 100, as dashed lines down the plot with their labels above it."""
    if rule is None:
        return []
    parts = []
    for line, (score, at) in enumerate(((0, rule["zero_at"]), (100, rule["full_at"]))):
        x = axis.x(at)
        label = labels["score_at"].format(score=score, value=isolated(figure(at, unit)))
        parts.append(
            element(
                '<line class="threshold" x1="{x}" x2="{x}" y1="{top}" y2="{bottom}"/>', x=x, top=TOP - 4, bottom=bottom
            )
        )
        parts.append(text(x, 12 + 14 * line, axis.anchor(x), f"threshold-label score-{score}", label))
    return parts


def band(axis: Axis, slot: Slot, y: float, height: float) -> Markup:
    """The ± tolerance around a measured reading (at least a hairline wide, to be seen)."""
    left, right = sorted(axis.x(bound) for bound in slot.span)
    return element(
        '<rect class="tolerance" x="{}" y="{}" width="{}" height="{}"/>',
        left,
        y,
        round(max(right - left, 1.5), 1),
        height,
    )


def mark(axis: Axis, slot: Slot, y: float, css_class: str, radius: float) -> Markup:
    return element(
        '<circle class="{}" cx="{}" cy="{}" r="{}"><title>{}: {}</title></circle>',
        css_class,
        axis.x(slot.value),
        y,
        radius,
        slot.product_name,
        reading(slot),
    )


def rule_bounds(rule: dict[str, Any] | None) -> list[float]:
    """The readings a scoring rule scores 0 and 100, which every chart's axis spans."""
    return [] if rule is None else [rule["zero_at"], rule["full_at"]]


def threshold_sentence(rule: dict[str, Any] | None, unit: str, labels: dict[str, Any]) -> str:
    if rule is None:
        return ""
    return " " + labels["chart_thresholds"].format(zero_at=rule["zero_at"], full_at=rule["full_at"], unit=unit)


def status_label(slot: Slot, labels: dict[str, Any]) -> str:
    """A slot's status in the page's language ("pending", "to be retested")."""
    return labels.get(slot.status) or slot.status


def fitted(name: str, room: float) -> str:
    """``name``, cut with "…" to the characters that fit in ``room`` viewBox units."""
    characters = max(int(room / NAME_CHARACTER_WIDTH), 8)
    return name if len(name) <= characters else name[: characters - 1].rstrip() + "…"


def slot_sentence(slot: Slot, labels: dict[str, Any]) -> str:
    """A slot in words: its reading with its tolerance, or its status when it has none."""
    if slot.measured:
        return labels["chart_reading"].format(product=slot.product_name, reading=reading(slot))
    return labels["chart_pending"].format(product=slot.product_name, status=status_label(slot, labels))


def strip_chart(own: Slot, others: list[Slot], protocol: Protocol, labels: dict[str, Any], rtl: bool) -> Chart:
    """A product's reading among its category's tested products, on one strip."""
    rule = protocol.rule(own.category_slug)
    tested = [slot for slot in others if slot.measured]
    axis = Axis.spanning([slot.value for slot in tested] + rule_bounds(rule) + own.span, rtl)
    line_y, height = 56, 94
    parts = [axis_line(line_y)]
    parts += thresholds(axis, rule, protocol.unit, 72, labels)
    if own.measured:
        parts.append(band(axis, own, line_y - 11, 22))
    parts += [mark(axis, slot, line_y, "mark", 4) for slot in tested if slot.product_slug != own.product_slug]
    if own.measured:
        x = axis.x(own.value)
        parts.append(mark(axis, own, line_y, "value", 6.5))
        parts.append(text(x, 86, axis.anchor(x), "value-label", isolated(reading(own))))
    else:
        parts.append(text(WIDTH / 2, 86, "middle", "pending", status_label(own, labels)))
    description = slot_sentence(own, labels)
    if tested:
        low, high = min(slot.value for slot in tested), max(slot.value for slot in tested)
        description += " " + labels["chart_range"].format(count=len(tested), low=low, high=high, unit=protocol.unit)
    description += threshold_sentence(rule, protocol.unit, labels)
    chart_id = f"chart-{own.protocol_slug}"
    return Chart(protocol, [own], svg(chart_id, height, rtl, protocol.name, description, parts))


def row_chart(slots: list[Slot], protocol: Protocol, labels: dict[str, Any], rtl: bool) -> Chart:
    """The readings of a comparison's or guide's products, one labelled row each."""
    rule = protocol.rule(slots[0].category_slug)
    axis = Axis.spanning([bound for slot in slots for bound in slot.span] + rule_bounds(rule), rtl)
    bottom = TOP + ROW * len(slots)
    parts = thresholds(axis, rule, protocol.unit, bottom, labels)
    for row, slot in enumerate(slots):
        top = TOP + ROW * row
        label, css_class = (reading(slot), "value-label") if slot.measured else (status_label(slot, labels), "pending")
        name = fitted(slot.product_name, WIDTH - 2 * MARGIN - 12 - FIGURE_CHARACTER_WIDTH * len(label))
        parts.append(text(axis.edge("start"), top + 12, "start", "name", name))
        parts.append(text(axis.edge("end"), top + 12, "end", css_class, isolated(label) if slot.measured else label))
        line_y = top + 25
        parts.append(axis_line(line_y))
        if slot.measured:
            parts.append(band(axis, slot, line_y - 7, 14))
            parts.append(mark(axis, slot, line_y, "value", 5))
    description = " ".join(slot_sentence(slot, labels) for slot in slots) + threshold_sentence(
        rule, protocol.unit, labels
    )
    return Chart(protocol, slots, svg(f"chart-{protocol.slug}", bottom + 6, rtl, protocol.name, description, parts))


def by_protocol(slots: list[Slot]) -> dict[str, list[Slot]]:
    """Slots grouped by protocol, each group in the order given."""
    groups: dict[str, list[Slot]] = {}
    for slot in slots:
        groups.setdefault(slot.protocol_slug, []).append(slot)
    return groups


def product_charts(
    slots: list[Slot], product_slug: str, protocols: dict[str, Protocol], labels: dict[str, Any], rtl: bool
) -> list[Chart]:
    """One strip per slot of the product, among the category's readings of the same protocol."""
    groups = by_protocol(slots)
    return [
        strip_chart(own, groups[own.protocol_slug], protocols[own.protocol_slug], labels, rtl)
        for own in sorted(slots, key=lambda slot: slot.protocol_slug)
        if own.product_slug == product_slug
    ]


def coverage_charts(
    slots: list[Slot], product_slugs: list[str], protocols: dict[str, Protocol], labels: dict[str, Any], rtl: bool
) -> list[Chart]:
    """One chart per protocol any covered product has a slot of, its products in the page's order."""
    order = {slug: position for position, slug in enumerate(product_slugs)}
    ordered = sorted(slots, key=lambda slot: order.get(slot.product_slug, len(order)))
    return [row_chart(rows, protocols[slug], labels, rtl) for slug, rows in sorted(by_protocol(ordered).items())]
