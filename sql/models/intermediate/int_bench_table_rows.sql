-- One row of a published bench table per slot (product, protocol): its columns, in order, are
-- the fields of the `bench_table` that comparisons, reviews (content) and product pages (pages)
-- publish. Both aggregate these rows whole (`list(bench_rows ...)`), so a field is named once.
select
    slots.product_slug,
    products.product_name,
    slots.protocol_slug as protocol,
    protocols.protocol_name."en" as protocol_name,
    slots.value,
    protocols.unit,
    slots.replicates as sample_size,
    slots.status,
    slots.sub_score as score
from {{ ref('int_slot_results') }} as slots
inner join {{ ref('stg_products') }} as products on products.product_slug = slots.product_slug
inner join {{ ref('stg_protocols') }} as protocols on protocols.protocol_slug = slots.protocol_slug
