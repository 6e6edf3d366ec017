"""The products a sheet may name, each with the protocols it is tested by and their units.

Written from the very ``Reference`` the intake checks sheets against (``Reference.protocols_for``
and ``Reference.units_of`` are the checks' own rules), so the list a tester reads and the
verdict on their sheet cannot disagree.
"""

from __future__ import annotations

from intake.sheet_validation import Reference


def protocol_entry(reference: Reference, protocol_slug: str) -> dict[str, object]:
    protocol = reference.protocols[protocol_slug]
    return {
        "protocol_slug": protocol_slug,
        "unit": protocol.unit,
        "units": reference.units_of(protocol_slug),
        "plausible_min": protocol.plausible_min,
        "plausible_max": protocol.plausible_max,
    }


def product_guide(reference: Reference) -> list[dict[str, object]]:
    """Every product by name, with its slug, category and protocols (each with the units accepted)."""
    return [
        {
            "product_slug": slug,
            "product_name": reference.product_names.get(slug, slug),
            "category_slug": category,
            "protocols": [protocol_entry(reference, protocol) for protocol in reference.protocols_for(slug)],
        }
        for slug, category in sorted(
            reference.product_categories.items(),
            key=lambda item: (reference.product_names.get(item[0], item[0]), item[0]),
        )
    ]
