{{ config(materialized='table') }}
-- The seeds a column's values may come from (see `values_of` below): dbt has to know them before it runs.
-- depends_on: {{ ref('slot_statuses') }}
-- depends_on: {{ ref('sections') }}
-- depends_on: {{ ref('supported_languages') }}
{#
  The data dictionary of the published tables, read from their schema.yml: every column of every
  mart with an enforced contract, with its declared type, its description, whether it is public,
  what its constraints and data tests prove (never null: a not_null constraint or test; its values:
  an accepted_values test, or a relationships test to a seed; its range: a between test; the
  table's primary key: the first column tested unique and not_null; a foreign key: a relationships
  test), and what a column's type cannot say, from its `meta`:

    public: false            bookkeeping, never distributed nor served
    format: uri              the JSON Schema format of a text column (or of a list's items)
    values_of: seed.column   its values (a list: its items'), that seed column's, where no test can say
    accepted_values: [...]   the same, where no seed holds them
    fields:                  the members of a struct column (or of a list of structs): a
      member: description    description, or {description, nullable, values_of, minimum, maximum, format}
    json_schema: {...}       the shape of a json column's documents, as JSON Schema

  The release's OpenAPI record schemas, Croissant record sets and data package are written from
  this table, so that a published column is described once, here in dbt, where the contracts and
  tests keep the description true.
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
      {%- set facts = namespace(values=column.meta.get('accepted_values'), minimum=none, maximum=none) -%}
      {%- if column.meta.get('values_of') -%}
        {%- set facts.values = seed_values(column.meta.values_of) -%}
      {%- endif -%}
      {%- for test in tests_by_column.get(model.unique_id ~ '.' ~ column.name, []) -%}
        {%- set arguments = test.test_metadata.kwargs.get('arguments', test.test_metadata.kwargs) -%}
        {%- do names.append(test.test_metadata.name) -%}
        {%- if test.test_metadata.name == 'relationships' -%}
          {%- set target = arguments.to | replace("ref('", '') | replace("')", '') -%}
          {%- if graph.nodes.get('seed.' ~ model.package_name ~ '.' ~ target) -%}
            {%- set facts.values = seed_values(target ~ '.' ~ arguments.field) -%}
          {%- else -%}
            {%- do references.append((target, arguments.field)) -%}
          {%- endif -%}
        {%- elif test.test_metadata.name == 'accepted_values' -%}
          {%- set facts.values = arguments['values'] -%}
        {%- elif test.test_metadata.name == 'between' -%}
          {%- set facts.minimum, facts.maximum = arguments.min_value, arguments.max_value -%}
        {%- endif -%}
      {%- endfor -%}
      {%- set never_null = 'not_null' in names or column.constraints | selectattr('type', 'equalto', 'not_null') | list | length > 0 -%}
      {%- set is_primary_key = not primary_key.found and 'unique' in names and never_null -%}
      {%- set primary_key.found = primary_key.found or is_primary_key -%}
      {%- set members = {} -%}
      {%- for member, member_meta in column.meta.get('fields', {}).items() -%}
        {%- do members.update({member: member_facts(member_meta)}) -%}
      {%- endfor -%}
      {%- do rows.append({
        'table_name': model.name,
        'table_description': model.description,
        'column_position': loop.index,
        'column_name': column.name,
        'data_type': column.data_type,
        'description': column.description,
        'is_public': column.meta.get('public', true),
        'is_nullable': not never_null,
        'accepted_values': facts.values,
        'minimum': facts.minimum,
        'maximum': facts.maximum,
        'format': column.meta.get('format'),
        'members': members or none,
        'json_schema': column.meta.get('json_schema'),
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
    is_nullable::boolean as is_nullable,
    accepted_values::varchar[] as accepted_values,
    minimum::double as minimum,
    maximum::double as maximum,
    format::varchar as format,
    members::json as members,
    json_schema::json as json_schema,
    is_primary_key::boolean as is_primary_key,
    references_table::varchar as references_table,
    references_column::varchar as references_column
from (
    values
    {%- for row in rows %}
    ({{ sql_literal(row.table_name) }}, {{ sql_literal(row.table_description) }}, {{ row.column_position }},
     {{ sql_literal(row.column_name) }}, {{ sql_literal(row.data_type) }}, {{ sql_literal(row.description) }},
     {{ row.is_public }}, {{ row.is_nullable }}, {{ text_list(row.accepted_values) }},
     {{ 'null' if row.minimum is none else row.minimum }}, {{ 'null' if row.maximum is none else row.maximum }},
     {{ sql_literal(row.format) }}, {{ json_literal(row.members) }}, {{ json_literal(row.json_schema) }},
     {{ row.is_primary_key }}, {{ sql_literal(row.references_table) }}, {{ sql_literal(row.references_column) }}){{ "," if not loop.last }}
    {%- else %}
    (null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null)
    {%- endfor %}
) as dictionary (
    table_name, table_description, column_position, column_name, data_type, description, is_public, is_nullable,
    accepted_values, minimum, maximum, format, members, json_schema, is_primary_key, references_table, references_column
)
{%- if not rows %}
where false
{%- endif %}
order by table_name, column_position
