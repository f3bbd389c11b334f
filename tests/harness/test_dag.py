"""DagState (ready set, completion, failure and skip propagation) and find_cycles."""

from __future__ import annotations

import sys

from harness.core.plan import Plan
from harness.engine.dag import DagState, NodeStatus, find_cycles
from tests.factories import chain, dag, node, plan


def diamond_plan() -> Plan:
    """top -> (left, right) -> bottom."""
    return plan(
        node("top", "t"),
        node("left", "t", deps=["top"]),
        node("right", "t", deps=["top"]),
        node("bottom", "t", deps=["left", "right"]),
    )


def diamond() -> DagState:
    return DagState(diamond_plan())


def test_nodes_without_deps_are_ready_at_the_start_in_plan_order() -> None:
    state = dag(
        node("c", "t"),
        node("needs_c", "t", deps=["c"]),
        node("a", "t"),
        node("b", "t"),
    )

    assert state.ready() == ["c", "a", "b"]
    assert all(status is NodeStatus.PENDING for status in state.status.values())


def test_a_dependent_becomes_ready_only_when_all_its_deps_are_done() -> None:
    state = dag(node("a", "t"), node("b", "t"), node("both", "t", deps=["a", "b"]))
    state.pop_ready(10)

    assert state.complete("a") == []
    assert "both" not in state.ready()
    assert state.complete("b") == ["both"]
    assert state.ready() == ["both"]


def test_pop_ready_takes_at_most_the_limit_in_plan_order_and_marks_them_running() -> None:
    state = dag(node("a", "t"), node("b", "t"), node("c", "t"))

    taken = state.pop_ready(2)

    assert taken == ["a", "b"]
    assert state.status["a"] is NodeStatus.RUNNING
    assert state.status["b"] is NodeStatus.RUNNING
    assert state.status["c"] is NodeStatus.PENDING
    assert state.ready() == ["c"]
    assert state.running() == ["a", "b"]
    assert state.pop_ready(0) == []
    assert state.pop_ready(5) == ["c"]
    assert state.pop_ready(5) == []


def test_newly_ready_nodes_are_popped_in_plan_order_not_completion_order() -> None:
    state = dag(
        node("a", "t"),
        node("b", "t"),
        node("after_a", "t", deps=["a"]),
        node("after_b", "t", deps=["b"]),
    )
    state.pop_ready(2)

    state.complete("b")
    state.complete("a")

    assert state.pop_ready(2) == ["after_a", "after_b"]


def test_fail_skips_every_transitive_dependent_but_not_unrelated_nodes() -> None:
    state = dag(
        node("a", "t"),
        node("unrelated", "t"),
        node("child", "t", deps=["a"]),
        node("grandchild", "t", deps=["child"]),
        node("joins_unrelated", "t", deps=["unrelated", "grandchild"]),
        node("other_branch", "t", deps=["unrelated"]),
    )
    state.pop_ready(10)

    skipped = state.fail("a")

    assert skipped == ["child", "grandchild", "joins_unrelated"]
    assert state.status["a"] is NodeStatus.FAILED
    assert state.status["unrelated"] is NodeStatus.RUNNING
    assert state.complete("unrelated") == ["other_branch"]
    assert state.status["joins_unrelated"] is NodeStatus.SKIPPED
    assert state.ready() == ["other_branch"]


def test_a_skipped_dependent_does_not_become_ready_when_its_other_dep_completes() -> None:
    state = diamond()
    state.pop_ready(1)
    state.complete("top")
    state.pop_ready(2)

    assert state.fail("left") == ["bottom"]
    assert state.complete("right") == []
    assert state.ready() == []
    assert state.status["bottom"] is NodeStatus.SKIPPED
    assert state.is_finished()


def test_skip_removes_a_ready_node_and_skips_its_dependents() -> None:
    state = dag(
        node("a", "t"),
        node("b", "t"),
        node("after_b", "t", deps=["b"]),
    )

    skipped = state.skip("b")

    assert skipped == ["b", "after_b"]
    assert state.ready() == ["a"]
    assert state.pop_ready(5) == ["a"]
    assert state.count(NodeStatus.SKIPPED) == 2


def test_skip_of_a_pending_node_that_is_not_ready_yet_returns_it_first() -> None:
    state = diamond()

    assert state.skip("left") == ["left", "bottom"]
    assert state.ready() == ["top"]


def test_is_finished_only_once_every_node_is_done_failed_or_skipped() -> None:
    state = dag(node("a", "t"), node("b", "t"), node("c", "t", deps=["b"]))
    assert not state.is_finished()

    state.pop_ready(2)
    state.complete("a")
    assert not state.is_finished()  # b is RUNNING

    state.fail("b")
    assert state.is_finished()
    assert state.count(NodeStatus.DONE) == 1
    assert state.count(NodeStatus.FAILED) == 1
    assert state.count(NodeStatus.SKIPPED) == 1


def test_a_diamond_runs_top_then_both_sides_then_bottom() -> None:
    state = diamond()

    assert state.pop_ready(10) == ["top"]
    assert state.complete("top") == ["left", "right"]
    assert state.pop_ready(10) == ["left", "right"]
    assert state.complete("right") == []
    assert state.complete("left") == ["bottom"]
    assert state.pop_ready(10) == ["bottom"]
    state.complete("bottom")
    assert state.is_finished()
    assert state.count(NodeStatus.DONE) == 4


def test_a_dependency_listed_twice_counts_once() -> None:
    state = dag(node("a", "t"), node("b", "t", deps=["a", "a"]))
    state.pop_ready(1)

    assert state.remaining["b"] == 1
    assert state.dependents["a"] == ["b"]
    assert state.complete("a") == ["b"]
    assert state.remaining["b"] == 0


def test_find_cycles_on_an_acyclic_plan_is_empty() -> None:
    assert find_cycles(diamond_plan()) == []


def test_find_cycles_returns_one_concrete_cycle_per_cyclic_component() -> None:
    cyclic = plan(
        node("a", "t", deps=["b"]),
        node("b", "t", deps=["a"]),
        node("free", "t", deps=["a"]),
        node("x", "t", deps=["z"]),
        node("y", "t", deps=["x"]),
        node("z", "t", deps=["y"]),
    )

    cycles = find_cycles(cyclic)

    assert [sorted(cycle) for cycle in cycles] == [["a", "b"], ["x", "y", "z"]]
    for cycle in cycles:  # each consecutive pair is a real edge: member depends on the next one
        deps = {n.id: n.deps for n in cyclic.nodes}
        for member, following in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            assert following in deps[member]


def test_find_cycles_ignores_self_dependencies_and_unknown_deps() -> None:
    assert find_cycles(plan(node("a", "t", deps=["a", "ghost"]))) == []


def test_a_five_thousand_node_chain_does_not_hit_the_recursion_limit() -> None:
    length = 5_000
    assert length > sys.getrecursionlimit()
    long_chain = chain(length)

    assert find_cycles(long_chain) == []
    state = DagState(long_chain)
    for i in range(length):
        assert state.pop_ready(10) == [f"n{i}"]
        state.complete(f"n{i}")
    assert state.is_finished()


def test_a_five_thousand_node_cycle_is_found_without_recursion() -> None:
    long_chain = chain(5_000)
    long_chain.nodes[0].deps.append("n4999")

    cycles = find_cycles(long_chain)

    assert len(cycles) == 1
    assert len(cycles[0]) == 5_000


def test_failing_the_head_of_a_long_chain_skips_the_whole_chain() -> None:
    state = DagState(chain(5_000))
    state.pop_ready(1)

    skipped = state.fail("n0")

    assert len(skipped) == 4_999
    assert skipped[0] == "n1"
    assert skipped[-1] == "n4999"
    assert state.is_finished()


def test_nodes_taken_out_of_turn_leave_the_ready_queue_and_the_rest_keep_plan_order() -> None:
    state = DagState(plan(*(node(f"n{i}", "echo") for i in range(6))))
    state.take("n0")
    state.take("n3")
    assert state.ready() == ["n1", "n2", "n4", "n5"]
    assert state.ready_count() == 4
    assert state.pop_ready(3) == ["n1", "n2", "n4"]
    state.take("n5")
    assert not state.has_ready() and state.pop_ready(5) == []
    assert state.status["n3"] is NodeStatus.RUNNING
