{#- Fill a seed template: every {placeholder} named in `values` (a mapping of placeholder to a
    SQL expression) is replaced by that expression's text; a null value leaves an empty string. -#}
{% macro fill_template(template_sql, values) -%}
    {%- set ns = namespace(sql=template_sql) -%}
    {%- for placeholder, value_sql in values.items() -%}
        {%- set ns.sql = "replace(" ~ ns.sql ~ ", '{" ~ placeholder ~ "}', coalesce((" ~ value_sql ~ ")::varchar, ''))" -%}
    {%- endfor -%}
    {{ ns.sql }}
{%- endmacro %}
