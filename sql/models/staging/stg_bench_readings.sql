-- Bench readings normalised: slugs and names trimmed and lower-cased, decimal commas read,
-- units converted to the protocol's unit, and a replicate exported twice counted once.
--
-- Unlike the other staging models this one is stored, and incrementally: it is the one that
-- grows with the lab (millions of rows). A build recomputes only the slots (product, protocol)
-- that a new, changed, removed or withdrawn sheet touches: delete+insert by slot replaces every
-- row of those slots, and the first post-hook drops the rows of sheets no longer in the raw table
-- (a slot whose every sheet left); the second keeps the sheets staged (macros/staged_sheets.sql),
-- and the last holds the key of the rows, which the pre-hook forgot (macros/held_keys.sql).
-- Deduplication partitions within a slot, so a slot's rows
-- depend on that slot's raw rows only. Every row of a slot carries the time the slot was last
-- staged (`staged_at`), which tells int_slot_readings which slots to aggregate again. A change
-- to the dbt project rebuilds it in full (the build passes --full-refresh when the project's
-- fingerprint changed).
{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['product_slug', 'protocol_slug'],
        pre_hook="{{ forget_held_key(this) }}",
        post_hook=[
            "
                delete from {{ this }} as held
                where list_contains(
                    (select list(struct_pack(file := source_file, sha256 := source_sha256)) from (
                        select distinct source_file, source_sha256 from {{ this }}
                        except
                        select distinct _source_file, _source_sha256 from {{ source('raw', 'bench_readings') }}
                    )),
                    struct_pack(file := held.source_file, sha256 := held.source_sha256)
                )
            ",
            "create or replace table {{ staged_sheets_relation(this) }} as {{ raw_bench_sheets() }}",
            "{{ hold_staged_rows_key(this, staged_sheets_relation(this)) }}",
        ],
    )
}}

-- In the incremental branch the few changed sheets, touched slots and raw product texts are
-- looked up with list_contains over a one-off list rather than joined: DuckDB cannot know these
-- lists are short and would hash the millions of readings instead (five times slower at 10M).
{% if is_incremental() %}
{% set staged_sheets = adapter.get_relation(
    database=this.database, schema=this.schema, identifier=staged_sheets_relation(this).identifier
) %}
with raw_sheets as (
    {{ raw_bench_sheets() }}
),

-- The sheets last staged (macros/staged_sheets.sql); a warehouse staged before they were kept
-- reads them from the model's rows, once.
held_sheets as (
    {% if staged_sheets %}
    select source_file, source_sha256, withdrawn from {{ staged_sheets }}
    {% else %}
    select distinct source_file, source_sha256, withdrawn from {{ this }}
    {% endif %}
),

changed_sheets as materialized (
    (select * from raw_sheets except select * from held_sheets)
    union
    (select * from held_sheets except select * from raw_sheets)
),

-- The slots of every reading in a changed sheet, before the change and after it (by file: a
-- slot of another version of the same file is recomputed too, which changes nothing).
touched_slots as materialized (
    select distinct lower(trim(product)) as product_slug, lower(trim(protocol)) as protocol_slug
    from {{ source('raw', 'bench_readings') }}
    where list_contains((select list(source_file) from changed_sheets), _source_file)
    union
    select distinct product_slug, protocol_slug
    from {{ this }}
    where list_contains((select list(source_file) from changed_sheets), source_file)
),

-- The raw spellings of the touched products, to find their readings in every sheet.
touched_products as materialized (
    select product from (select distinct product from {{ source('raw', 'bench_readings') }})
    where list_contains((select list(product_slug) from touched_slots), lower(trim(product)))
),

source as (
    select * from {{ source('raw', 'bench_readings') }}
    where list_contains((select list(product) from touched_products), product)
),
{% else %}
with source as (
    select * from {{ source('raw', 'bench_readings') }}
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
    withdrawn,
    current_timestamp as staged_at
from deduplicated
where copy_number = 1
