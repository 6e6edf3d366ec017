-- The buying-recommendation matrix: each scenario paired with the product that ranks first
-- for it, a quotable answer in every language filled from the seed templates with live bench
-- figures, the evidence behind it and the product's live specs.
with candidates as (
    select
        scenarios.scenario_slug,
        products.product_slug,
        case when scenarios.rank_by = 'overall' then products.overall_rating else slots.sub_score end as rank_score,
        products.overall_rating
    from {{ ref('stg_scenarios') }} as scenarios
    inner join {{ ref('products') }} as products
        on products.category_slug = scenarios.category_slug
    left join {{ ref('int_slot_results') }} as slots
        on slots.product_slug = products.product_slug and slots.protocol_slug = scenarios.rank_by
    where (scenarios.max_price is null or products.price_amount <= scenarios.max_price)
      and (
          (scenarios.rank_by = 'overall' and products.overall_rating is not null)
          or slots.status = 'measured'
      )
),

picks as (
    select scenario_slug, product_slug, rank_score
    from candidates
    qualify row_number() over (
        partition by scenario_slug
        order by rank_score desc, overall_rating desc, product_slug
    ) = 1
),

figures as (
    -- The figure each pick is recommended on, with what the templates need to quote it.
    select
        scenarios.*,
        picks.product_slug,
        picks.rank_score,
        products.product_name,
        products.brand,
        products.url as product_url,
        products.price_amount,
        products.price_currency,
        products.specs,
        products.overall_rating,
        products.tested_slots,
        products.planned_slots,
        slots.value as protocol_value,
        slots.replicates,
        slots.tester_name,
        slots.last_tested_on,
        protocols.protocol_name,
        protocols.unit,
        protocols.tolerance,
        categories.category_name
    from {{ ref('stg_scenarios') }} as scenarios
    inner join picks on picks.scenario_slug = scenarios.scenario_slug
    inner join {{ ref('products') }} as products on products.product_slug = picks.product_slug
    inner join {{ ref('stg_categories') }} as categories on categories.category_slug = scenarios.category_slug
    left join {{ ref('int_slot_results') }} as slots
        on slots.product_slug = picks.product_slug and slots.protocol_slug = scenarios.rank_by
    left join {{ ref('stg_protocols') }} as protocols on protocols.protocol_slug = scenarios.rank_by
),

filled as (
    select
        figures.scenario_slug,
        templates.kind,
        templates.lang,
        {{ fill_template('templates.template', {
            'product': 'figures.product_name',
            'value': "case when templates.rank_by = 'overall' then format('{:.0f}', figures.overall_rating) else "
                ~ format_reading('figures.protocol_value', 'figures.tolerance') ~ " end",
            'unit': 'coalesce(unit_labels.label, figures.unit)',
            'tested': 'figures.tested_slots',
            'planned': 'figures.planned_slots',
            'protocol': i18n_pick('figures.protocol_name', 'templates.lang'),
            'n': 'figures.replicates',
            'tolerance': format_reading('figures.tolerance', 'figures.tolerance'),
            'tester': 'figures.tester_name',
            'date': "strftime(figures.last_tested_on, '%Y-%m-%d')"
        }) }} as text
    from figures
    inner join {{ ref('answer_templates') }} as templates
        on (templates.kind = 'recommendation' and templates.rank_by = figures.rank_by)
        or (templates.kind = 'evidence' and templates.rank_by = case when figures.rank_by = 'overall' then 'overall' else 'any' end)
    left join {{ ref('unit_labels') }} as unit_labels
        on unit_labels.unit = figures.unit and unit_labels.lang = templates.lang
),

sentences as (
    select
        scenario_slug,
        {{ i18n_agg("text", "lang", "kind = 'recommendation'") }} as answer,
        {{ i18n_agg("text", "lang", "kind = 'evidence'") }} as evidence
    from filled
    group by scenario_slug
)

select
    figures.scenario_slug,
    figures.category_slug,
    figures.category_name,
    figures.rank_by,
    figures.max_price,
    figures.scenario,
    figures.question,
    figures.product_slug,
    figures.product_name,
    figures.brand,
    figures.product_url,
    sentences.answer,
    sentences.evidence,
    case when figures.rank_by = 'overall' then figures.overall_rating else figures.protocol_value end as figure_value,
    case when figures.rank_by = 'overall' then 'points' else figures.unit end as figure_unit,
    figures.rank_score,
    figures.overall_rating,
    figures.price_amount,
    figures.price_currency,
    figures.specs,
    {{ page_url("'/guides/best-' || figures.category_slug") }} as url,
    {{ attribution("figures.question.en", page_url("'/guides/best-' || figures.category_slug")) }} as attribution,
    figures.position
from figures
inner join sentences on sentences.scenario_slug = figures.scenario_slug
