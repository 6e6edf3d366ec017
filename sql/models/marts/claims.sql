-- One checkable claim per measured bench slot, tied to the readings behind it and the URL to cite.
--
-- A view, unlike the other marts: its reading_ids are every accepted reading's identifier
-- (ten million strings at scale), and writing them into a table here and again into the
-- snapshot cost twice what publishing alone does. The snapshot stores it as a table.
{{ config(materialized='view') }}

select
    slots.slot_id as claim_id,
    slots.product_slug,
    products.product_name,
    slots.protocol_slug,
    products.product_name || ' — ' || {{ fill_template('templates.template', {
        'protocol': "protocols.protocol_name.\"en\"",
        'value': format_reading('slots.value', 'protocols.tolerance'),
        'unit': 'protocols.unit',
        'n': 'slots.replicates',
        'tolerance': format_reading('protocols.tolerance', 'protocols.tolerance'),
        'tester': 'slots.tester_name',
        'date': "strftime(slots.last_tested_on, '%Y-%m-%d')"
    }) }} as claim,
    slots.value,
    protocols.unit,
    slots.replicates as sample_size,
    slots.last_tested_on as tested_on,
    slots.tester_name as tester,
    readings.reading_ids,
    readings.source_files,
    {{ page_url("'/products/' || slots.product_slug") }} as url,
    {{ attribution("products.product_name || ' bench results'", page_url("'/products/' || slots.product_slug")) }}
        as attribution
from {{ ref('int_slot_results') }} as slots
inner join {{ ref('int_slot_readings') }} as readings
    on readings.product_slug = slots.product_slug and readings.protocol_slug = slots.protocol_slug
inner join {{ ref('stg_products') }} as products on products.product_slug = slots.product_slug
inner join {{ ref('stg_protocols') }} as protocols on protocols.protocol_slug = slots.protocol_slug
inner join {{ ref('answer_templates') }} as templates
    on templates.kind = 'evidence' and templates.rank_by = 'any' and templates.lang = 'en'
where slots.status = 'measured'
order by slots.protocol_slug, slots.product_slug
