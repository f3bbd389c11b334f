"""The cities tools: two in-memory lookups, a narrative per city, and the comparison report."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from harness.catalog.llm import TextRequest
from harness.catalog.tools import ToolRole, ToolSpec
from harness.core.errors import ErrorCode, ToolError
from harness.core.untrusted import fence, with_data_rule
from scenarios.base import Tool, ToolContext
from scenarios.cities.data import CityRecord, find_city


class CityArgs(BaseModel):
    city: str = Field(min_length=1, description="City name, e.g. 'Paris'.")


class PopulationFact(BaseModel):
    city: str
    country: str
    population: int
    year: int


class TimezoneFact(BaseModel):
    city: str
    timezone: str
    utc_offset: str


class CitySummary(BaseModel):
    city: str
    summary: str


class ReportArgs(BaseModel):
    populations: list[PopulationFact] = Field(
        description="A get_population result per city: one NODE_RESULT each."
    )
    timezones: list[TimezoneFact] = Field(description="A get_timezone result per city.")
    summaries: list[CitySummary] = Field(description="A summarize_city result per city.")
    missing_cities: list[str] = Field(
        default_factory=list, description="Requested cities for which no data exists."
    )


def _lookup(name: str) -> CityRecord:
    record = find_city(name)
    if record is None:
        raise ToolError(
            ErrorCode.MISSING_INFO,
            f"no data for a city called '{name}'; it may be misspelt or not a real city",
            data={"city": name},
        )
    return record


async def get_population(args: CityArgs, ctx: ToolContext) -> JsonValue:
    record = _lookup(args.city)
    fact = PopulationFact(
        city=record.name,
        country=record.country,
        population=record.population,
        year=record.population_year,
    )
    return fact.model_dump()


async def get_timezone(args: CityArgs, ctx: ToolContext) -> JsonValue:
    record = _lookup(args.city)
    fact = TimezoneFact(city=record.name, timezone=record.timezone, utc_offset=record.utc_offset)
    return fact.model_dump()


async def summarize_city(args: CityArgs, ctx: ToolContext) -> JsonValue:
    record = _lookup(args.city)
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You write short, factual city profiles for a comparison report."
            ),
            prompt=f"In two sentences, describe {record.name}, {record.country}. It is known "
            f"for:\n{fence('known_for', record.known_for)}",
            draft=f"{record.name}, {record.country}. {record.known_for}",
            max_output_tokens=200,
        )
    )
    return CitySummary(city=record.name, summary=reply.text.strip()).model_dump()


async def aggregate_report(args: ReportArgs, ctx: ToolContext) -> JsonValue:
    draft = render_report(args)
    reply = await ctx.write(
        TextRequest(
            system=with_data_rule(
                "You write concise markdown reports that compare cities. Use only the facts "
                "given; keep every city's name, population and timezone exactly as given."
            ),
            prompt="Write a markdown report comparing these cities.\n\n"
            + fence("facts", args.model_dump_json(indent=2)),
            draft=draft,
            max_output_tokens=1200,
        )
    )
    return reply.text.strip()


def render_report(args: ReportArgs) -> str:
    """The comparison as markdown, from the facts alone."""
    zones = {fact.city: fact for fact in args.timezones}
    stories = {summary.city: summary.summary for summary in args.summaries}
    names = [fact.city for fact in args.populations]
    lines = [
        f"# City comparison: {', '.join(names)}",
        "",
        "| City | Country | Population | Timezone | UTC offset |",
        "|---|---|---:|---|---|",
    ]
    for fact in args.populations:
        zone = zones.get(fact.city)
        lines.append(
            f"| {fact.city} | {fact.country} | {fact.population:,} ({fact.year}) "
            f"| {zone.timezone if zone else 'unknown'} | {zone.utc_offset if zone else '?'} |"
        )
    ranked = sorted(args.populations, key=lambda fact: fact.population, reverse=True)
    if len(ranked) > 1:
        largest, smallest = ranked[0], ranked[-1]
        ratio = largest.population / max(smallest.population, 1)
        lines += [
            "",
            f"By population: {' > '.join(fact.city for fact in ranked)}. "
            f"{largest.city} is {ratio:.1f}x the size of {smallest.city}.",
        ]
    for name in names:
        if name in stories:
            lines += ["", f"## {name}", "", stories[name]]
    if args.missing_cities:
        lines += [
            "",
            "## Not found",
            "",
            f"No data could be found for: {', '.join(args.missing_cities)}.",
        ]
    return "\n".join(lines)


TOOLS = (
    Tool(
        spec=ToolSpec.from_model(
            "get_population",
            "Population of a city (city proper) with the country and the year of the figure.",
            CityArgs,
            cost_hint=0.1,
            result=PopulationFact,
        ),
        arguments=CityArgs,
        run=get_population,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "get_timezone",
            "IANA timezone and standard UTC offset of a city.",
            CityArgs,
            cost_hint=0.1,
            result=TimezoneFact,
        ),
        arguments=CityArgs,
        run=get_timezone,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "summarize_city",
            "A two-sentence narrative profile of a city, written by the worker model.",
            CityArgs,
            cost_hint=1.0,
            uses_llm=True,
            result=CitySummary,
        ),
        arguments=CityArgs,
        run=summarize_city,
    ),
    Tool(
        spec=ToolSpec.from_model(
            "aggregate_report",
            "The final markdown report comparing the cities, from each city's results.",
            ReportArgs,
            role=ToolRole.FINAL_SYNTHESIS,
            cost_hint=2.0,
            uses_llm=True,
        ),
        arguments=ReportArgs,
        run=aggregate_report,
    ),
)
