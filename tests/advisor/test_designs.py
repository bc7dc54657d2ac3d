"""Candidate designs: parsing the three spellings, the key a document gets, and clear errors for bad inputs."""

from __future__ import annotations

import pytest

from advisor.designs import (
    HIERARCHICAL,
    SINGLE,
    SYNTHETIC,
    DesignError,
    format_date,
    parse_design,
    render_template,
    validate_design,
)

DOC = {"id": "1", "tenantId": "contoso", "sessionId": "s-1", "createdAt": "2026-11-30T23:59:59.000000Z"}


def test_a_single_path_is_a_hash_key_of_version_2() -> None:
    design = parse_design("/sessionId")
    assert (design.kind, design.paths, design.name) == (SINGLE, ("/sessionId",), "/sessionId")
    assert design.definition() == {"paths": ["/sessionId"], "kind": "Hash", "version": 2}
    assert design.key_of(DOC) == ("s-1",)


def test_a_list_of_paths_is_a_multihash_key() -> None:
    design = parse_design(["/tenantId", "/sessionId"])
    assert design.kind == HIERARCHICAL
    assert design.definition() == {"paths": ["/tenantId", "/sessionId"], "kind": "MultiHash", "version": 2}
    assert design.key_of(DOC) == ("contoso", "s-1")
    assert parse_design(["/tenantId"]).kind == SINGLE


def test_a_template_is_a_synthetic_key_stored_in_pk() -> None:
    design = parse_design("{tenantId}-{createdAt:yyyy-MM}", name="tenant-month")
    assert (design.kind, design.paths, design.name) == (SYNTHETIC, ("/pk",), "tenant-month")
    assert design.properties == ("tenantId", "createdAt")
    assert design.key_of(DOC) == ("contoso-2026-11",)
    assert design.stored(DOC)["pk"] == "contoso-2026-11"
    assert design.key_life_days() == 31.0  # a month's bucket stops growing after a month
    assert parse_design("{tenantId}").key_life_days() is None


def test_template_formats_nested_properties_and_epoch_seconds() -> None:
    doc = {"user": {"region": "eu"}, "at": 1764547199}  # 2025-11-30T23:59:59Z
    assert render_template("{user.region}_{at:yyyy-MM-dd HH}", doc) == "eu_2025-11-30 23"
    assert format_date("2026-01-02T03:04:05Z", "yyyyMMdd") == "20260102"


def test_an_unknown_property_in_a_template_is_named_with_the_properties_seen() -> None:
    with pytest.raises(DesignError, match=r"'tenant'.*absent from every sample document.*tenantId"):
        validate_design(parse_design("{tenant}-{createdAt:yyyy-MM}"), [DOC])


def test_an_unknown_path_is_refused_too() -> None:
    with pytest.raises(DesignError, match="'userId' is absent"):
        validate_design(parse_design(["/tenantId", "/userId"]), [DOC])


def test_an_empty_sample_is_refused() -> None:
    with pytest.raises(DesignError, match="sample is empty"):
        validate_design(parse_design("/sessionId"), [])


def test_more_than_three_levels_are_refused() -> None:
    with pytest.raises(DesignError, match="4 levels, a hierarchical partition key has at most 3"):
        parse_design(["/a", "/b", "/c", "/d"])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("sessionId", "not a partition key path"),
        ("{tenantId-{x}", "malformed"),
        ("tenant-}", "malformed"),
        (["/a", "/a"], "appears twice"),
        ([], "at least one path"),
    ],
)
def test_malformed_specs_are_refused(spec: object, message: str) -> None:
    with pytest.raises(DesignError, match=message):
        parse_design(spec)  # type: ignore[arg-type]


def test_a_date_field_that_is_not_a_date_is_a_clear_error() -> None:
    with pytest.raises(DesignError, match="document '1'"):
        validate_design(parse_design("{tenantId}-{sessionId:yyyy}"), [DOC])


def test_a_missing_level_is_the_undefined_value_as_the_engine_keys_it() -> None:
    from cosmoscore.epk import UNDEFINED

    design = parse_design(["/tenantId", "/userId"])
    assert design.key_of(DOC) == ("contoso", UNDEFINED)
    validate_design(design, [DOC, {**DOC, "userId": "u"}])  # present in one document: not a typo
