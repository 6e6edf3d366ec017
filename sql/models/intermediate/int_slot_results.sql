-- Each planned slot with the mean of its accepted replicates and its 0-100 sub-score.
-- A slot with no reading stays pending with a null value: never imputed. A slot whose
-- readings were all withdrawn (a tester's sheet found wrong) is retest, also null.
with all_readings as (
    select
        readings.*,
        people.person_slug as tester_slug
    from {{ ref('stg_bench_readings') }} as readings
    left join {{ ref('stg_people') }} as people
        on lower(people.person_name) = lower(readings.tester_name)
),

readings as (
    select * from all_readings where not withdrawn
),

withdrawn_slots as (
    select distinct product_slug, protocol_slug from all_readings where withdrawn
),

per_slot as (
    select
        product_slug,
        protocol_slug,
        count(*) as replicates,
        -- Summed as decimals: a float sum depends on the order parallel threads add in, and a
        -- last-bit difference could flip a rounded value and move a product's changed_at.
        avg(reading::decimal(18, 6))::double as mean_reading,
        round(stddev_samp(reading), 3) as reading_sd,
        min(tested_on) as first_tested_on,
        max(tested_on) as last_tested_on,
        arg_max(tester_name, tested_on) as tester_name,
        arg_max(tester_slug, tested_on) as tester_slug,
        arg_max(receipt_id, tested_on) as receipt_id,
        -- Sorted after aggregating: an ORDER BY inside an aggregate makes DuckDB sort every
        -- reading, which made this model twelve times slower at ten million readings.
        list_sort(list_distinct(list(source_file))) as source_files,
        list_sort(list(reading_id)) as reading_ids
    from readings
    group by product_slug, protocol_slug
),

scoring_rules as (
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
        when per_slot.replicates is not null then 'measured'
        when withdrawn_slots.product_slug is not null then 'retest'
        else 'pending'
    end as status,
    round(per_slot.mean_reading, 2) as value,
    per_slot.mean_reading,
    per_slot.reading_sd,
    coalesce(per_slot.replicates, 0) as replicates,
    per_slot.first_tested_on,
    per_slot.last_tested_on,
    per_slot.tester_name,
    per_slot.tester_slug,
    per_slot.receipt_id,
    coalesce(per_slot.source_files, []) as source_files,
    coalesce(per_slot.reading_ids, []) as reading_ids,
    scoring_rules.direction,
    scoring_rules.zero_at,
    scoring_rules.full_at,
    scoring_rules.weight,
    -- greatest() and least() skip nulls, so a pending slot is kept null explicitly: never scored.
    case when per_slot.mean_reading is not null then round(
        100 * greatest(0, least(1,
            (per_slot.mean_reading - scoring_rules.zero_at) / (scoring_rules.full_at - scoring_rules.zero_at)
        )),
        1
    ) end as sub_score
from {{ ref('int_bench_slots') }} as slots
left join per_slot
    on per_slot.product_slug = slots.product_slug and per_slot.protocol_slug = slots.protocol_slug
left join withdrawn_slots
    on withdrawn_slots.product_slug = slots.product_slug and withdrawn_slots.protocol_slug = slots.protocol_slug
left join scoring_rules
    on scoring_rules.slot_id = slots.slot_id
