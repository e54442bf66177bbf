"""The extraction queue: FIFO + FIFO DLQ, redrive, and an event source that reports item failures."""

from __future__ import annotations

import json
from typing import Any

from tests.infra import cfn


def queues(template: dict[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(main queue properties, DLQ logical id, DLQ properties)."""
    found = cfn.resources(template, "AWS::SQS::Queue")
    (main,) = [body["Properties"] for body in found.values() if "RedrivePolicy" in body["Properties"]]
    (dlq_id,) = [name for name, body in found.items() if "RedrivePolicy" not in body["Properties"]]
    return main, dlq_id, found[dlq_id]["Properties"]


def mapping(template: dict[str, Any]) -> dict[str, Any]:
    (body,) = cfn.resources(template, "AWS::Lambda::EventSourceMapping").values()
    return dict(body["Properties"])


def test_the_queue_and_its_dead_letter_queue_are_fifo_and_encrypted(dev: dict[str, Any]) -> None:
    main, _, dlq = queues(dev)
    for queue in (main, dlq):
        assert queue["FifoQueue"] is True
        assert queue["SqsManagedSseEnabled"] is True


def test_a_job_is_redriven_to_the_dlq_after_max_receive_count_deliveries(
    dev: dict[str, Any], prod: dict[str, Any]
) -> None:
    main, dlq_id, _ = queues(dev)
    assert main["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]},
        "maxReceiveCount": 5,
    }
    # and the count comes from context
    assert queues(prod)[0]["RedrivePolicy"]["maxReceiveCount"] == 6


def test_the_dead_letter_queue_keeps_jobs_for_the_longest_sqs_allows(dev: dict[str, Any]) -> None:
    _, _, dlq = queues(dev)
    assert dlq["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_a_job_stays_invisible_six_times_as_long_as_the_worker_may_run_in_every_variant(
    templates: dict[str, dict[str, Any]],
) -> None:
    # AWS's rule for a queue feeding Lambda: throttled tries must not burn the job's receives.
    for name, template in templates.items():
        main, _, _ = queues(template)
        worker = cfn.props(template, cfn.functions_by_folder(template)["extraction_worker"])
        assert main["VisibilityTimeout"] >= 6 * worker["Timeout"], name


def test_the_dead_letter_queue_outlives_the_queue_and_the_worker_parks_jobs_before_the_redrive(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        main, _, dlq = queues(template)
        # a job moved there is kept longer than it could have waited in the queue
        assert dlq["MessageRetentionPeriod"] > main["MessageRetentionPeriod"], name
        # the worker's own attempts end before SQS's redrive count, with a delivery to spare: it
        # parks the job with its error, and one whose runs never settled saying so
        variables = cfn.environment(template, cfn.functions_by_folder(template)["extraction_worker"])
        receives = main["RedrivePolicy"]["maxReceiveCount"]
        assert receives >= 5, name
        assert int(variables["MEMORY_ENGINE_WORKER_MAX_RECEIVES"]) < receives, name


def test_the_worker_takes_one_job_at_a_time_and_reports_failures_per_item(dev: dict[str, Any]) -> None:
    # Given the event source mapping of the extraction worker
    properties = mapping(dev)
    main_id = next(
        name
        for name, body in cfn.resources(dev, "AWS::SQS::Queue").items()
        if "RedrivePolicy" in body["Properties"]
    )
    # Then it reads the main queue, one message per invocation, with partial batch responses
    assert properties["EventSourceArn"] == {"Fn::GetAtt": [main_id, "Arn"]}
    assert properties["FunctionName"] == {"Ref": cfn.functions_by_folder(dev)["extraction_worker"]}
    assert properties["BatchSize"] == 1
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert properties["ScalingConfig"] == {"MaximumConcurrency": 10}


def test_only_the_worker_may_receive_from_the_queue(dev: dict[str, Any]) -> None:
    receivers = [
        folder
        for folder, function in cfn.functions_by_folder(dev).items()
        if "sqs:ReceiveMessage" in cfn.allowed_actions(dev, function)
    ]
    assert receivers == ["extraction_worker"]


def test_the_worker_may_extend_the_visibility_of_the_jobs_it_holds(dev: dict[str, Any]) -> None:
    # Given the worker's role and the queue
    worker = cfn.functions_by_folder(dev)["extraction_worker"]
    main_id = next(
        name
        for name, body in cfn.resources(dev, "AWS::SQS::Queue").items()
        if "RedrivePolicy" in body["Properties"]
    )

    # Then a statement on the queue lets it change a message's visibility (a running job's lease)
    on_queue = [
        statement
        for statement in cfn.statements(dev, cfn.role_of(dev, worker))
        if f"<{main_id}.Arn>" in cfn.listed(statement["Resource"])
    ]
    assert any("sqs:ChangeMessageVisibility" in cfn.actions(statement) for statement in on_queue)


def test_the_worker_holds_on_its_queue_what_the_poller_and_its_code_call_and_no_url_lookup(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        # Given the worker's statements on the queue its event source mapping polls
        worker = cfn.functions_by_folder(template)["extraction_worker"]
        polled = cfn.render(mapping(template)["EventSourceArn"])
        granted = {
            action
            for statement in cfn.statements(template, cfn.role_of(template, worker))
            if polled in cfn.listed(statement["Resource"])
            for action in cfn.actions(statement)
        }
        # Then Lambda's poller may receive, delete and read the queue's attributes, the worker
        # change a job's visibility and queue a follow-up job; nothing looks the queue's URL up
        # (the mutation test of test_iam_replay.py shows each of these is called)
        assert granted == {
            "sqs:ReceiveMessage",
            "sqs:DeleteMessage",
            "sqs:GetQueueAttributes",
            "sqs:ChangeMessageVisibility",
            "sqs:SendMessage",
        }, name


def test_the_event_source_mapping_keeps_the_logical_id_a_deployed_stack_has(dev: dict[str, Any]) -> None:
    # The id CDK's SqsEventSource gave it: another would replace the deployed mapping, and
    # CloudFormation creates the new one (same queue, same function) before deleting the old.
    (logical_id,) = cfn.resources(dev, "AWS::Lambda::EventSourceMapping")
    assert logical_id == (
        "ExtractionWorkerSqsEventSourceMemoryEnginedevaosslambdabuiltinQueueextractionworkerQueue062C6CA5CAD34217"
    )


def test_a_schedule_invokes_the_worker_with_the_sweep_event(dev: dict[str, Any]) -> None:
    # Given the stack's scheduled rules
    (rule,) = [body["Properties"] for body in cfn.resources(dev, "AWS::Events::Rule").values()]
    worker = cfn.functions_by_folder(dev)["extraction_worker"]

    # Then one runs every 15 minutes and hands the extraction worker {"sweep": true}
    assert rule["ScheduleExpression"] == "rate(15 minutes)"
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [worker, "Arn"]}
    assert json.loads(target["Input"]) == {"sweep": True}
    permissions = cfn.resources(dev, "AWS::Lambda::Permission").values()
    assert any(
        p["Properties"]["Principal"] == "events.amazonaws.com"
        and p["Properties"]["FunctionName"] == {"Fn::GetAtt": [worker, "Arn"]}
        for p in permissions
    )


def test_the_worker_parks_its_dead_jobs_itself_after_fewer_attempts_than_the_redrive(
    dev: dict[str, Any],
) -> None:
    # Given the worker's environment and permissions
    worker = cfn.functions_by_folder(dev)["extraction_worker"]
    env = cfn.props(dev, worker)["Environment"]["Variables"]
    _, dlq_id, _ = queues(dev)

    # Then it makes 3 attempts (the redrive, at 5, only catches crashes), knows the DLQ and may send there
    assert env["MEMORY_ENGINE_WORKER_MAX_RECEIVES"] == "3"
    assert env["MEMORY_ENGINE_DEAD_LETTER_URL"] == {"Ref": dlq_id}
    statements = [
        statement
        for policy in cfn.resources(dev, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if statement["Resource"] == {"Fn::GetAtt": [dlq_id, "Arn"]}
    ]
    assert any("sqs:SendMessage" in statement["Action"] for statement in statements)


def test_the_sweep_may_scan_the_buffered_turns_index_and_nothing_else(dev: dict[str, Any]) -> None:
    scans = [
        statement["Resource"]
        for policy in cfn.resources(dev, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        if "dynamodb:Scan" in statement["Action"]
    ]

    assert len(scans) == 1 and cfn.render(scans[0]).endswith("/index/gsi1")
