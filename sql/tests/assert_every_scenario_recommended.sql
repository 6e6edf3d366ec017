-- Every buying scenario is covered by the matrix: a scenario with no eligible product
-- (no tested product in its price range) must be fixed in the export, not silently dropped.
{{ config(meta={'dagster': {'ref': {'name': 'recommendations'}}}) }}

select scenarios.*
from {{ ref('stg_scenarios') }} as scenarios
left join {{ ref('recommendations') }} as recommendations using (scenario_slug)
where recommendations.scenario_slug is null
