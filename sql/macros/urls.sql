{#- The public URL of a site path such as /guides/start-here. -#}
{% macro page_url(path_sql) -%}
    '{{ var("base_url") }}' || {{ path_sql }}
{%- endmacro %}

{#- The attribution string a client prints next to what it quotes from a page. -#}
{% macro attribution(title_sql, url_sql) -%}
    (select name from {{ ref('stg_publisher') }}) || ', "' || {{ title_sql }} || '", ' || {{ url_sql }} || ' (CC BY 4.0)'
{%- endmacro %}

{#- Page sources as a list of {title, url}, site paths made absolute. -#}
{% macro absolute_sources(sources_json_sql) -%}
    list_transform(
        from_json({{ sources_json_sql }}, '[{"title": "VARCHAR", "url": "VARCHAR"}]'),
        lambda source: struct_pack(
            title := source.title,
            url := case when source.url like '/%' then '{{ var("base_url") }}' || source.url else source.url end
        )
    )
{%- endmacro %}
