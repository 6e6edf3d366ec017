{#- Helpers of the data dictionary (models/marts/published_columns.sql), which reads the
    contracted marts' schema.yml from dbt's graph while it compiles. -#}

{% macro seed_values(reference) -%}
  {#- The values of `seed.column`, in the seed's order. -#}
  {%- set seed, column = reference.split('.') -%}
  {%- set result = run_query('select "' ~ column ~ '" from ' ~ ref(seed)) -%}
  {{- return(result.columns[0].values() | list) -}}
{%- endmacro %}

{% macro member_facts(facts) -%}
  {#- A struct member's facts as the dictionary states them: values_of resolved to accepted_values. -#}
  {%- set facts = {'description': facts} if facts is string else facts -%}
  {%- set resolved = {} -%}
  {%- for key, value in facts.items() -%}
    {%- if key == 'values_of' -%}
      {%- do resolved.update({'accepted_values': seed_values(value)}) -%}
    {%- else -%}
      {%- do resolved.update({key: value}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(resolved) -}}
{%- endmacro %}

{% macro json_literal(value) -%}
  {#- A value known while compiling as JSON text in a SQL literal; none as null. -#}
  {{- 'null' if value is none else sql_literal(tojson(value)) -}}
{%- endmacro %}

{% macro text_list(values) -%}
  {#- A list known while compiling as a SQL list of text literals; none as null. -#}
  {%- if values is none -%}null{%- else -%}[{%- for value in values -%}{{ sql_literal(value) }}{{ ', ' if not loop.last }}{%- endfor -%}]{%- endif -%}
{%- endmacro %}
