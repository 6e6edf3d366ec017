-- Bench protocols with the scoring rule the seeds define for them.
select
    protocols.protocol_slug,
    protocols.protocol_name,
    protocols.method,
    protocols.unit,
    protocols.tolerance,
    protocols.sample_size,
    protocols.plausible_min,
    protocols.plausible_max,
    protocols.category_slugs,
    list(
        struct_pack(
            category := scoring.category,
            direction := scoring.direction,
            zero_at := scoring.zero_at,
            full_at := scoring.full_at,
            weight := scoring.weight
        )
        order by scoring.category nulls first
    ) as scoring_rules
from {{ ref('stg_protocols') }} as protocols
left join {{ ref('protocol_scoring') }} as scoring
    on scoring.protocol = protocols.protocol_slug
group by all
