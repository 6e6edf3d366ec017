-- A structured record for every public page: the editorial items and one page per product.
-- Each carries its canonical URL and the exact attribution string to print.
-- Incremental by path (macros/changed_groups.sql): a sheet rewrites the rows it changed.
{{ config(materialized='incremental', incremental_strategy='changed_groups', unique_key='path', on_schema_change='fail') }}
with product_summaries as (
    select
        products.product_slug,
        {{ i18n_agg(fill_template('templates.template', {
            'product': 'products.product_name',
            'value': "format('{:.0f}', products.overall_rating)",
            'tested': 'products.tested_slots',
            'planned': 'products.planned_slots'
        }), 'templates.lang') }} as answer
    from {{ ref('products') }} as products
    inner join {{ ref('answer_templates') }} as templates
        on templates.kind = 'product_summary'
    group by products.product_slug
),

product_bodies as (
    select
        products.product_slug,
        concat_ws(
            chr(10) || chr(10),
            '## Specifications',
            array_to_string(list_transform(
                json_keys(products.specs),
                lambda spec: '- **' || replace(spec, '_', ' ') || '**: ' || json_extract_string(products.specs, '$."' || spec || '"')
            ), chr(10)),
            '## What we liked',
            array_to_string(list_transform(products.pros, lambda pro: '- ' || pro), chr(10)),
            '## What could be better',
            array_to_string(list_transform(products.cons, lambda con: '- ' || con), chr(10)),
            '## How we tested it',
            products.testing_notes,
            '## Bench results',
            '| Test | Result | Samples | Sub-score |' || chr(10) || '|---|---|---|---|' || chr(10)
            || array_to_string(list_transform(
                products.sub_scores,
                lambda s: '| ' || s.protocol_name || ' | '
                    || case when s.status = 'pending' then 'pending' else s.value::varchar || ' ' || s.unit end
                    || ' | ' || s.sample_size::varchar || ' | ' || coalesce(s.score::varchar, '–') || ' |'
            ), chr(10))
        ) as body
    from {{ ref('products') }} as products
),

editorial_pages as (
    select
        path,
        url,
        content_type as page_type,
        section,
        title,
        answer,
        body,
        faq,
        sources,
        bench_table,
        category_slug,
        product_slugs,
        author_name,
        published_at,
        updated_at,
        attribution
    from {{ ref('content') }}
),

product_pages as (
    select
        '/products/' || products.product_slug as path,
        products.url,
        'product' as page_type,
        'products' as section,
        products.product_name as title,
        product_summaries.answer,
        product_bodies.body,
        from_json('[]', '[{"question": {{ i18n_json_type() }}, "answer": {{ i18n_json_type() }}}]') as faq,
        [struct_pack(title := 'How we test', url := {{ page_url("'/guides/how-we-test'") }})] as sources,
        list_transform(products.sub_scores, lambda s: {{ bench_table_row('products', 's') }}) as bench_table,
        products.category_slug,
        [products.product_slug] as product_slugs,
        null::varchar as author_name,
        null::timestamptz as published_at,
        products.changed_at as updated_at,
        products.attribution
    from {{ ref('products') }} as products
    inner join product_summaries on product_summaries.product_slug = products.product_slug
    inner join product_bodies on product_bodies.product_slug = products.product_slug
)

select *, url as canonical_url from editorial_pages
union all by name
select *, url as canonical_url from product_pages
