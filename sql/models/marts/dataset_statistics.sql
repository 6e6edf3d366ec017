-- Headline figures of the dataset, for the dataset descriptor and the press kit.
select
    (select count(*) from {{ ref('products') }}) as products,
    (select count(*) from {{ ref('categories') }}) as categories,
    (select count(*) from {{ ref('protocols') }}) as protocols,
    (select count(*) from {{ ref('bench_measurements') }}) as planned_slots,
    (select count(*) from {{ ref('bench_measurements') }} where status = 'measured') as measured_slots,
    (select count(*) from {{ ref('bench_measurements') }} where status = 'pending') as pending_slots,
    (select count(*) from {{ ref('stg_bench_readings') }}) as readings,
    (select count(distinct tester_name) from {{ ref('stg_bench_readings') }}) as testers,
    (select count(*) from {{ ref('recommendations') }}) as recommendations,
    (select count(*) from {{ ref('answers') }}) as answers,
    (select count(*) from {{ ref('content') }}) as editorial_items,
    (select count(*) from {{ ref('pages') }}) as pages,
    (select count(*) from {{ ref('claims') }}) as claims,
    (select round(avg(overall_rating), 1) from {{ ref('products') }}) as mean_overall_rating,
    (select min(tested_on) from {{ ref('stg_bench_readings') }}) as first_tested_on,
    (select max(tested_on) from {{ ref('stg_bench_readings') }}) as last_tested_on,
    (select max(changed_at) from {{ ref('changes') }}) as latest_change
