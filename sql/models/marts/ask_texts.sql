-- Every text the ask engine embeds, one row per entry, field and language: an entry's question,
-- a recommendation's scenario, the entry's answer (it carries the product names, measured facts
-- and fixes people type), and the analysts' extra phrasings.
-- `text_sha256` keys the vector cache: a text whose hash is unchanged is never embedded again.
-- `bench_written` marks the texts the bench writes: a recommendation's answer names the pick and
-- its figure, which a tester's sheet can change. The encoder is trained on them, but a change to
-- them alone does not train it again (ask.training.data.TrainingSet.retraining_digest).
with entries as (
    select scenario_slug as entry_id, 'recommendation' as entry_kind, question, scenario, answer
    from {{ ref('recommendations') }}
    union all
    select answer_id, 'answer-library', question, null, answer
    from {{ ref('answers') }}
),

translated as (
    {%- for field in ['question', 'scenario', 'answer'] %}
    {%- for lang in translation_languages() %}
    select entry_id, entry_kind, '{{ field }}' as field, '{{ lang }}' as language, {{ field }}."{{ lang }}" as text
    from entries
    {%- if not loop.last %} union all{% endif %}
    {%- endfor %}
    {%- if not loop.last %} union all{% endif %}
    {%- endfor %}
),

phrasings as (
    select entries.entry_id, entries.entry_kind, 'phrasing' as field, seed.language, trim(seed.phrasing) as text
    from {{ ref('ask_phrasings') }} as seed
    inner join entries on entries.entry_id = seed.entry_id
),

texts as (
    select * from translated
    union all
    select * from phrasings
)

select
    entry_id,
    entry_kind,
    field,
    language,
    text,
    sha256(text) as text_sha256,
    entry_kind = 'recommendation' and field = 'answer' as bench_written
from texts
where nullif(trim(text), '') is not null
order by entry_kind desc, entry_id, field, language, text
