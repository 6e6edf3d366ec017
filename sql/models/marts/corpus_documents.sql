-- The full-text corpus (llms-full.txt): every page as a plain-text document, in a stable order.
-- Incremental by path (macros/changed_groups.sql): a sheet rewrites the rows it changed.
{{ config(materialized='incremental', incremental_strategy='changed_groups', unique_key='path', on_schema_change='fail') }}
select
    row_number() over (order by section, path) as position,
    path,
    url,
    title,
    concat_ws(
        chr(10) || chr(10),
        '# ' || title,
        'URL: ' || url,
        'Type: ' || page_type || coalesce(' · Updated: ' || strftime(updated_at, '%Y-%m-%d'), ''),
        'Answer: ' || answer.en,
        body,
        case when len(faq) > 0 then
            '## FAQ' || chr(10) || chr(10)
            || array_to_string(list_transform(faq, lambda f: 'Q: ' || f.question.en || chr(10) || 'A: ' || f.answer.en), chr(10) || chr(10))
        end,
        'Cite as: ' || attribution
    ) as document
from {{ ref('pages') }}
