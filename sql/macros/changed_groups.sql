{#- An incremental strategy for the marts a tester's sheet changes in a few places (a product's
    rows, a measurement's): `incremental_strategy='changed_groups'`, its one `unique_key` column
    naming the group (never null).

    The model's rows are computed as a full build computes them, into dbt's temporary table; the
    groups whose rows differ from those the table holds (their count, or the sum of their rows'
    hashes, as the publish compares a snapshot's groups) are deleted and inserted again, and a
    group no longer made is deleted. The table then holds what a full build would, by
    construction; what a sheet saves is writing and compressing the rows it did not change.
    The rows are not kept in any stored order: what is served from them says its order. -#}
{% macro get_incremental_changed_groups_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set key = arg_dict['unique_key'] -%}
    {%- if key is not string -%}
        {{ exceptions.raise_compiler_error("changed_groups takes one unique_key column, not " ~ key) }}
    {%- endif -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    {%- set changed = api.Relation.create(identifier=target.identifier ~ '__changed_groups', type='table') -%}
    create or replace temp table {{ changed }} as
    select group_key from (
        select {{ key }} as group_key, count(*) as n, sum(hash(row)) as h
        from (select {{ columns }} from {{ source }}) as row group by all
    ) as made
    full outer join (
        select {{ key }} as group_key, count(*) as n, sum(hash(row)) as h
        from (select {{ columns }} from {{ target }}) as row group by all
    ) as held using (group_key)
    where made.n is distinct from held.n or made.h is distinct from held.h;

    delete from {{ target }} where {{ key }} in (select group_key from {{ changed }});

    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ source }} where {{ key }} in (select group_key from {{ changed }});

    drop table {{ changed }}
{%- endmacro %}
