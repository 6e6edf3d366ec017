-- The overall rating: the weighted mean of the sub-scores of tested slots only.
select
    product_slug,
    -- Decimal sums, so the same inputs give the same rating whatever order threads add in;
    -- the quotient (a double) goes back to decimal so that 48.45 rounds to 48.5, not 48.4.
    round((sum((sub_score * weight)::decimal(18, 6)) filter (where status = 'measured')
        / nullif(sum(weight::decimal(18, 6)) filter (where status = 'measured'), 0))::decimal(18, 6), 1)::double
        as overall_rating,
    count(*) filter (where status = 'measured') as tested_slots,
    count(*) as planned_slots,
    list(
        struct_pack(
            protocol := protocol_slug,
            status := status,
            value := value,
            sub_score := sub_score,
            weight := weight
        )
        order by protocol_slug
    ) as sub_scores,
    max(last_tested_on) as last_tested_on
from {{ ref('int_slot_results') }}
group by product_slug
