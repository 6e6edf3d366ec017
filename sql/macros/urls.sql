{#- The public address every URL of the build is made on, as the pipeline passes it. -#}
{% macro base_url() -%}
    {%- if execute and not var("base_url") -%}
        {{ exceptions.raise_compiler_error("base_url is not set: build with `reuse-data build` (which passes REUSE_DATA_BASE_URL), or pass --vars '{base_url: https://…}' to dbt") }}
    {%- endif -%}
    {{ var("base_url") }}
{%- endmacro %}

{#- The public URL of a site path such as /guides/start-here. -#}
{% macro page_url(path_sql) -%}
    '{{ base_url() }}' || {{ path_sql }}
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
            url := case when source.url like '/%' then '{{ base_url() }}' || source.url else source.url end
        )
    )
{%- endmacro %}
