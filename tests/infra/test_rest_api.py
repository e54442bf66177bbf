"""The REST API: one method per route, the authorizer on all but health, limits, logs, errors."""

from __future__ import annotations

import json
from typing import Any

from functions.routes import REST_ROUTES
from infra.lambda_platform import PYTHON_VERSION
from infra.runtime import API_GATEWAY_TIMEOUT_SECONDS
from tests.infra import cfn


def authorizer(template: dict[str, Any]) -> dict[str, Any]:
    (body,) = cfn.resources(template, "AWS::ApiGateway::Authorizer").values()
    return dict(body["Properties"])


def gateway_responses(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Response type → the properties of API Gateway's own answer of that type."""
    return {
        body["Properties"]["ResponseType"]: body["Properties"]
        for body in cfn.resources(template, "AWS::ApiGateway::GatewayResponse").values()
    }


def stage(template: dict[str, Any]) -> dict[str, Any]:
    (body,) = cfn.resources(template, "AWS::ApiGateway::Stage").values()
    return dict(body["Properties"])


def test_the_authorizer_guards_every_route_but_health(dev: dict[str, Any]) -> None:
    # Given the API's methods / When their authorization is read
    methods = cfn.method_paths(dev)
    (authorizer_id,) = cfn.resources(dev, "AWS::ApiGateway::Authorizer")
    for route in REST_ROUTES:
        method = methods[(route.method, "/" + route.path.strip("/"))]
        # Then authenticated routes use the one REQUEST authorizer, health none
        if route.auth:
            assert method["AuthorizationType"] == "CUSTOM"
            assert method["AuthorizerId"] == {"Ref": authorizer_id}
        else:
            assert method["AuthorizationType"] == "NONE"
            assert "AuthorizerId" not in method


def test_the_authorizer_reads_the_authorization_header_and_caches_per_key(
    dev: dict[str, Any], prod: dict[str, Any]
) -> None:
    dev_authorizer = authorizer(dev)
    assert dev_authorizer["Type"] == "REQUEST"
    assert dev_authorizer["IdentitySource"] == "method.request.header.Authorization"
    assert dev_authorizer["AuthorizerResultTtlInSeconds"] == 300
    # and the TTL comes from context
    assert authorizer(prod)["AuthorizerResultTtlInSeconds"] == 60


def test_the_authorizer_runs_the_authorizer_handler(dev: dict[str, Any]) -> None:
    uri = cfn.render(authorizer(dev)["AuthorizerUri"])
    assert f"<{cfn.functions_by_folder(dev)['authorizer']}.Arn>" in uri


def test_json_bodies_are_validated_as_objects_before_any_function_runs(dev: dict[str, Any]) -> None:
    (validator_id, validator) = next(iter(cfn.resources(dev, "AWS::ApiGateway::RequestValidator").items()))
    assert validator["Properties"]["ValidateRequestBody"] is True
    for (method, path), body in cfn.method_paths(dev).items():
        if method in {"POST", "PUT", "PATCH"}:
            assert body["RequestValidatorId"] == {"Ref": validator_id}, path
            assert "application/json" in body["RequestModels"], path


def test_the_stage_throttles_traces_and_writes_json_access_logs(dev: dict[str, Any]) -> None:
    # Given the dev stage / When its settings are read
    settings = stage(dev)
    (method_settings,) = settings["MethodSettings"]
    # Then it is throttled, traced, logs errors, never logs bodies, and keeps JSON access logs
    assert settings["StageName"] == "dev"
    assert method_settings["ThrottlingRateLimit"] == 50
    assert method_settings["ThrottlingBurstLimit"] == 100
    assert method_settings["LoggingLevel"] == "ERROR"
    assert method_settings["DataTraceEnabled"] is False
    assert settings["TracingEnabled"] is True
    access = settings["AccessLogSetting"]
    assert "AccessLogs" in cfn.render(access["DestinationArn"])
    assert json.loads(access["Format"])["tenant"] == "$context.authorizer.principalId"


def test_every_gateway_refusal_is_readable_by_every_dialects_client(dev: dict[str, Any]) -> None:
    # API Gateway answers before any handler (a missing key on /open/game/* or the chat route too),
    # so its bodies carry the native, game and OpenAI error fields side by side
    for response_type, response in gateway_responses(dev).items():
        body = json.loads(response["ResponseTemplates"]["application/json"])
        message = body["message"]
        assert (body["status"], body["errors"]) == ("error", []), response_type
        assert (body["code"], body["msg"]) == (int(response["StatusCode"]), message), response_type
        assert body["error"]["message"] == message and body["error"]["type"], response_type
    unauthorized = json.loads(gateway_responses(dev)["UNAUTHORIZED"]["ResponseTemplates"]["application/json"])
    assert unauthorized["error"]["type"] == "authentication_error"


def test_gateway_refusals_answer_in_the_native_error_envelope(dev: dict[str, Any]) -> None:
    responses = gateway_responses(dev)
    unauthorized = responses["UNAUTHORIZED"]
    assert unauthorized["StatusCode"] == "401"
    assert json.loads(unauthorized["ResponseTemplates"]["application/json"])["status"] == "error"
    assert responses["REQUEST_TOO_LARGE"]["StatusCode"] == "413"
    assert responses["THROTTLED"]["StatusCode"] == "429"
    assert responses["BAD_REQUEST_BODY"]["StatusCode"] == "400"


def test_a_web_acl_named_in_context_is_attached_to_the_stage(
    dev: dict[str, Any], prod: dict[str, Any]
) -> None:
    assert cfn.resources(dev, "AWS::WAFv2::WebACLAssociation") == {}
    (association,) = cfn.resources(prod, "AWS::WAFv2::WebACLAssociation").values()
    assert association["Properties"]["WebACLArn"].endswith("webacl/memory-engine/abc")


def test_api_functions_run_python_from_the_layer_with_their_own_folder_only(dev: dict[str, Any]) -> None:
    (layer_id,) = cfn.resources(dev, "AWS::Lambda::LayerVersion")
    for folder, function_id in cfn.functions_by_folder(dev).items():
        function = cfn.props(dev, function_id)
        assert function["Runtime"] == f"python{PYTHON_VERSION}", folder
        assert function["Layers"] == [{"Ref": layer_id}], folder
        assert function["TracingConfig"] == {"Mode": "Active"}, folder
        assert function["LoggingConfig"]["LogGroup"], folder


def usage_plan(template: dict[str, Any]) -> dict[str, Any]:
    (body,) = cfn.resources(template, "AWS::ApiGateway::UsagePlan").values()
    return dict(body["Properties"])


def test_the_api_takes_its_api_keys_from_the_authorizer_only(dev: dict[str, Any]) -> None:
    (api,) = cfn.resources(dev, "AWS::ApiGateway::RestApi").values()
    # a caller's x-api-key header is never read: the authorizer names the usage-plan key
    assert api["Properties"]["ApiKeySourceType"] == "AUTHORIZER"


def test_every_route_but_health_requires_a_usage_plan_key(
    dev: dict[str, Any], more_routes: dict[str, Any]
) -> None:
    for template in (dev, more_routes):
        # Given the API's methods / When whether they need an API key is read
        for (method, path), body in cfn.method_paths(template).items():
            # Then exactly the authorized ones do, routes added later included
            assert body.get("ApiKeyRequired", False) is (body["AuthorizationType"] == "CUSTOM"), (
                method,
                path,
            )
    assert cfn.method_paths(dev)[("GET", "/v1/engine/health")].get("ApiKeyRequired", False) is False
    assert cfn.method_paths(more_routes)[("POST", "/v1/engine/summaries")]["ApiKeyRequired"] is True


def test_the_usage_plan_throttles_each_key_on_the_stage(dev: dict[str, Any]) -> None:
    # Given the dev stack's usage plan
    plan = usage_plan(dev)
    (stage_id,) = cfn.resources(dev, "AWS::ApiGateway::Stage")
    (api_id,) = cfn.resources(dev, "AWS::ApiGateway::RestApi")
    # Then it is bound to the stage, throttles per key with the defaults, and sets no quota
    ((bound),) = plan["ApiStages"]
    assert (bound["ApiId"], bound["Stage"]) == ({"Ref": api_id}, {"Ref": stage_id})
    assert plan["Throttle"] == {"RateLimit": 25, "BurstLimit": 50}
    assert "Quota" not in plan


def test_per_key_throttle_and_quota_come_from_context(prod: dict[str, Any]) -> None:
    plan = usage_plan(prod)
    assert plan["Throttle"] == {"RateLimit": 5, "BurstLimit": 10}
    assert plan["Quota"] == {"Limit": 100_000, "Period": "MONTH"}


def test_the_usage_plan_id_is_an_output_for_the_keys_cli(dev: dict[str, Any]) -> None:
    (plan_id,) = cfn.resources(dev, "AWS::ApiGateway::UsagePlan")
    assert cfn.outputs(dev)["UsagePlanId"] == f"<{plan_id}>"


def test_throttled_and_over_quota_requests_get_429_with_retry_after_in_the_envelope(
    dev: dict[str, Any],
) -> None:
    responses = gateway_responses(dev)
    for response_type, retry_after in (("THROTTLED", "'1'"), ("QUOTA_EXCEEDED", "'3600'")):
        response = responses[response_type]
        body = json.loads(response["ResponseTemplates"]["application/json"])
        assert response["StatusCode"] == "429"
        assert response["ResponseParameters"] == {"gatewayresponse.header.Retry-After": retry_after}
        assert body["status"] == "error" and body["message"] and body["errors"] == []


def test_a_key_missing_from_the_usage_plan_gets_403_saying_how_to_fix_it(dev: dict[str, Any]) -> None:
    responses = gateway_responses(dev)
    invalid = responses["INVALID_API_KEY"]
    assert invalid["StatusCode"] == "403"
    assert "keys sync" in json.loads(invalid["ResponseTemplates"]["application/json"])["message"]


def test_a_model_too_slow_for_the_gateway_is_given_up_by_chat_first(
    templates: dict[str, dict[str, Any]],
) -> None:
    # Given every variant's chat function, behind API Gateway's integration timeout
    for name, template in templates.items():
        methods = cfn.method_paths(template)
        integration = methods[("POST", "/v1/chat/completions")]["Integration"]
        gateway_s = integration.get("TimeoutInMillis", API_GATEWAY_TIMEOUT_SECONDS * 1000) / 1000
        function = cfn.functions_by_folder(template)["chat_completions"]
        function_s = cfn.props(template, function)["Timeout"]
        variables = cfn.environment(template, function)
        each_wait_s = float(variables["MEMORY_ENGINE_CHAT_TIMEOUT_SECONDS"])
        whole_answer_s = float(variables["MEMORY_ENGINE_CHAT_DEADLINE_SECONDS"])
        # Then the model's answer ends before the function does, and the function before the gateway,
        # with time left to read the user's memories first
        assert each_wait_s <= whole_answer_s, name
        assert whole_answer_s + 5 <= function_s < gateway_s <= 29, name
