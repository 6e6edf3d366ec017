-- base_url: the address every URL of this build is made on; publish records it with the release.
select *, '{{ base_url() }}' as base_url from {{ ref('stg_publisher') }}
