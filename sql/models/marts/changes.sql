-- The change log: when each public item's record really changed. Editorial items change
-- when the CMS says they were updated; products when the pipeline first published a
-- different record (see the product_record_history snapshot).
select url, path, content_type as type, title, updated_at as changed_at
from {{ ref('content') }}

union all

select url, '/products/' || product_slug as path, 'product' as type, product_name as title, changed_at
from {{ ref('products') }}
