select
    name,
    legal_name,
    url,
    cast(founded as integer) as founded,
    regexp_replace(trim(boilerplate), '\s+', ' ', 'g') as boilerplate,
    regexp_replace(trim(methodology), '\s+', ' ', 'g') as methodology,
    regexp_replace(trim(independence_policy), '\s+', ' ', 'g') as independence_policy,
    license,
    license_url,
    regexp_replace(trim(usage_terms), '\s+', ' ', 'g') as usage_terms,
    contact
from {{ source('raw', 'publisher') }}
