-- Each planned slot with the mean of its accepted replicates and its 0-100 sub-score.
-- A slot with no reading stays pending with a null value: never imputed. A slot whose
-- readings were all withdrawn (a tester's sheet found wrong) is retest, also null.
-- The readings come aggregated per slot from int_slot_readings; this model joins them to
-- the plan, the scoring rules and the testers, so it costs in slots, not in readings. The
-- lists of readings and sheets behind a slot stay in int_slot_readings: the marts that
-- publish them join them there, and copying millions of identifiers through this table on
-- every build would cost more than everything else here.
with scoring_rules as (
    select
        slots.slot_id,
        coalesce(specific.direction, general.direction) as direction,
        coalesce(specific.zero_at, general.zero_at) as zero_at,
        coalesce(specific.full_at, general.full_at) as full_at,
        coalesce(specific.weight, general.weight) as weight
    from {{ ref('int_bench_slots') }} as slots
    left join {{ ref('protocol_scoring') }} as specific
        on specific.protocol = slots.protocol_slug and specific.category = slots.category_slug
    left join {{ ref('protocol_scoring') }} as general
        on general.protocol = slots.protocol_slug and general.category is null
)

select
    slots.slot_id,
    slots.product_slug,
    slots.protocol_slug,
    slots.category_slug,
    case
        when readings.replicates > 0 then 'measured'
        when readings.withdrawn_readings > 0 then 'retest'
        else 'pending'
    end as status,
    round(readings.mean_reading, 2) as value,
    readings.mean_reading,
    readings.reading_sd,
    coalesce(readings.replicates, 0) as replicates,
    readings.first_tested_on,
    readings.last_tested_on,
    readings.tester_name,
    people.person_slug as tester_slug,
    readings.receipt_id,
    scoring_rules.direction,
    scoring_rules.zero_at,
    scoring_rules.full_at,
    scoring_rules.weight,
    -- greatest() and least() skip nulls, so a pending slot is kept null explicitly: never scored.
    case when readings.mean_reading is not null then round(
        100 * greatest(0, least(1,
            (readings.mean_reading - scoring_rules.zero_at) / (scoring_rules.full_at - scoring_rules.zero_at)
        )),
        1
    ) end as sub_score
from {{ ref('int_bench_slots') }} as slots
left join {{ ref('int_slot_readings') }} as readings
    on readings.product_slug = slots.product_slug and readings.protocol_slug = slots.protocol_slug
left join {{ ref('stg_people') }} as people
    on lower(people.person_name) = lower(readings.tester_name)
left join scoring_rules
    on scoring_rules.slot_id = slots.slot_id
