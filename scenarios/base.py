"""What a scenario is: a pack (`durable_harness.Pack`), with its tools, data, report check and
offline planning rules. The types live in the public package, so a pack written outside the
project and a built-in scenario are the same thing; the built-in scenarios and the activities
import them from here as before. `Scenario` is the old name of `Pack`."""

from __future__ import annotations

from durable_harness.pack import Pack as Pack
from durable_harness.pack import PackDefinitionError as PackDefinitionError
from durable_harness.pack import no_mcp_servers as no_mcp_servers
from durable_harness.pack import no_services as no_services
from durable_harness.pack_types import AcceptanceCheck as AcceptanceCheck
from durable_harness.pack_types import AcceptanceFunction as AcceptanceFunction
from durable_harness.pack_types import CheckInput as CheckInput
from durable_harness.pack_types import CheckVerdict as CheckVerdict
from durable_harness.pack_types import Environment as Environment
from durable_harness.pack_types import OutcomeCheck as OutcomeCheck
from durable_harness.pack_types import OutcomeInput as OutcomeInput
from durable_harness.pack_types import PlanningError as PlanningError
from durable_harness.pack_types import PlanningInput as PlanningInput
from durable_harness.pack_types import Rubric as Rubric
from durable_harness.pack_types import default_rubric as default_rubric
from durable_harness.runtime import ProbeFunction as ProbeFunction
from durable_harness.runtime import Tool as Tool
from durable_harness.runtime import ToolContext as ToolContext
from durable_harness.runtime import ToolFunction as ToolFunction
from harness.catalog.tools import RESERVED_TOOL_PREFIX

Scenario = Pack

RESERVED_PREFIX = RESERVED_TOOL_PREFIX
