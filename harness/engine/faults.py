"""Fault injection for tests and demos: `TOOL[:ARG]=CODE[*N]` makes matching nodes fail N times."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, JsonValue

from harness.core.errors import ErrorCode

_FAULT = re.compile(
    r"^(?P<tool>[A-Za-z_][\w-]*)(?::(?P<arg>[^=]+))?=(?P<code>[A-Z_]+)(?:\*(?P<n>\d+))?$"
)


class FaultSpec(BaseModel):
    tool: str
    argument_value: str | None = Field(
        default=None, description="Only nodes with an argument equal to this value."
    )
    code: ErrorCode
    times: int = Field(default=1, ge=1, description="Fail the first N attempts.")

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        match = _FAULT.match(text.strip())
        if match is None:
            raise ValueError(
                f"'{text}' is not TOOL[:ARG]=CODE[*N], e.g. get_population:Tokyo=RATE_LIMITED*2"
            )
        try:
            code = ErrorCode(match["code"])
        except ValueError:
            known = ", ".join(code.value for code in ErrorCode)
            raise ValueError(f"unknown error code '{match['code']}' (known: {known})") from None
        times = int(match["n"]) if match["n"] else 1
        if times < 1:
            raise ValueError(f"'{text}': *N fails the first N attempts, so N is 1 or more")
        return cls(tool=match["tool"], argument_value=match["arg"], code=code, times=times)

    def matches(self, tool: str, arguments: dict[str, JsonValue]) -> bool:
        if tool != self.tool:
            return False
        if self.argument_value is None:
            return True
        return any(str(value) == self.argument_value for value in arguments.values())
