{{ config(materialized='table') }}
{#
  The data dictionary of the published tables, read from their schema.yml: every column of every
  mart with an enforced contract, with its declared type, its description, whether it is public,
  and the keys its data tests prove (the first column tested unique and not_null: the primary key;
  relationships: a foreign key). The release's Croissant and data-package descriptions are written from this table, so the
  columns are described once, here in dbt, and the contracts keep the descriptions true.
#}
{%- set rows = [] -%}
{%- if execute -%}
  {%- set tests_by_column = {} -%}
  {%- for test in graph.nodes.values() if test.resource_type == 'test' and test.test_metadata and test.attached_node and test.column_name -%}
    {%- set key = test.attached_node ~ '.' ~ test.column_name -%}
    {%- do tests_by_column.setdefault(key, []).append(test) -%}
  {%- endfor -%}
  {%- for model in graph.nodes.values() if model.resource_type == 'model' and model.config.contract.enforced -%}
    {%- set primary_key = namespace(found=false) -%}
    {%- for column in model.columns.values() -%}
      {%- set names = [] -%}
      {%- set references = [] -%}
      {%- for test in tests_by_column.get(model.unique_id ~ '.' ~ column.name, []) -%}
        {%- do names.append(test.test_metadata.name) -%}
        {%- if test.test_metadata.name == 'relationships' -%}
          {%- set arguments = test.test_metadata.kwargs.get('arguments', test.test_metadata.kwargs) -%}
          {%- do references.append((arguments.to | replace("ref('", '') | replace("')", ''), arguments.field)) -%}
        {%- endif -%}
      {%- endfor -%}
      {%- set is_primary_key = not primary_key.found and 'unique' in names and 'not_null' in names -%}
      {%- set primary_key.found = primary_key.found or is_primary_key -%}
      {%- do rows.append({
        'table_name': model.name,
        'table_description': model.description,
        'column_position': loop.index,
        'column_name': column.name,
        'data_type': column.data_type,
        'description': column.description,
        'is_public': column.meta.get('public', true),
        'is_primary_key': is_primary_key,
        'references_table': references[0][0] if references else none,
        'references_column': references[0][1] if references else none,
      }) -%}
    {%- endfor -%}
  {%- endfor -%}
{%- endif -%}
select
    table_name::varchar as table_name,
    table_description::varchar as table_description,
    column_position::integer as column_position,
    column_name::varchar as column_name,
    data_type::varchar as data_type,
    description::varchar as description,
    is_public::boolean as is_public,
    is_primary_key::boolean as is_primary_key,
    references_table::varchar as references_table,
    references_column::varchar as references_column
from (
    values
    {%- for row in rows %}
    ({{ sql_literal(row.table_name) }}, {{ sql_literal(row.table_description) }}, {{ row.column_position }},
     {{ sql_literal(row.column_name) }}, {{ sql_literal(row.data_type) }}, {{ sql_literal(row.description) }}, {{ row.is_public }}, {{ row.is_primary_key }},
     {{ sql_literal(row.references_table) }}, {{ sql_literal(row.references_column) }}){{ "," if not loop.last }}
    {%- else %}
    (null, null, null, null, null, null, null, null, null, null)
    {%- endfor %}
) as dictionary (
    table_name, table_description, column_position, column_name, data_type, description, is_public, is_primary_key,
    references_table, references_column
)
{%- if not rows %}
where false
{%- endif %}
order by table_name, column_position
