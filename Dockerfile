# Worker image for durable-harness: one stateless Temporal worker process per container.
# Every piece of run state lives in Temporal, so any number of these can poll the same task
# queue and any one of them can pick up where another stopped.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# git for the repo scenario's MCP server (mcp-server-git), which reads a repository mounted at
# HARNESS_REPO_PATH.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*

# Build from a source folder of its own; the worker runs from /app below, so `python -m worker`
# imports the installed package rather than a copy of the source tree.
WORKDIR /src
COPY pyproject.toml README.md ./
COPY harness/ harness/
COPY workflows/ workflows/
COPY activities/ activities/
COPY scenarios/ scenarios/
COPY worker/ worker/
COPY starter/ starter/
COPY infra/ infra/
COPY payments/ payments/
COPY memory/ memory/
COPY tool_servers/ tool_servers/
COPY durable_harness/ durable_harness/
RUN pip install --no-cache-dir . \
    && rm -rf build ./*.egg-info

# Run as an unprivileged user whose working directory is writable (local state such as .harness/).
# /state is where compose mounts the volume the payment service shares with the workers (its
# token file); a fresh named volume takes this directory's owner, so the user can write it.
RUN useradd --create-home --uid 10001 --user-group harness \
    && mkdir -p /app /state \
    && chown harness:harness /app /state
WORKDIR /app
USER harness

# What the worker reads from its environment, with the defaults it uses when they are unset.
# ANTHROPIC_API_KEY / OPENAI_API_KEY are optional and only needed by those providers: pass them
# at run time (docker run -e / compose environment), never bake them into the image.
ENV TEMPORAL_ADDRESS=localhost:7233 \
    TEMPORAL_NAMESPACE=default \
    HARNESS_TASK_QUEUE=durable-harness \
    HARNESS_LLM_PROVIDER=scripted \
    HARNESS_PAYMENTS_URL=http://127.0.0.1:8642

CMD ["python", "-m", "worker"]
