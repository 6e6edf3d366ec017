-- An analyst's phrasing must lead to an entry of this publisher's library: a mistyped id, or
-- an entry another export does not have, is left out of the ask texts, and said here.
{{ config(severity='warn', meta={'dagster': {'ref': {'name': 'ask_texts'}}}) }}

select seed.*
from {{ ref('ask_phrasings') }} as seed
where seed.entry_id not in (select entry_id from {{ ref('ask_texts') }})
