{#- Generic tests shared by the marts' schema.yml files. -#}

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
