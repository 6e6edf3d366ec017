-- Every planned bench slot, measured or not. An untested slot has value null and status
-- pending: it is never estimated. Rows are numbered for streaming (protocol, then product), the
-- order the snapshot stores them in.
-- Incremental by measurement_id (macros/changed_groups.sql): a sheet rewrites the rows it changed.
{{ config(materialized='incremental', incremental_strategy='changed_groups', unique_key='measurement_id', on_schema_change='fail') }}
select
    slots.slot_id as measurement_id,
    slots.product_slug,
    products.product_name,
    products.brand,
    slots.category_slug,
    slots.protocol_slug,
    protocols.protocol_name."en" as protocol_name,
    protocols.method,
    protocols.tolerance,
    protocols.sample_size as required_sample_size,
    slots.replicates as sample_size,
    slots.value,
    protocols.unit,
    slots.status,
    slots.reading_sd as standard_deviation,
    slots.sub_score,
    slots.tester_name as tester,
    slots.tester_slug,
    slots.receipt_id as receipt,
    slots.last_tested_on as tested_on,
    slots.first_tested_on,
    coalesce(readings.source_files, []) as source_files,
    {{ page_url("'/products/' || slots.product_slug") }} as url,
    {{ attribution("products.product_name || ' bench results'", page_url("'/products/' || slots.product_slug")) }}
        as attribution,
    row_number() over (order by slots.protocol_slug, slots.product_slug) as stream_position
from {{ ref('int_slot_results') }} as slots
left join {{ ref('int_slot_readings') }} as readings
    on readings.product_slug = slots.product_slug and readings.protocol_slug = slots.protocol_slug
inner join {{ ref('stg_products') }} as products on products.product_slug = slots.product_slug
inner join {{ ref('stg_protocols') }} as protocols on protocols.protocol_slug = slots.protocol_slug
order by stream_position
