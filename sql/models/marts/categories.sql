select
    categories.category_slug,
    categories.category_group,
    categories.category_name,
    {{ page_url("'/guides/best-' || categories.category_slug") }} as guide_url,
    (select count(*) from {{ ref('stg_products') }} as products where products.category_slug = categories.category_slug)
        as product_count,
    categories.position
from {{ ref('stg_categories') }} as categories
