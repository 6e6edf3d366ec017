select
    person_slug,
    person_name,
    roles,
    title,
    expertise,
    bio,
    list_contains(roles, 'author') as is_author,
    list_contains(roles, 'tester') as is_tester
from {{ ref('stg_people') }}
