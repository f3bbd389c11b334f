"""What the run routes read from a request, checked before anything reaches Temporal: where a
resumed stream starts, and the fields a start takes (no server needed)."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from durable_harness.exceptions import InvalidInput
from starter.web.run_bodies import AnswerBody, parsed_body, resume_point, start_fields


def request(query: str = "", **headers: str) -> Request:
    raw = [
        (name.replace("_", "-").lower().encode(), value.encode()) for name, value in headers.items()
    ]
    return Request({"type": "http", "query_string": query.encode(), "headers": raw})


def test_a_stream_starts_after_the_last_event_id_read_or_from_the_first_event() -> None:
    assert resume_point(request()) == 0
    assert resume_point(request(last_event_id="11")) == 12
    assert resume_point(request("after=11")) == 12
    assert resume_point(request("after=0", last_event_id="4")) == 5  # the header wins


@pytest.mark.parametrize("given", ["x", "-1", "1.5"])
def test_a_resume_point_that_is_no_event_id_is_refused_in_one_line(given: str) -> None:
    with pytest.raises(InvalidInput, match="an event's id, 0 or more"):
        resume_point(request(last_event_id=given))


def test_a_start_takes_the_goal_and_harness_starts_fields_and_names_an_unknown_one() -> None:
    goal, fields = start_fields(b'{"goal": "Compare", "scenario": "cities", "planner_model": "m"}')
    assert (goal, fields) == ("Compare", {"scenario": "cities", "planner_model": "m"})
    with pytest.raises(InvalidInput, match=r"unknown field\(s\) colour, size; known: goal, "):
        start_fields(b'{"goal": "x", "size": 1, "colour": "red"}')
    for body in (b"", b"[]", b'{"goal": " "}', b"{goal"):
        with pytest.raises(InvalidInput):
            start_fields(body)


def test_an_answer_needs_its_text_and_takes_no_field_it_does_not_know() -> None:
    assert parsed_body(AnswerBody, b'{"text": "Paris"}').actor is None
    for body in (b"{}", b'{"text": "Paris", "decision": "yes"}'):
        with pytest.raises(InvalidInput):
            parsed_body(AnswerBody, body)
