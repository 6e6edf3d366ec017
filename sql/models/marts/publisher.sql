select * from {{ ref('stg_publisher') }}
