-- Every template (kind, rank_by) exists in every language with the same placeholders as English.
with templates as (
    select
        kind,
        rank_by,
        lang,
        list_sort(regexp_extract_all(template, '\{[a-z_]+\}')) as placeholders
    from {{ ref('answer_templates') }}
),

expected as (
    select distinct kind, rank_by, unnest([{% for lang in translation_languages() %}'{{ lang }}'{% if not loop.last %}, {% endif %}{% endfor %}]) as lang
    from templates
)

select expected.kind, expected.rank_by, expected.lang
from expected
left join templates as translated
    on translated.kind = expected.kind and translated.rank_by = expected.rank_by and translated.lang = expected.lang
left join templates as english
    on english.kind = expected.kind and english.rank_by = expected.rank_by and english.lang = 'en'
where translated.lang is null
   or translated.placeholders <> english.placeholders
