select
    trim(id) as answer_id,
    trim(category) as category_slug,
    trim(cites) as cited_path,
    cast(updated_at as timestamptz) as updated_at,
    {{ i18n('question') }} as question,
    {{ i18n('answer') }} as answer,
    _source_row as position
from {{ source('raw', 'answers') }}
