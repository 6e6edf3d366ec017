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
