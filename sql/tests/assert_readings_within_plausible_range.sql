-- A reading outside its protocol's plausible range is a typing error, not a result.
{{ config(meta={'dagster': {'ref': {'name': 'stg_bench_readings'}}}) }}

select readings.*
from (select * from {{ ref('stg_bench_readings') }} where {{ restaged_slots_only(ref('stg_bench_readings')) }}) as readings
inner join {{ ref('stg_protocols') }} as protocols using (protocol_slug)
where readings.unit <> protocols.unit
   or readings.reading < protocols.plausible_min
   or readings.reading > protocols.plausible_max
