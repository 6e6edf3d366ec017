select
    trim(slug) as scenario_slug,
    trim(category) as category_slug,
    trim(rank_by) as rank_by,
    cast(max_price as decimal(10, 2)) as max_price,
    {{ i18n('scenario') }} as scenario,
    {{ i18n('question') }} as question,
    _source_row as position
from {{ source('raw', 'scenarios') }}
