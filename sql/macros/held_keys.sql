{#- A table dbt changes in place holds the key of what it holds in its comment, as the tables the
    pipeline makes in Python do (warehouse/relation_keys.py, `held_key`): the publish then keys it
    by that comment rather than by hashing its rows (ten million readings: 2.3 s).

    The key is forgotten by a pre-hook before each change and held again by the last post-hook:
    a build that stops between the two leaves no key, and the table is hashed. Replaced whole
    (a full refresh), the table loses its comment with it. The comment's prefix comes from the
    pipeline (`var('key_comment')`), the one place it is written. -#}
{% macro forget_held_key(relation) -%}
    {%- if execute and adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) -%}
        comment on table {{ relation }} is null
    {%- endif -%}
{%- endmacro %}

{#- The key of a table of staged rows (the staged readings, and the slots aggregated from them):
    what changes whenever its rows can. Its rows are made from the sheets staged alone, each
    stamped with the moment its slot was staged (`staged_at`), so they move only with a slot
    restaged (a new `staged_at`) or a slot's rows deleted (the count), and, for the staged
    readings, with a sheet staged (`sheets`: their file and digest); a change to the project
    restages every slot. DuckDB's version is in it because `hash` may change with it. -#}
{% macro hold_staged_rows_key(relation, sheets=none) -%}
    {%- if execute -%}
        {%- set key_sql -%}
            select sha256(concat_ws(' ', '{{ relation.identifier }}', version(), count(*),
                min(epoch_us(staged_at)), max(epoch_us(staged_at)), sum(epoch_us(staged_at)),
                {% if sheets %}(select sum(hash(sheet)) from {{ sheets }} as sheet){% else %}''{% endif %}))
            from {{ relation }}
        {%- endset -%}
        {%- set key = run_query(key_sql).columns[0].values()[0] -%}
        comment on table {{ relation }} is '{{ var("key_comment") }}{{ key }}'
    {%- endif -%}
{%- endmacro %}
