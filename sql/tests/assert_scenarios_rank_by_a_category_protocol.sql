{{ config(meta={'dagster': {'ref': {'name': 'stg_scenarios'}}}) }}

select scenarios.*
from {{ ref('stg_scenarios') }} as scenarios
left join {{ ref('int_bench_slots') }} as slots
    on slots.category_slug = scenarios.category_slug and slots.protocol_slug = scenarios.rank_by
where scenarios.rank_by <> 'overall'
group by all
having count(slots.slot_id) = 0
