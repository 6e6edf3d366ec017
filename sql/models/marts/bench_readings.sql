-- Every accepted bench reading, one row per sample: the data behind each measurement's mean,
-- for researchers who compute their own statistics. Withdrawn sheets' readings are left out,
-- as they are from every aggregate.
--
-- A view, like claims: ten million rows at scale, which the snapshot stores as a table once
-- rather than the warehouse and the snapshot each.
{{ config(materialized='view') }}

select
    readings.reading_id,
    slots.slot_id as measurement_id,
    case when slots.status = 'measured' then slots.slot_id end as claim_id,
    readings.product_slug,
    readings.protocol_slug,
    readings.sample_number as sample,
    readings.reading,
    readings.unit,
    readings.raw_reading,
    readings.raw_unit,
    readings.tester_name as tester,
    readings.tested_on,
    readings.receipt_id as receipt,
    readings.source_file
from {{ ref('stg_bench_readings') }} as readings
inner join {{ ref('int_slot_results') }} as slots
    on slots.product_slug = readings.product_slug and slots.protocol_slug = readings.protocol_slug
where not readings.withdrawn
