"""The REST API: one method per route, the authorizer on all but health, limits, logs, errors."""

from __future__ import annotations

import json
from typing import Any

from functions.routes import REST_ROUTES
from tests.infra import cfn


def authorizer(template: dict[str, Any]) -> dict[str, Any]:
    (body,) = cfn.resources(template, "AWS::ApiGateway::Authorizer").values()
    return dict(body["Properties"])


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


def test_gateway_refusals_answer_in_the_native_error_envelope(dev: dict[str, Any]) -> None:
    responses = {
        body["Properties"]["ResponseType"]: body["Properties"]
        for body in cfn.resources(dev, "AWS::ApiGateway::GatewayResponse").values()
    }
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
        assert function["Runtime"] == "python3.11", folder
        assert function["Layers"] == [{"Ref": layer_id}], folder
        assert function["TracingConfig"] == {"Mode": "Active"}, folder
        assert function["LoggingConfig"]["LogGroup"], folder
