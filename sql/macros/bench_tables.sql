{#- One row of a published bench table: the product's slug and name, then one of its sub-scores
    (an element of the products mart's `sub_scores`), in the order the contract publishes them.
    Content (comparisons, reviews) and product pages both print bench tables; the row is written
    here once. -#}
{% macro bench_table_row(product, sub_score) -%}
    struct_pack(
        product_slug := {{ product }}.product_slug,
        product_name := {{ product }}.product_name,
        {%- for field in ['protocol', 'protocol_name', 'value', 'unit', 'sample_size', 'status', 'score'] %}
        {{ field }} := {{ sub_score }}.{{ field }}{{ ',' if not loop.last }}
        {%- endfor %}
    )
{%- endmacro %}
