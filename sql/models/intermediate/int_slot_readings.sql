-- Each bench slot (product, protocol) with readings, its readings aggregated: replicates, mean,
-- spread, dates, the latest tester and sheet, and the readings and sheets it rests on. Only
-- accepted readings count; `withdrawn_readings` counts the ones a withdrawn sheet took away.
--
-- Incremental, like stg_bench_readings under it: that model restages every row of a slot that
-- a sheet touched, all with one `staged_at`, so the slots staged after the newest one held here
-- are exactly the slots to aggregate again (delete+insert by slot). The first post-hook drops
-- slots whose every reading left the staging table; the last holds the key of the rows, which
-- the pre-hook forgot (macros/held_keys.sql).
{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['product_slug', 'protocol_slug'],
        pre_hook="{{ forget_held_key(this) }}",
        post_hook=[
            "
                delete from {{ this }} as held
                where not exists (
                    select 1 from {{ ref('stg_bench_readings') }} as readings
                    where readings.product_slug = held.product_slug and readings.protocol_slug = held.protocol_slug
                )
            ",
            "{{ hold_staged_rows_key(this) }}",
        ],
    )
}}

with staged as (
    select * from {{ ref('stg_bench_readings') }}
    {% if is_incremental() %}
    where staged_at > (select coalesce(max(staged_at), '-infinity'::timestamptz) from {{ this }})
    {% endif %}
),

accepted as (
    select * from staged where not withdrawn
),

per_slot as (
    select
        product_slug,
        protocol_slug,
        count(*) filter (where not withdrawn) as replicates,
        count(*) filter (where withdrawn) as withdrawn_readings,
        -- Summed as decimals: a float sum depends on the order parallel threads add in, and a
        -- last-bit difference could flip a rounded value and move a product's changed_at.
        avg(reading::decimal(18, 6)) filter (where not withdrawn)::double as mean_reading,
        round(stddev_samp(reading) filter (where not withdrawn), 3) as reading_sd,
        min(tested_on) filter (where not withdrawn) as first_tested_on,
        max(tested_on) filter (where not withdrawn) as last_tested_on,
        arg_max(tester_name, tested_on) filter (where not withdrawn) as tester_name,
        arg_max(receipt_id, tested_on) filter (where not withdrawn) as receipt_id,
        -- Sorted after aggregating: an ORDER BY inside an aggregate makes DuckDB sort every
        -- reading, which made this model twelve times slower at ten million readings.
        list_sort(list(reading_id) filter (where not withdrawn)) as reading_ids,
        max(staged_at) as staged_at
    from staged
    group by product_slug, protocol_slug
),

-- Listed from the distinct (slot, sheet) pairs: far fewer than readings, and a list of strings
-- per reading is the costliest aggregate DuckDB has here.
slot_sheets as (
    select product_slug, protocol_slug, list_sort(list(source_file)) as source_files
    from (select distinct product_slug, protocol_slug, source_file from accepted)
    group by product_slug, protocol_slug
)

select
    per_slot.product_slug,
    per_slot.protocol_slug,
    per_slot.replicates,
    per_slot.withdrawn_readings,
    per_slot.mean_reading,
    per_slot.reading_sd,
    per_slot.first_tested_on,
    per_slot.last_tested_on,
    per_slot.tester_name,
    per_slot.receipt_id,
    coalesce(slot_sheets.source_files, []) as source_files,
    coalesce(per_slot.reading_ids, []) as reading_ids,
    per_slot.staged_at
from per_slot
left join slot_sheets
    on slot_sheets.product_slug = per_slot.product_slug and slot_sheets.protocol_slug = per_slot.protocol_slug
