-- The bench plan: every product of a category against every protocol run on that category.
with protocol_categories as (
    select protocol_slug, unnest(category_slugs) as category_slug
    from {{ ref('stg_protocols') }}
)

select
    products.product_slug || ':' || protocol_categories.protocol_slug as slot_id,
    products.product_slug,
    protocol_categories.protocol_slug,
    products.category_slug
from {{ ref('stg_products') }} as products
inner join protocol_categories
    on products.category_slug = protocol_categories.category_slug
