{#- The languages every translated field carries, in the order clients see them: the
    supported_languages seed's, which every dbt invocation of the pipeline passes as the variable
    `languages` (warehouse/reference_data.py, `dbt_vars`), so the list is written once. -#}
{% macro translation_languages() -%}
    {%- set languages = var('languages', none) -%}
    {%- if languages is none -%}
        {{ exceptions.raise_compiler_error(
            "the variable `languages` is not set: run dbt through `reuse-data build` or the Dagster UI, "
            "which pass it from the supported_languages seed; by hand, pass the same --vars "
            "(python -c 'from warehouse.reference_data import dbt_vars; print(dbt_vars(\"http://127.0.0.1:8000\")[1])')"
        ) }}
    {%- endif -%}
    {{ return(languages) }}
{%- endmacro %}

{#- Translated text: a JSON mapping of language code to text, unpacked into a struct with one
    field per supported language (`translation_languages`). -#}
{% macro i18n(json_column) -%}
    struct_pack(
    {%- for lang in translation_languages() %}
        "{{ lang }}" := nullif(trim(json_extract_string({{ json_column }}, '$.{{ lang }}')), '')
        {%- if not loop.last %},{% endif %}
    {%- endfor %}
    )
{%- endmacro %}

{#- The languages of a translated struct that are empty, as a list (empty when complete). -#}
{% macro missing_languages(struct_column) -%}
    list_filter([
    {%- for lang in translation_languages() %}
        case when {{ struct_column }}."{{ lang }}" is null then '{{ lang }}' end{% if not loop.last %},{% endif %}
    {%- endfor %}
    ], lambda x: x is not null)
{%- endmacro %}

{#- A JSON array of strings as a VARCHAR list. -#}
{% macro json_text_list(json_column) -%}
    coalesce(cast(json_extract_string({{ json_column }}, '$[*]') as varchar[]), [])
{%- endmacro %}

{#- The text of a translated struct in the language named by `lang_sql` (a per-row value). -#}
{% macro i18n_pick(struct_column, lang_sql) -%}
    case {{ lang_sql }}
    {%- for lang in translation_languages() %}
        when '{{ lang }}' then {{ struct_column }}."{{ lang }}"
    {%- endfor %}
    end
{%- endmacro %}

{#- Aggregate one text per language (rows of `lang_sql`, `text_sql`) into a translated struct,
    over the rows where `condition_sql` holds. -#}
{% macro i18n_agg(text_sql, lang_sql, condition_sql='true') -%}
    struct_pack(
    {%- for lang in translation_languages() %}
        "{{ lang }}" := max({{ text_sql }}) filter (where {{ lang_sql }} = '{{ lang }}' and {{ condition_sql }}){% if not loop.last %},{% endif %}
    {%- endfor %}
    )
{%- endmacro %}

{#- The from_json() type of a translated mapping: {"en": "VARCHAR", ...}. -#}
{% macro i18n_json_type() -%}
    { {%- for lang in translation_languages() -%} "{{ lang }}": "VARCHAR"{% if not loop.last %}, {% endif %}{%- endfor -%} }
{%- endmacro %}
