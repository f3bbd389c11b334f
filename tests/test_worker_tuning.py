"""A worker's slots, sticky cache and pollers come from HARNESS_* variables, each left to the
SDK's default unless set."""

from __future__ import annotations

from datetime import timedelta

from infra.settings import Settings
from worker.tuning import MAX_CONCURRENT_ACTIVITIES, WorkerTuning


def test_an_untuned_worker_keeps_its_slots_and_leaves_the_rest_to_the_sdk() -> None:
    tuning = WorkerTuning.from_settings(Settings.from_env({}))
    assert tuning.run_worker() == {"max_concurrent_activities": MAX_CONCURRENT_ACTIVITIES}
    assert tuning.llm_worker() == {"max_concurrent_activities": MAX_CONCURRENT_ACTIVITIES}


def test_each_tuning_variable_reaches_the_worker_it_concerns() -> None:
    settings = Settings.from_env(
        {
            "HARNESS_MAX_CONCURRENT_ACTIVITIES": "500",
            "HARNESS_MAX_CACHED_WORKFLOWS": "50",
            "HARNESS_WORKFLOW_TASK_POLLERS": "8",
            "HARNESS_ACTIVITY_TASK_POLLERS": "4",
            "HARNESS_STICKY_TIMEOUT_SECONDS": "2.5",
        }
    )
    tuning = WorkerTuning.from_settings(settings)
    assert tuning.run_worker() == {
        "max_concurrent_activities": 500,
        "max_cached_workflows": 50,
        "max_concurrent_workflow_task_polls": 8,
        "max_concurrent_activity_task_polls": 4,
        "sticky_queue_schedule_to_start_timeout": timedelta(seconds=2.5),
    }
    assert tuning.llm_worker() == {
        "max_concurrent_activities": 500,
        "max_concurrent_activity_task_polls": 4,
    }
