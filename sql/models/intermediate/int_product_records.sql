-- A product's public record and a hash of it: the snapshot watches the hash, so a product's
-- changed_at moves only when something a client can see has changed.
-- Incremental by product_slug (macros/changed_groups.sql): a sheet rewrites the rows it changed.
{{ config(materialized='incremental', incremental_strategy='changed_groups', unique_key='product_slug', on_schema_change='fail') }}
with records as (
    select
        products.product_slug,
        products.product_name,
        products.brand,
        products.category_slug,
        products.price_amount,
        products.price_currency,
        products.specs,
        products.variants,
        products.certifications,
        products.pros,
        products.cons,
        products.testing_notes,
        products.editorial_scores,
        scores.overall_rating,
        scores.tested_slots,
        scores.planned_slots,
        scores.sub_scores
    from {{ ref('stg_products') }} as products
    left join {{ ref('int_product_scores') }} as scores
        on scores.product_slug = products.product_slug
)

select
    *,
    md5(to_json(records)::varchar) as record_hash
from records
