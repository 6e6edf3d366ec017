-- The questions asked over the days kept, by language and normalised text: what readers ask and
-- whether the library answers it, for the editors. Not published (no contract): a question may
-- hold whatever a person typed.
with wordings as (
    select language, question_normalised, question, count(*) as times_worded
    from {{ ref('stg_asked_questions') }}
    group by all
)

select
    asked.language,
    asked.question_normalised,
    (
        select first(wordings.question order by wordings.times_worded desc, wordings.question)
        from wordings
        where wordings.language = asked.language and wordings.question_normalised = asked.question_normalised
    ) as question,
    count(*) as times_asked,
    count(*) filter (where asked.answered) as times_answered,
    min(asked.asked_at) as first_seen,
    max(asked.asked_at) as last_seen,
    arg_max(asked.answered, asked.asked_at) as last_answered,
    -- The latest asking's closest entry and why it did not answer (null values count: arg_max_null).
    arg_max_null(asked.entry_url, asked.asked_at) as nearest_entry,
    arg_max_null(asked.probability, asked.asked_at) as nearest_probability,
    arg_max_null(asked.refusal, asked.asked_at) as last_refusal
from {{ ref('stg_asked_questions') }} as asked
group by asked.language, asked.question_normalised
order by times_asked desc, asked.language, asked.question_normalised
