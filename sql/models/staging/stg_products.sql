-- The product catalogue with its nested fields unpacked.
select
    trim(slug) as product_slug,
    trim(brand) as brand,
    trim(name) as product_name,
    trim(category) as category_slug,
    cast(json_extract(price, '$.amount') as decimal(10, 2)) as price_amount,
    json_extract_string(price, '$.currency') as price_currency,
    cast(specs as json) as specs,
    cast(variants as json) as variants,
    {{ json_text_list('certifications') }} as certifications,
    {{ json_text_list('pros') }} as pros,
    {{ json_text_list('cons') }} as cons,
    testing_notes,
    cast(editorial_scores as json) as editorial_scores,
    cast(updated_at as timestamptz) as catalogue_updated_at,
    _source_file as source_file,
    _source_row as source_row
from {{ source('raw', 'products') }}
