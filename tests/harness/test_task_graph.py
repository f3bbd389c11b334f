"""A scope's task graph: parents, dependencies that never close a cycle, runnable tasks."""

from __future__ import annotations

from harness.governance.task_graph import (
    AddDependency,
    CreateTask,
    GraphCommand,
    GraphOperation,
    StatusChanged,
    TaskGraph,
    TaskGraphState,
    scope_problem,
)
from harness.governance.work import TaskStatus
from tests.factories import START

HUMAN = "human:ops"


def graph() -> TaskGraph:
    return TaskGraph(TaskGraphState(scope="shop-A"))


def command(operation: GraphOperation, key: str | None = None) -> GraphCommand:
    return GraphCommand(scope="shop-A", actor=HUMAN, operation=operation, idempotency_key=key)


def create(board: TaskGraph, title: str, **fields: object) -> str:
    receipt = board.apply(command(CreateTask.model_validate({"title": title, **fields})), START)
    assert receipt.accepted and receipt.id, receipt.reason
    return receipt.id


def test_a_dependency_that_would_close_a_cycle_across_three_tasks_is_refused() -> None:
    board = graph()
    a, b, c = (create(board, name) for name in "abc")
    for task, dep in ((a, b), (b, c)):
        assert board.apply(command(AddDependency(task_id=task, depends_on=dep)), START).accepted
    before = board.state.model_copy(deep=True)
    receipt = board.apply(command(AddDependency(task_id=c, depends_on=a)), START)
    assert not receipt.accepted
    assert (
        receipt.reason == "the dependency would close a cycle: task-3 -> task-1 -> task-2 -> task-3"
    )
    assert board.state == before


def test_a_task_cannot_depend_on_itself_twice_or_on_an_unknown_task() -> None:
    board = graph()
    a, b = create(board, "a"), create(board, "b")
    board.apply(command(AddDependency(task_id=a, depends_on=b)), START)
    problems = [
        board.check(command(AddDependency(task_id=a, depends_on=a))),
        board.check(command(AddDependency(task_id=a, depends_on=b))),
        board.check(command(AddDependency(task_id=a, depends_on="task-9"))),
        board.check(command(CreateTask(title="x", depends_on=["task-9"]))),
    ]
    assert problems == [
        "task 'task-1' cannot depend on itself",
        "task 'task-1' already depends on 'task-2'",
        "scope 'shop-A' has no task 'task-9'",
        "scope 'shop-A' has no task 'task-9'",
    ]


def test_runnable_tasks_are_active_with_every_dependency_done() -> None:
    board = graph()
    a = create(board, "look up the order")
    b = create(board, "refund", depends_on=[a])
    assert [t.id for t in board.runnable()] == [a]
    assert board.unfinished_dependencies(b) == [a]
    board.apply(command(StatusChanged(task_id=a, status=TaskStatus.DONE)), START)
    assert [t.id for t in board.runnable()] == [b]


def test_a_finished_task_takes_no_subtasks_and_no_new_dependencies() -> None:
    board = graph()
    a, b = create(board, "a"), create(board, "b")
    child = create(board, "a, part one", parent_id=a)
    assert [t.id for t in board.children(a)] == [child]
    board.apply(command(StatusChanged(task_id=a, status=TaskStatus.CANCELLED)), START)
    assert board.check(command(CreateTask(title="more", parent_id=a))) == (
        "task 'task-1' is CANCELLED: it takes no new subtasks"
    )
    assert board.check(command(AddDependency(task_id=a, depends_on=b))) == (
        "task 'task-1' is CANCELLED: a finished task is final"
    )


def test_the_same_create_under_one_key_makes_one_task() -> None:
    board = graph()
    first = board.apply(command(CreateTask(title="a"), key="k"), START)
    again = board.apply(command(CreateTask(title="a"), key="k"), START)
    assert (again.duplicate, again.id) == (True, first.id)
    assert list(board.state.tasks) == ["task-1"]
    other = board.check(command(CreateTask(title="b"), key="k"))
    assert other == "idempotency key 'k' was already used with other content"


def test_a_scope_is_a_short_plain_name() -> None:
    assert scope_problem("shop-A") is None
    assert scope_problem("shop A") is not None and scope_problem("") is not None


def test_a_subtask_takes_its_parents_preset_unless_it_names_one() -> None:
    from harness.governance.task_graph import CreateTask, GraphCommand, TaskGraph, TaskGraphState

    graph = TaskGraph(TaskGraphState(scope="s"))

    def create(**fields: object) -> str:
        operation = CreateTask.model_validate({"title": "t", **fields})
        receipt = graph.apply(GraphCommand(scope="s", actor="human:a", operation=operation), START)
        assert receipt.id is not None
        return receipt.id

    parent = create(preset="refund")
    child = create(parent_id=parent)
    other = create(parent_id=parent, preset="faq")
    presets = [graph.state.tasks[t].preset for t in (parent, child, other)]
    assert presets == ["refund", "refund", "faq"]
