select
    trim(slug) as protocol_slug,
    {{ i18n('name') }} as protocol_name,
    {{ json_text_list('categories') }} as category_slugs,
    regexp_replace(trim(method), '\s+', ' ', 'g') as method,
    trim(unit) as unit,
    tolerance,
    cast(sample_size as integer) as sample_size,
    plausible_min,
    plausible_max
from {{ source('raw', 'protocols') }}
