"""The project as its users install it: `python -m tests.package_check` (`make package`) builds
the wheel as `pip install .` does (from a copy of the sources: nothing an earlier build left in
the checkout reaches it), checks that it holds every file of the package folders (the eval
cases, their plans, the baseline: a file the code reads that the wheel leaves out works in a
checkout and fails in every install), installs it with the lock's versions into a fresh venv
outside the checkout, beside the example pack (examples/library_loans, not -e), and runs the CLI
there from a folder outside the checkout: `harness --version`, `harness scenarios` (the example
pack found through its entry point only), `harness eval` of a cities case and the example's cases,
and a run of the example pack with its plan, on a dev server, payment service and worker that
`harness eval` starts in a state folder of its own, on free ports, stopped at the end.

The venv is made by uv from its cache (`uv sync --frozen --no-install-project`, the lock's
wheels linked, not downloaded): a second or two.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).parent.parent
BUILD = ROOT / "build" / "wheel"
EXAMPLE = ROOT / "examples" / "library_loans"
EXAMPLE_PLAN = "library_loans/eval_plans/member-loans-and-fines.json"
EXAMPLE_ORIGIN = "library-loans-pack 0.1.0"
"""What `harness scenarios` says the example pack comes from: its distribution, found through
its entry point only."""
UV = Path(sys.executable).parent / "uv"
COMMAND_SECONDS = 300
"""A generous ceiling per command: a loaded machine is slow, a hung one must still end."""
NOT_PACKAGED = ("__pycache__",)
NOT_PACKAGED_SUFFIXES = (".pyc",)


def package_folders(pyproject: Mapping[str, object]) -> list[str]:
    """The top-level folders the project ships, from `[tool.setuptools.packages.find]`."""
    tool = pyproject.get("tool")
    assert isinstance(tool, dict)
    include: list[str] = tool["setuptools"]["packages"]["find"]["include"]
    return sorted({pattern.rstrip("*").rstrip(".") for pattern in include})


def source_files(root: Path, folders: Iterable[str]) -> list[str]:
    """Every file of the package folders, as a wheel names it (`scenarios/cities/data.py`),
    leaving out what Python writes beside the source."""
    found = []
    for folder in folders:
        for path in (root / folder).rglob("*"):
            parts = path.relative_to(root).parts
            if (
                path.is_file()
                and not any(part in NOT_PACKAGED for part in parts)
                and not path.name.endswith(NOT_PACKAGED_SUFFIXES)
            ):
                found.append("/".join(parts))
    return sorted(found)


def undeclared_data_files(
    root: Path, folders: Iterable[str], package_data: Mapping[str, list[str]]
) -> list[str]:
    """The files of the package folders that are not modules and that no pattern of
    `[tool.setuptools.package-data]` declares (patterns are globs from their package's folder,
    `"*"` for every package, as setuptools reads them)."""
    declared: set[str] = set()
    for folder in folders:
        for init in (root / folder).rglob("__init__.py"):
            package = init.parent
            name = ".".join(package.relative_to(root).parts)
            for pattern in [*package_data.get("*", []), *package_data.get(name, [])]:
                declared |= {
                    "/".join(path.relative_to(root).parts)
                    for path in package.glob(pattern)
                    if path.is_file()
                }
    data = [name for name in source_files(root, folders) if not name.endswith(".py")]
    return [name for name in data if name not in declared]


def missing_from_wheel(sources: Iterable[str], wheel_names: Iterable[str]) -> list[str]:
    """The source files the wheel does not hold."""
    held = set(wheel_names)
    return sorted(name for name in sources if name not in held)


def free_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port: int = listener.getsockname()[1]
        return port


def run(command: Sequence[str | Path], *, cwd: Path, env: Mapping[str, str] | None = None) -> str:
    """Run a step, print its time; a failure prints its output and ends the check."""
    shown = " ".join(str(part) for part in command)
    started = time.monotonic()
    finished = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=COMMAND_SECONDS,
        check=False,
    )
    print(f"package: {time.monotonic() - started:5.1f} s  {shown}", flush=True)
    if finished.returncode != 0:
        sys.stdout.write(finished.stdout)
        sys.stderr.write(finished.stderr)
        raise SystemExit(f"package: `{shown}` exited {finished.returncode}")
    return finished.stdout


BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE")
LEFT_BEHIND = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
"""What a build leaves in a source folder, and a later build would read again (setuptools takes
the file list of an old `*.egg-info` as its manifest): none of it goes into the copy built."""


def build_wheel(source: Path) -> Path:
    """The wheel, built from a copy of the files a build reads, never from what an earlier
    build left in the checkout."""
    source.mkdir()
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, source / name)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for folder in package_folders(pyproject):
        shutil.copytree(ROOT / folder, source / folder, ignore=LEFT_BEHIND)
    shutil.rmtree(BUILD, ignore_errors=True)
    run([UV, "build", "--quiet", "--wheel", "--out-dir", BUILD, source], cwd=source.parent)
    [wheel] = BUILD.glob("*.whl")
    return wheel


def check_wheel_contents(wheel: Path, source: Path) -> None:
    """Every file of the package folders built from is in the wheel."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    pyproject = tomllib.loads((source / "pyproject.toml").read_text())
    missing = missing_from_wheel(source_files(source, package_folders(pyproject)), names)
    if missing:
        raise SystemExit(
            f"package: the wheel leaves out {len(missing)} file(s) of the package folders, "
            f"e.g. {', '.join(missing[:5])}; declare them in [tool.setuptools.package-data]"
        )
    print(f"package: the wheel holds every file of the package folders ({len(names)} files)")


def fresh_venv(wheel: Path, home: Path) -> Path:
    venv = home / "venv"
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)}
    env.pop("VIRTUAL_ENV", None)
    run(
        [UV, "sync", "--quiet", "--frozen", "--no-install-project", "--python", sys.executable],
        cwd=ROOT,
        env=env,
    )
    # The example is built from a copy too: `make example` builds it from its folder at the
    # same time (make -j), and setuptools writes its build folder beside the source.
    example = home / EXAMPLE.name
    shutil.copytree(EXAMPLE, example, ignore=LEFT_BEHIND)
    python = venv / "bin" / "python"
    run(
        [UV, "pip", "install", "--quiet", "--no-deps", "--python", python, wheel, example], cwd=home
    )
    return venv


def installed_env(venv: Path, home: Path) -> dict[str, str]:
    """The environment of a user of the venv: none of the checkout's, services of its own."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HARNESS_", "TEMPORAL_", "PYTHON", "VIRTUAL_ENV"))
    }
    return {
        **env,
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        "HARNESS_STATE_DIR": str(home / "state"),
        "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "HARNESS_PAYMENTS_URL": f"http://127.0.0.1:{free_port()}",
        "HARNESS_TASK_QUEUE": "package-check",
        "HARNESS_LLM_PROVIDER": "scripted",
    }


def site_packages(venv: Path) -> Path:
    [site] = (venv / "lib").glob("python3*/site-packages")
    return site


def use_installed(venv: Path, home: Path) -> None:
    env = installed_env(venv, home)
    harness = venv / "bin" / "harness"
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    shown = run([harness, "--version"], cwd=home, env=env)
    if shown.strip() != f"harness {version}":
        raise SystemExit(f"package: `harness --version` says {shown.strip()!r}, not {version}")
    site = site_packages(venv)
    listed = json.loads(run([harness, "scenarios", "--json"], cwd=home, env=env))
    origins = {pack["name"]: pack["origin"] for pack in listed}
    if origins.get("library") != EXAMPLE_ORIGIN or origins.get("cities") != "built-in":
        raise SystemExit(f"package: `harness scenarios` lists {origins}")
    try:
        run(
            [
                harness,
                "eval",
                "cities",
                "library",  # its case file, by the name: the installed pack names it
                "--case",
                "cities/two-cities",
                "--case",
                "library/*",
                "--out",
                home / "eval",
                "--quiet",
            ],
            cwd=home,
            env=env,
        )
        goal = "What does M-1002 owe on 2026-03-01?"
        report = run(
            [harness, "run", goal, "--scenario", "library", "--plan", site / EXAMPLE_PLAN],
            cwd=home,
            env=env,
        )
        if "EUR 3.80" not in report:
            raise SystemExit("package: the example pack's run reports no fines total:\n" + report)
    finally:
        # The services `harness eval` started, by the pids it wrote in the state folder; a
        # failure here must not hide the one that brought us here.
        stop = [str(venv / "bin" / "python"), "-m", "starter.cli.demo", "--stop"]
        subprocess.run(stop, cwd=home, env=env, timeout=COMMAND_SECONDS, check=False)


def main() -> None:
    started = time.monotonic()
    home = Path(tempfile.mkdtemp(prefix="harness-package-"))  # outside the checkout
    try:
        source = home / "source"
        wheel = build_wheel(source)
        check_wheel_contents(wheel, source)
        venv = fresh_venv(wheel, home)
        use_installed(venv, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(f"package: passed in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
