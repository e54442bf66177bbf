"""Alarms on dead letters, backlog, worker errors, API 5xx and latency; a dashboard; outputs."""

from __future__ import annotations

from typing import Any

from tests.fakes.aws import REGION
from tests.infra import cfn
from tests.infra.replay.policy import Authorization, Principal, evaluate
from tests.infra.replay.stack import ACCOUNT, ReplayStack


def alarms(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [body["Properties"] for body in cfn.resources(template, "AWS::CloudWatch::Alarm").values()]


def alarm_on(template: dict[str, Any], metric: str) -> dict[str, Any]:
    (found,) = [alarm for alarm in alarms(template) if alarm["MetricName"] == metric]
    return found


def test_a_single_dead_letter_raises_the_alarm(dev: dict[str, Any]) -> None:
    alarm = alarm_on(dev, "ApproximateNumberOfMessagesVisible")
    assert alarm["Namespace"] == "AWS/SQS"
    assert alarm["Threshold"] == 1
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_worker_errors_api_5xx_latency_and_backlog_are_watched(dev: dict[str, Any]) -> None:
    worker = cfn.functions_by_folder(dev)["extraction_worker"]
    errors = alarm_on(dev, "Errors")
    assert errors["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": worker}}]
    assert alarm_on(dev, "5XXError")["Namespace"] == "AWS/ApiGateway"
    assert alarm_on(dev, "Latency")["ExtendedStatistic"] == "p99"
    assert alarm_on(dev, "ApproximateAgeOfOldestMessage")["Threshold"] == 900


def test_every_alarm_notifies_the_alarm_topic(dev: dict[str, Any]) -> None:
    (topic_id,) = cfn.resources(dev, "AWS::SNS::Topic")
    assert all(alarm["AlarmActions"] == [{"Ref": topic_id}] for alarm in alarms(dev))


def test_the_alarm_topic_is_encrypted_with_a_key_whose_policy_lets_cloudwatch_use_it(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        (topic,) = cfn.resources(template, "AWS::SNS::Topic").values()
        (key_id,) = cfn.resources(template, "AWS::KMS::Key")
        # Then the topic's key is the stack's own (AWS's managed SNS key refuses CloudWatch)
        assert topic["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}, name
        statements = cfn.props(template, key_id)["KeyPolicy"]["Statement"]
        (for_cloudwatch,) = [
            s for s in statements if s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
        ]
        assert for_cloudwatch["Effect"] == "Allow"
        assert set(cfn.actions(for_cloudwatch)) == {"kms:Decrypt", "kms:GenerateDataKey*"}
        assert cfn.props(template, key_id)["EnableKeyRotation"] is True


def test_the_alarm_topic_policy_lets_this_accounts_alarms_publish(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        (topic_id,) = cfn.resources(template, "AWS::SNS::Topic")
        (policy,) = cfn.resources(template, "AWS::SNS::TopicPolicy").values()
        assert policy["Properties"]["Topics"] == [{"Ref": topic_id}], name
        statements = cfn.render(policy["Properties"]["PolicyDocument"]["Statement"])
        (publish,) = [s for s in statements if s.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}]
        assert (publish["Effect"], publish["Action"], publish["Resource"]) == (
            "Allow",
            "sns:Publish",
            f"<{topic_id}>",
        )
        assert publish["Condition"]["ArnLike"]["aws:SourceArn"].endswith(":alarm:*")
        assert publish["Condition"]["StringEquals"]["aws:SourceAccount"] == "<AWS::AccountId>"


def test_an_alarm_email_from_context_is_subscribed(dev: dict[str, Any], prod: dict[str, Any]) -> None:
    assert cfn.resources(dev, "AWS::SNS::Subscription") == {}
    (subscription,) = cfn.resources(prod, "AWS::SNS::Subscription").values()
    assert subscription["Properties"]["Endpoint"] == "oncall@example.com"


def test_one_dashboard_per_stage_and_region(dev: dict[str, Any]) -> None:
    # Dashboards are global to an account: one stage in two regions needs two names
    ((dashboard_id, dashboard),) = cfn.resources(dev, "AWS::CloudWatch::Dashboard").items()
    assert cfn.render(dashboard["Properties"]["DashboardName"]) == "MemoryEngine-dev-<AWS::Region>"
    assert cfn.outputs(dev)["DashboardName"] == f"<{dashboard_id}>"  # its name, as deployed


def test_the_stack_outputs_what_a_deployer_needs(dev: dict[str, Any]) -> None:
    outputs = cfn.outputs(dev)
    (table_id,) = cfn.resources(dev, "AWS::DynamoDB::Table")
    (collection_id,) = cfn.resources(dev, "AWS::OpenSearchServerless::Collection")
    assert {"ApiUrl", "TableName", "QueueUrl", "DeadLetterQueueUrl", "SearchEndpoint"} <= set(outputs)
    assert outputs["TableName"] == f"<{table_id}>"
    assert outputs["SearchEndpoint"] == f"<{collection_id}.CollectionEndpoint>"
    assert outputs["ApiUrl"].startswith("https://")


def test_an_alarm_of_this_account_may_publish_under_the_topics_and_the_keys_policies(
    templates: dict[str, dict[str, Any]],
) -> None:
    for name, template in templates.items():
        # Given the topic's and the key's policies, as the template attaches them
        stack = ReplayStack(template, "http://unused")
        policies = stack.resource_policies()
        (topic_id,) = cfn.resources(template, "AWS::SNS::Topic")
        (key_id,) = cfn.resources(template, "AWS::KMS::Key")
        topic = stack.rendered({"Ref": topic_id})
        key = stack.rendered({"Fn::GetAtt": [key_id, "Arn"]})
        cloudwatch = Principal("Service", "cloudwatch.amazonaws.com", ACCOUNT)

        def asked(account: str, transport: str = "true") -> dict[str, list[str]]:
            alarm = f"arn:aws:cloudwatch:{REGION}:{account}:alarm:memory-engine-dead-letters"
            return {
                "aws:SourceArn": [alarm],
                "aws:SourceAccount": [account],
                "aws:SecureTransport": [transport],
            }

        # Then CloudWatch may publish this account's alarm, encrypting it with the key
        for action, resource in (("sns:Publish", topic), ("kms:GenerateDataKey", key), ("kms:Decrypt", key)):
            request = Authorization(action, resource, asked(ACCOUNT))
            assert evaluate([], policies[resource], cloudwatch, request), (name, action)
        # But not another account's alarm, nor over plain HTTP
        for refused in (asked("999999999999"), asked(ACCOUNT, "false")):
            assert not evaluate([], policies[topic], cloudwatch, Authorization("sns:Publish", topic, refused))
