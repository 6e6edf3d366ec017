-- The answer library: question/answer pairs in every language, each citing a page.
select
    answers.answer_id,
    answers.category_slug,
    answers.question,
    answers.answer,
    answers.cited_path,
    {{ page_url('answers.cited_path') }} as url,
    answers.updated_at,
    {{ attribution('answers.question.en', page_url('answers.cited_path')) }} as attribution,
    answers.position
from {{ ref('stg_answers') }} as answers
