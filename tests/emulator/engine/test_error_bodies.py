"""The backend's error envelope (`Message: {"Errors":[...]}`, cosmos-errors-and-stats.md layout A) is valid
JSON inside the message, as the service's is, whatever the text holds."""

from __future__ import annotations

import json

from emulator.engine import errors


def test_a_quote_in_the_text_leaves_the_errors_list_valid_json() -> None:
    text = 'Partition key ["a", {"b": 1}] is invalid. Path \\"x\\" was not found.'
    message = errors.bad_request(text).message
    assert message.startswith('Message: {"Errors":[')
    assert json.loads(message.removeprefix("Message: ")) == {"Errors": [text]}


def test_a_plain_text_reads_as_the_service_writes_it() -> None:
    message = errors.bad_request("Request rate is large.").message
    assert message == 'Message: {"Errors":["Request rate is large."]}'
