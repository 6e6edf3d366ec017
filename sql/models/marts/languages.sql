select code, name, native, hreflang, script, direction, position
from {{ ref('supported_languages') }}
