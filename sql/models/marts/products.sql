-- The scored product catalogue. changed_at is when the product's public record last
-- changed, taken from the record snapshot (a rebuild with unchanged inputs moves nothing).
-- Incremental by product_slug (macros/changed_groups.sql): a sheet rewrites the rows it changed.
{{ config(materialized='incremental', incremental_strategy='changed_groups', unique_key='product_slug', on_schema_change='fail') }}
with current_versions as (
    select product_slug, dbt_valid_from as changed_at
    from {{ ref('product_record_history') }}
    where dbt_valid_to is null
),

sub_scores as (
    select
        slots.product_slug,
        list(
            struct_pack(
                protocol := slots.protocol_slug,
                protocol_name := protocols.protocol_name."en",
                status := slots.status,
                value := slots.value,
                unit := protocols.unit,
                sample_size := slots.replicates,
                score := slots.sub_score,
                weight := slots.weight
            )
            order by slots.protocol_slug
        ) as sub_scores
    from {{ ref('int_slot_results') }} as slots
    inner join {{ ref('stg_protocols') }} as protocols on protocols.protocol_slug = slots.protocol_slug
    group by slots.product_slug
)

select
    records.product_slug,
    records.product_name,
    records.brand,
    records.category_slug,
    categories.category_name,
    {{ page_url("'/products/' || records.product_slug") }} as url,
    records.price_amount,
    records.price_currency,
    records.specs,
    records.variants,
    records.certifications,
    records.pros,
    records.cons,
    records.testing_notes,
    records.editorial_scores,
    records.overall_rating,
    sub_scores.sub_scores,
    records.tested_slots,
    records.planned_slots,
    round(records.tested_slots / records.planned_slots, 3) as coverage,
    current_versions.changed_at,
    records.record_hash,
    {{ attribution('records.product_name', page_url("'/products/' || records.product_slug")) }} as attribution
from {{ ref('int_product_records') }} as records
inner join {{ ref('stg_categories') }} as categories on categories.category_slug = records.category_slug
left join sub_scores on sub_scores.product_slug = records.product_slug
left join current_versions on current_versions.product_slug = records.product_slug
