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
    first(asked.entry_url order by asked.confidence desc, asked.asked_at desc) filter (where asked.answered)
        as best_entry,
    max(asked.confidence) filter (where asked.answered) as best_confidence
from {{ ref('stg_asked_questions') }} as asked
group by asked.language, asked.question_normalised
order by times_asked desc, asked.language, asked.question_normalised
