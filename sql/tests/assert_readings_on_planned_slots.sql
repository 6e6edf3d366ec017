-- A reading for a protocol its product's category does not run belongs to no slot.
{{ config(meta={'dagster': {'ref': {'name': 'stg_bench_readings'}}}) }}

select readings.*
from (select * from {{ ref('stg_bench_readings') }} where {{ restaged_slots_only(ref('stg_bench_readings')) }}) as readings
left join {{ ref('int_bench_slots') }} as slots using (product_slug, protocol_slug)
where slots.slot_id is null
