select
    trim(slug) as category_slug,
    trim("group") as category_group,
    {{ i18n('name') }} as category_name,
    _source_row as position
from {{ source('raw', 'categories') }}
