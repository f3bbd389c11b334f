"""Bad input gets one clear line, the usage exit code (2), no traceback, and nothing sent.

Every case runs the real `harness` command against an address where no server listens, so a
case that got past its checks would show up as exit 3 ("cannot reach Temporal")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.starter.test_cli import HARNESS

NOWHERE = "127.0.0.1:1"


def _harness(*args: str, address: str = NOWHERE) -> tuple[int, str]:
    env = {**os.environ, "TEMPORAL_ADDRESS": address}
    done = subprocess.run([HARNESS, *args], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stderr


def _files(tmp: Path) -> dict[str, str]:
    not_utf8 = tmp / "latin1.json"
    not_utf8.write_bytes(b'{"nodes": [], "note": "caf\xe9"}')
    deep = tmp / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    nan = tmp / "nan.json"
    nan.write_text(
        '{"nodes": [{"id": "a", "tool": "delay", "arguments": [{"name": "ms", '
        '"kind": "LITERAL", "value": NaN}]}]}'
    )
    truncated = tmp / "truncated.json"
    truncated.write_text('{"nodes": [')
    a_list = tmp / "list.json"
    a_list.write_text("[1, 2]")
    empty = tmp / "empty.json"
    empty.write_text("")
    folder = tmp / "folder"
    folder.mkdir()
    big = tmp / "big.json"
    big.write_text('"' + "d" * 270_000 + '"')
    typo = tmp / "typo.json"
    typo.write_text('{"requires_aproved_review": false}')
    unknown_check = tmp / "unknown_check.json"
    unknown_check.write_text('{"presets": {"refund": {"required_checks": ["paymnt-verified"]}}}')
    eval_typo = tmp / "cases.yaml"
    eval_typo.write_text(
        "scenario: cities\ncases:\n  - id: a\n    goal: Compare Paris and Tokyo\n"
        "    expect: {max_replan: 1}\n"
    )
    not_yaml = tmp / "broken.yaml"
    not_yaml.write_text("scenario: cities\ncases: [\n")
    deep_yaml = tmp / "deep.yaml"
    deep_yaml.write_text("scenario: cities\ncases: " + "[" * 50_000 + "]" * 50_000 + "\n")
    huge_yaml = tmp / "huge.yaml"
    with huge_yaml.open("wb") as file:
        file.truncate(15 * 1024 * 1024)  # sparse: 15 MB by its size, written in no time
    huge_plan = tmp / "huge.json"
    with huge_plan.open("wb") as file:
        file.truncate(5 * 1024 * 1024)
    deep_contract = tmp / "deep_contract.json"
    deep_contract.write_text("[" * 200_000 + "]" * 200_000)
    return {
        "deep_yaml": str(deep_yaml),
        "huge_yaml": str(huge_yaml),
        "huge_plan": str(huge_plan),
        "deep_contract": str(deep_contract),
        "eval_typo": str(eval_typo),
        "in_file": str(a_list / "baseline.json"),
        "not_yaml": str(not_yaml),
        "missing_yaml": str(tmp / "missing.yaml"),
        "typo": str(typo),
        "unknown_check": str(unknown_check),
        "not_utf8": str(not_utf8),
        "deep": str(deep),
        "nan": str(nan),
        "truncated": str(truncated),
        "list": str(a_list),
        "empty": str(empty),
        "folder": str(folder),
        "big": str(big),
        "missing": str(tmp / "missing.json"),
    }


CASES: list[tuple[str, tuple[str, ...], str]] = [
    ("max seconds nan", ("run", "x", "--max-seconds", "nan"), "not a finite number"),
    ("max cost nan", ("run", "x", "--max-cost", "nan"), "not a finite number"),
    ("max seconds inf", ("run", "x", "--max-seconds", "inf"), "not a finite number"),
    ("max seconds 1e300", ("run", "x", "--max-seconds", "1e300"), "max_seconds"),
    ("empty goal", ("run", ""), "goal"),
    ("blank goal", ("run", "   "), "a goal needs words"),
    ("huge goal", ("run", "9" * 50_000), "at most 10000 characters"),
    ("long run id", ("run", "x", "--id", "a" * 1107), "a run id has 1 to 200 characters"),
    ("plan not utf-8", ("run", "x", "--plan", "{not_utf8}"), "is not UTF-8 text"),
    ("plan nested deep", ("run", "x", "--plan", "{deep}"), "nests too deeply"),
    ("plan with NaN", ("run", "x", "--plan", "{nan}"), "NaN is not a JSON number"),
    ("data nested deep", ("deliver", "r", "--event", "e", "--data", "@{deep}"), "nests too deeply"),
    ("data not json", ("deliver", "r", "--event", "e", "--data", "{nope"), "not valid JSON"),
    (
        "long comment",
        ("approve", "r", "w", "--actor", "human:a", "--comment", "c" * 3000),
        "comment",
    ),
    ("bad actor", ("approve", "r", "w", "--actor", "nobody"), "human:NAME"),
    ("report to /proc", ("report", "r", "--out", "/proc/nope/x"), "cannot write to"),
    ("port too big", ("server", "--port", "70000"), "is not a port"),
    ("unknown scenario", ("tools", "--scenario", "citys"), "did you mean 'cities'?"),
    # every number of `run`, at and past each end of its range
    ("max tokens zero", ("run", "x", "--max-tokens", "0"), "0 must be at least 1"),
    ("max tokens negative", ("run", "x", "--max-tokens", "-5"), "-5 must be at least 1"),
    ("max tokens a word", ("run", "x", "--max-tokens", "abc"), "'abc' is not a whole number"),
    ("max tokens 1e3", ("run", "x", "--max-tokens", "1e3"), "'1e3' is not a whole number"),
    ("max tool calls zero", ("run", "x", "--max-tool-calls", "0"), "0 must be at least 1"),
    ("max tool calls huge", ("run", "x", "--max-tool-calls", "9" * 20), "at most 1000000000"),
    ("max seconds negative", ("run", "x", "--max-seconds", "-1"), "must be more than 0"),
    ("max seconds zero", ("run", "x", "--max-seconds", "0"), "must be more than 0"),
    ("max seconds a word", ("run", "x", "--max-seconds", "soon"), "'soon' is not a number"),
    ("max cost negative", ("run", "x", "--max-cost", "-1"), "must be more than 0"),
    ("max cost inf", ("run", "x", "--max-cost", "inf"), "not a finite number"),
    ("max cost huge", ("run", "x", "--max-cost", "1e9"), "max_cost_usd: at most"),
    ("concurrency zero", ("run", "x", "--max-concurrency", "0"), "0 must be at least 1"),
    ("concurrency huge", ("run", "x", "--max-concurrency", "100000"), "at most 10000"),
    ("replans negative", ("run", "x", "--max-replans", "-1"), "must not be negative"),
    ("replans too many", ("run", "x", "--max-replans", "21"), "max_replans: at most 20"),
    # the rest of `run`
    ("fault not a fault", ("run", "x", "--fault", "nonsense"), "is not TOOL[:ARG]=CODE[*N]"),
    ("fault unknown code", ("run", "x", "--fault", "t=NOPE"), "unknown error code 'NOPE'"),
    ("fault zero times", ("run", "x", "--fault", "t=TIMEOUT*0"), "N is 1 or more"),
    # a name unknown here may be the worker's pack; one that is no pack name is refused here
    ("run no pack name", ("run", "x", "--scenario", "Cities"), "did you mean 'cities'?"),
    ("blank run id", ("run", "x", "--id", " "), "a run id has 1 to 200 characters"),
    ("long session", ("run", "x", "--session", "s" * 1200), "a session id has 1 to 200"),
    ("no goal", ("run",), "the following arguments are required: goal"),
    ("plan missing", ("run", "x", "--plan", "{missing}"), "No such file or directory"),
    ("plan a folder", ("run", "x", "--plan", "{folder}"), "Is a directory"),
    ("plan cut short", ("run", "x", "--plan", "{truncated}"), "is not valid JSON"),
    ("plan a list", ("run", "x", "--plan", "{list}"), "does not have the plan shape"),
    ("plan empty", ("run", "x", "--plan", "{empty}"), "is not valid JSON"),
    # reading runs
    ("status no run", ("status",), "the following arguments are required: run_id"),
    ("status blank run", ("status", " "), "a run id has 1 to 200 characters"),
    ("trace two formats", ("trace", "r", "--json", "--jsonl"), "not allowed with argument"),
    ("trace long run id", ("trace", "r" * 201), "a run id has 1 to 200 characters"),
    ("report no out", ("report", "r"), "the following arguments are required: --out"),
    ("waits extra argument", ("waits", "r", "extra"), "unrecognized argument: extra"),
    # tasks
    ("task no actor", ("task", "create", "x"), "the following arguments are required: --actor"),
    ("task robot actor", ("task", "create", "x", "--actor", "robot"), "must look like human:NAME"),
    (
        "task bad scope",
        ("task", "create", "x", "--scope", "a b", "--actor", "human:a"),
        "scope 'a b' must be 1-63 letters",
    ),
    ("task blank title", ("task", "create", " ", "--actor", "human:a"), "1 to 500 characters"),
    ("task unknown status", ("task", "list", "--status", "NOPE"), "invalid TaskStatus value"),
    ("task no action", ("task",), "the following arguments are required: ACTION"),
    (
        "fact confidence 2",
        ("fact", "record", "t", "s", "--source", "x", "--confidence", "2", "--actor", "human:a"),
        "2.0 is not a confidence between 0 and 1",
    ),
    (
        "fact no source",
        ("fact", "record", "t", "s", "--confidence", "1", "--actor", "human:a"),
        "required: --source",
    ),
    (
        "evidence unknown kind",
        ("evidence", "record", "t", "--kind", "RUMOUR", "--summary", "s", "--actor", "human:a"),
        "invalid EvidenceKind value",
    ),
    (
        "task long reason",
        ("task", "cancel", "t", "--reason", "r" * 501, "--actor", "human:a"),
        "the text has 1 to 500 characters",
    ),
    (
        "task blank key",
        ("task", "create", "x", "--key", " ", "--actor", "human:a"),
        "a key has 1 to 200 characters",
    ),
    ("run task bad scope", ("run", "x", "--task", "t", "--scope", "a/b"), "scope 'a/b' must be"),
    # contracts and lessons
    (
        "contract missing",
        ("contract", "set", "--file", "{missing}", "--actor", "human:a"),
        "cannot read the contract",
    ),
    (
        "contract truncated",
        ("contract", "set", "--file", "{truncated}", "--actor", "human:a"),
        "is not JSON",
    ),
    (
        "contract a list",
        ("contract", "set", "--file", "{list}", "--actor", "human:a"),
        "valid dictionary",
    ),
    (
        "contract typo",
        ("contract", "set", "--file", "{typo}", "--actor", "human:a"),
        "requires_aproved_review: Extra inputs are not permitted",
    ),
    (
        "contract unknown check",
        ("contract", "set", "--file", "{unknown_check}", "--actor", "human:a"),
        "did you mean 'payment-verified'?",
    ),
    ("contract no file", ("contract", "set", "--actor", "human:a"), "required: --file"),
    (
        "contract not utf-8",
        ("contract", "set", "--file", "{not_utf8}", "--actor", "human:a"),
        "is not UTF-8 text",
    ),
    (
        "lesson bad rule",
        ("lesson", "promote", "l", "--rule", "RELAX", "--target", "x", "--actor", "human:a"),
        "invalid RuleKind value",
    ),
    (
        "lesson unknown check",
        (
            "lesson",
            "promote",
            "l",
            "--rule",
            "REQUIRE_ACCEPTANCE_CHECK",
            "--target",
            "dispute-checked",
            "--actor",
            "human:a",
        ),
        "did you mean 'dispute-status-checked'",
    ),
    (
        "lesson unknown tool",
        (
            "lesson",
            "promote",
            "l",
            "--rule",
            "REQUIRE_APPROVAL_FOR_TOOL",
            "--target",
            "submit_refnd",
            "--actor",
            "human:a",
        ),
        "did you mean 'submit_refund'",
    ),
    (
        "lesson no fact",
        ("lesson", "propose", "--question", "q", "--proposal", "p", "--actor", "human:a"),
        "required: --fact",
    ),
    (
        "lesson blank reason",
        ("lesson", "revoke", "rule-1", "--reason", " ", "--actor", "human:a"),
        "1 to 500 characters",
    ),
    # deliveries
    ("approve nothing", ("approve", "r"), "required: wait_id, --actor"),
    ("approve no actor", ("approve", "r", "w"), "required: --actor"),
    ("approve as agent", ("approve", "r", "w", "--actor", "agent:p"), "agents can never approve"),
    ("approve nameless", ("approve", "r", "w", "--actor", "human:"), "must look like human:NAME"),
    ("approve blank wait", ("approve", "r", " ", "--actor", "human:a"), "a wait id has 1 to"),
    ("answer no text", ("answer", "r", "w"), "the following arguments are required: text"),
    ("answer blank", ("answer", "r", "w", "  "), "an answer needs words"),
    ("answer bad actor", ("answer", "r", "w", "x", "--actor", "robot"), "must look like"),
    ("answer too long", ("answer", "r", "w", "a" * 10_001), "text: at most 10000"),
    ("deliver no target", ("deliver", "r", "--data", "{}"), "one of the arguments"),
    ("deliver two targets", ("deliver", "r", "w", "--event", "e", "--data", "{}"), "not allowed"),
    ("deliver no data", ("deliver", "r", "w"), "required: --data"),
    ("data file missing", ("deliver", "r", "w", "--data", "@{missing}"), "cannot read"),
    ("data not utf-8", ("deliver", "r", "w", "--data", "@{not_utf8}"), "is not UTF-8 text"),
    ("data a folder", ("deliver", "r", "w", "--data", "@{folder}"), "Is a directory"),
    ("data too big", ("deliver", "r", "w", "--data", "@{big}"), "at most 262144 are taken"),
    ("deliver bad actor", ("deliver", "r", "w", "--data", "1", "--actor", "x"), "must look like"),
    ("deliver blank event", ("deliver", "r", "--event", " ", "--data", "1"), "must not be empty"),
    ("cancel long reason", ("cancel", "r", "--reason", "r" * 3000), "reason: at most 2000"),
    ("cancel bad actor", ("cancel", "r", "--actor", "bogus"), "must look like human:NAME"),
    # offline commands and the server
    ("validate missing", ("validate", "{missing}", "--scenario", "cities"), "cannot read"),
    ("validate cut short", ("validate", "{truncated}", "--scenario", "cities"), "not valid JSON"),
    ("validate scenario", ("validate", "{list}", "--scenario", "nope"), "unknown scenario"),
    ("tools blank scenario", ("tools", "--scenario", ""), "unknown scenario ''"),
    ("mcp open quote", ("tools", "--mcp", "git='python -m x"), "No closing quotation"),
    ("mcp blank server", ("tools", "--mcp", "  "), "--mcp needs a server"),
    ("mcp one name twice", ("tools", "--mcp", "a=x", "--mcp", "a=y"), "two --mcp servers"),
    ("port negative", ("server", "--port", "-1"), "-1 must be at least 1"),
    ("port a word", ("server", "--port", "abc"), "'abc' is not a whole number"),
    ("ui port too big", ("server", "--ui-port", "70000"), "is not a port"),
    ("server db nowhere", ("server", "--db", "/proc/nope/x.db"), "cannot keep the server's data"),
    ("unknown command", ("nonsense",), "invalid choice: 'nonsense'"),
    ("unknown provider", ("run", "g", "--provider", "gemini"), "unknown provider 'gemini'"),
    ("max nodes zero", ("run", "g", "--max-nodes", "0"), "must be at least 1"),
    # memory
    ("memory budget zero", ("run", "g", "--memory-budget", "0"), "from 200 to 200000"),
    ("memory budget word", ("run", "g", "--memory-budget", "lots"), "from 200 to 200000"),
    ("forget nothing named", ("memory", "forget"), "name what to forget"),
    ("memory list limit", ("memory", "list", "--limit", "0"), "a count from 1 to 1000"),
    ("memory search limit", ("memory", "search", "x", "--limit", "51"), "a count from 1 to 50"),
    ("memory bad tier", ("memory", "list", "--tier", "dreams"), "invalid choice: 'dreams'"),
    ("memory search blank", ("memory", "search", " "), "the text has 1 to"),
    ("memory search scenario", ("memory", "search", "x", "--scenario", "nope"), "unknown scenario"),
    # eval
    ("eval typo in a case", ("eval", "{eval_typo}"), "did you mean 'max_replans'?"),
    ("eval case file not yaml", ("eval", "{not_yaml}"), "is not valid YAML (line 3"),
    ("eval missing case file", ("eval", "{missing_yaml}"), "cannot read case file"),
    ("eval unknown scenario", ("eval", "citys"), "did you mean 'cities'?"),
    ("eval repeat zero", ("eval", "cities", "--repeat", "0"), "must be at least 1"),
    ("eval concurrency too high", ("eval", "cities", "--concurrency", "65"), "less than or equal"),
    ("eval bad baseline", ("eval", "cities", "--baseline", "{list}"), "is not a baseline"),
    ("eval missing baseline", ("eval", "cities", "--baseline", "{missing}"), "cannot read"),
    ("eval resume with files", ("eval", "cities", "--resume", "e-1"), "give no cases"),
    ("eval chaos above one", ("eval", "cities", "--chaos", "1.5"), "is not a rate"),
    ("eval chaos zero", ("eval", "cities", "--chaos", "0"), "must be more than 0"),
    ("eval chaos seed negative", ("eval", "cities", "--chaos-seed", "-1"), "must not be negative"),
    ("eval no case matches", ("eval", "cities", "--case", "games/*"), "no case matches"),
    ("eval out is a file", ("eval", "cities", "--out", "{list}"), "cannot write there"),
    ("eval baseline in a file", ("eval", "cities", "--save-baseline", "{in_file}"), "cannot"),
    # round 3 (F3, F12): numbers past float's range, files by size, output places first
    ("max tokens 400 digits", ("run", "x", "--max-tokens", "1" + "0" * 400), "max_tokens: at"),
    ("max nodes 400 digits", ("run", "x", "--max-nodes", "1" + "0" * 400), "max_nodes: at"),
    ("max replans 400 digits", ("run", "x", "--max-replans", "1" + "0" * 400), "max_replans"),
    (
        "max concurrency 400 digits",
        ("run", "x", "--max-concurrency", "1" + "0" * 400),
        "max_concurrency: at most 10000, not a number of about 401 digits",
    ),
    ("eval case file 50,000 deep", ("eval", "{deep_yaml}"), "nesting depth"),
    ("eval case file of 15 MB", ("eval", "{huge_yaml}"), "at most 1,048,576 are read"),
    ("plan file of 5 MB", ("validate", "{huge_plan}", "--scenario", "cities"), "at most 4,194,304"),
    ("run plan file of 5 MB", ("run", "x", "--plan", "{huge_plan}"), "at most 4,194,304"),
    ("data endless", ("deliver", "r", "w", "--data", "@/dev/zero"), "more than 4,194,304 bytes"),
    (
        "contract nested deep",
        ("contract", "set", "--file", "{deep_contract}", "--actor", "human:a"),
        "nests too deeply",
    ),
    ("eval out in /proc", ("eval", "cities", "--out", "/proc/nope"), "cannot write there"),
    (
        "eval baseline in /proc",
        ("eval", "cities", "--save-baseline", "/proc/nope/b.json"),
        "cannot write there",
    ),
]


def _resolve(arg: str, files: dict[str, str]) -> str:
    """`{deep}` and `@{deep}` name a file made for the case; any other argument is literal."""
    prefix = "@" if arg.startswith("@{") else ""
    name = arg.removeprefix(prefix)
    if name.startswith("{") and name.endswith("}") and name[1:-1] in files:
        return prefix + files[name[1:-1]]
    return arg


def test_the_corpus_has_a_case_for_every_bad_invocation_the_issue_counted() -> None:
    assert len(CASES) + 2 >= 95  # with the address and the broken pipe below
    assert len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("args", "expected"), [(a, e) for _, a, e in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_gets_one_clear_line_and_the_usage_exit_code(
    tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    files = _files(tmp_path)
    code, err = _harness(*(_resolve(arg, files) for arg in args))
    assert "Traceback" not in err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err  # one line, no usage block
    assert expected in err


def test_an_address_that_is_not_one_gets_one_line() -> None:
    code, err = _harness("status", "r", address="::::nope")
    assert (code, "Traceback" in err) == (2, False)
    assert err.strip() == (
        "harness: TEMPORAL_ADDRESS=::::nope is not an address like localhost:7233 "
        "(invalid target URL: empty host)"
    )


@pytest.mark.parametrize("buffered", [True, False])
def test_output_cut_short_by_its_reader_is_not_an_error(buffered: bool) -> None:
    """`| true` has closed the pipe before harness writes: the write (unbuffered) or the flush
    at exit (buffered) meets a broken pipe."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED" or not buffered}
    pipeline = f"{HARNESS} tools --json | true; exit ${{PIPESTATUS[0]}}"
    done = subprocess.run(
        ["bash", "-c", pipeline], env=env, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (0, "")
