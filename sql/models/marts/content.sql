-- The editorial corpus: guides, comparisons, reviews and journal posts with their full
-- body, FAQ, sources and, for comparisons and reviews, the live bench table of their products.
with bench_rows as (
    select
        content.path,
        list_position(content.product_slugs, products.product_slug) as product_position,
        unnest(products.sub_scores) as sub_score,
        products.product_slug,
        products.product_name
    from {{ ref('stg_content') }} as content
    inner join {{ ref('products') }} as products
        on list_contains(content.product_slugs, products.product_slug)
    where content.content_type in ('comparison', 'review')
),

bench_tables as (
    select
        path,
        list(
            {{ bench_table_row('bench_rows', 'bench_rows.sub_score') }}
            order by bench_rows.sub_score.protocol, bench_rows.product_position
        ) as bench_table
    from bench_rows
    group by path
)

select
    content.path,
    content.slug,
    content.content_type,
    content.section,
    content.title,
    content.category_slug,
    content.product_slugs,
    content.author_slug,
    people.person_name as author_name,
    content.published_at,
    content.updated_at,
    content.answer,
    from_json(content.faq_json, '[{"question": {{ i18n_json_type() }}, "answer": {{ i18n_json_type() }}}]') as faq,
    {{ absolute_sources('content.sources_json') }} as sources,
    content.body,
    length(regexp_split_to_array(trim(content.body), '\s+')) as word_count,
    coalesce(bench_tables.bench_table, []) as bench_table,
    {{ page_url('content.path') }} as url,
    {{ attribution('content.title', page_url('content.path')) }} as attribution
from {{ ref('stg_content') }} as content
left join {{ ref('stg_people') }} as people on people.person_slug = content.author_slug
left join bench_tables on bench_tables.path = content.path
