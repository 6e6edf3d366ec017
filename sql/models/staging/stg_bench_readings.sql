-- Bench readings normalised: slugs and names trimmed and lower-cased, decimal commas read,
-- units converted to the protocol's unit, and a replicate exported twice counted once.
--
-- Unlike the other staging models this one is stored, and incrementally: it is the one that
-- grows with the lab (millions of rows). A build recomputes only the slots (product, protocol)
-- that a new, changed, removed or withdrawn sheet touches: delete+insert by slot replaces every
-- row of those slots, and the post-hook drops the rows of sheets no longer in the raw table
-- (a slot whose every sheet left). Deduplication partitions within a slot, so a slot's rows
-- depend on that slot's raw rows only. A change to the dbt project rebuilds it in full (the
-- build passes --full-refresh when the project's fingerprint changed).
{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['product_slug', 'protocol_slug'],
        post_hook="
            delete from {{ this }} as held
            where not exists (
                select 1 from {{ source('raw', 'bench_readings') }} as raw
                where raw._source_file = held.source_file and raw._source_sha256 = held.source_sha256
            )
        ",
    )
}}

with source as (
    select * from {{ source('raw', 'bench_readings') }}
),

{% if is_incremental() %}
raw_sheets as (
    select distinct
        _source_file as source_file, _source_sha256 as source_sha256, coalesce(_withdrawn, false) as withdrawn
    from source
),

held_sheets as (
    select distinct source_file, source_sha256, withdrawn from {{ this }}
),

-- Materialised: referenced twice, and inlined each would scan every reading again.
changed_sheets as materialized (
    (select * from raw_sheets except select * from held_sheets)
    union
    (select * from held_sheets except select * from raw_sheets)
),

touched_slots as materialized (
    select distinct lower(trim(source.product)) as product_slug, lower(trim(source.protocol)) as protocol_slug
    from source
    semi join changed_sheets
        on changed_sheets.source_file = source._source_file and changed_sheets.source_sha256 = source._source_sha256
    union
    select distinct held.product_slug, held.protocol_slug
    from {{ this }} as held
    semi join changed_sheets
        on changed_sheets.source_file = held.source_file and changed_sheets.source_sha256 = held.source_sha256
),
{% endif %}

cleaned as (
    select
        lower(trim(product)) as product_slug,
        lower(trim(protocol)) as protocol_slug,
        cast(trim(sample) as integer) as sample_number,
        -- As parse_reading reads it: non-breaking spaces (a thousands separator) dropped, decimal comma.
        cast(replace(replace(trim(reading), chr(160), ''), ',', '.') as double) as raw_reading,
        trim(unit) as raw_unit,
        regexp_replace(trim(tester), '\s+', ' ', 'g') as tester_name,
        cast(left(trim("date"), 10) as date) as tested_on,
        nullif(trim(notes), '') as notes,
        _source_file as source_file,
        _source_sheet as source_sheet,
        _source_sha256 as source_sha256,
        _source_row as source_row,
        _receipt_id as receipt_id,
        coalesce(_withdrawn, false) as withdrawn
    from source
    {% if is_incremental() %}
    semi join touched_slots
        on touched_slots.product_slug = lower(trim(source.product))
        and touched_slots.protocol_slug = lower(trim(source.protocol))
    {% endif %}
),

converted as (
    select
        cleaned.*,
        conversions.to_unit as unit,
        raw_reading * conversions.scale + conversions."offset" as reading
    from cleaned
    left join {{ ref('unit_conversions') }} as conversions
        on lower(cleaned.raw_unit) = conversions.from_unit
),

deduplicated as (
    select
        *,
        row_number() over (
            partition by product_slug, protocol_slug, sample_number, tested_on, lower(tester_name), raw_reading
            order by source_file, source_sheet, source_row
        ) as copy_number
    from converted
)

select
    product_slug || ':' || protocol_slug || ':' || strftime(tested_on, '%Y-%m-%d') || ':' || sample_number as reading_id,
    product_slug,
    protocol_slug,
    sample_number,
    reading,
    unit,
    raw_reading,
    raw_unit,
    tester_name,
    tested_on,
    notes,
    source_file,
    source_sheet,
    source_sha256,
    source_row,
    receipt_id,
    withdrawn
from deduplicated
where copy_number = 1
