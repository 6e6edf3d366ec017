{#- The bench sheets stg_bench_readings was last staged from: each raw file's (source_file,
    source_sha256, withdrawn), kept beside the model in `<model>_sheets` by its post-hook. An
    incremental run restages the slots of the sheets that differ from them. They cannot be read
    from the model's own rows: a sheet whose every row is a doubled export leaves no row there,
    and would be restaged by every build. -#}
{% macro staged_sheets_relation(model) -%}
    {{ return(model.incorporate(path={"identifier": model.identifier ~ "_sheets"})) }}
{%- endmacro %}

{% macro raw_bench_sheets() -%}
    select distinct
        _source_file as source_file, _source_sha256 as source_sha256, coalesce(_withdrawn, false) as withdrawn
    from {{ source('raw', 'bench_readings') }}
{%- endmacro %}
