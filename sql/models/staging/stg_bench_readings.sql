-- Bench readings normalised: slugs and names trimmed and lower-cased, decimal commas read,
-- units converted to the protocol's unit, and a replicate exported twice counted once.
-- A table, unlike the other staging models: it is the one staging model that grows with the
-- lab (millions of rows), and its eight data tests and three consumers would otherwise each
-- re-run the deduplicating window over every raw row.
{{ config(materialized='table') }}

with source as (
    select * from {{ source('raw', 'bench_readings') }}
),

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
