{#- Generic tests shared by the schema.yml files next to the models. -#}

{% test between(model, column_name, min_value, max_value) %}
select * from {{ model }}
where {{ column_name }} is not null
  and ({{ column_name }} < {{ min_value }} or {{ column_name }} > {{ max_value }})
{% endtest %}

{#- `column_name` is null exactly on the rows where `condition` holds. -#}
{% test null_exactly_when(model, column_name, condition) %}
select * from {{ model }}
where ({{ column_name }} is null) <> coalesce(({{ condition }}), false)
{% endtest %}

{#- Every language of a translated struct column is filled in. -#}
{% test fully_translated(model, column_name) %}
select * from {{ model }}
where len({{ missing_languages(column_name) }}) > 0
{% endtest %}

{#- No two rows share the values of `columns` (a key of several columns). -#}
{% test unique_combination(model, columns) %}
select {{ columns | join(', ') }}, count(*) as rows_with_this_key
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}

{#- The tables that grow with the lab, a row per reading or per bench slot: in a build that re-read
    only bench sheets (the intake's), their tests look at the slots this build restaged, not at
    every row. Every other table is tested whole, always. The first two stamp each row with the
    time its slot was last staged (`staged_at`); the others are found by their slot. -#}
{% macro slot_scoped_tables() -%}
    {{ return(['stg_bench_readings', 'int_slot_readings', 'int_slot_results', 'bench_measurements',
               'bench_readings', 'claims']) }}
{%- endmacro %}

{#- A condition on the rows of `relation` (one of slot_scoped_tables): true on every row when the
    build's test scope (the table var('test_scope'), written by the Dagster asset before `dbt
    build`) says every row, or when there is no such table or variable (dbt run by hand);
    otherwise true on the slots the newest staging run restaged: the rows with the newest
    `staged_at`, or those of the slots int_slot_readings holds with its newest. A cold build
    stages every slot at once, so it tests every row either way. The scope is read as the test
    is compiled, so the condition holds no OR: DuckDB then filters the readings before the views'
    joins (seven times faster at 10M). While dbt parses, nothing is queried. -#}
{% macro restaged_slots_only(relation) -%}
    {%- set scope_table = var('test_scope', none) -%}
    {%- set scope = adapter.get_relation(
            database=target.database, schema=scope_table.split('.')[0], identifier=scope_table.split('.')[1])
        if execute and scope_table else none -%}
    {%- set every_row = scope is none or run_query('select every_row from ' ~ scope).columns[0].values()[0] -%}
    {%- if every_row -%}
        true
    {%- elif relation.identifier in ['stg_bench_readings', 'int_slot_readings'] -%}
        staged_at = (select max(staged_at) from {{ relation }})
    {%- else -%}
        {%- set node = graph.nodes['model.reuse_data.int_slot_readings'] -%}
        {%- set slots = api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias) -%}
        {%- set newest = 'staged_at = (select max(staged_at) from ' ~ slots ~ ')' -%}
        {#- The product alone first: DuckDB pushes that filter below the views' joins. -#}
        product_slug in (select product_slug from {{ slots }} where {{ newest }})
        and (product_slug, protocol_slug) in (select product_slug, protocol_slug from {{ slots }} where {{ newest }})
    {%- endif -%}
{%- endmacro %}

{#- dbt's own, with the slot scope added for the tables that grow with the lab: every generic
    test reads its model through this. -#}
{% macro get_where_subquery(relation) -%}
    {%- set conditions = [] -%}
    {%- if config.get('where') %}{% do conditions.append(config.get('where')) %}{% endif -%}
    {%- if relation.identifier in slot_scoped_tables() -%}
        {%- do conditions.append(restaged_slots_only(relation)) -%}
    {%- endif -%}
    {%- if conditions -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ (conditions | join(' and ')) ~ ') dbt_subquery') -%}
    {%- endif -%}
    {%- do return(relation) -%}
{%- endmacro %}
