-- The questions asked over the days kept, by language and normalised text: what readers ask and
-- whether the library answers it, for the editors. Not published (no contract): a question may
-- hold whatever a person typed.
with wordings as (
    select language, question_normalised, question, count(*) as times_worded
    from {{ ref('stg_asked_questions') }}
    group by all
),

-- Every entry's question, for the editors to see which entry came closest (and to write a
-- phrasing for it in ask_phrasings.csv, which names it by this id).
entries as (
    select scenario_slug as entry_id, question from {{ ref('recommendations') }}
    union all
    select answer_id, question from {{ ref('answers') }}
),

asked_questions as (
    select
        asked.language,
        asked.question_normalised,
        count(*) as times_asked,
        count(*) filter (where asked.answered) as times_answered,
        min(asked.asked_at) as first_seen,
        max(asked.asked_at) as last_seen,
        arg_max(asked.answered, asked.asked_at) as last_answered,
        -- The latest asking's closest entry and why it did not answer (null values count: arg_max_null).
        arg_max_null(asked.entry_id, asked.asked_at) as nearest_entry,
        arg_max_null(asked.probability, asked.asked_at) as nearest_probability,
        arg_max_null(asked.refusal, asked.asked_at) as last_refusal
    from {{ ref('stg_asked_questions') }} as asked
    group by asked.language, asked.question_normalised
)

select
    asked.language,
    asked.question_normalised,
    (
        select first(wordings.question order by wordings.times_worded desc, wordings.question)
        from wordings
        where wordings.language = asked.language and wordings.question_normalised = asked.question_normalised
    ) as question,
    asked.times_asked,
    asked.times_answered,
    asked.first_seen,
    asked.last_seen,
    asked.last_answered,
    asked.nearest_entry,
    -- In the language it was asked in, else English (a question in a language an entry lacks).
    coalesce(
        case asked.language
            {%- for lang in translation_languages() %}
            when '{{ lang }}' then entries.question."{{ lang }}"
            {%- endfor %}
        end,
        entries.question."{{ translation_languages()[0] }}"
    ) as nearest_entry_question,
    asked.nearest_probability,
    asked.last_refusal
from asked_questions as asked
left join entries on entries.entry_id = asked.nearest_entry
order by asked.times_asked desc, asked.language, asked.question_normalised
