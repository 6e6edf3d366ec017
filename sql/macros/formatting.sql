{#- A reading as quoted in a sentence: whole numbers for protocols read to 1 unit or
    coarser, one decimal otherwise. -#}
{% macro format_reading(value_sql, tolerance_sql) -%}
    case when {{ tolerance_sql }} >= 1
        then format('{:.0f}', {{ value_sql }})
        else format('{:.1f}', {{ value_sql }})
    end
{%- endmacro %}

{#- A value known while compiling (a string, or none) as a SQL literal: quotes doubled, none as null. -#}
{% macro sql_literal(value) -%}
    {{ "null" if value is none else "'" ~ (value | string | replace("'", "''")) ~ "'" }}
{%- endmacro %}
