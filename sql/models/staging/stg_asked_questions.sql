-- One row per question asked of ask.json (raw/asked_questions, the servers' question log),
-- with the text by which questions count as the same, made once, in Python, when the records
-- are loaded (warehouse.asked_questions.normalise_question: DuckDB has no NFKC).
select
    asked_at,
    question,
    question_normalised,
    language,
    answered,
    entry as entry_id,
    probability,
    refusal,
    release as release_version
from {{ source('raw', 'asked_questions') }}
where question_normalised <> ''
