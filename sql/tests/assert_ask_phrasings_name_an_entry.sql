-- An analyst's phrasing must lead to an entry that exists: a mistyped id would be dropped
-- from the ask texts silently.
{{ config(meta={'dagster': {'ref': {'name': 'ask_texts'}}}) }}

select seed.*
from {{ ref('ask_phrasings') }} as seed
where seed.entry_id not in (select scenario_slug from {{ ref('recommendations') }})
  and seed.entry_id not in (select answer_id from {{ ref('answers') }})
