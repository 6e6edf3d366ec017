select
    trim(slug) as person_slug,
    trim(name) as person_name,
    {{ json_text_list('roles') }} as roles,
    title,
    {{ json_text_list('expertise') }} as expertise,
    bio
from {{ source('raw', 'people') }}
