"""Fixed, hand-written documents for the SQL conformance cases (no engine imports).

Three datasets, each loaded into its own container by a runner:
- MAIN: 48 documents, `pk` p1..p8 (six each), hierarchical `tenant`/`user`, nested `address`, arrays
  `tags` and `items`, and deliberately irregular fields: `n` is missing in d05, null in d10, a string
  in d15, a double in d20, a boolean in d25 and an array in d30; `tags` is missing, empty or a string
  in a few documents; `address` is missing in d09 and null in d18.
- TYPES: one document per type in `v` (ascending type order by `i`), for ordering and aggregates
  over mixed types (cosmos-sql-semantics E7/E8).
- PEOPLE: the docs' employee and product samples behind worked examples E4-E6, E10, E14.
"""

from __future__ import annotations

MAIN: list[dict] = [
    {"id": "d01", "pk": "p1", "tenant": "t1", "user": "u1", "n": 1, "name": "Ada", "tags": ["red", "blue"], "address": {"city": "Oslo", "zip": "0150"}, "flag": True, "price": 10.5, "items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}], "created": "2024-01-01T10:00:00.0000000Z", "order": 3},  # noqa: E501
    {"id": "d02", "pk": "p1", "tenant": "t1", "user": "u2", "n": 2, "name": "Bob", "tags": [], "address": {"city": "Paris", "zip": "75001"}, "flag": False, "price": 20.0, "items": [{"sku": "A", "qty": 5}], "created": "2024-01-02T11:30:00.0000000Z", "order": 1},  # noqa: E501
    {"id": "d03", "pk": "p1", "tenant": "t1", "user": "u1", "n": 3, "name": "cy", "address": {"city": "Rome", "zip": "00100"}, "flag": True, "price": 7.25, "items": [], "created": "2024-01-03T09:15:00.0000000Z"},  # noqa: E501
    {"id": "d04", "pk": "p1", "tenant": "t1", "user": "u2", "n": 4, "name": "Dee", "tags": "red", "address": {"city": "Oslo", "zip": "0151"}, "price": 12.0, "items": [{"sku": "C", "qty": 1}], "created": "2024-01-04T23:59:59.9999999Z"},  # noqa: E501
    {"id": "d05", "pk": "p1", "tenant": "t1", "user": "u3", "name": "Eve", "tags": ["green"], "address": {"city": "Paris", "zip": "75002"}, "flag": True, "price": 3.5, "items": [{"sku": "B", "qty": 3}], "created": "2024-01-05T08:00:00.0000000Z"},  # noqa: E501
    {"id": "d06", "pk": "p1", "tenant": "t1", "user": "u3", "n": 6, "name": "Fay", "tags": ["red", "green"], "address": {"city": "Rome", "zip": "00101"}, "flag": False, "price": 30.0, "items": [{"sku": "A", "qty": 2}, {"sku": "C", "qty": 4}], "created": "2024-01-06T12:00:00.0000000Z"},  # noqa: E501
    {"id": "d07", "pk": "p2", "tenant": "t1", "user": "u1", "n": 7, "name": "Gus", "tags": ["blue"], "address": {"city": "Oslo", "zip": "0152"}, "flag": True, "price": 8.0, "items": [{"sku": "D", "qty": 1}], "created": "2024-02-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d08", "pk": "p2", "tenant": "t1", "user": "u2", "n": 8, "name": "Hal", "tags": ["red"], "address": {"city": "Paris", "zip": "75003"}, "flag": True, "price": 15.5, "items": [{"sku": "A", "qty": 1}], "created": "2024-02-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d09", "pk": "p2", "tenant": "t1", "user": "u1", "n": 9, "name": "Ivy", "tags": ["blue", "green"], "flag": False, "price": 22.0, "items": [{"sku": "B", "qty": 1}], "created": "2024-02-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d10", "pk": "p2", "tenant": "t1", "user": "u2", "n": None, "name": "Jo", "tags": ["red"], "address": {"city": "Rome", "zip": "00102"}, "flag": True, "price": 5.0, "items": [{"sku": "C", "qty": 2}], "created": "2024-02-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d11", "pk": "p2", "tenant": "t1", "user": "u3", "n": 11, "name": "Kai", "tags": ["blue"], "address": {"city": "Oslo", "zip": "0153"}, "price": 9.75, "items": [{"sku": "D", "qty": 3}], "created": "2024-02-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d12", "pk": "p2", "tenant": "t1", "user": "u3", "n": 12, "name": "Lea", "tags": ["green"], "address": {"city": "Paris", "zip": "75004"}, "flag": False, "price": 40.0, "items": [{"sku": "A", "qty": 7}], "created": "2024-02-06T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d13", "pk": "p3", "tenant": "t1", "user": "u1", "n": 13, "name": "Max", "tags": ["red", "blue", "green"], "address": {"city": "Rome", "zip": "00103"}, "flag": True, "price": 11.0, "items": [{"sku": "B", "qty": 2}], "created": "2024-03-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d14", "pk": "p3", "tenant": "t1", "user": "u2", "n": 14, "name": "Ned", "tags": ["blue"], "address": {"city": "Oslo", "zip": "0154"}, "flag": True, "price": 6.5, "items": [{"sku": "C", "qty": 1}], "created": "2024-03-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d15", "pk": "p3", "tenant": "t1", "user": "u1", "n": "15", "name": "Oda", "tags": ["red"], "address": {"city": "Paris", "zip": "75005"}, "flag": False, "price": 18.0, "items": [{"sku": "A", "qty": 3}], "created": "2024-03-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d16", "pk": "p3", "tenant": "t1", "user": "u2", "n": 16, "name": "Pia", "tags": ["green"], "address": {"city": "Rome", "zip": "00104"}, "flag": True, "price": 25.0, "items": [{"sku": "D", "qty": 2}], "created": "2024-03-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d17", "pk": "p3", "tenant": "t2", "user": "u1", "n": 17, "name": "Quin", "tags": ["blue"], "address": {"city": "Oslo", "zip": "0155"}, "price": 14.0, "items": [{"sku": "B", "qty": 4}], "created": "2024-03-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d18", "pk": "p3", "tenant": "t2", "user": "u2", "n": 18, "name": "Ray", "tags": ["red"], "address": None, "flag": True, "price": 2.0, "items": [{"sku": "C", "qty": 6}], "created": "2024-03-06T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d19", "pk": "p4", "tenant": "t2", "user": "u1", "n": 19, "name": "Sam", "tags": ["green"], "address": {"city": "Paris", "zip": "75006"}, "flag": False, "price": 19.0, "items": [{"sku": "A", "qty": 1}], "created": "2024-04-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d20", "pk": "p4", "tenant": "t2", "user": "u2", "n": 20.5, "name": "Tia", "tags": ["blue"], "address": {"city": "Rome", "zip": "00105"}, "flag": True, "price": 21.0, "items": [{"sku": "D", "qty": 5}], "created": "2024-04-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d21", "pk": "p4", "tenant": "t2", "user": "u1", "n": 21, "name": "Uma", "tags": ["red", "blue"], "address": {"city": "Oslo", "zip": "0156"}, "flag": True, "price": 13.0, "items": [{"sku": "B", "qty": 2}], "created": "2024-04-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d22", "pk": "p4", "tenant": "t2", "user": "u2", "n": 22, "name": "Vic", "tags": ["green"], "address": {"city": "Paris", "zip": "75007"}, "flag": False, "price": 16.0, "items": [{"sku": "C", "qty": 3}], "created": "2024-04-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d23", "pk": "p4", "tenant": "t2", "user": "u3", "n": 23, "name": "Wes", "tags": ["blue"], "address": {"city": "Rome", "zip": "00106"}, "price": 17.0, "items": [{"sku": "A", "qty": 2}], "created": "2024-04-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d24", "pk": "p4", "tenant": "t2", "user": "u3", "n": 24, "name": "Xia", "tags": ["red"], "address": {"city": "Oslo", "zip": "0157"}, "flag": True, "price": 4.0, "items": [{"sku": "D", "qty": 1}], "created": "2024-04-06T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d25", "pk": "p5", "tenant": "t2", "user": "u1", "n": True, "name": "Yan", "tags": ["green"], "address": {"city": "Paris", "zip": "75008"}, "flag": True, "price": 23.0, "items": [{"sku": "B", "qty": 8}], "created": "2024-05-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d26", "pk": "p5", "tenant": "t2", "user": "u2", "n": 26, "name": "Zed", "tags": ["blue"], "address": {"city": "Rome", "zip": "00107"}, "flag": False, "price": 26.0, "items": [{"sku": "C", "qty": 1}], "created": "2024-05-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d27", "pk": "p5", "tenant": "t2", "user": "u1", "n": 27, "name": "Amy", "tags": ["red"], "address": {"city": "Oslo", "zip": "0158"}, "flag": True, "price": 27.0, "items": [{"sku": "A", "qty": 4}], "created": "2024-05-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d28", "pk": "p5", "tenant": "t2", "user": "u2", "n": 28, "name": "Ben", "tags": ["green"], "address": {"city": "Paris", "zip": "75009"}, "price": 28.0, "items": [{"sku": "D", "qty": 2}], "created": "2024-05-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d29", "pk": "p5", "tenant": "t2", "user": "u3", "n": 29, "name": "Cal", "tags": ["blue"], "address": {"city": "Rome", "zip": "00108"}, "flag": False, "price": 29.0, "items": [{"sku": "B", "qty": 1}], "created": "2024-05-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d30", "pk": "p5", "tenant": "t2", "user": "u3", "n": [30], "name": "Dan", "tags": ["red"], "address": {"city": "Oslo", "zip": "0159"}, "flag": True, "price": 1.0, "items": [{"sku": "C", "qty": 9}], "created": "2024-05-06T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d31", "pk": "p6", "tenant": "t2", "user": "u1", "n": 31, "name": "Eli", "tags": ["green"], "address": {"city": "Paris", "zip": "75010"}, "flag": True, "price": 31.0, "items": [{"sku": "A", "qty": 1}], "created": "2024-06-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d32", "pk": "p6", "tenant": "t2", "user": "u2", "n": 32, "name": "Fox", "tags": ["blue"], "address": {"city": "Rome", "zip": "00109"}, "flag": False, "price": 32.0, "items": [{"sku": "D", "qty": 3}], "created": "2024-06-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d33", "pk": "p6", "tenant": "t3", "user": "u1", "n": 33, "name": "Gil", "tags": ["red"], "address": {"city": "Oslo", "zip": "0160"}, "price": 33.0, "items": [{"sku": "B", "qty": 2}], "created": "2024-06-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d34", "pk": "p6", "tenant": "t3", "user": "u2", "n": 34, "name": "Hue", "tags": ["green"], "address": {"city": "Paris", "zip": "75011"}, "flag": True, "price": 34.0, "items": [{"sku": "C", "qty": 1}], "created": "2024-06-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d35", "pk": "p6", "tenant": "t3", "user": "u3", "n": 35, "name": "Ian", "tags": ["blue"], "address": {"city": "Rome", "zip": "00110"}, "flag": False, "price": 35.0, "items": [{"sku": "A", "qty": 6}], "created": "2024-06-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d36", "pk": "p6", "tenant": "t3", "user": "u3", "n": 36, "name": "Jay", "tags": ["red"], "address": {"city": "Oslo", "zip": "0161"}, "flag": True, "price": 36.0, "items": [{"sku": "D", "qty": 1}], "created": "2024-06-06T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d37", "pk": "p7", "tenant": "t3", "user": "u1", "n": 37, "name": "Kim", "tags": ["green"], "address": {"city": "Paris", "zip": "75012"}, "flag": True, "price": 37.0, "items": [{"sku": "B", "qty": 3}], "created": "2024-07-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d38", "pk": "p7", "tenant": "t3", "user": "u2", "n": 38, "name": "Lou", "tags": ["blue"], "address": {"city": "Rome", "zip": "00111"}, "flag": False, "price": 38.0, "items": [{"sku": "C", "qty": 2}], "created": "2024-07-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d39", "pk": "p7", "tenant": "t3", "user": "u1", "n": 39, "name": "Mia", "tags": ["red"], "address": {"city": "Oslo", "zip": "0162"}, "price": 39.0, "items": [{"sku": "A", "qty": 1}], "created": "2024-07-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d40", "pk": "p7", "tenant": "t3", "user": "u2", "n": 40, "name": "Nia", "tags": ["green"], "address": {"city": "Paris", "zip": "75013"}, "flag": True, "price": 40.0, "items": [{"sku": "D", "qty": 4}], "created": "2024-07-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d41", "pk": "p7", "tenant": "t3", "user": "u3", "n": 41, "name": "Oz", "tags": ["blue"], "address": {"city": "Rome", "zip": "00112"}, "flag": False, "price": 41.0, "items": [{"sku": "B", "qty": 5}], "created": "2024-07-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d42", "pk": "p7", "tenant": "t3", "user": "u3", "n": 42, "name": "Pat", "tags": ["red"], "address": {"city": "Oslo", "zip": "0163"}, "flag": True, "price": 42.0, "items": [{"sku": "C", "qty": 1}], "created": "2024-07-06T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d43", "pk": "p8", "tenant": "t3", "user": "u1", "n": 43, "name": "Quy", "tags": ["green"], "address": {"city": "Paris", "zip": "75014"}, "price": 43.0, "items": [{"sku": "A", "qty": 2}], "created": "2024-08-01T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d44", "pk": "p8", "tenant": "t3", "user": "u2", "n": 44, "name": "Rex", "tags": ["blue"], "address": {"city": "Rome", "zip": "00113"}, "flag": True, "price": 44.0, "items": [{"sku": "D", "qty": 2}], "created": "2024-08-02T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d45", "pk": "p8", "tenant": "t3", "user": "u1", "n": 45, "name": "Sue", "tags": ["red"], "address": {"city": "Oslo", "zip": "0164"}, "flag": False, "price": 45.0, "items": [{"sku": "B", "qty": 1}], "created": "2024-08-03T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d46", "pk": "p8", "tenant": "t3", "user": "u2", "n": 46, "name": "Tom", "tags": ["green"], "address": {"city": "Paris", "zip": "75015"}, "flag": True, "price": 46.0, "items": [{"sku": "C", "qty": 3}], "created": "2024-08-04T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d47", "pk": "p8", "tenant": "t3", "user": "u3", "n": 47, "name": "Ula", "tags": ["blue"], "address": {"city": "Rome", "zip": "00114"}, "price": 47.0, "items": [{"sku": "A", "qty": 8}], "created": "2024-08-05T10:00:00.0000000Z"},  # noqa: E501
    {"id": "d48", "pk": "p8", "tenant": "t3", "user": "u3", "n": 48, "name": "Vin", "tags": ["red"], "address": {"city": "Oslo", "zip": "0165"}, "flag": True, "price": 48.0, "items": [{"sku": "D", "qty": 1}], "created": "2024-08-06T10:00:00.0000000Z"},  # noqa: E501
]

# One value per type, in ascending type order by `i` (i=0 has no `v`: undefined).
TYPES: list[dict] = [
    {"id": "t0", "pk": "x", "i": 0},
    {"id": "t1", "pk": "x", "i": 1, "v": None},
    {"id": "t2", "pk": "x", "i": 2, "v": False},
    {"id": "t3", "pk": "x", "i": 3, "v": True},
    {"id": "t4", "pk": "y", "i": 4, "v": -1.5},
    {"id": "t5", "pk": "y", "i": 5, "v": 42},
    {"id": "t6", "pk": "y", "i": 6, "v": "Zeta"},
    {"id": "t7", "pk": "z", "i": 7, "v": "alpha"},
    {"id": "t8", "pk": "z", "i": 8, "v": [10, 20]},
    {"id": "t9", "pk": "z", "i": 9, "v": {"type": "object"}},
]

# The docs' samples: employees (E5, E14) and products (E4, E6, E10).
PEOPLE: list[dict] = [
    {"id": "e1", "pk": "emp", "team": "Cloud software engineering", "name": "Ann", "capabilities": {"softwareDevelopment": "javascript"}},  # noqa: E501
    {"id": "e2", "pk": "emp", "team": "Cloud software engineering", "name": "Ben", "capabilities": {"softwareDevelopment": "javascript"}},  # noqa: E501
    {"id": "e3", "pk": "emp", "team": "Cloud software engineering", "name": "Cat", "capabilities": {"softwareDevelopment": "javascript"}},  # noqa: E501
    {"id": "e4", "pk": "emp", "team": "Cloud software engineering", "name": "Dov", "capabilities": {"softwareDevelopment": "python"}},  # noqa: E501
    {"id": "e5", "pk": "emp", "team": "Cloud software engineering", "name": "Eli", "capabilities": {"softwareDevelopment": "python"}},  # noqa: E501
    {"id": "e6", "pk": "emp", "team": "Cloud software engineering", "name": "Fin", "capabilities": {"softwareDevelopment": "c-sharp"}},  # noqa: E501
    {"id": "e7", "pk": "emp", "team": "Cloud software engineering", "name": "Gia", "capabilities": {}},
    {"id": "e8", "pk": "emp", "team": "Leadership team", "name": "Sawyer Miller"},
    {"id": "e9", "pk": "emp", "team": "Leadership team", "name": "Jennifer Wilkins"},
    {"id": "e10", "pk": "emp", "team": "Leadership team", "name": "Hannah Haynes"},
    {"id": "e11", "pk": "emp", "team": "Leadership team", "name": "Isaac Talbot"},
    {"id": "e12", "pk": "emp", "team": "Leadership team", "name": "Riley Johnson"},
    {"id": "s1", "pk": "prod", "category": "socks", "name": "Horric socks"},
    {"id": "s2", "pk": "prod", "category": "socks", "name": "Shinity socks"},
    {"id": "s3", "pk": "prod", "category": "socks"},
    {"id": "b1", "pk": "prod", "category": "hiking-bags", "quantity": 35},
    {"id": "b2", "pk": "prod", "category": "hiking-bags"},
    {"id": "b3", "pk": "prod", "category": "hiking-bags", "quantity": 15},
    {"id": "g1", "pk": "prod", "category": "gloves", "name": "Winter glove", "tags": ["x", "y"]},
    {"id": "g2", "pk": "prod", "category": "gloves", "name": "Summer mitt", "tags": []},
    {"id": "g3", "pk": "prod", "category": "gloves", "name": "Work glove", "tags": "x"},
]

DATASETS: dict[str, list[dict]] = {"main": MAIN, "types": TYPES, "people": PEOPLE}
