"""The Cosmos DB NoSQL query language, as a pure engine (no HTTP, no I/O).

    parse_query(text) -> Query                 # cached; raises SqlError (service codes, locations)
    execute(query, documents, parameters)      # the whole query inside one partition -> QueryResult
    describe(query) -> QueryShape              # what a query plan needs
    rewrite_for_cross_partition(query, shape)  # the per-partition query text the SDK expects
    partition_key_filter(query, key_paths, parameters) -> KeyFilter   # routing
    canonical_json(value) -> bytes             # sorted-key JSON, right-sized: an ordering or cache key
    index_use(query, is_indexed) -> IndexUse   # whether the filter is served from the index

To add a built-in function, add it to the table of its kind (`strings.py`, `arrays.py`, `numbers.py`,
`datetimes.py`: name, arity, implementation); `functions.py` registers them all and the parser,
checks and compiler pick it up from there. The grammar is `grammar.lark`.
"""

from .ast import UNDEFINED, Query
from .errors import SqlError
from .executor import QueryResult, execute
from .indexing import IndexUse, index_use
from .parser import parse_query
from .plan import QueryShape, describe, rewrite_for_cross_partition
from .routing import KeyFilter, partition_key_filter
from .values import canonical_json

__all__ = [
    "UNDEFINED",
    "IndexUse",
    "KeyFilter",
    "Query",
    "QueryResult",
    "QueryShape",
    "SqlError",
    "canonical_json",
    "describe",
    "execute",
    "index_use",
    "parse_query",
    "partition_key_filter",
    "rewrite_for_cross_partition",
]
