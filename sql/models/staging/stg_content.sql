-- Editorial items: one row per Markdown file of the CMS export.
select
    trim(slug) as slug,
    trim(type) as content_type,
    trim(section) as section,
    '/' || trim(section) || '/' || trim(slug) as path,
    trim(title) as title,
    nullif(trim(category), '') as category_slug,
    {{ json_text_list('products') }} as product_slugs,
    trim(author) as author_slug,
    cast(published_at as timestamptz) as published_at,
    cast(updated_at as timestamptz) as updated_at,
    {{ i18n('answer') }} as answer,
    coalesce(cast(faq as json), '[]'::json) as faq_json,
    coalesce(cast(sources as json), '[]'::json) as sources_json,
    body,
    _source_file as source_file
from {{ source('raw', 'content') }}
