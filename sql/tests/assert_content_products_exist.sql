{{ config(meta={'dagster': {'ref': {'name': 'stg_content'}}}) }}

select content.path, product_slug
from (select path, unnest(product_slugs) as product_slug from {{ ref('stg_content') }}) as content
left join {{ ref('stg_products') }} as products using (product_slug)
where products.product_slug is null
